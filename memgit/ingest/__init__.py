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
from collections.abc import Generator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from types import ModuleType

from memgit.errors import MemgitError, NotFoundError
from memgit.ingest import claude_code, events, hermes, jsonl, openclaw
from memgit.ingest.base import Reader, Turn, parse_moment
from memgit.sensitive import redact

__all__ = ["READERS", "IngestSummary", "Reader", "Turn", "ingest", "session_file_name"]

_MODULES: dict[str, ModuleType] = {
    "claude-code": claude_code,
    "openclaw": openclaw,
    "hermes": hermes,
    "events": events,
    "jsonl": jsonl,
}

READERS: dict[str, Reader] = {name: module.read for name, module in _MODULES.items()}

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

TurnKey = tuple[str, str, str, str]


@dataclass(frozen=True)
class IngestSummary:
    """What one ingest did.

    `sessions_written` lists the session files that changed (paths relative to the
    workspace); `turns_redacted` counts the added turns in which a secret was replaced.
    """

    fmt: str
    files_read: int
    sessions_written: list[str]
    turns_added: int
    turns_skipped_duplicate: int
    turns_redacted: int
    warnings: list[str]


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


def ingest(workspace: Path, fmt: str, paths: list[Path], sessions_dir: str = "sessions") -> IngestSummary:
    """Copy the transcripts at `paths` (files or directories) in format `fmt` into the workspace."""
    module = _MODULES.get(fmt)
    if module is None:
        raise MemgitError(f"Unknown transcript format '{fmt}'; use one of: {', '.join(_MODULES)}.")
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
    files = _transcript_files(paths, module.SUFFIXES, fmt, warnings)
    pending: dict[str, list[tuple[Turn, bool]]] = {}
    for file in files:
        turns, file_warnings = _drain(READERS[fmt](file))
        warnings.extend(file_warnings)
        for turn in turns:
            clean = redact(turn.text)
            name = session_file_name(fmt, turn.session)
            pending.setdefault(name, []).append((replace(turn, text=clean), clean != turn.text))

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
        files_read=len(files),
        sessions_written=written,
        turns_added=added,
        turns_skipped_duplicate=duplicates,
        turns_redacted=redacted,
        warnings=warnings,
    )


def _transcript_files(paths: list[Path], suffixes: tuple[str, ...], fmt: str, warnings: list[str]) -> list[Path]:
    """Every file to read: each named file, and each file with a format suffix under a named directory."""
    files: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found = sorted(
                Path(root) / name
                for root, _, names in os.walk(path)
                for name in names
                if name.endswith(suffixes)
            )
            if not found:
                warnings.append(f"{path}: no {fmt} files ({', '.join(suffixes)}) found in this directory")
        else:
            found = [path]
        for file in found:
            if file.resolve() not in seen:
                seen.add(file.resolve())
                files.append(file)
    return files


def _drain(turns: Generator[Turn, None, list[str]]) -> tuple[list[Turn], list[str]]:
    """All turns a reader yields, and the warnings it returns when done."""
    collected: list[Turn] = []
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
    return json.dumps(record, ensure_ascii=False) + "\n"


def _write_atomic(target: Path, lines: list[str]) -> None:
    """Replace `target` with `lines` in one step (memgit's one atomic writer: temp file, fsync, rename)."""
    from memgit.repo import atomic_write

    atomic_write(target, "".join(lines).encode("utf-8"))
