"""The click layer: parse, call the library, format. Nothing below this module prints."""
from __future__ import annotations

import json
import os
import sys
from datetime import date
from pathlib import Path

import click

from memgit.errors import MemgitError


# -- output helpers ---------------------------------------------------------
def _color() -> bool:
    return "NO_COLOR" not in os.environ and sys.stdout.isatty()


def style(text: str, **kw) -> str:
    return click.style(text, **kw) if _color() else text


def echo_json(data) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def warn(msg: str) -> None:
    click.echo(f"Warning: {msg}", err=True)


def _ws(ctx: click.Context):
    from memgit.workspace import Workspace

    ws = Workspace.open(ctx.obj.get("dir"))
    ws.repair()
    return ws


def _flush_warnings(ws) -> None:
    for w in ws.warnings:
        warn(w)
    ws.warnings.clear()


def echo_report(ws, report, as_json: bool) -> bool:
    """The part every run report prints the same way (dream, expire, janitor): warnings, then the
    JSON report, or the summary line. True when the JSON was printed and nothing more is due."""
    _flush_warnings(ws)
    if as_json:
        echo_json(report.to_dict())
        return True
    for w in report.warnings:
        warn(w)
    click.echo(report.summary)
    return False


def _bar(pct: float | None, width: int = 20) -> str:
    if pct is None:
        return "[" + " " * width + "]"
    filled = min(width, round(width * pct / 100))
    bar = "#" * filled + "." * (width - filled)
    color = "red" if pct > 90 else "yellow" if pct > 75 else "green"
    return "[" + style(bar, fg=color) + "]"


def _parse_now(value: str | None) -> date:
    if not value:
        return date.today()
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise MemgitError(f"--now {value!r} is not a date; give it as YYYY-MM-DD.") from None
    if not NOW_RANGE[0] <= day <= NOW_RANGE[1]:
        # windows and ages reach up to a century back from it, and timestamps are taken of it
        raise MemgitError(f"--now {value} is out of range; give a date from {NOW_RANGE[0]} to {NOW_RANGE[1]}.")
    return day


NOW_RANGE = (date(1970, 1, 1), date(2999, 12, 31))


# -- the group -------------------------------------------------------------------
@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "directory", type=click.Path(file_okay=False, path_type=Path),
              help="Run as if memgit was started in this workspace folder.")
@click.version_option(package_name="memgit", message="memgit %(version)s")
@click.pass_context
def cli(ctx: click.Context, directory: Path | None) -> None:
    """memgit: your agent's memory as a git repo, changed only through reviewed proposals.

    \b
    Quick start:
      memgit init                  # adopt the workspace in this folder
      memgit dream                 # propose what should change in memory
      memgit proposals             # list them like pull requests
      memgit show ID               # read one, with its evidence and diff
      memgit approve ID            # merge it into main (or: reject, revert)
    """
    ctx.ensure_object(dict)
    ctx.obj["dir"] = directory


