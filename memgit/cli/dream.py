"""`memgit dream`: click only."""
from __future__ import annotations

import click

from memgit.cli.common import echo_report, open_workspace, parse_now, style
from memgit.cli.options import dry_run_option, json_option, now_option
from memgit.dream import BACKENDS


@click.command()
@now_option
@dry_run_option()
@click.option("--backend", type=click.Choice(list(BACKENDS)),
              help="Engine for the signal and scoring stages (default from [llm] backend: offline).")
@click.option("--associate", is_flag=True, help="Also look for links across days for the memgit-diary.md diary.")
@click.option("--seed", type=int, default=None, help="Seed for --associate sampling.")
@json_option("Print the dream report as JSON.")
@click.pass_context
def dream(ctx, now, dry_run, backend, associate, seed, as_json):
    """Run the sleep cycle and turn what should change into proposals.

    \b
    1. light sleep: read memory and the window's logs and sessions
    2. REM: find status/version/preference changes, stale entries,
       duplicates, contradictions, recurring gotchas
    3. deep sleep: score each 0-1, keep >= threshold, at most max_ops,
       prune and refresh first; prune by value past forced_prune_pct
    4. propose: one branch per operation; main is not touched

    Example: memgit dream --now 2026-06-01
    """
    from memgit.dream import dream as run

    ws = open_workspace(ctx)
    day = parse_now(now)
    report = run(ws, day, dry_run=dry_run, backend=backend)
    if associate or ws.config.dream.associate:
        from memgit.lifecycle.diary import associate as diary

        report.extra["diary"] = diary(ws, day, seed=seed, dry_run=dry_run, backend=report.backend)
    if echo_report(ws, report, as_json):
        return
    for p in report.proposals:
        pid = style(p["id"] or "(dry-run)", fg="yellow")
        click.echo(f"  {pid}  {p['op']:<11} {p['confidence']:.2f}  {p['title']}")
    if report.skipped:
        click.echo("Skipped (top):")
        for s in report.skipped[:5]:
            click.echo(f"  {s['score']:.2f}  {s['op']:<11} {s['title']}  — {s['why']}")
    if report.dropped:
        click.echo(f"Dropped by the gate: {len(report.dropped)} candidate(s) that failed its checks "
                   f"(reasons in `memgit dream --json` and `memgit log --json`).")
    tokens = report.extra.get("tokens")
    if tokens:
        click.echo(f"Tokens: {tokens['input']} input, {tokens['cached']} cached, {tokens['output']} output.")
    diary = report.extra.get("diary")
    if diary is not None:
        n = len(diary["insights"])
        where = f" as {diary['proposal']}" if diary.get("proposal") else ""
        click.echo(f"Diary: {n} association(s) for memgit-diary.md{where}." if n else
                   "Diary: no association strong enough; nothing for memgit-diary.md.")
    if not report.proposals and (report.skipped or report.dropped):
        click.echo("Nothing to propose: no change was sure enough; a quiet run is a correct decision.")
    elif not report.proposals:
        click.echo("Nothing to propose: memory is up to date.")
    elif not dry_run:
        click.echo("Review with `memgit proposals` and `memgit show ID`.")
