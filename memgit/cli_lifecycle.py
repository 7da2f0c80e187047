"""`memgit expire` and `memgit janitor`: click only."""
from __future__ import annotations

import click

from memgit.cli import _parse_now, _ws, echo_report, style

_now = click.option("--now", "now", metavar="YYYY-MM-DD", help="Pin 'today' (default: the real date).")
_dry = click.option("--dry-run", is_flag=True, help="Show what would be proposed; make no proposal.")
_json = click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")


def _print(ws, report, as_json: bool) -> None:
    if echo_report(ws, report, as_json):
        return
    for p in report.proposals:
        pid = style(p["id"] or f"({p['status']})", fg="yellow")
        click.echo(f"  {pid}  {p['rule']:<12} {p['title']}")
    if not report.proposals:
        click.echo("Nothing to propose.")
    elif report.made:
        click.echo("Review with `memgit proposals` and `memgit show ID`.")


@click.command()
@_now
@_dry
@_json
@click.pass_context
def expire(ctx, now, dry_run, as_json):
    """Propose archiving old daily logs and stale P2 entries.

    \b
    - daily logs older than [lifecycle] log_days (30) move to
      <archive_dir>/archive-YYYY-MM/ as git renames, bytes unchanged:
      one proposal per month of logs
    - P2 entries older than p2_days (30) and not mentioned in that many
      days of logs move to <archive_dir>/archive-YYYY-MM/<FILE>.archived.md
      (the month of --now): one proposal per memory file
    P0 and protected sections are never touched; nothing reaches main
    until you approve it.

    Example: memgit expire --now 2026-06-01 --dry-run
    """
    from memgit.lifecycle.expire import expire as run

    ws = _ws(ctx)
    _print(ws, run(ws, _parse_now(now), dry_run=dry_run), as_json)


@click.command()
@_now
@_dry
@_json
@click.pass_context
def janitor(ctx, now, dry_run, as_json):
    """Propose structural compaction of the memory files.

    \b
    - an Events/timeline section's months older than events_days (90) fold
      into one line per month; the original lines go to reference/
    - a P1 section whose entries are all older than p1_days (90) and not
      mentioned in that many days of logs moves to reference/<slug>.md,
      leaving a one-line index entry
    - P2 entries older than p2_days (30) compress into their conclusion
    P0 and protected sections never change.

    Example: memgit janitor --now 2026-06-01
    """
    from memgit.lifecycle.janitor import janitor as run

    ws = _ws(ctx)
    _print(ws, run(ws, _parse_now(now), dry_run=dry_run), as_json)


COMMANDS = [expire, janitor]
