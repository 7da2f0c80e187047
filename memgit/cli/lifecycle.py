"""`memgit expire`, `memgit janitor` and `memgit schedule`: click only."""
from __future__ import annotations

import click

from memgit.cli.common import echo_json, echo_report, open_workspace, parse_now, style
from memgit.cli.options import dry_run_option, json_option, now_option


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
@now_option
@dry_run_option()
@json_option("Print the report as JSON.")
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

    ws = open_workspace(ctx)
    _print(ws, run(ws, parse_now(now), dry_run=dry_run), as_json)


@click.command()
@now_option
@dry_run_option()
@json_option("Print the report as JSON.")
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

    ws = open_workspace(ctx)
    _print(ws, run(ws, parse_now(now), dry_run=dry_run), as_json)


@click.group()
def schedule():
    """Run dream, janitor, reflect and expire by themselves (cron or systemd).

    Example: memgit schedule install --every 1d --at 03:00
    """


@schedule.command("install")
@click.option("--every", default=None, metavar="Nd|Nh",
              help="How often to dream (default: [schedule] dream in memgit.toml, 1d).")
@click.option("--at", "at", default="03:00", show_default=True, metavar="HH:MM", help="Time of day of the dream.")
@click.option("--systemd", is_flag=True, help="Print systemd user .service/.timer units instead of using crontab.")
@json_option("Print the installed lines (or units) as JSON.")
@click.pass_context
def schedule_install(ctx, every, at, systemd, as_json):
    """Add this workspace's crontab lines (replacing its old ones; other lines are kept).

    Dream runs at --at every --every; janitor, reflect and expire follow at
    10-minute steps with the cadences of [schedule] in memgit.toml, and a weekly
    `dream --associate` writes the diary unless [dream] associate is on. Output
    is appended to .git/memgit/cron.log.

    Example: memgit schedule install --every 3d --at 03:00   |   memgit schedule install --systemd
    """
    from memgit.lifecycle import schedule as sched

    ws = open_workspace(ctx)
    jobs = sched.plan(ws, every, at)
    if systemd:
        units = sched.systemd_units(ws, jobs)
        if as_json:
            echo_json({"units": units, "enable": sched.systemd_enable(ws, jobs)})
            return
        for name, text in units.items():
            click.echo(f"# ~/.config/systemd/user/{name}")
            click.echo(text)
        click.echo("# then: " + sched.systemd_enable(ws, jobs))
        return
    r = sched.install(ws, jobs)
    if as_json:
        echo_json({"installed": r.lines, "replaced": r.removed, "changed": r.changed, "log": str(r.log)})
        return
    verb = "Installed" if not r.removed else ("Replaced" if r.changed else "Already installed:")
    click.echo(f"{verb} {len(jobs)} memgit job(s) for {ws.root} in your crontab:")
    for line in r.lines:
        click.echo(f"  {line}")
    click.echo(f"Output goes to {r.log}; `memgit schedule remove` takes them out.")


@schedule.command("show")
@json_option("Print this workspace's crontab lines as JSON.")
@click.pass_context
def schedule_show(ctx, as_json):
    """Print this workspace's memgit lines in your crontab.

    Example: memgit schedule show
    """
    from memgit.lifecycle import schedule as sched

    ws = open_workspace(ctx)
    lines = sched.show(ws)
    if as_json:
        echo_json({"lines": lines, "log": str(sched.log_path(ws))})
        return
    if not lines:
        click.echo(f"No memgit schedule for {ws.root}; add one with `memgit schedule install`.")
        return
    for line in lines:
        click.echo(line)


@schedule.command("remove")
@json_option("Print the removed lines as JSON.")
@click.pass_context
def schedule_remove(ctx, as_json):
    """Take this workspace's memgit lines out of your crontab; every other line stays as it is.

    Example: memgit schedule remove
    """
    from memgit.lifecycle import schedule as sched

    ws = open_workspace(ctx)
    removed = sched.remove(ws)
    if as_json:
        echo_json({"removed": removed})
        return
    if not removed:
        click.echo(f"No memgit schedule for {ws.root}; nothing removed.")
        return
    click.echo(f"Removed {len(removed)} line(s) for {ws.root} from your crontab.")
