"""The hidden `memgit hook` command: the entry point of the installed git hooks and the clean filter."""
from __future__ import annotations

import sys
from pathlib import Path

import click



@click.command(hidden=True, context_settings={"ignore_unknown_options": True})
@click.argument("name", type=click.Choice(["pre-commit", "pre-push", "filter"]))
@click.argument("args", nargs=-1)
@click.pass_context
def hook(ctx, name, args):
    """Entry point of the installed git hooks."""
    from memgit.adopt import check_staged
    from memgit.config import load_config
    from memgit.repo import Repo
    from memgit.workspace import find_root

    if name == "filter":  # git's long-running clean filter: stdin/stdout speak git's pkt-line protocol
        from memgit import gitfilter

        gitfilter.serve()
        return
    root = find_root(ctx.obj.get("dir") or Path.cwd())
    if name == "pre-push":
        _pre_push(root, args[0] if args else "origin")
        return
    from memgit.workspace import Workspace

    for note in Workspace(root).catch_up_index():
        click.echo(f"memgit: {note}", err=True)
    problems = check_staged(Repo(root), load_config(root).memory_files)
    if problems:
        for p in problems:
            click.echo(f"memgit: refusing commit, sensitive data in {p}", err=True)
        click.echo("memgit: remove it from memory (use a password manager); `git commit --no-verify` bypasses "
                   "this check.", err=True)
        sys.exit(1)


def _pre_push(root: Path, remote: str) -> None:
    """git's pre-push: stdin holds `<local ref> <local sha> <remote ref> <remote sha>` per ref."""
    import os

    from memgit.remote import unpushed_leaks
    from memgit.workspace import Workspace

    lines = os.environ.get("MEMGIT_PUSH_REFS")
    lines = lines if lines is not None else sys.stdin.read()
    local, theirs = [], []
    for line in lines.splitlines():
        parts = line.split()
        if len(parts) == 4:
            if set(parts[1]) != {"0"}:
                local.append(parts[1])
            if set(parts[3]) != {"0"}:
                theirs.append(parts[3])
    found = unpushed_leaks(Workspace(root), remote, local, theirs)
    if found:
        for x in found[:10]:
            click.echo(f"memgit: refusing push, sensitive data in {x}", err=True)
        click.echo("memgit: remove it, run `memgit scrub` to clean the history and rotate the credential; "
                   "`git push --no-verify` bypasses this check.", err=True)
        sys.exit(1)

