"""`memgit push`, `memgit pull`: click only."""
from __future__ import annotations

import click

from memgit.cli import _flush_warnings, _ws, echo_json, style


@click.command()
@click.argument("remote", default="origin")
@click.option("--json", "as_json", is_flag=True, help="Print what was sent as JSON.")
@click.pass_context
def push(ctx, remote, as_json):
    """Share main, open and closed proposals and the journal with a git remote.

    Works with any plain git remote (a bare repo, GitHub, GitLab, Gitea).
    Nothing is forced: if the remote has changes this clone lacks, the whole
    push is refused and nothing is sent; `memgit pull` merges them first.

    Example: memgit push origin
    """
    from memgit.remote import push as do_push

    r = do_push(_ws(ctx), remote)
    if as_json:
        echo_json(r.to_dict())
        return
    for line in r.lines():
        click.echo(line)


@click.command()
@click.argument("remote", default="origin")
@click.option("--json", "as_json", is_flag=True, help="Print what happened as JSON.")
@click.pass_context
def pull(ctx, remote, as_json):
    """Bring main, proposals and review state from a git remote, merging where both moved.

    Proposals opened elsewhere appear here; ones approved or rejected
    elsewhere leave the open list. If main changed on both sides it is merged
    (nothing lost); a real conflict stops the pull with nothing changed and
    says how to merge by hand. The agent's files are then updated to the new
    main, keeping any edit the agent is making.

    Example: memgit pull origin
    """
    from memgit.remote import pull as do_pull

    ws = _ws(ctx)
    r = do_pull(ws, remote)
    _flush_warnings(ws)
    if as_json:
        echo_json(r.to_dict())
        return
    for line in r.lines():
        if line.startswith("Run "):
            click.echo(style(line, fg="yellow"))
        else:
            click.echo(line)


COMMANDS = [push, pull]
