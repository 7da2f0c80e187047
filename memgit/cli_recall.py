"""`memgit recall` and `memgit schedule`: click only."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from memgit.cli import _ws, echo_json, style, warn
from memgit.errors import MemgitError


def _read_queries(path: Path) -> list[str]:
    """One query per line; a final newline does not start another query."""
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
        text = data.decode("utf-8-sig")
    except OSError as e:
        raise MemgitError(f"{path} cannot be read ({e.strerror}); check the path given to --queries.") from None
    except UnicodeDecodeError:
        raise MemgitError(f"{path} is not UTF-8 text; save the queries file as UTF-8.") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


@click.command()
@click.argument("query", nargs=-1)
@click.option("--queries", "queries_file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="A file of queries, one per line ('-' reads stdin).")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Hits per query.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the hits as JSON (with --queries: one list of hits per query, in order).")
@click.pass_context
def recall(ctx, query, queries_file, k, as_json):
    """Search memory, reference/, archives and daily logs (BM25, English and Chinese).

    Memory entries and log lines are ranked together; each hit gives its
    path, line, the whole line or entry as written, and its score. Searches
    the files as the agent sees them now.

    Example: memgit recall gateway restart   |   memgit recall --queries questions.txt -k 5 --json
    """
    from memgit.recall import recall as run

    if bool(query) == bool(queries_file):
        raise MemgitError("give either QUERY words or --queries FILE; "
                          "e.g. `memgit recall gateway restart`.")
    queries = _read_queries(queries_file) if queries_file else [" ".join(query)]
    ws = _ws(ctx)
    warnings: list[str] = []
    results = run(ws, queries, k, warnings)
    for w in warnings:
        warn(w)
    if as_json:
        lists = [[h.to_dict() for h in hits] for hits in results]
        echo_json(lists if queries_file else lists[0])
        return
    for q, hits in zip(queries, results):
        if queries_file:
            click.echo(style(f"== {q}", bold=True))
        if not hits:
            click.echo("No hits.")
        for h in hits:
            click.echo(f"{style(f'{h.path}:{h.line}', fg='cyan')}  {h.score:.2f}")
            for line in h.text.split("\n"):
                click.echo(f"    {line}")


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
@click.option("--json", "as_json", is_flag=True, help="Print the installed lines (or units) as JSON.")
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

    ws = _ws(ctx)
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
@click.option("--json", "as_json", is_flag=True, help="Print this workspace's crontab lines as JSON.")
@click.pass_context
def schedule_show(ctx, as_json):
    """Print this workspace's memgit lines in your crontab.

    Example: memgit schedule show
    """
    from memgit.lifecycle import schedule as sched

    ws = _ws(ctx)
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
@click.option("--json", "as_json", is_flag=True, help="Print the removed lines as JSON.")
@click.pass_context
def schedule_remove(ctx, as_json):
    """Take this workspace's memgit lines out of your crontab; every other line stays as it is.

    Example: memgit schedule remove
    """
    from memgit.lifecycle import schedule as sched

    ws = _ws(ctx)
    removed = sched.remove(ws)
    if as_json:
        echo_json({"removed": removed})
        return
    if not removed:
        click.echo(f"No memgit schedule for {ws.root}; nothing removed.")
        return
    click.echo(f"Removed {len(removed)} line(s) for {ws.root} from your crontab.")


COMMANDS = [recall, schedule]
