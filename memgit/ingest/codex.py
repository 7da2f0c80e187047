"""OpenAI Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl`.

Two layouts, both written by the Rust CLI (github.com/openai/codex, `codex-rs`):

- Current (from the Sept. 2025 releases on; `RolloutLine`/`RolloutItem` in
  `codex-rs/protocol/src/protocol.rs`, written by `codex-rs/core/src/rollout/recorder.rs`,
  filtered by `rollout/policy.rs`): every line is
  `{"timestamp", "type", "payload"}` with `type` one of
  - `session_meta`: `SessionMeta` (`id`, `timestamp`, `cwd`, `originator`, `cli_version`,
    `source`, `instructions`/`base_instructions`, `git`...); `source` `{"subagent": ...}` marks a
    session Codex spawned for itself (a review, a sub-agent), whose "user" is the parent agent;
  - `response_item`: a Responses-API `ResponseItem` (`codex-rs/protocol/src/models.rs`):
    `message` (`role` user/assistant/developer/system, `content` blocks `input_text`,
    `output_text`, `input_image`), `reasoning`, `function_call`, `function_call_output`,
    `custom_tool_call(_output)`, `local_shell_call`, `web_search_call`, `ghost_snapshot`,
    `compaction`;
  - `event_msg`: the UI's `EventMsg` (`user_message` {`message`, `kind`?, `images`?},
    `agent_message` {`message`}, `agent_reasoning`, `token_count`, `turn_aborted`,
    `context_compacted`, `task_started`/`task_complete`, `exec_command_end`, `error`...);
  - `turn_context`: the settings of a turn (cwd, model, policies, instructions);
  - `compacted`: `CompactedItem` {`message` (the model's summary), `replacement_history`?}.
- Older (May–Aug. 2025, `codex-rs/core/src/rollout.rs` before the split): a first line
  `SessionMeta` `{"id", "timestamp", "instructions"?, "git"?}`, then bare `ResponseItem`
  lines (no time of their own) and `{"record_type": "state", ...}` snapshots.

Codex writes each thing the person typed twice: as a `user_message` event (what they typed)
and as a `user` message item (what the model was sent); likewise `agent_message` beside the
`assistant` `output_text` item. The event is the source: an item whose text an event of the
file also carries is skipped as a duplicate; an item no event matches (the older layout, or a
rollout an older CLI began) is kept.

Kept: the person's messages (OWNER), the assistant's (ASSISTANT), and a `compacted` summary
(SUMMARY: context, never anyone's words). Left out, each with a reason: text Codex injects as
a user message (`# AGENTS.md instructions`, `<user_instructions>`, `<environment_context>`,
`<skill>`, hook prompts, `<turn_aborted>`, `<user_shell_command>` shell output, the
compaction bridge), developer and system messages, reasoning, tool calls and their
output, token counts, turn markers, session meta, turn context and state records, and
everything in a sub-agent's rollout. The IDE extension's "# Context from my IDE setup: …
## My request for Codex:" wrapper is cut down to the request. A line of the older layout
carries no time: it gets the session's start plus one millisecond per line, which keeps
order and lets the same words said twice stay two turns. The session id is session meta's
`id`, else the uuid in the file name. The TypeScript CLI's single-JSON `rollout-*.json`
files (April 2025) are not read.
"""
from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from memgit.ingest.base import (
    ASSISTANT,
    OWNER,
    SUMMARY,
    Read,
    Skip,
    Turn,
    first_records,
    iso_utc,
    json_records,
    parse_moment,
    string_field,
)

NAME = "codex"
SUFFIXES = (".jsonl",)

_ENVELOPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_LEGACY_ITEMS = ("message", "reasoning", "function_call", "function_call_output", "local_shell_call",
                 "custom_tool_call", "custom_tool_call_output", "web_search_call")
_UUID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$")


