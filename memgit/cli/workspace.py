"""`memgit init`, `status`, `log` and `help`: click only."""
from __future__ import annotations

from pathlib import Path

import click

from memgit.adopt import LAYOUTS
from memgit.cli.common import bar, echo_json, open_workspace, style, warn
from memgit.cli.options import json_option
from memgit.errors import MemgitError


@click.command()
@click.option("--layout", type=click.Choice(list(LAYOUTS)),
              help="Adopt a workspace of this product with its file names and budgets as defaults.")
@json_option("Print the result as JSON.")
@click.pass_context
def init(ctx: click.Context, layout: str | None, as_json: bool) -> None:
    """Make this folder a memgit workspace.

    Runs `git init -b main` if needed (an existing repo or clone is adopted as
    it is), writes a memgit.toml (with --layout's budgets, or those of the
    product it detects: OpenClaw, Hermes Agent, Claude Code), installs the
    pre-commit hook (chaining any hook already there), commits the current
    files on main and reports each memory file's size against its budget.

    Example: cd ~/agent-workspace && memgit init
    """
    from memgit.adopt import init as do_init

    r = do_init(ctx.obj.get("dir") or Path.cwd(), layout)
    for w in r.warnings:
        warn(w)
    if as_json:
        echo_json({"root": str(r.root), "created_repo": r.created_repo, "wrote_config": r.wrote_config,
                   "hooks": r.hooks, "commit": r.commit, "layout": r.layout, "detected": r.detected,
                   "sizes": r.sizes})
        return
    click.echo(f"{'Initialised' if r.created_repo else 'Adopted'} memgit workspace in {r.root}")
    if r.wrote_config:
        how = f"{r.layout} layout{', detected' if r.detected else ''}" if r.layout else "defaults"
        click.echo(f"  wrote memgit.toml ({how})")
    for x in r.sizes:
        click.echo(f"  {x['file']}: {x['chars']:,} of {x['budget']:,} characters "
                   f"({100 * x['chars'] / x['budget']:.0f}%)")
    click.echo(f"  hooks: {', '.join(r.hooks)}")
    if r.commit:
        click.echo(f"  committed current files on main ({r.commit[:8]})")



@click.command("log")
@click.option("-n", "limit", type=int, default=50, show_default=True, help="How many events.")
@json_option("Print the events as JSON.")
@click.pass_context
def log_cmd(ctx, limit, as_json):
    """The history of memory: dream runs, proposals, approvals, rejections, reverts, snapshots.

    Example: memgit log -n 20
    """
    from memgit import journal

    ws = open_workspace(ctx)
    evs = journal.events(ws.repo, limit=limit)
    if as_json:
        echo_json([e.to_dict() for e in evs])
        return
    if not evs:
        click.echo("No history yet.")
    for e in evs:
        click.echo(f"{e.at[:19].replace('T', ' ')}  {style(e.kind, fg='cyan'):<8}  {e.summary}")


@click.command()
@json_option("Print the status as JSON.")
@click.pass_context
def status(ctx, as_json):
    """Each memory file's use of its budget, open proposals, uncommitted agent edits.

    Example: memgit status
    """
    from memgit import proposals

    ws = open_workspace(ctx)
    caps = ws.capacity(live=True)
    props = proposals.list_proposals(ws, check=False)
    dirty = ws.repo.uncommitted()
    if as_json:
        echo_json({"files": [c.to_dict() for c in caps], "open_proposals": len(props),
                   "proposals": [p.id for p in props], "uncommitted": dirty})
        return
    click.echo(f"Workspace {ws.root}")
    for c in caps:
        pct = f"{c.pct:5.1f}%" if c.pct is not None else "  n/a "
        budget = f"/{c.budget}" if c.budget else ""
        click.echo(f"  {c.file:<12} {bar(c.pct)} {pct}  {c.chars}{budget} chars")
    click.echo(f"Open proposals: {len(props)}" + (" (`memgit proposals`)" if props else ""))
    if dirty:
        click.echo(f"Uncommitted agent edits: {len(dirty)} file(s) — snapshotted at the next dream or approve")
        for d in dirty[:10]:
            click.echo(f"  {d}")


@click.command("help")
@click.argument("words", nargs=-1)
@click.pass_context
def help_(ctx, words):
    """Show how to use memgit, or one command (`--help` on any command says the same).

    Example: memgit help propose prune
    """
    cmd: click.Command = ctx.find_root().command
    path = ["memgit"]
    for w in words:
        sub = cmd.get_command(ctx, w) if isinstance(cmd, click.Group) else None
        if sub is None or sub.hidden:
            raise MemgitError(f"memgit has no command {' '.join([*path[1:], w])!r}; `memgit help` lists them.")
        cmd, path = sub, [*path, w]
    with click.Context(cmd, info_name=" ".join(path)) as sub_ctx:
        click.echo(cmd.get_help(sub_ctx))

