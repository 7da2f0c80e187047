"""Hermes Agent (NousResearch hermes-agent) session store: the SQLite database
`~/.hermes/state.db` (`$HERMES_HOME/state.db`), written by `hermes_state.SessionDB`.

Read from schema version 5 (March 2026) to 30 (the schema in `hermes_state_common.py`,
`SCHEMA_SQL`; before the split it lived in `hermes_state.py`). The tables that matter:
- `sessions(id, source, model_config JSON, system_prompt | system_prompt_hash,
  parent_session_id, started_at, ended_at, end_reason, ...)`;
- `messages(id, session_id, role, content, tool_calls, timestamp REAL, ...)`, with columns
  added over time: `active` (a rewound or undone row is `active = 0`), `compacted` (in-place
  compaction, `SessionDB.archive_and_compact`, archives the summarised rows as
  `active = 0, compacted = 1` and re-inserts the compacted list as new active rows),
  `_compressed_summary`, `display_kind` ('hidden': model-facing scaffolding no client shows).

Who said what (the same rules serve the session logs, `memgit.ingest.hermes_logs`):
- user rows are the owner, assistant rows the assistant; tool and system rows are left out;
- compaction (agent/context_compressor.py): the summary it writes (`_compressed_summary = 1`,
  or text opening with "[CONTEXT COMPACTION" / "[CONTEXT SUMMARY]:") is a SUMMARY turn; a
  summary merged into a real message (the "--- END OF CONTEXT SUMMARY" marker, or the
  "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]" delimiter) gives a SUMMARY and the
  real remainder; the notes it injects as user messages (the preserved task list, the
  preserved objective, files-read notes: a first line in brackets about context
  compression) are harness text; the head and tail it copies into the new generation
  (or, in rotation, into the continuation session) are duplicates of turns already read;
- harness rows: `[SYSTEM: ...]` / `[System note: ...]` preambles (a cron job's hint is cut
  from the front of its prompt), background-process and async-delegation notices, the
  background memory/skill review prompts ("Review the conversation above and consider
  saving ...") and the reply that follows each, the `[SILENT]` reply of a cron run;
- content that is a JSON list of parts (images, files) keeps only its text parts;
- sessions of subagents are skipped: a `_delegate_from` marker in `model_config`, a
  `source = 'tool'` session, the delegated-task system prompt older releases wrote
  ("You are a focused subagent ..."), or a child of a session that was not a compression
  continuation, branch or reset (`_ephemeral_child_sql` in hermes_state_common.py).
Schemas without `active` rewrote the table on /undo and /compress, so every row is live;
with `active` but no `compacted`, only active rows are; with both, active and compacted.

The database is opened read-only (`mode=ro`), so ingesting never changes a live store.
"""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memgit.ingest.base import ASSISTANT, OWNER, SUMMARY, Read, Skip, Turn, iso_utc

NAME = "hermes"
SUFFIXES = (".db", ".sqlite", ".sqlite3")

# --- the speaker rules every Hermes record goes through ---------------------------------

_SUMMARY_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
_END_MARKER = "--- END OF CONTEXT SUMMARY"
_MERGED_DELIMITER = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"
_PRIOR_HEADER = "[PRIOR CONTEXT — for reference only; not a new message]"
_REVIEW_PREFIXES = ("Review the conversation above and",)
_SUBAGENT_PROMPT = "You are a focused subagent working on a specific delegated task"
# Notes Hermes writes into the conversation as user messages; none is the owner speaking.
_HARNESS_PREFIXES = (
    "[Your active task list was preserved across context compression]",
    "[Current user objective preserved from compacted history]",
    "[Session Arc Summary", "[Durable Summary", "[Recent Summary (", "[Depth-",
    "[ASYNC DELEGATION", "[OUT-OF-BAND USER MESSAGE", "[IMPORTANT: Background process",
    "[Externalized payload", "[System note:", "[System:", "[Note: model was just switched",
    "[Note: Some earlier conversation turns have been compacted",
    "Continue from the compressed conversation context above.",
    "A background subagent you dispatched earlier", "A background fan-out of",
    "Operation interrupted: ",
)
_COMPACTION_WORDS = ("compression", "compacted", "compaction")
_SILENT = "[SILENT]"
_TEXT_PARTS = ("text", "input_text", "output_text")


