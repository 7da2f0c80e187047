"""`memgit expire`: old daily logs and stale P2 entries leave the files the agent reads.

Nothing is deleted: every change is a proposal (a branch with one commit) that
a person approves, and what leaves goes to an archive in the same repo.

(a) Daily logs `<logs_dir>/YYYY-MM-DD.md` (also `YYYY-MM-DD-slug.md`, `YYYY-MM-DD-HHMM.md`) older
    than `lifecycle.log_days`
    move to `<archive_dir>/archive-YYYY-MM/` (the log's month) as git renames
    with byte-identical content. **One proposal per month of logs**: a month is
    the unit a person reviews and reverts, and its commit (one tree holding all
    that month's renames) shows in `git diff -M` as 100% renames. A month whose
    logs are only partly old is moved in part; its later logs follow in a later
    run's proposal for the same folder. Logs already claimed by an open
    proposal are left out, so running expire again proposes nothing new.
(b) P2 entries dated more than `p2_days` ago and not mentioned in the logs of
    the last `p2_days` days (see `memgit.lifecycle.priority`) move, text and
    date as written, to `<archive_dir>/archive-YYYY-MM/<FILE>.archived.md`
    (YYYY-MM: the month of `now`) under a heading naming their section and
    file; one proposal per memory file. P0 and protected entries never move.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePosixPath

from memgit import journal, proposals
from memgit.lifecycle import priority
from memgit.lifecycle.priority import References
from memgit.ops import Evidence, Operation
from memgit.workspace import Workspace


@dataclass
class Report:
    """What one expire or janitor run found and proposed."""

    command: str
    now: str
    dry_run: bool
    proposals: list[dict] = field(default_factory=list)   # one per planned operation
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def made(self) -> list[dict]:
        return [p for p in self.proposals if p["status"] == "proposed"]

    @property
    def summary(self) -> str:
        kinds: dict[str, int] = {}
        for p in self.proposals:
            kinds[p["rule"]] = kinds.get(p["rule"], 0) + 1
        what = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "nothing to do"
        verb = "would propose" if self.dry_run else "proposed"
        n = len(self.proposals) if self.dry_run else len(self.made)
        return (f"{self.command} {self.now}: {verb} {n} change(s) ({what}) "
                f"in {self.timings.get('total', 0.0):.2f} s")

    def to_dict(self) -> dict:
        return {"command": self.command, "now": self.now, "dry_run": self.dry_run, "summary": self.summary,
                "proposals": self.proposals, "warnings": self.warnings,
                "timings": {k: round(v, 3) for k, v in self.timings.items()}}


@dataclass(frozen=True)
class Planned:
    rule: str
    op: Operation
    count: int          # files or entries it moves


@dataclass
class Claims:
    """What open proposals already change: a new run leaves it alone."""

    files: set[str] = field(default_factory=set)
    entries: set[tuple[str, str]] = field(default_factory=set)   # (file, entry text)

    @classmethod
    def open(cls, ws: Workspace) -> Claims:
        c = cls()
        for p in proposals.list_proposals(ws, check=False):
            for src, dst in p.op.extra.get("files") or ():
                c.files.update((src, dst))
            for t in p.op.targets:
                c.entries.add((p.op.file, t))
        return c

    def has(self, file: str, text: str) -> bool:
        return (file, text) in self.entries

    def take(self, file: str, texts: list[str]) -> None:
        self.entries.update((file, t) for t in texts)


Planner = Callable[[Workspace, str, date, "Claims", list[str]], list[Planned]]


def run(ws: Workspace, command: str, now: date, dry_run: bool, plan: Planner) -> Report:
    """Shared by expire and janitor: lock, prepare, plan against main, propose, journal."""
    t0 = time.perf_counter()
    report = Report(command, now.isoformat(), dry_run)
    with ws.repo.lock():
        ws.prepare()
        t1 = time.perf_counter()
        main = ws.main()
        planned = plan(ws, main, now, Claims.open(ws), report.warnings)
        t2 = time.perf_counter()
        run_id = f"{command}-{now.isoformat()}"
        planned = [Planned(p.rule, p.op.with_(run=run_id), p.count) for p in planned]
        made = [] if dry_run else proposals.create(ws, [p.op for p in planned], skip_known=True)
        by_fp = {m.op.fingerprint: m for m in made}
        for p in planned:
            m = by_fp.get(p.op.fingerprint)
            status = "dry-run" if dry_run else ("proposed" if m else "known")
            report.proposals.append({
                "id": m.id if m else None, "status": status, "rule": p.rule, "op": p.op.op,
                "file": p.op.file, "dest": p.op.dest, "count": p.count, "title": p.op.title,
                "reason": p.op.reason, "confidence": p.op.confidence})
        if made:
            journal.append(ws.repo, command, {"summary": f"{len(made)} proposal(s) for {now.isoformat()}",
                                              "ids": [m.id for m in made], "run": run_id})
        report.warnings = list(dict.fromkeys(report.warnings + ws.warnings))
        ws.warnings.clear()
        t3 = time.perf_counter()
    report.timings = {"prepare": t1 - t0, "plan": t2 - t1, "propose": t3 - t2, "total": t3 - t0}
    return report


def expire(ws: Workspace, now: date, dry_run: bool = False) -> Report:
    """Propose archiving old daily logs (one proposal per month) and stale P2 entries (one per file)."""
    return run(ws, "expire", now, dry_run, plan)


def plan(ws: Workspace, main: str, now: date, claims: Claims, warnings: list[str]) -> list[Planned]:
    logs = priority.log_files(ws, main)
    return plan_logs(ws, main, now, claims, warnings, logs) + plan_p2(ws, main, now, claims, warnings, logs)


def plan_logs(ws: Workspace, main: str, now: date, claims: Claims, warnings: list[str],
              logs: list[priority.LogFile] | None = None) -> list[Planned]:
    """One multi-file `move` per month of live logs older than log_days."""
    mem, days = ws.config.memory, ws.config.lifecycle.log_days
    limit = priority.cutoff(now, days)
    logs = priority.log_files(ws, main) if logs is None else logs
    existing = {lf.path for lf in logs if lf.archived}
    months: dict[str, list[list[str]]] = {}
    for lf in logs:
        if lf.archived or lf.day >= limit or lf.path in claims.files:
            continue
        month = priority.month_of(lf.day)
        dest = f"{priority.archive_folder(mem.archive_dir, month)}/{PurePosixPath(lf.path).name}"
        if dest in existing or dest in claims.files:
            warnings.append(f"{lf.path} is not archived: {dest} already exists; compare the two and keep one "
                            f"by hand.")
            continue
        months.setdefault(month, []).append([lf.path, dest])
    out = []
    for month, files in sorted(months.items()):
        folder = priority.archive_folder(mem.archive_dir, month)
        op = Operation("move", mem.logs_dir.strip("/"), dest=folder, confidence=1.0, origin="offline",
                       reason=f"{len(files)} daily log(s) of {month} are older than {days} days; they move "
                              f"to {folder}/ unchanged (git renames).",
                       extra={"files": files})
        out.append(Planned("logs", op, len(files)))
    return out


def plan_p2(ws: Workspace, main: str, now: date, claims: Claims, warnings: list[str],
            logs: list[priority.LogFile] | None = None) -> list[Planned]:
    """One entries-`move` per memory file: its stale, unreferenced P2 entries go to the month's archive."""
    cfg = ws.config
    days = cfg.lifecycle.p2_days
    limit = priority.cutoff(now, days)
    docs = ws.documents(main)
    refs = None
    out = []
    for name, doc in docs.items():
        blocks: list[str] = []
        chosen = []
        evidence = []
        for section, entries in priority.entries_by_section(doc):
            if priority.section_frozen(section):
                continue
            picked = []
            for e in entries:
                if e.frozen or e.priority != "P2" or not priority.older(e, limit) or claims.has(name, e.text):
                    continue
                if refs is None:
                    refs = References.window(ws, main, now, days, logs)
                if refs.mention(e.body):
                    continue
                if priority.holds_secret(name, e, warnings, "not archived"):
                    continue
                picked.append(e)
            if not picked:
                continue
            where = section.title if section else name
            prio = section.priority if section else "P1"
            blocks.append("\n".join([f"## {where} (from {name}) [{prio}]", *(e.text for e in picked)]))
            chosen += picked
            evidence += [Evidence(f"{name}:{e.line}", e.body) for e in picked]
        if not chosen:
            continue
        claims.take(name, [e.text for e in chosen])
        folder = priority.archive_folder(cfg.memory.archive_dir, priority.month_of(now))
        dest = f"{folder}/{PurePosixPath(name).stem}.archived.md"
        op = Operation("move", name, tuple(e.text for e in chosen), text="\n".join(blocks), dest=dest,
                       confidence=0.9, origin="offline", evidence=tuple(evidence[:20]),
                       reason=f"{len(chosen)} P2 entr{'y' if len(chosen) == 1 else 'ies'} older than {days} days "
                              f"and not mentioned in the last {days} days of logs; archived with text and "
                              f"date kept.")
        out.append(Planned("p2-archive", op, len(chosen)))
    return out
