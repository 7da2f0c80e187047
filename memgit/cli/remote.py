"""`memgit push`, `memgit pull`: click only."""
from __future__ import annotations

import click

from memgit.cli.common import echo_json, flush_warnings, open_workspace, style, warn
from memgit.cli.options import dry_run_option, json_option


@click.command()
@click.argument("remote", default="origin")
@json_option("Print what was sent as JSON.")
@click.pass_context
def push(ctx, remote, as_json):
    """Share main, open and closed proposals and the journal with a git remote.

    Works with any plain git remote (a bare repo, GitHub, GitLab, Gitea).
    Nothing is forced: if the remote has changes this clone lacks, the whole
    push is refused and nothing is sent; `memgit pull` merges them first.

    Example: memgit push origin
    """
    from memgit.remote import push as do_push

    r = do_push(open_workspace(ctx), remote)
    if as_json:
        echo_json(r.to_dict())
        return
    for line in r.lines():
        click.echo(line)


@click.command()
@click.argument("remote", default="origin")
@json_option("Print what happened as JSON.")
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

    ws = open_workspace(ctx)
    r = do_pull(ws, remote)
    flush_warnings(ws)
    if as_json:
        echo_json(r.to_dict())
        return
    for line in r.lines():
        if line.startswith("Run "):
            click.echo(style(line, fg="yellow"))
        else:
            click.echo(line)


@click.command()
@click.option("--pushed", "pushed_ok", is_flag=True,
              help="Go on although the commits holding the secret were already pushed.")
@dry_run_option("Only list what holds sensitive data.")
@json_option("Print the result as JSON.")
@click.pass_context
def scrub(ctx, pushed_ok, dry_run, as_json):
    """Rewrite the local history so that no commit holds a secret.

    Every ref is rewritten (main, proposals, the journal): each file and
    commit message that holds a value the filter finds gets it replaced by
    [REDACTED] (with git-filter-repo, in a mirror; the working tree is never
    reset), then old objects are pruned. A rewrite never undoes a leak:
    rotate the credential. Refused when the commits were already pushed,
    unless --pushed (then force-push every clone and remote yourself).

    Example: memgit scrub --dry-run
    """
    from memgit.leaks import scrub as do_scrub

    ws = open_workspace(ctx)
    r = do_scrub(ws, pushed_ok=pushed_ok, dry_run=dry_run)
    flush_warnings(ws)
    if as_json:
        echo_json(r.to_dict())
        return
    if not r.leaks:
        click.echo("No commit holds sensitive data.")
        return
    for x in r.leaks[:20]:
        click.echo(f"  {x}")
    if dry_run:
        click.echo(f"{len(r.leaks)} finding(s); `memgit scrub` rewrites them.")
        return
    click.echo(f"Rewrote {r.rewritten} ref(s); no commit holds the {len(r.leaks)} finding(s) any more.")
    warn("rotate every credential listed: a rewrite does not undo a leak, and clones made before it keep it.")
    if r.pushed:
        warn(f"{', '.join(r.pushed[:3])} held them: force-push the rewritten refs and ask every clone to re-clone.")