def text_parts(content: object) -> tuple[str, bool]:
    """(the text of a message content, whether it had non-text parts such as images).

    A string that holds a JSON list of parts (how the store keeps a multimodal message) is
    read as that list; image and file parts, and their base64, are never kept.
    """
    if isinstance(content, str):
        stripped = content.strip()
        if not (stripped.startswith("[{") and stripped.endswith("}]")):
            return stripped, False
        try:
            parts = json.loads(stripped)
        except json.JSONDecodeError:
            return stripped, False
        if not (isinstance(parts, list) and all(isinstance(p, dict) and "type" in p for p in parts)):
            return stripped, False  # JSON the person typed, not a list of message parts
        content = parts
    if not isinstance(content, list):
        return "", False
    texts, other = [], False
    for part in content:
        if isinstance(part, str):
            texts.append(part.strip())
        elif isinstance(part, dict) and part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"].strip())
        else:
            other = True
    return "\n\n".join(t for t in texts if t), other


def _after_summary_prefix(text: str) -> str:
    """The summary body: Hermes writes its handoff prefix, a newline, then the body."""
    head, newline, rest = text.partition("\n")
    if newline:
        return rest.strip()
    return head.partition(":")[2].strip() if ":" in head else ""


_COMPACTION_NOTES = _HARNESS_PREFIXES[:2]


def is_summary(content: object) -> bool:
    """Whether a message content is (or carries) a compaction summary."""
    text, _ = text_parts(content)
    return text.startswith(_SUMMARY_PREFIXES) or _MERGED_DELIMITER in text or _END_MARKER in text


def _harness_note(text: str) -> bool:
    if text.startswith(_HARNESS_PREFIXES):
        return True
    first = text.split("\n", 1)[0].strip()
    return first.startswith("[") and first.endswith("]") and any(w in first.lower() for w in _COMPACTION_WORDS)


def _cut_system_preamble(text: str) -> str:
    """A `[SYSTEM: ...]` hint (cron) put before the real prompt, cut off; all of it if nothing follows."""
    if not text.upper().startswith("[SYSTEM:"):
        return text
    end = text.find("]\n\n")
    return text[end + 3:].strip() if end >= 0 else ""


@dataclass
class Speech:
    """The per-conversation state the rules need: what was said (to know compaction's copies)
    and whether the assistant is answering a harness prompt."""

    seen: set[tuple[str, str]] = field(default_factory=set)
    copies: bool = False            # rows here may be compaction copies of earlier ones
    answer_is_harness: str = ""     # why the assistant's rows up to the next user row are left out


def judge(speech: Speech, ts: str, session: str, role: object, content: object, *,
          tool_calls: object = None, summary_flag: bool = False, hidden: bool = False) -> Iterator[Turn | Skip]:
    """The turns (or skips) of one Hermes message."""
    if role not in (OWNER, ASSISTANT):
        yield Skip({"tool": "tool output", "system": "system prompt",
                    "session_meta": "session metadata"}.get(str(role), f"{role or 'unnamed'} record"))
        return
    if hidden:
        yield Skip("hidden row")
        return
    text, had_media = text_parts(content)
    if role == ASSISTANT and speech.answer_is_harness:
        yield Skip(speech.answer_is_harness)  # the reply to a harness prompt, tool calls and all
        return
    if role == OWNER:
        speech.answer_is_harness = ""
    if not text:
        yield Skip("tool call" if tool_calls else "image only" if had_media else "empty message")
        return
    if summary_flag or is_summary(text):
        yield from _summary(speech, ts, session, role, text)
        return
    if role == OWNER:
        if text.startswith(_REVIEW_PREFIXES):
            speech.answer_is_harness = "memory review"
            yield Skip("memory review")
            return
        if _harness_note(text):
            first = text.split("\n", 1)[0].lower()
            note = text.startswith(_COMPACTION_NOTES) or any(w in first for w in _COMPACTION_WORDS)
            yield Skip("compaction note" if note else "harness text")
            return
        text = _cut_system_preamble(text)
        if not text:
            yield Skip("harness text")
            return
    elif text.startswith(_SILENT):
        yield Skip("silent reply")
        return
    yield from _said(speech, ts, session, role, text)


