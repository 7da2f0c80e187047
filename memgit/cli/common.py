"""What every command module shares: opening the workspace, printing (JSON, warnings, colour), --now, error text."""
from __future__ import annotations

import json
import os
import sys
from datetime import date

import click

from memgit.errors import MemgitError


# -- output helpers ---------------------------------------------------------
def use_color() -> bool:
    return "NO_COLOR" not in os.environ and sys.stdout.isatty()


def style(text: str, **kw) -> str:
    return click.style(text, **kw) if use_color() else text


def echo_json(data) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def warn(msg: str) -> None:
    click.echo(f"Warning: {msg}", err=True)


def open_workspace(ctx: click.Context):
    from memgit.workspace import Workspace

    ws = Workspace.open(ctx.obj.get("dir"))
    ws.repair()
    return ws


def flush_warnings(ws) -> None:
    for w in ws.warnings:
        warn(w)
    ws.warnings.clear()


def echo_report(ws, report, as_json: bool) -> bool:
    """The part every run report prints the same way (dream, expire, janitor): warnings, then the
    JSON report, or the summary line. True when the JSON was printed and nothing more is due."""
    flush_warnings(ws)
    if as_json:
        echo_json(report.to_dict())
        return True
    for w in report.warnings:
        warn(w)
    click.echo(report.summary)
    return False


def bar(pct: float | None, width: int = 20) -> str:
    if pct is None:
        return "[" + " " * width + "]"
    filled = min(width, round(width * pct / 100))
    bar = "#" * filled + "." * (width - filled)
    color = "red" if pct > 90 else "yellow" if pct > 75 else "green"
    return "[" + style(bar, fg=color) + "]"


def parse_now(value: str | None) -> date:
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


def os_error_message(e: OSError) -> str:
    """One sentence for a failed file operation: what failed, on which file, what to do."""
    import errno

    where = f" ({e.filename})" if e.filename else ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{e.strerror or e}{where}; free some disk space and retry."
    return f"{e.strerror or e}{where}; check the path and permissions."