@cli.command()
@click.option("--layout", type=click.Choice(["openclaw", "hermes", "claude-code"]),
              help="Adopt a workspace of this product with its file names and budgets as defaults.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
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


# -- propose -------------------------------------------------------------------------
@cli.group()
def propose() -> None:
    """Ask for a memory change that a person must approve.

    Each subcommand makes one proposal branch (memgit/<id>) and never touches
    main or the files the agent reads.

    Example: memgit propose prune MEMORY.md --entry "Cloudflare tunnel" --reason "demo is over"
    """


def _propose(ctx: click.Context, make, as_json: bool, again: bool = False) -> None:
    from memgit import proposals

    ws = _ws(ctx)
    with ws.repo.lock():
        ws.prepare()
        op = make(ws)
        made = proposals.create(ws, [op], again=again)
    _flush_warnings(ws)
    p = made[0]
    if as_json:
        echo_json(p.to_dict())
    else:
        click.echo(f"Proposed {style(p.id, fg='yellow')} ({p.branch}): {p.title}")
        click.echo(f"  review it with `memgit show {p.id}`")


def _entry(ws, file: str, needle: str) -> str:
    return ws.document(ws.check_memory_file(file)).entry(needle).text


_reason = click.option("--reason", default="", help="Why this change (shown to the reviewer).")
_json = click.option("--json", "as_json", is_flag=True, help="Print the proposal as JSON.")
_again = click.option("--again", is_flag=True,
                      help="Propose it even though the same change was rejected or reverted before "
                           "(the dream itself never proposes it again).")


@propose.command("prune")
@click.argument("file")
@click.option("--entry", "needle", required=True, help="Text of the entry to remove (a unique substring).")
@_reason
@_again
@_json
@click.pass_context
def propose_prune(ctx, file, needle, reason, as_json, again):
    """Propose removing one entry.

    Example: memgit propose prune MEMORY.md --entry "tunnel for the demo"
    """
    from memgit.ops import Operation

    _propose(ctx, lambda ws: Operation("prune", file, (_entry(ws, file, needle),), reason=reason),
             as_json, again)


@propose.command("refresh")
@click.argument("file")
@click.option("--entry", "needle", required=True, help="Text of the entry to replace (a unique substring).")
@click.option("--to", "new", required=True, help="The entry's new text.")
@_reason
@_again
@_json
@click.pass_context
def propose_refresh(ctx, file, needle, new, reason, as_json, again):
    """Propose replacing an entry's text.

    Example: memgit propose refresh MEMORY.md --entry "Cockpit v1" --to "[P1] Cockpit v1 deployed (2026-06-01)"
    """
    from memgit.ops import Operation

    _propose(ctx, lambda ws: Operation("refresh", file, (_entry(ws, file, needle),), text=new,
                                       reason=reason), as_json, again)


@propose.command("consolidate")
@click.argument("file")
@click.option("--section", help="Heading text of the section (tag not needed); §-separated files have none.")
@click.option("--text", "new", required=True, help="The new entry.")
@_reason
@_again
@_json
@click.pass_context
def propose_consolidate(ctx, file, section, new, reason, as_json, again):
    """Propose adding an entry to a section.

    Example: memgit propose consolidate MEMORY.md --section Projects --text "[P1] Blog moved to Astro (2026-06-01)"
    """
    from memgit.ops import Operation

    def make(ws):
        doc = ws.document(ws.check_memory_file(file))
        if doc.hermes or not (section or doc.sections):
            title = None  # a §-separated file (or one without headings) takes the entry at its end
        elif not section:
            raise MemgitError(f"name the section of {file} with --section "
                              f"({', '.join(s.title for s in doc.sections)}).")
        else:
            title = doc.section(section).title
        return Operation("consolidate", file, (), text=new, section=title, reason=reason)

    _propose(ctx, make, as_json, again)


@propose.command("merge")
@click.argument("file")
@click.option("--entry", "needles", multiple=True, required=True,
              help="An entry to merge (give two or more).")
@click.option("--to", "new", required=True, help="The merged entry.")
@_reason
@_again
@_json
@click.pass_context
def propose_merge(ctx, file, needles, new, reason, as_json, again):
    """Propose merging several entries into one.

    Example: memgit propose merge MEMORY.md --entry "export the" --entry "To export" --to "[P1] Export: CSV"
    """
    from memgit.ops import Operation

    def make(ws):
        if len(needles) < 2:
            raise MemgitError("merge needs two or more --entry options.")
        targets = tuple(dict.fromkeys(_entry(ws, file, n) for n in needles))
        if len(targets) < 2:
            raise MemgitError("the --entry options name the same entry; give two different entries.")
        return Operation("merge", file, targets, text=new, reason=reason)

    _propose(ctx, make, as_json, again)


# -- reading proposals --------------------------------------------------------------
@cli.command("proposals")
@click.option("--all", "show_all", is_flag=True, help="Include approved, rejected and reverted ones.")
@click.option("--sort", "order", type=click.Choice(["time", "confidence"]), default="time", show_default=True,
              help="Newest first, or most confident first (ties: newest first).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def proposals_cmd(ctx, show_all, order, as_json):
    """List open proposals, like `gh pr list`: newest first, or by confidence.

    Example: memgit proposals --all   |   memgit proposals --sort confidence
    """
    from memgit import proposals
    from memgit.review.common import age

    ws = _ws(ctx)
    items = proposals.sorted_proposals(proposals.list_proposals(ws, include_closed=show_all), order)
    bad = proposals.unreadable(ws)
    if as_json:
        echo_json([p.to_dict() for p in items] + [{"id": i, "status": "unreadable", "why": why}
                                                  for i, why in bad])
        return
    for i, why in bad:
        click.echo(f"{style(i, fg='red')}  unreadable: {why}; `memgit reject {i}` closes it")
    if not items:
        if not bad:
            click.echo("No open proposals." if not show_all else "No proposals.")
        return
    for p in items:
        conf = f"{p.op.confidence:.2f}" if p.op.confidence is not None else "  - "
        applies = "" if p.status != "open" else ("" if p.applies else style("  [stale: " + p.why_not + "]",
                                                                             fg="red"))
        status = "" if p.status == "open" else style(f"[{p.status}] ", fg="cyan")
        click.echo(f"{style(p.id, fg='yellow')}  {p.op.op:<11} {p.op.file:<10} {conf}  {age(p.created):>4}  "
                   f"{status}{p.title}{applies}")


@cli.command()
@click.argument("proposal_id")
@click.option("--json", "as_json", is_flag=True, help="Print the proposal and its diff as JSON.")
@click.pass_context
def show(ctx, proposal_id, as_json):
    """Show one proposal like a pull request: reason, evidence and diff.

    Example: memgit show 1a2b3c4d
    """
    from memgit import proposals
    from memgit.review.terminal import render_show

    ws = _ws(ctx)
    p = proposals.get(ws, proposal_id)
    d = proposals.diff(ws, p)
    if as_json:
        echo_json({**p.to_dict(), "diff": d})
        return
    click.echo(render_show(p, d, _color()))


@cli.command()
@click.argument("ids", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Approve every open proposal.")
@click.option("--min-confidence", type=click.FloatRange(0, 1), help="With --all: only these confident ones.")
@click.option("--allow-p0", is_flag=True,
              help="Let the proposals named by id change P0 entries or protected sections.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def approve(ctx, ids, all_, min_confidence, allow_p0, as_json):
    """Merge proposals into main (re-applied to the current main).

    A proposal whose target entry changed or vanished is refused with its
    reason and stays open. With --all, refused ones are reported and the rest
    approved; naming an id that is refused exits 1. Every guard runs again
    here: a proposal whose commit shows another change than its record, that
    changes a file other than memory, or writes sensitive data is refused; one
    that changes a P0 entry or a protected section needs its id and --allow-p0.

    Example: memgit approve 1a2b3c4d   |   memgit approve --all --min-confidence 0.8
    """
    from memgit import proposals

    if bool(ids) == bool(all_):
        raise MemgitError("name proposal ids or give --all (not both); `memgit proposals` lists them.")
    if min_confidence is not None and not all_:
        raise MemgitError("--min-confidence applies only with --all; named proposals are approved as named.")
    if allow_p0 and all_:
        raise MemgitError("--allow-p0 applies only to proposals named by id; give their ids.")
    for i in ids:
        proposals.check_id(i)
    ws = _ws(ctx)
    if all_ and not proposals.list_proposals(ws, check=False):
        if as_json:
            echo_json({"approved": [], "refused": [], "commit": None})
        else:
            click.echo("Nothing to approve: no open proposals.")
        return
    r = proposals.approve(ws, list(ids), min_confidence, allow_p0=allow_p0)
    wake = _wake_check(ws, r.approved)
    _flush_warnings(ws)
    if as_json:
        echo_json({"approved": [p.id for p in r.approved], "refused": [{"id": i, "reason": why}
                                                                        for i, why in r.refused],
                   "commit": r.commit, "wake_check_missing": wake})
    else:
        for p in r.approved:
            click.echo(f"Approved {style(p.id, fg='green')}: {p.title}")
        for i, why in r.refused:
            # a named proposal refused fails the command (exit 1); under --all the others went ahead
            lead = "Error: refused" if ids else "Warning: refused"
            click.echo(f"{lead} {style(i, fg='red')} (still open): {why}", err=True)
        for i in wake:
            warn(f"wake check: recall does not find the change of {i} by its own key terms.")
        if r.commit:
            click.echo(f"main is now {r.commit[:8]}")
    if r.refused and ids:
        sys.exit(1)


def _wake_check(ws, approved) -> list[str]:
    from memgit.recall import wake_check

    return wake_check(ws, approved)


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("--reason", default="", help="Why (remembered; the same change is not proposed again).")
@click.pass_context
def reject(ctx, ids, reason):
    """Close proposals without merging; a later dream will not propose them again.

    Example: memgit reject 1a2b3c4d --reason "still pending, the log was wrong"
    """
    from memgit import proposals

    for i in ids:
        proposals.check_id(i)
    ws = _ws(ctx)
    bad = dict(proposals.unreadable(ws))
    done = proposals.reject(ws, list(ids), reason)
    for i in ids:
        for pid in bad:
            if pid.startswith(i):
                click.echo(f"Rejected {style(pid, fg='red')}: unreadable ({bad[pid]})")
    for p in done:
        click.echo(f"Rejected {style(p.id, fg='red')}: {p.title}")


@cli.command()
@click.argument("proposal_id")
@click.pass_context
def revert(ctx, proposal_id):
    """Roll back an approved proposal with a new commit, keeping later changes.

    Example: memgit revert 1a2b3c4d
    """
    from memgit import proposals

    ws = _ws(ctx)
    sha = proposals.revert(ws, proposal_id)
    _flush_warnings(ws)
    click.echo(f"Reverted {proposal_id}; main is now {sha[:8]}")


@cli.command("log")
@click.option("-n", "limit", type=int, default=50, show_default=True, help="How many events.")
@click.option("--json", "as_json", is_flag=True, help="Print the events as JSON.")
@click.pass_context
def log_cmd(ctx, limit, as_json):
    """The history of memory: dream runs, proposals, approvals, rejections, reverts, snapshots.

    Example: memgit log -n 20
    """
    from memgit import journal

    ws = _ws(ctx)
    evs = journal.events(ws.repo, limit=limit)
    if as_json:
        echo_json([e.to_dict() for e in evs])
        return
    if not evs:
        click.echo("No history yet.")
    for e in evs:
        click.echo(f"{e.at[:19].replace('T', ' ')}  {style(e.kind, fg='cyan'):<8}  {e.summary}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx, as_json):
    """Each memory file's use of its budget, open proposals, uncommitted agent edits.

    Example: memgit status
    """
    from memgit import proposals

    ws = _ws(ctx)
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
        click.echo(f"  {c.file:<12} {_bar(c.pct)} {pct}  {c.chars}{budget} chars")
    click.echo(f"Open proposals: {len(props)}" + (" (`memgit proposals`)" if props else ""))
    if dirty:
        click.echo(f"Uncommitted agent edits: {len(dirty)} file(s) — snapshotted at the next dream or approve")
        for d in dirty[:10]:
            click.echo(f"  {d}")


@cli.command("help")
@click.argument("words", nargs=-1)
@click.pass_context
def help_(ctx, words):
    """Show how to use memgit, or one command (`--help` on any command says the same).

    Example: memgit help propose prune
    """
    cmd: click.Command = cli
    path = ["memgit"]
    for w in words:
        sub = cmd.get_command(ctx, w) if isinstance(cmd, click.Group) else None
        if sub is None or sub.hidden:
            raise MemgitError(f"memgit has no command {' '.join([*path[1:], w])!r}; `memgit help` lists them.")
        cmd, path = sub, [*path, w]
    with click.Context(cmd, info_name=" ".join(path)) as sub_ctx:
        click.echo(cmd.get_help(sub_ctx))


@cli.command(hidden=True, context_settings={"ignore_unknown_options": True})
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


def _register_optional() -> None:
    """Commands that live in their own modules register themselves here."""
    from memgit import commands

    commands.register(cli)


def os_error_message(e: OSError) -> str:
    """One sentence for a failed file operation: what failed, on which file, what to do."""
    import errno

    where = f" ({e.filename})" if e.filename else ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{e.strerror or e}{where}; free some disk space and retry."
    return f"{e.strerror or e}{where}; check the path and permissions."


def main() -> None:
    _register_optional()
    try:
        cli.main(standalone_mode=False, prog_name="memgit")
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except MemgitError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            sys.exit(0)
        click.echo(f"Error: {os_error_message(e)}", err=True)
        sys.exit(1)
    except Exception:  # a bug, not a user error: keep the traceback, and an exit code scripts can tell apart
        import traceback

        traceback.print_exc()
        sys.exit(3)
