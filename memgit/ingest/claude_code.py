"""Claude Code project transcripts: `~/.claude/projects/<project>/<sessionId>.jsonl`.

Each line is one record. Conversation records have `type` "user" or "assistant", a
`message` ({"role", "content"}), `sessionId`, `timestamp` (ISO-8601), `uuid` and
`parentUuid`. `content` is a string or a list of blocks: `text`, `tool_use`,
`tool_result`, `thinking`, `image`. Other record types (`summary`, `system`,
`file-history-snapshot`, `queue-operation`, `progress`, ...) carry no conversation.

Kept: the `text` blocks of user and assistant records. Skipped:
- records with `isSidechain: true` (subagent chatter; newer versions also write it to
  `<sessionId>/subagents/agent-*.jsonl`), `isMeta: true` (caveats, hook feedback) and
  `isCompactSummary: true` (the summary Claude Code writes after /compact);
- user records that carry only `tool_result` blocks, and assistant records that carry
  only `tool_use` or `thinking` blocks (nothing left once text alone is kept);
- harness text in user records: slash-command wrappers, local command output and
  "[Request interrupted by user]" markers.
An assistant reply streamed as several records (one block each, same `message.id`)
gives one turn per record that holds text.
"""
from __future__ import annotations

from pathlib import Path

from memgit.ingest.base import ROLES, Read, Turn, first_records, iso_utc, json_records, string_field, text_of

NAME = "claude-code"
SUFFIXES = (".jsonl",)


def wants(name: str) -> bool:
    return name.endswith(SUFFIXES)


def looks_like(path: Path) -> bool:
    """A Claude Code transcript: records with a `sessionId` and a `uuid`, or its summary records."""
    for record in first_records(path):
        if record.get("type") in ROLES and isinstance(record.get("message"), dict) and "sessionId" in record:
            return True
        if record.get("type") == "summary" and "leafUuid" in record:
            return True
    return False

_HARNESS_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "[Request interrupted by user",
)


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the user and assistant text turns of one Claude Code transcript."""
    warnings: list[str] = []
    for number, record in json_records(path, warnings):
        kind = record.get("type")
        if kind not in ROLES:
            continue
        if record.get("isSidechain") or record.get("isMeta") or record.get("isCompactSummary"):
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            warnings.append(f"{path}:{number}: {kind} record without a message object; line skipped")
            continue
        role = message.get("role", kind)
        if role not in ROLES:
            continue
        text = text_of(message.get("content"))
        if not text or (role == "user" and text.startswith(_HARNESS_PREFIXES)):
            continue
        ts = iso_utc(record.get("timestamp"))
        if ts is None:
            warnings.append(f"{path}:{number}: no usable timestamp; line skipped")
            continue
        session = string_field(record, "sessionId") or path.stem
        yield Turn(ts=ts, session=session, role=role, text=text)
    return warnings