def _said(speech: Speech, ts: str, session: str, role: str, text: str) -> Iterator[Turn | Skip]:
    key = (role, text)
    if speech.copies and key in speech.seen:
        yield Skip("duplicate after compaction")
        return
    speech.seen.add(key)
    yield Turn(ts=ts, session=session, role=role, text=text)


def _summary(speech: Speech, ts: str, session: str, role: str, text: str) -> Iterator[Turn | Skip]:
    """A compaction summary, alone or merged into a real message."""
    speech.copies = True
    real = ""
    summary = text
    if _MERGED_DELIMITER in text:
        before, _, summary = text.partition(_MERGED_DELIMITER)
        real = before.strip()
        if real.startswith(_PRIOR_HEADER):
            real = real[len(_PRIOR_HEADER):].strip()
    elif _END_MARKER in text:
        summary, _, rest = text.partition(_END_MARKER)
        real = rest.split("---", 1)[1].strip() if "---" in rest else ""
    body = _after_summary_prefix(summary.strip()) if summary.strip().startswith(_SUMMARY_PREFIXES) \
        else summary.strip()
    if body:
        yield Turn(ts=ts, session=session, role=SUMMARY, text=body)
    else:
        yield Skip("compaction summary")
    if real:
        yield from _said(speech, ts, session, role, real)


# --- the SQLite store ---------------------------------------------------------------------


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
    try:
        connection = _connect(path)
        try:
            return _REQUIRED <= _columns(connection, "messages")
        finally:
            connection.close()
    except sqlite3.Error:
        return False

