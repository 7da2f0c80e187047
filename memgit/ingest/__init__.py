"""Import agent transcripts into the workspace's session files.

Each format has one reader module (see READERS); `ingest()` walks the given paths, runs
the reader on each file, redacts every text, and appends the new turns to
`<workspace>/<sessions_dir>/<fmt>-<session>.jsonl`, one
`{"ts", "session", "role", "text"}` object a line, sorted by time. Re-ingesting the same
input adds nothing; bad input becomes warnings in the summary, never an exception.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from types import ModuleType

from memgit.errors import MemgitError, NotFoundError
from memgit.ingest import claude_code, codex, events, hermes, hermes_logs, jsonl, openclaw
from memgit.ingest.base import Read, Reader, Skip, Turn, parse_moment
from memgit.ingest.speakers import settle
from memgit.sensitive import redact

__all__ = ["AUTO", "FORMATS", "READERS", "FileReport", "IngestSummary", "Reader", "Skip", "Turn", "detect",
           "ingest", "session_file_name"]

# The one list of formats, most specific first: `--from auto` asks each in this order whether
# a file is its own, and every other registry (the CLI's choices, READERS) derives from it.
_MODULES: dict[str, ModuleType] = {m.NAME: m for m in (codex, claude_code, openclaw, hermes, hermes_logs, events,
                                                        jsonl)}

READERS: dict[str, Reader] = {name: module.read for name, module in _MODULES.items()}
AUTO = "auto"
FORMATS = (*_MODULES, AUTO)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

TurnKey = tuple[str, str, str, str]


@dataclass(frozen=True)
class FileReport:
    """What one transcript file gave: turns kept per role, records left out per reason."""

    path: str
    fmt: str
    kept: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class IngestSummary:
    """What one ingest did.

    `sessions_written` lists the session files that changed (paths relative to the
    workspace); `turns_redacted` counts the added turns in which a secret was replaced;
    `files` says per file what was read and what was left out.
    """

    fmt: str
    files_read: int
    sessions_written: list[str]
    turns_added: int
    turns_skipped_duplicate: int
    turns_redacted: int
    warnings: list[str]
    files: list[FileReport] = field(default_factory=list)


def session_file_name(fmt: str, session: str) -> str:
    """The file a session's turns go to: `<fmt>-<id>.jsonl`, the id cut down to [A-Za-z0-9._-].

    An id that had to change (`../x`, `a/b`) gets a short hash of the original, so two
    different ids never share a file and no id can name a path outside the directory.
    """
    cleaned = _UNSAFE.sub("_", session).strip(".")[:100]
    if cleaned != session or not cleaned:
        digest = hashlib.sha256(session.encode("utf-8")).hexdigest()[:8]
        cleaned = f"{cleaned or 'session'}-{digest}"
    return f"{fmt}-{cleaned}.jsonl"


def detect(path: Path) -> list[str]:
    """The formats whose records `path` holds, most specific first (empty: none memgit reads)."""
    return [name for name, module in _MODULES.items() if module.looks_like(path)]


def ingest(workspace: Path, fmt: str, paths: list[Path], sessions_dir: str = "sessions",
           owners: frozenset[str] = frozenset()) -> IngestSummary:
    """Copy the transcripts at `paths` (files or directories) in format `fmt` into the workspace.

    `fmt` "auto" recognises each file's format by its content. A file named on the command
    line that is not in `fmt` (or, under "auto", in no format memgit reads) is an error naming
    the formats it looks like; a file found by walking a directory is reported as skipped.
    """
    if fmt != AUTO and fmt not in _MODULES:
        raise MemgitError(f"Unknown transcript format '{fmt}'; use one of: {', '.join(FORMATS)}.")
    if not workspace.is_dir():
        raise NotFoundError(f"Workspace {workspace} is not a directory; run memgit from your workspace.")
    if not paths:
        raise MemgitError("No transcript path given; name at least one file or directory to ingest.")
    for path in paths:
        if not path.exists():
            raise NotFoundError(f"{path} does not exist; check the path and run memgit ingest again.")
    target_dir = workspace / sessions_dir
    if target_dir.exists() and not target_dir.is_dir():
        raise MemgitError(f"{target_dir} is not a directory; move it aside so session files can go there.")

    warnings: list[str] = []
    reports: list[FileReport] = []
    plan = _plan(paths, fmt, reports)
    pending: dict[str, list[tuple[Turn, bool]]] = {}
    for file, file_fmt in plan:
        report = FileReport(str(file), file_fmt)
        reports.append(report)
        items, file_warnings = _drain(_MODULES[file_fmt].read(file, owners))
        warnings.extend(file_warnings)
        for item in items:
            settled = settle(item) if isinstance(item, Turn) else item
            if isinstance(settled, Skip):
                report.skipped[settled.reason] = report.skipped.get(settled.reason, 0) + 1
                continue
            clean = redact(settled.text)
            speaker = redact(settled.speaker)
            report.kept[settled.role] = report.kept.get(settled.role, 0) + 1
            name = session_file_name(file_fmt, settled.session)
            pending.setdefault(name, []).append((replace(settled, text=clean, speaker=speaker),
                                                 clean != settled.text or speaker != settled.speaker))
    if not plan:
        looked = "; ".join(f"{r.path}: {next(iter(r.skipped))}" for r in reports[:3])
        raise MemgitError(f"No {_fmt_name(fmt)} transcript found in {', '.join(map(str, paths))}"
                          + (f" ({looked})" if looked else "")
                          + "; check the path, or use --from auto to recognise each file's format.")

    written: list[str] = []
    added = duplicates = redacted = 0
    for name, turns in sorted(pending.items()):
        target = target_dir / name
        relative = (Path(sessions_dir) / name).as_posix()
        existing = _existing_lines(target, relative, warnings)
        if existing is None:
            continue
        seen = {key for _, _, key in existing}
        new: list[tuple[datetime, str, TurnKey]] = []
        for turn, was_redacted in turns:
            key = (turn.ts, turn.session, turn.role, turn.text)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            new.append((_moment(turn.ts), _line(turn), key))
            redacted += was_redacted
        if not new:
            continue
        merged = sorted(existing + new, key=lambda item: item[0])
        target_dir.mkdir(parents=True, exist_ok=True)
        _write_atomic(target, [line for _, line, _ in merged])
        written.append(relative)
        added += len(new)
    return IngestSummary(
        fmt=fmt,
        files_read=len(plan),
        sessions_written=written,
        turns_added=added,
        turns_skipped_duplicate=duplicates,
        turns_redacted=redacted,
        warnings=warnings,
        files=reports,
    )


def _fmt_name(fmt: str) -> str:
    return "recognisable" if fmt == AUTO else fmt


def _plan(paths: list[Path], fmt: str, reports: list[FileReport]) -> list[tuple[Path, str]]:
    """(file, format) for every file to read; files a directory walk found in no wanted format
    get a report saying so. A named file in the wrong format is an error."""
    plan: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for path in paths:
        named = not path.is_dir()
        for file in ([path] if named else _walk(path, fmt)):
            if file.resolve() in seen:
                continue
            seen.add(file.resolve())
            found = detect(file)
            chosen = (found[0] if found else None) if fmt == AUTO else (fmt if fmt in found else None)
            if chosen is not None:
                plan.append((file, chosen))
                continue
            if named:
                raise MemgitError(_mismatch(file, fmt, found))
            why = f"not {fmt}" + (f" (looks like {' or '.join(found)})" if found else "") if fmt != AUTO \
                else "in no format memgit reads"
            reports.append(FileReport(str(file), "", skipped={why: 1}))
    return plan


def _mismatch(file: Path, fmt: str, found: list[str]) -> str:
    if fmt != AUTO and found:
        return (f"{file} is not a {fmt} transcript; it looks like {' or '.join(found)}; "
                f"ingest it with --from {found[0]} (or --from auto).")
    if fmt != AUTO:
        return (f"{file} is not a {fmt} transcript, nor one of {', '.join(_MODULES)}; "
                "check that it is an agent transcript.")
    return (f"{file} is in no transcript format memgit reads ({', '.join(_MODULES)}); "
            "check that it is an agent transcript.")


def _walk(directory: Path, fmt: str) -> list[Path]:
    """Files under `directory` a format would read: by name, so a walk opens no stray file."""
    modules = list(_MODULES.values()) if fmt == AUTO else [_MODULES[fmt]]
    return sorted(
        Path(root) / name
        for root, _, names in os.walk(directory)
        for name in names
        if any(module.wants(name) for module in modules)
    )


def _drain(turns: Read) -> tuple[list[Turn | Skip], list[str]]:
    """All turns and skips a reader yields, and the warnings it returns when done."""
    collected: list[Turn | Skip] = []
    while True:
        try:
            collected.append(next(turns))
        except StopIteration as done:
            return collected, list(done.value or [])


def _existing_lines(target: Path, relative: str, warnings: list[str]) -> list[tuple[datetime, str, TurnKey]] | None:
    """The session file's lines, untouched, with their times and keys; None if it must be left alone."""
    if not target.exists():
        return []
    lines: list[tuple[datetime, str, TurnKey]] = []
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{relative}: cannot be read ({exc}); left unchanged, fix it and ingest again")
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        fault = jsonl.problem(record) if isinstance(record, dict) else "not a JSON object"
        if fault or not isinstance(record, dict):
            warnings.append(f"{relative}:{number}: {fault}; file left unchanged, fix it and ingest again")
            return None
        key = (record["ts"], record["session"], record["role"], record["text"])
        lines.append((_moment(record["ts"]), line + "\n", key))
    return lines


def _moment(ts: str) -> datetime:
    moment = parse_moment(ts)
    if moment is None:  # readers and jsonl.problem() only let parseable timestamps through
        raise ValueError(f"unparseable timestamp {ts!r}")
    return moment


def _line(turn: Turn) -> str:
    record = {"ts": turn.ts, "session": turn.session, "role": turn.role, "text": turn.text}
    if turn.speaker:
        record["speaker"] = turn.speaker
    return json.dumps(record, ensure_ascii=False) + "\n"


def _write_atomic(target: Path, lines: list[str]) -> None:
    """Replace `target` with `lines` in one step (memgit's one atomic writer: temp file, fsync, rename)."""
    from memgit.repo import atomic_write

    atomic_write(target, "".join(lines).encode("utf-8"))
