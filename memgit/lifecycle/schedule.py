"""`memgit schedule`: the lifecycle runs by itself, from the user's crontab (or systemd timers).

Each job is one crontab line running `<python> -m memgit -C <workspace> <command>`
with its output appended to `.git/memgit/cron.log`. Every line memgit writes ends
with a marker comment `# memgit-schedule:<id>` (id = a hash of the workspace's
absolute path), so installing again replaces exactly this workspace's lines,
in place, and removing takes out only them; every other line of the crontab
is written back byte for byte.

Cadences: `Nd` (1-31 days) and `Nh` (1-23 hours). Cron has no "every N days",
so 1d is daily, 7d weekly (Sunday), 28d-31d monthly (the 1st), and other Nd
run on every Nth day of the month (1, 1+N, …), restarting each month.
"""
from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import ConfigError, MemgitError
from memgit.workspace import Workspace

MARK = "memgit-schedule"
MARK_RE = re.compile(r"#\s*" + MARK + r":([0-9a-f]{12})(?![0-9a-f])")
EVERY_RE = re.compile(r"^\s*(\d{1,3})\s*([dh])\s*$", re.IGNORECASE)
AT_RE = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")
OFF = ("", "off", "never", "none")
# minutes after --at, so the jobs do not queue on the workspace lock
FOLLOWERS = (("janitor", 10), ("reflect", 20), ("expire", 30))
ASSOCIATE_OFFSET = 40
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Cadence:
    n: int
    unit: str   # "d" or "h"

    def __str__(self) -> str:
        return f"{self.n}{self.unit}"

    @property
    def weekly(self) -> bool:
        return self.unit == "d" and self.n == 7

    @property
    def monthly(self) -> bool:
        return self.unit == "d" and self.n >= 28


WEEKLY = Cadence(7, "d")


