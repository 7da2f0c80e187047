"""`memgit reflect`: click only."""
from __future__ import annotations

import click

from memgit.cli import _flush_warnings, _parse_now, _ws, echo_json


@click.command()
@click.option("--now", "now", metavar="YYYY-MM-DD", help="Pin 'today' (default: the real date).")
@click.option("--dry-run", is_flag=True, help="Print the report; make no proposal.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def reflect(ctx, now, dry_run, as_json):
    """The daily advisory pass: contradictions, promotion candidates, decay markers.

    Prints a readable report and proposes it as reflections/YYYY-MM-DD.md (kept
    out of main unless approved); confident candidates become proposals too.

    Example: memgit reflect --now 2026-11-30
    """
    from memgit.lifecycle.reflect import reflect as run

    ws = _ws(ctx)
    r = run(ws, _parse_now(now), dry_run=dry_run)
    _flush_warnings(ws)
    if as_json:
        echo_json(r.to_dict())
        return
    click.echo(r.text, nl=False)
    if r.report_proposal:
        click.echo(f"\nReport proposed as {r.report_proposal} (reflections/{r.now}.md).")


COMMANDS = [reflect]
