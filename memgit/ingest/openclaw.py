"""OpenClaw (formerly Clawdbot/Moltbot) agent transcripts:
`~/.openclaw/agents/<agentId>/sessions/<sessionId>.jsonl`.

The file is a pi-coding-agent session (format version 3): a header line
`{"type": "session", "version": 3, "id", "timestamp", "cwd"}`, then entries with `id`,
`parentId` (a tree: branches stay in the file) and an ISO-8601 `timestamp`. Conversation
entries are `{"type": "message", "message": {"role", "content", "timestamp" (Unix ms)}}`
with role "user", "assistant" or "toolResult" (also "bashExecution", "custom",
"branchSummary", "compactionSummary"); `content` is a string or a list of `text`,
`thinking`, `toolCall` and `image` blocks. Other entry types (`model_change`,
`thinking_level_change`, `custom`, `custom_message`, `compaction`, `branch_summary`,
`label`, `session_info`) carry no conversation.

Kept: the `text` blocks of user and assistant messages, on every branch (an abandoned
branch is still something that was said). Skipped: tool results, thinking, tool calls,
summaries and extension messages. The session id is the header's `id`, else the file
name. A directory walk reads `*.jsonl` only, so `sessions.json` and archived transcripts
(`<id>.jsonl.reset.<ts>`, `.deleted.<ts>`) are left alone; name an archive explicitly
to read it. Newer OpenClaw releases keep transcripts in a per-agent SQLite database
instead; this reader handles the JSONL file store only.
"""
from __future__ import annotations

from pathlib import Path

from memgit.ingest.base import ROLES, Read, Turn, first_records, iso_utc, json_records, string_field, text_of

NAME = "openclaw"
SUFFIXES = (".jsonl",)


def wants(name: str) -> bool:
    return name.endswith(SUFFIXES)


def looks_like(path: Path) -> bool:
    """A pi-coding-agent session: a `session` header with a version, or tree entries (`id`, `parentId`)."""
    for record in first_records(path):
        if record.get("type") == "session" and "version" in record:
            return True
        if record.get("type") == "message" and isinstance(record.get("message"), dict) and "parentId" in record:
            return True
    return False


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the user and assistant text turns of one OpenClaw session transcript."""
    warnings: list[str] = []
    session = path.stem
    for number, entry in json_records(path, warnings):
        kind = entry.get("type")
        if kind == "session":
            session = string_field(entry, "id") or session
            continue
        if kind != "message":
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            warnings.append(f"{path}:{number}: message entry without a message object; line skipped")
            continue
        role = message.get("role")
        if role not in ROLES:
            continue
        text = text_of(message.get("content"))
        if not text:
            continue
        ts = iso_utc(entry.get("timestamp")) or iso_utc(message.get("timestamp"))
        if ts is None:
            warnings.append(f"{path}:{number}: no usable timestamp; line skipped")
            continue
        yield Turn(ts=ts, session=session, role=role, text=text)
    return warnings