@dataclass(frozen=True)
class Job:
    name: str                 # dream | janitor | reflect | expire | associate
    args: tuple[str, ...]     # memgit arguments after `-C <workspace>`
    every: Cadence
    minute: int               # minute of the day, 0..1439

    @property
    def at(self) -> str:
        return f"{self.minute // 60:02d}:{self.minute % 60:02d}"

    def cron(self) -> str:
        """The five time fields of a crontab line."""
        h, m = divmod(self.minute, 60)
        if self.every.unit == "h":
            hours = sorted({(h + i * self.every.n) % 24 for i in range(-(-24 // self.every.n))})
            return f"{m} {','.join(map(str, hours))} * * *"
        if self.every.weekly:
            return f"{m} {h} * * 0"
        if self.every.monthly:
            return f"{m} {h} 1 * *"
        if self.every.n == 1:
            return f"{m} {h} * * *"
        return f"{m} {h} */{self.every.n} * *"

    def calendar(self) -> str:
        """The systemd OnCalendar= expression for the same times."""
        h, m = divmod(self.minute, 60)
        if self.every.unit == "h":
            hours = sorted({(h + i * self.every.n) % 24 for i in range(-(-24 // self.every.n))})
            return f"*-*-* {','.join(f'{x:02d}' for x in hours)}:{m:02d}:00"
        if self.every.weekly:
            return f"Sun *-*-* {h:02d}:{m:02d}:00"
        if self.every.monthly:
            return f"*-*-01 {h:02d}:{m:02d}:00"
        if self.every.n == 1:
            return f"*-*-* {h:02d}:{m:02d}:00"
        return f"*-*-01/{self.every.n} {h:02d}:{m:02d}:00"


@dataclass(frozen=True)
class InstallResult:
    lines: list[str]          # this workspace's lines now in the crontab
    removed: list[str]        # its lines that were there before
    changed: bool             # False when the crontab already held exactly these lines
    log: Path


# -- parsing ----------------------------------------------------------------------------
def parse_every(value: str, where: str = "--every") -> Cadence:
    """`3d` or `6h` → Cadence; a clean error naming `where` otherwise."""
    m = EVERY_RE.match(value or "")
    err = ConfigError if where.startswith("[") else MemgitError
    if not m:
        raise err(f"{where} {value!r} is not a cadence; give a number of days or hours like 3d or 6h.")
    n, unit = int(m.group(1)), m.group(2).lower()
    if unit == "d" and not 1 <= n <= 31:
        raise err(f"{where} {value!r} is out of range; cron runs from 1d (daily) to 31d (monthly).")
    if unit == "h" and not 1 <= n <= 23:
        raise err(f"{where} {value!r} is out of range; give 1h to 23h, or whole days as 1d.")
    return Cadence(n, unit)


def parse_at(value: str) -> int:
    """`03:00` → minute of the day."""
    m = AT_RE.match(value or "")
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise MemgitError(f"--at {value!r} is not a time of day; give it as HH:MM, e.g. 03:00.")
    return int(m.group(1)) * 60 + int(m.group(2))


def plan(ws: Workspace, every: str | None = None, at: str = "03:00") -> list[Job]:
    """The jobs of this workspace: dream at `at` every `every`, then the [schedule] cadences."""
    cfg = ws.config
    start = parse_at(at)
    jobs = [Job("dream", ("dream",), parse_every(every) if every else
                parse_every(cfg.schedule.dream, "[schedule] dream in memgit.toml"), start)]
    for name, offset in FOLLOWERS:
        value = getattr(cfg.schedule, name)
        if value.strip().lower() in OFF:
            continue
        cadence = parse_every(value, f"[schedule] {name} in memgit.toml")
        jobs.append(Job(name, (name,), cadence, (start + offset) % 1440))
    if not cfg.dream.associate:  # with associate on, every dream already writes the diary
        jobs.append(Job("associate", ("dream", "--associate"), WEEKLY, (start + ASSOCIATE_OFFSET) % 1440))
    return jobs


# -- the lines --------------------------------------------------------------------------
def workspace_id(ws: Workspace) -> str:
    return hashlib.sha256(str(ws.root).encode("utf-8", "surrogateescape")).hexdigest()[:12]


def marker(ws: Workspace) -> str:
    return f"# {MARK}:{workspace_id(ws)}"


def log_path(ws: Workspace) -> Path:
    git_dir = ws.repo.git_dir if ws.repo.git_dir.is_absolute() else ws.root / ws.repo.git_dir
    return git_dir.resolve() / "memgit" / "cron.log"


def _python() -> str:
    exe = sys.executable
    if not exe or not Path(exe).is_absolute():
        raise MemgitError("cannot tell which Python runs memgit (sys.executable is empty); "
                          "run `memgit schedule install` from an installed memgit.")
    return exe


def _search_path() -> str:
    """PATH for the job: cron's is minimal, and memgit needs the git found now."""
    git = shutil.which("git")
    dirs = [str(Path(git).parent)] if git else []
    for d in SYSTEM_PATH.split(":"):
        if d not in dirs:
            dirs.append(d)
    return ":".join(dirs)


def _check_path(ws: Workspace) -> None:
    if any(c in str(ws.root) for c in "\n\r"):
        raise MemgitError(f"the workspace path {str(ws.root)!r} holds a line break, which a crontab line cannot; "
                          f"move the workspace to a plain path.")


def cron_line(ws: Workspace, job: Job) -> str:
    """One crontab line: time fields, the command with its log, the marker."""
    q = shlex.quote
    cmd = (f"{{ date; PATH={q(_search_path())} {q(_python())} -m memgit -C {q(str(ws.root))} "
           f"{' '.join(q(a) for a in job.args)}; }} >> {q(str(log_path(ws)))} 2>&1")
    cmd = cmd.replace("%", r"\%")  # cron turns a bare % into a newline
    return f"{job.cron()} {cmd} {marker(ws)} {job.name}"


def header_line(ws: Workspace, jobs: list[Job]) -> str:
    what = ", ".join(f"{j.name} {j.every}" for j in jobs)
    return f"{marker(ws)} {ws.root} ({what}); `memgit schedule remove` takes these lines out"


def lines_for(ws: Workspace, jobs: list[Job]) -> list[str]:
    _check_path(ws)
    return [header_line(ws, jobs), *[cron_line(ws, j) for j in jobs]]


def _ours(line: str, wid: str) -> bool:
    return any(m.group(1) == wid for m in MARK_RE.finditer(line))


def split(text: str, wid: str) -> tuple[list[str], list[str], int | None]:
    """(the other lines, this workspace's lines, index among the others where ours began)."""
    kept, ours = [], []
    at = None
    for line in text.split("\n"):
        if _ours(line, wid):
            if at is None:
                at = len(kept)
            ours.append(line)
        else:
            kept.append(line)
    return kept, ours, at


def _join(lines: list[str]) -> str:
    return "\n".join(lines)


# -- crontab ----------------------------------------------------------------------------
def _crontab() -> str:
    exe = shutil.which("crontab")
    if not exe:
        raise MemgitError("the `crontab` command is not on PATH; install cron (e.g. `apt install cron`) "
                          "or print systemd timers with `memgit schedule install --systemd`.")
    return exe


def read_crontab() -> str:
    """The user's crontab as text (bytes that are not UTF-8 survive as surrogates)."""
    p = subprocess.run([_crontab(), "-l"], capture_output=True, check=False)
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip()
        if "no crontab" in err.lower():
            return ""
        raise MemgitError(f"`crontab -l` failed ({err or f'exit {p.returncode}'}); check that cron is "
                          f"installed and that you may use it.")
    return p.stdout.decode("utf-8", "surrogateescape")


def write_crontab(text: str) -> None:
    p = subprocess.run([_crontab(), "-"], input=text.encode("utf-8", "surrogateescape"), capture_output=True,
                       check=False)
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip()
        raise MemgitError(f"`crontab -` refused the new crontab ({err or f'exit {p.returncode}'}); "
                          f"your crontab was not changed, check `crontab -l`.")


def install(ws: Workspace, jobs: list[Job]) -> InstallResult:
    """Put this workspace's lines into the crontab, replacing its old ones where they were."""
    new_lines = lines_for(ws, jobs)
    log = log_path(ws)
    current = read_crontab()
    kept, old, at = split(current, workspace_id(ws))
    if at is None:
        body = _join(kept)
        if body and not body.endswith("\n"):
            body += "\n"
        text = body + _join(new_lines) + "\n"
    else:
        text = _join(kept[:at] + new_lines + kept[at:])
    changed = text != current
    if changed:
        log.parent.mkdir(parents=True, exist_ok=True)
        write_crontab(text)
    return InstallResult(new_lines, old, changed, log)


def show(ws: Workspace) -> list[str]:
    """This workspace's memgit lines in the crontab (empty if none)."""
    return split(read_crontab(), workspace_id(ws))[1]


def remove(ws: Workspace) -> list[str]:
    """Take this workspace's lines out of the crontab; return them."""
    current = read_crontab()
    kept, old, _ = split(current, workspace_id(ws))
    if old:
        write_crontab(_join(kept))
    return old


# -- systemd ----------------------------------------------------------------------------
def _unit_quote(arg: str) -> str:
    arg = arg.replace("%", "%%")
    if re.fullmatch(r"[\w@%+=:,./-]+", arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unit_name(ws: Workspace, job: Job) -> str:
    return f"memgit-{workspace_id(ws)}-{job.name}"


def systemd_units(ws: Workspace, jobs: list[Job]) -> dict[str, str]:
    """File name → text of a user .service and .timer per job (printed, never installed)."""
    _check_path(ws)
    log = str(log_path(ws)).replace("%", "%%")
    exec_start = " ".join(_unit_quote(a) for a in (_python(), "-m", "memgit", "-C", str(ws.root)))
    units: dict[str, str] = {}
    for j in jobs:
        name = unit_name(ws, j)
        title = f"memgit {' '.join(j.args)} for {ws.root}".replace("%", "%%")
        units[f"{name}.service"] = (
            f"[Unit]\nDescription={title}\n\n"
            f"[Service]\nType=oneshot\nEnvironment={_unit_quote('PATH=' + _search_path())}\n"
            f"ExecStart={exec_start} {' '.join(_unit_quote(a) for a in j.args)}\n"
            f"StandardOutput=append:{log}\nStandardError=append:{log}\n")
        units[f"{name}.timer"] = (
            f"[Unit]\nDescription={title}, every {j.every}\n\n"
            f"[Timer]\nOnCalendar={j.calendar()}\nPersistent=true\n\n"
            f"[Install]\nWantedBy=timers.target\n")
    return units


def systemd_enable(ws: Workspace, jobs: list[Job]) -> str:
    timers = " ".join(f"{unit_name(ws, j)}.timer" for j in jobs)
    return f"systemctl --user daemon-reload && systemctl --user enable --now {timers}"