def wants(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith(SUFFIXES)


def looks_like(path: Path) -> bool:
    """A Codex rollout: `{"timestamp", "type", "payload"}` lines, or the older layout's
    `{"id", "timestamp"}` first line followed by bare response items or state records."""
    records = first_records(path)
    for record in records:
        if (record.get("type") in _ENVELOPES and isinstance(record.get("payload"), dict)
                and isinstance(record.get("timestamp"), str)):
            return True
    if not records or not _legacy_meta(records[0]):
        return False
    return "instructions" in records[0] or any(
        record.get("record_type") == "state" or _legacy_item(record) for record in records[1:])


def _legacy_meta(record: dict[str, Any]) -> bool:
    return (isinstance(record.get("id"), str) and isinstance(record.get("timestamp"), str)
            and "type" not in record and "role" not in record and "payload" not in record)


def _legacy_item(record: dict[str, Any]) -> bool:
    return (record.get("type") in _LEGACY_ITEMS and "payload" not in record and "timestamp" not in record
            and any(key in record for key in ("role", "call_id", "summary", "action")))


# Text Codex puts into the conversation as a `user` message: (prefix, why it is left out).
# From codex-rs core/src/context (CONTEXTUAL_USER_MARKERS, session prefixes) and the legacy
# `<user_instructions>` wrapper of AGENTS.md.
_INJECTED = (
    ("# agents.md instructions", "AGENTS.md instructions"),
    ("<agents_instructions>", "AGENTS.md instructions"),
    ("<user_instructions>", "AGENTS.md instructions"),
    ("<environment_context>", "harness text"),
    ("<context_update>", "harness text"),
    ("<multiagent_context>", "harness text"),
    ("<goal_context>", "harness text"),
    ("<codex_internal_context", "harness text"),
    ("<recommended_plugins>", "harness text"),
    ("<skill>", "harness text"),
    ("<skills_instructions>", "harness text"),
    ("<hook_prompt", "harness text"),
    ("<subagent_notification>", "harness text"),
    ("<agent_message_board_notification>", "harness text"),
    ("<collaboration_mode>", "harness text"),
    ("<permissions instructions>", "harness text"),
    ("<user_shell_command>", "shell output"),
    ("<turn_aborted>", "turn aborted"),
    # the compaction bridge (core/templates/compact): a model's summary handed on as a user message
    ("you were originally given instructions from a user over one or more turns", "compaction summary"),
    ("another language model started to solve this problem and produced a summary", "compaction summary"),
)
_IDE_WRAPPERS = ("# context from my ide setup:", "# files mentioned by the user:")
_REQUEST = "## My request for Codex:"
_IMAGE_TAG = re.compile(r"</?(?:image|local_image)\b[^<>]*>")

_ITEM_REASONS = {
    "reasoning": "reasoning",
    "function_call": "tool call", "custom_tool_call": "tool call", "local_shell_call": "tool call",
    "web_search_call": "tool call", "tool_search_call": "tool call", "image_generation_call": "tool call",
    "function_call_output": "tool output", "custom_tool_call_output": "tool output",
    "tool_search_output": "tool output", "mcp_tool_call_output": "tool output",
    "ghost_snapshot": "undo snapshot",
    "compaction": "compaction", "compaction_summary": "compaction", "context_compaction": "compaction",
}
_EVENT_REASONS = {
    "agent_reasoning": "reasoning", "agent_reasoning_raw_content": "reasoning",
    "agent_reasoning_section_break": "reasoning", "reasoning_content_delta": "reasoning",
    "token_count": "token count",
    "turn_aborted": "turn aborted",
    "context_compacted": "compaction",
    "task_started": "turn marker", "task_complete": "turn marker", "turn_started": "turn marker",
    "turn_complete": "turn marker",
    "exec_command_begin": "shell output", "exec_command_end": "shell output",
    "exec_command_output_delta": "shell output", "terminal_interaction": "shell output",
    "mcp_tool_call_begin": "tool call", "mcp_tool_call_end": "tool call", "web_search_begin": "tool call",
    "web_search_end": "tool call", "patch_apply_begin": "tool call", "patch_apply_end": "tool call",
    "view_image_tool_call": "tool call", "dynamic_tool_call_request": "tool call",
    "error": "API error", "stream_error": "API error", "warning": "API error",
    "entered_review_mode": "review mode", "exited_review_mode": "review mode",
}


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the person's and the assistant's turns of one Codex rollout, and why the rest is left out."""
    warnings: list[str] = []
    records = list(json_records(path, warnings))
    uuid = _UUID.search(path.name)
    session = uuid.group(1) if uuid else path.stem
    start = None  # the older layout's session start: its bare lines have no time
    subagent = False
    for _, record in records:
        if record.get("type") == "session_meta" and isinstance(record.get("payload"), dict):
            meta = record["payload"]
        elif _legacy_meta(record):
            meta = record
            start = parse_moment(record.get("timestamp"))
        else:
            continue
        session = string_field(meta, "id") or session
        source = meta.get("source")
        subagent = (isinstance(source, dict) and "subagent" in source) or source == "subagent"
        break

    # What the events say was typed and answered: an item carrying the same text is their copy.
    echoes: Counter[tuple[str, str]] = Counter()
    for _, record in records:
        payload = record.get("payload")
        if record.get("type") == "event_msg" and isinstance(payload, dict):
            said = _event_turn(payload)
            if isinstance(said, tuple):
                echoes[_key(*said)] += 1

    for number, record in records:
        kind = record.get("type")
        enveloped = kind in _ENVELOPES and "payload" in record
        if not enveloped:
            said = _legacy(record)
            ts = None if start is None else iso_utc((start + timedelta(milliseconds=number)).isoformat())
        else:
            payload = record["payload"]
            if not isinstance(payload, dict):
                warnings.append(f"{path}:{number}: {kind} line without a payload object; line skipped")
                continue
            said = _enveloped(kind, payload)
            ts = iso_utc(record.get("timestamp"))
        if isinstance(said, Skip):
            yield said
            continue
        role, text, from_item = said
        if subagent and role != SUMMARY:
            yield Skip("subagent")
            continue
        if from_item and echoes[_key(role, text)] > 0:
            echoes[_key(role, text)] -= 1
            yield Skip("duplicate of an event")
            continue
        if ts is None:
            warnings.append(f"{path}:{number}: no usable timestamp; line skipped")
            continue
        yield Turn(ts=ts, session=session, role=role, text=text)
    return warnings


Said = tuple[str, str, bool]  # (role, text, whether it came from a response item)


def _key(role: str, text: str, *_: object) -> tuple[str, str]:
    return role, " ".join(text.split())


def _enveloped(kind: str, payload: dict[str, Any]) -> Said | Skip:
    if kind == "response_item":
        return _item(payload)
    if kind == "event_msg":
        said = _event_turn(payload)
        return (*said, False) if isinstance(said, tuple) else said
    if kind == "compacted":
        message = payload.get("message")
        if isinstance(message, str) and message.strip():
            return SUMMARY, message.strip(), False
        return Skip("compaction")
    if kind == "session_meta":
        return Skip("session meta")
    return Skip("turn context")


def _legacy(record: dict[str, Any]) -> Said | Skip:
    if _legacy_meta(record):
        return Skip("session meta")
    if record.get("record_type") == "state":
        return Skip("session state")
    if isinstance(record.get("type"), str):
        return _item(record)
    return Skip("unknown record")


def _item(item: dict[str, Any]) -> Said | Skip:
    """A `ResponseItem`: a message by its role, everything else by its type."""
    kind = item.get("type")
    if kind != "message":
        return Skip(_ITEM_REASONS.get(kind, "unknown record") if isinstance(kind, str) else "unknown record")
    role = item.get("role")
    if role == "user":
        # each block on its own: Codex may send its context and the person's words in one message
        typed = [_typed(block) for block in _blocks(item.get("content"), ("input_text", "text"))]
        kept = [said[1] for said in typed if isinstance(said, tuple)]
        if kept:
            return OWNER, "\n\n".join(kept), True
        return next((said for said in typed if isinstance(said, Skip)), Skip("no text"))
    if role == "assistant":
        text = "\n\n".join(_blocks(item.get("content"), ("output_text", "text")))
        return (ASSISTANT, text, True) if text else Skip("no text")
    if role in ("developer", "system"):
        return Skip(f"{role} message")
    return Skip("unknown record")


def _event_turn(payload: dict[str, Any]) -> tuple[str, str] | Skip:
    kind = payload.get("type")
    if kind == "user_message":
        # early releases tagged the injected copies: kind "user_instructions" / "environment_context"
        tag = payload.get("kind")
        if tag == "user_instructions":
            return Skip("AGENTS.md instructions")
        if tag not in (None, "plain", "user"):
            return Skip("harness text")
        message = payload.get("message")
        return _typed(message.strip() if isinstance(message, str) else "")
    if kind == "agent_message":
        message = payload.get("message")
        text = message.strip() if isinstance(message, str) else ""
        return (ASSISTANT, text) if text else Skip("no text")
    return Skip(_EVENT_REASONS.get(kind, "control event") if isinstance(kind, str) else "unknown record")


def _typed(text: str) -> tuple[str, str] | Skip:
    """What the person typed, or why a `user` text is Codex's own."""
    if not text:
        return Skip("no text")
    lowered = text.lower()
    for prefix, reason in _INJECTED:
        if lowered.startswith(prefix):
            return Skip(reason)
    if lowered.startswith(_IDE_WRAPPERS) and _REQUEST in text:
        text = text.rsplit(_REQUEST, 1)[1].strip()
        if not text:
            return Skip("harness text")
    return OWNER, text


def _blocks(content: object, kinds: tuple[str, ...]) -> list[str]:
    """The texts of the `kinds` blocks of a message's content, without image placeholders."""
    if isinstance(content, str):
        return [content.strip()] if content.strip() else []
    if not isinstance(content, list):
        return []
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in kinds and isinstance(block.get("text"), str):
            part = _IMAGE_TAG.sub("", block["text"]).strip()
            if part:
                parts.append(part)
    return parts
