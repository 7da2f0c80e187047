"""Hermes Agent (NousResearch hermes-agent) session store: the SQLite database
`~/.hermes/state.db` (`$HERMES_HOME/state.db`), written by `hermes_state.SessionDB`.

The tables that matter:
- `sessions(id TEXT PRIMARY KEY, source TEXT, parent_session_id, model_config TEXT (JSON),
  started_at REAL, title, ...)`: one row per session; `source` is "cli", "telegram", ...
- `messages(id INTEGER PRIMARY KEY, session_id, role, content TEXT, tool_call_id,
  tool_calls, tool_name, timestamp REAL (Unix seconds), active, compacted,
  _compressed_summary, ...)`: role is "system", "user", "assistant" or "tool".

Kept: user and assistant rows with non-empty `content`, in (timestamp, id) order.
Skipped: tool and system rows, assistant rows that only carry `tool_calls`; rows the
user rewound (`active = 0 AND compacted = 0`); compaction summaries Hermes wrote for
itself (`_compressed_summary = 1`). Compacted originals (`compacted = 1`) are kept: they
are the real conversation, and the copies compaction re-inserts are removed as duplicates.
Sessions of subagents (a `_delegate_from` marker in `model_config`) and tool sessions
(`source = 'tool'`) are skipped, as Claude Code sidechains are. The schema has grown over
releases, so each optional column is used only when the table has it.

The database is opened read-only (`mode=ro`), so ingesting never changes a live store.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from urllib.parse import quote

from memgit.ingest.base import Read, Turn, iso_utc

NAME = "hermes"
SUFFIXES = (".db", ".sqlite", ".sqlite3")


def wants(name: str) -> bool:
    return name.endswith(SUFFIXES)


def looks_like(path: Path) -> bool:
    """A SQLite database whose `messages` table has Hermes' columns."""
    try:
        with path.open("rb") as handle:
            if handle.read(16) != b"SQLite format 3\x00":
                return False
    except OSError:
        return False
    uri = f"file:{quote(path.resolve().as_posix())}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
        try:
            return _REQUIRED <= _columns(connection, "messages")
        finally:
            connection.close()
    except sqlite3.Error:
        return False

_REQUIRED = {"session_id", "role", "content", "timestamp"}


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the user and assistant turns of every session in one Hermes state database."""
    warnings: list[str] = []
    uri = f"file:{quote(path.resolve().as_posix())}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        return [f"{path}: cannot be opened as a SQLite database ({exc}); file skipped"]
    try:
        rows, skipped_sessions, problem = _query(connection)
    except sqlite3.Error as exc:
        return [f"{path}: not a readable SQLite database ({exc}); file skipped"]
    finally:
        connection.close()
    if problem:
        return [f"{path}: {problem}; file skipped"]
    for row_id, session, role, content, timestamp in rows:
        if not isinstance(session, str) or not session or session in skipped_sessions:
            continue
        text = content.strip() if isinstance(content, str) else ""
        if not text:
            continue
        ts = iso_utc(timestamp)
        if ts is None:
            warnings.append(f"{path}: message {row_id} has no usable timestamp; row skipped")
            continue
        yield Turn(ts=ts, session=session, role=role, text=text)
    return warnings


def _query(connection: sqlite3.Connection) -> tuple[list[tuple], set[str], str | None]:
    """(message rows, ids of sessions to skip, or a reason this is no Hermes store)."""
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "messages" not in tables:
        return [], set(), "has no messages table, so it is not a Hermes session store"
    columns = _columns(connection, "messages")
    missing = _REQUIRED - columns
    if missing:
        return [], set(), f"its messages table lacks {', '.join(sorted(missing))}"
    where = ["role IN ('user', 'assistant')"]
    if {"active", "compacted"} <= columns:
        where.append("(active = 1 OR compacted = 1)")
    if "_compressed_summary" in columns:
        where.append("COALESCE(_compressed_summary, 0) = 0")
    key = "id" if "id" in columns else "rowid"
    rows = connection.execute(
        f"SELECT {key}, session_id, role, content, timestamp FROM messages"
        f" WHERE {' AND '.join(where)} ORDER BY timestamp, {key}"
    ).fetchall()
    skipped = _subagent_sessions(connection) if "sessions" in tables else set()
    return rows, skipped, None


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def _subagent_sessions(connection: sqlite3.Connection) -> set[str]:
    """Ids of delegated subagent runs and tool sessions: not the user's conversation."""
    columns = _columns(connection, "sessions")
    if "id" not in columns:
        return set()
    source = "source" if "source" in columns else "NULL"
    config = "model_config" if "model_config" in columns else "NULL"
    skipped = set()
    for session_id, session_source, model_config in connection.execute(
        f"SELECT id, {source}, {config} FROM sessions"
    ):
        if session_source == "tool" or _delegated(model_config):
            skipped.add(session_id)
    return skipped


def _delegated(model_config: object) -> bool:
    if not isinstance(model_config, str) or "_delegate_from" not in model_config:
        return False
    try:
        config = json.loads(model_config)
    except json.JSONDecodeError:
        return False
    return isinstance(config, dict) and bool(config.get("_delegate_from"))
