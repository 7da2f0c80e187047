"""memgit's own session format: `sessions/<name>.jsonl`, one JSON object a line,
`{"ts": ISO-8601 string, "session": id, "role": "user"|"assistant", "text": str}`.

Reading it only validates: every line must hold the four keys with the right types (a
non-empty session id, a parseable timestamp); a line that does not is skipped with a
warning. Turns are passed on unchanged, timestamp text included. Extra keys are ignored.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from memgit.ingest.base import SESSION_ROLES, Read, Turn, first_records, json_records, parse_moment

NAME = "jsonl"
SUFFIXES = (".jsonl",)


def wants(name: str) -> bool:
    return name.endswith(SUFFIXES)


def looks_like(path: Path) -> bool:
    """memgit's own session lines: records holding ts, session, role and text, and nothing of another format."""
    records = first_records(path)
    return any(problem(r) is None for r in records) and all({"ts", "role"} <= set(r) for r in records)


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the turns of one memgit session file, warning about each invalid line."""
    warnings: list[str] = []
    for number, record in json_records(path, warnings):
        fault = problem(record)
        if fault:
            warnings.append(f"{path}:{number}: {fault}; line skipped")
            continue
        speaker = record.get("speaker") if isinstance(record.get("speaker"), str) else ""
        yield Turn(ts=record["ts"], session=record["session"], role=record["role"], text=record["text"],
                   speaker=speaker)
    return warnings


def problem(record: dict[str, Any]) -> str | None:
    """Why `record` is not a valid memgit session turn, or None when it is."""
    for key in ("ts", "session", "role", "text"):
        if key not in record:
            return f"missing key '{key}'"
        if not isinstance(record[key], str):
            return f"'{key}' is not a string"
    if not record["session"]:
        return "'session' is empty"
    if record["role"] not in SESSION_ROLES:
        return f"'role' is {record['role']!r}, not one of {', '.join(SESSION_ROLES)}"
    if parse_moment(record["ts"]) is None:
        return f"'ts' {record['ts']!r} is not an ISO-8601 timestamp"
    return None
