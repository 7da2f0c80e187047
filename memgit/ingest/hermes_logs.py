"""Hermes Agent (NousResearch hermes-agent) session logs in `~/.hermes/sessions/`.

Two files per session, read from the March 2026 releases (schema 5) on:
- `<session_id>.jsonl`: the gateway's transcript (`gateway/session.py`,
  `SessionStore.append_to_transcript` / `rewrite_transcript`): one message object a line,
  `{"role", "content", "timestamp" (ISO-8601, one per turn), "tool_calls", ...}`; a fresh
  session opens with a `{"role": "session_meta", "tools", "model", "platform"}` line;
- `session_<session_id>.json`: the agent's raw log (`run_agent.py`, `_save_session_log`),
  one object `{"session_id", "model", "platform", "session_start", "last_updated",
  "system_prompt", "tools", "message_count", "messages": [...]}`, rewritten each turn.
  Its messages carry no time of their own: they get `session_start` plus one millisecond
  a message, so their order survives.

Every message goes through the same speaker rules as the state database
(`memgit.ingest.hermes.judge`): compaction summaries become SUMMARY turns, harness notes,
memory-review prompts, `[SILENT]` replies and tool traffic are skipped, image parts are
dropped; a log whose system prompt is the delegated-task prompt is a subagent's and skipped.
"""
from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from memgit.ingest import hermes
from memgit.ingest.base import Read, Skip, first_records, iso_utc, json_records, parse_moment

NAME = "hermes-logs"
SUFFIXES = (".jsonl", ".json")
_ROLES = {"session_meta", "user", "assistant", "tool", "system"}
_MAX_JSON = 256 * 1024 * 1024


def wants(name: str) -> bool:
    return name.endswith(".jsonl") or name.startswith("session_") and name.endswith(".json")


def looks_like(path: Path) -> bool:
    """A Hermes session log: bare OpenAI-style message lines (a `role`, a `content`, no record
    `type`), or a `session_<id>.json` object with `session_id` and `messages`."""
    if path.name.endswith(".json"):
        log = _json_log(path)
        return log is not None
    records = first_records(path)
    if not records:
        return False
    for record in records:
        role = record.get("role")
        if role not in _ROLES or "type" in record or "text" in record or "session" in record:
            return False
        if role != "session_meta" and "content" not in record and "tool_calls" not in record:
            return False
    return True


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the turns of one Hermes session log."""
    warnings: list[str] = []
    if path.name.endswith(".json"):
        log = _json_log(path)
        if log is None:
            return [f"{path}: not a Hermes session log (session_<id>.json); file skipped"]
        session = str(log.get("session_id") or path.stem.removeprefix("session_"))
        if (path.parent / f"{session}.jsonl").is_file():
            # a gateway session: its transcript holds the same messages, with their times
            for _ in log.get("messages") or []:
                yield Skip("duplicate of the session's .jsonl transcript")
            return warnings
        yield from _messages(path, session, log.get("messages") or [], log.get("session_start"),
                             log.get("system_prompt"), warnings)
        return warnings
    lines = [record for _, record in json_records(path, warnings)]
    yield from _messages(path, path.stem, lines, None, None, warnings)
    return warnings


def _messages(path: Path, session: str, messages: list[Any], start: object, system_prompt: object,
              warnings: list[str]) -> Read:
    if isinstance(system_prompt, str) and hermes._SUBAGENT_PROMPT in system_prompt or any(
        isinstance(m, dict) and m.get("role") == "system" and isinstance(m.get("content"), str)
        and hermes._SUBAGENT_PROMPT in m["content"] for m in messages
    ):
        for _ in messages:
            yield Skip("subagent")
        return []
    last = parse_moment(start)
    # a compacted log repeats the head (and tail) it kept around the summary
    speech = hermes.Speech(copies=any(isinstance(m, dict) and hermes.is_summary(m.get("content")) for m in messages))
    for number, message in enumerate(messages, start=1):
        if not isinstance(message, dict):
            warnings.append(f"{path}: message {number} is not a JSON object; skipped")
            continue
        moment = parse_moment(message.get("timestamp"))
        if moment is None and last is None:
            moment = parse_moment(_mtime(path))
        if moment is None or last is not None and moment <= last:
            # one timestamp per turn (or none): keep the order, and each message its own time
            moment = (last or moment) + timedelta(milliseconds=1) if last is not None else moment
        if moment is None:
            warnings.append(f"{path}: message {number} has no usable time; skipped")
            continue
        last = moment
        ts = iso_utc(moment.timestamp())
        if ts is None:
            continue
        yield from hermes.judge(speech, ts, session, message.get("role"), message.get("content"),
                                tool_calls=message.get("tool_calls"),
                                summary_flag=bool(message.get("_compressed_summary")),
                                hidden=message.get("display_kind") == "hidden")
    return []


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _json_log(path: Path) -> dict[str, Any] | None:
    if not (path.name.startswith("session_") and path.name.endswith(".json")):
        return None
    try:
        if path.stat().st_size > _MAX_JSON:
            return None
        with path.open("rb") as handle:
            if handle.read(1).lstrip() not in (b"{", b""):
                return None
        data = json.loads(path.read_bytes().decode("utf-8").lstrip("\ufeff"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list) or "session_id" not in data:
        return None
    return data
