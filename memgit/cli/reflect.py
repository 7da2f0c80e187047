"""`memgit reflect`: click only."""
from __future__ import annotations

import click

from memgit.cli.common import echo_json, flush_warnings, open_workspace, parse_now
from memgit.cli.options import dry_run_option, json_option, now_option


@click.command()
@now_option
@dry_run_option("Print the report; make no proposal.")
@json_option("Print the report as JSON.")
@click.pass_context
def reflect(ctx, now, dry_run, as_json):
    """The daily advisory pass: contradictions, promotion candidates, decay markers.

    Prints a readable report and proposes it as reflections/YYYY-MM-DD.md (kept
    out of main unless approved); confident candidates become proposals too.

    Example: memgit reflect --now 2026-11-30
    """
    from memgit.lifecycle.reflect import reflect as run

    ws = open_workspace(ctx)
    r = run(ws, parse_now(now), dry_run=dry_run)
    flush_warnings(ws)
    if as_json:
        echo_json(r.to_dict())
        return
    click.echo(r.text, nl=False)
    if r.report_proposal:
        click.echo(f"\nReport proposed as {r.report_proposal} (reflections/{r.now}.md).")