_REQUIRED = {"session_id", "role", "content", "timestamp"}


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{quote(path.resolve().as_posix())}?mode=ro", uri=True)


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the turns of every session in one Hermes state database."""
    warnings: list[str] = []
    try:
        connection = _connect(path)
    except sqlite3.Error as exc:
        return [f"{path}: cannot be opened as a SQLite database ({exc}); file skipped"]
    try:
        rows, sessions, problem = _query(connection)
    except sqlite3.Error as exc:
        return [f"{path}: not a readable SQLite database ({exc}); file skipped"]
    finally:
        connection.close()
    if problem:
        return [f"{path}: {problem}; file skipped"]
    speeches: dict[str, Speech] = {}
    for row in rows:
        session = row["session_id"]
        if not isinstance(session, str) or not session:
            yield Skip("no session")
            continue
        info = sessions.get(session)
        if info is not None and info.subagent:
            yield Skip("subagent")
            continue
        if row["live"] == 0:
            yield Skip("undone")
            continue
        ts = iso_utc(row["timestamp"])
        if ts is None:
            warnings.append(f"{path}: message {row['key']} has no usable timestamp; row skipped")
            continue
        root = info.root if info is not None else session
        speech = speeches.setdefault(root, Speech())
        if (info is not None and info.continuation) or row["after_compaction"]:
            speech.copies = True
        yield from judge(speech, ts, session, row["role"], row["content"], tool_calls=row["tool_calls"],
                         summary_flag=bool(row["summary"]), hidden=row["display_kind"] == "hidden")
    return warnings


@dataclass
class _Session:
    root: str                 # the first session of its compression lineage
    continuation: bool        # a compression continuation (its first rows are copies)
    subagent: bool


def _query(connection: sqlite3.Connection) -> tuple[list[dict[str, Any]], dict[str, _Session], str | None]:
    """(message rows, sessions by id, or a reason this is no Hermes store)."""
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "messages" not in tables:
        return [], {}, "has no messages table, so it is not a Hermes session store"
    columns = _columns(connection, "messages")
    missing = _REQUIRED - columns
    if missing:
        return [], {}, f"its messages table lacks {', '.join(sorted(missing))}"

    def col(name: str, default: str = "NULL") -> str:
        return name if name in columns else default

    # live: 1 = the row is read, 0 = undone/rewound; compacted: archived by in-place compaction
    if "active" in columns and "compacted" in columns:
        live = "CASE WHEN active = 1 OR compacted = 1 THEN 1 ELSE 0 END"
    elif "active" in columns:
        live = "CASE WHEN active = 0 THEN 0 ELSE 1 END"
    else:
        live = "1"
    key = "id" if "id" in columns else "rowid"
    cursor = connection.execute(
        f"SELECT {key} AS key, session_id, role, content, timestamp, {col('tool_calls')} AS tool_calls,"
        f" {live} AS live, COALESCE({col('compacted', '0')}, 0) AS compacted,"
        f" {col('active', '1')} AS active,"
        f" COALESCE({col('_compressed_summary', '0')}, 0) AS summary, {col('display_kind')} AS display_kind"
        f" FROM messages ORDER BY timestamp, {key}"
    )
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, values, strict=True)) for values in cursor]
    # a compacted original stays readable; the active rows of its session may be copies of it
    compacted_sessions = {r["session_id"] for r in rows if r["compacted"]}
    for r in rows:
        r["after_compaction"] = r["session_id"] in compacted_sessions and r["active"] == 1
    system_rows = {r["session_id"] for r in rows
                   if r["role"] == "system" and isinstance(r["content"], str) and _SUBAGENT_PROMPT in r["content"]}
    sessions = _sessions(connection, tables, system_rows) if "sessions" in tables else {}
    return rows, sessions, None


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


_RESET_END_REASONS = {"session_reset", "session_switch", "idle", "daily", "suspended", "resume_pending_expired"}


def _sessions(connection: sqlite3.Connection, tables: set[str], subagent_prompts: set[str]) -> dict[str, _Session]:
    columns = _columns(connection, "sessions")
    if "id" not in columns:
        return {}

    def col(name: str) -> str:
        return name if name in columns else "NULL"

    prompt = col("system_prompt")
    if "system_prompt_hash" in columns and "system_prompts" in tables:
        prompt = (f"COALESCE({prompt}, (SELECT p.prompt FROM system_prompts p"
                  " WHERE p.hash = sessions.system_prompt_hash))")
    raw = {
        sid: {"source": source, "config": _config(config), "prompt": text, "parent": parent,
              "started": started, "ended": ended, "reason": reason, "key": key}
        for sid, source, config, text, parent, started, ended, reason, key in connection.execute(
            f"SELECT id, {col('source')}, {col('model_config')}, {prompt}, {col('parent_session_id')},"
            f" {col('started_at')}, {col('ended_at')}, {col('end_reason')}, {col('session_key')} FROM sessions")
    }

    def after(child: dict[str, Any], parent: dict[str, Any]) -> bool:
        ended, started = parent["ended"], child["started"]
        return not (isinstance(ended, (int, float)) and isinstance(started, (int, float)) and started < ended - 1)

    def continuation(sid: str) -> bool:
        """A session that carries its parent's conversation on after a compression."""
        me = raw[sid]
        parent = raw.get(me["parent"]) if me["parent"] else None
        if parent is None or parent["reason"] != "compression":
            return False
        config = me["config"]
        if any(config.get(m) for m in ("_branched_from", "_delegate_from", "_reset_from")):
            return False
        return after(me, parent)

    def subagent(sid: str) -> bool:
        me = raw[sid]
        if me["source"] == "tool" or me["config"].get("_delegate_from") or sid in subagent_prompts:
            return True
        if isinstance(me["prompt"], str) and _SUBAGENT_PROMPT in me["prompt"]:
            return True
        parent = raw.get(me["parent"]) if me["parent"] else None
        if parent is None or continuation(sid):
            return False
        config = me["config"]
        if config.get("_branched_from") or config.get("_reset_from"):
            return False
        if parent["reason"] == "branched" and after(me, parent):
            return False  # a /branch before the marker existed
        # a reset before the marker: the parent ended at a reset and the child rides its routing key
        return not (parent["reason"] in _RESET_END_REASONS and me["key"] and me["key"] == parent["key"])

    out: dict[str, _Session] = {}
    for sid in raw:
        root, seen = sid, {sid}
        while continuation(root) and raw[root]["parent"] not in seen:
            root = raw[root]["parent"]
            seen.add(root)
        out[sid] = _Session(root=root, continuation=continuation(sid), subagent=subagent(sid))
    # a subagent's continuation is a subagent too
    for sid, info in out.items():
        if not info.subagent and info.root != sid and out[info.root].subagent:
            info.subagent = True
    return out


def _config(model_config: object) -> dict[str, Any]:
    if not isinstance(model_config, str) or not model_config.strip():
        return {}
    try:
        config = json.loads(model_config)
    except json.JSONDecodeError:
        return {}
    return config if isinstance(config, dict) else {}
