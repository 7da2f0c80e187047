"""Claude Code project transcripts: `~/.claude/projects/<project>/<sessionId>.jsonl`.

Read: Claude Code CLI and IDE extensions 1.0.x (mid-2025) to 2.1.2xx (late 2026). No schema is
published; the record kinds below are the ones Claude Code writes, as documented by public parsers
(daaain/claude-code-log's models and test data, ccusage, the Agent SDK's message types) and checked
against real records: `<project>` is the working directory with `/` and `.` turned into `-`, helper
agents write `<sessionId>/subagents/agent-<agentId>.jsonl`.

Every line is one record with a `type`. Each record gives one `Turn` or one `Skip`:

- `user` / `assistant` (`message` {role, content}, `sessionId`, `uuid`, `timestamp`): `content` is a
  string or blocks (`text`, `tool_use`, `tool_result`, `thinking`, `image`). A record may hold several
  blocks (older versions); 2.1 writes one block a record, the records of one reply sharing `message.id`.
  Kept: the person's text and the assistant's text. Skipped, each with its reason:
  - `isSidechain` (a Task/Agent helper; in its own file from 2.1) "subagent"; `isMeta` (caveats,
    skill and command expansions) "harness text"; `isCompactSummary` "compaction summary" (see below);
  - user records: only `tool_result` blocks "tool output"; `<task-notification>` (a background
    shell or agent finished; the record, and the "Read the output file…" line after it) "task
    notification"; the `!` shell: `<bash-input>` "shell command", `<bash-stdout>`/`<bash-stderr>`
    "shell output"; slash commands (`<command-name>`/`<command-message>`) "slash command", and what a
    local command printed (`<local-command-stdout>`) "command output"; "[Request interrupted by
    user…]" "interrupted"; a message from another agent session (`<cross-session-message>`,
    `<teammate-message>`, `origin` peer/coordinator) "another agent's message"; a prompt no person
    typed (`origin` plugin, auto-continuation; `turnOrigin` system, scheduled) "harness text";
  - a `<channel source=… user=…>` message an MCP channel (Slack, Telegram…) pushed in is its sender's:
    the owner's when `user` is one of `owners`, else another person's (OTHER, named); a channel event
    with no `user` (a webhook) "channel event";
  - inside a kept user message, IDE context (`<ide_opened_file>`, `<ide_selection>`, any `<ide_…>`)
    and `<system-reminder>` blocks are cut out and the person's words kept; a message that was only
    IDE context is skipped as "IDE context";
  - assistant records: `message.model` "<synthetic>" — an API error (`isApiErrorMessage`, `error`)
    "API error", otherwise Claude Code's own stand-in such as "No response requested." "synthetic
    reply"; only `tool_use` "tool call"; only `thinking` "thinking";
  - a `uuid` seen before in the file (history copied by resume) "duplicate record".
- A message typed while the agent works: every prompt is first a `queue-operation` `enqueue`
  ("queued copy": it reappears elsewhere). From about 2.1 a message the running turn absorbs is an
  `attachment` of type `queued_command` (`prompt`, `commandMode`, `origin`) — kept as the owner's turn
  when `commandMode` is "prompt" and `origin` human (a `task-notification` mode or another origin is
  skipped as above). Where no attachment was written (the desktop client and older CLIs handed the
  text to the model inside a tool result's `<system-reminder>`), the absorbed text lives only in the
  closing `queue-operation` `remove` (no `reason` up to 2.1.241, `absorbed_mid_turn` from 2.1.246):
  kept as the owner's turn unless the same text is also in an attachment or a user record of the file
  ("queued copy"), so a version that writes both never gives it twice. A message held to the end of
  the turn is `dequeue`d and becomes a normal user record (`promptSource` "queued").
- Everything else carries no conversation: `summary`/`ai-title`/`custom-title` "session title";
  `system` (compact_boundary, turn_duration, local_command, api_error…) "system record"; `progress`
  "progress"; other `attachment`s "harness text"; `file-history-snapshot`, `last-prompt`,
  `permission-mode` and the like "session metadata".

The compaction summary is skipped, not kept as SUMMARY: Claude Code appends it to the same file whose
earlier records it summarises, so it adds nothing the file does not hold in the speakers' own words,
while paraphrasing the owner in a model's voice ("The user asked…") and quoting tool output.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memgit.ingest.base import (
    ASSISTANT,
    OTHER,
    OWNER,
    Read,
    Skip,
    Turn,
    first_records,
    iso_utc,
    json_records,
    string_field,
    text_of,
)

NAME = "claude-code"
SUFFIXES = (".jsonl",)

_QUEUE_OPERATIONS = frozenset({"enqueue", "dequeue", "remove", "popAll"})
# A closing `remove` that means the running turn took the message in (None: up to 2.1.241).
_ABSORBED = (None, "absorbed_mid_turn", "delivered_to_agent")
_TITLE_TYPES = frozenset({"summary", "ai-title", "custom-title"})

# The start of a user text no person typed, and why it is left out.
_LEADS: tuple[tuple[str, str], ...] = (
    ("<task-notification", "task notification"),
    ("<bash-input>", "shell command"),
    ("<bash-stdout>", "shell output"),
    ("<bash-stderr>", "shell output"),
    ("<command-name>", "slash command"),
    ("<command-message>", "slash command"),
    ("<command-args>", "slash command"),
    ("<local-command-stdout>", "command output"),
    ("<local-command-stderr>", "command output"),
    ("<local-command-caveat>", "harness text"),
    ("Caveat: The messages below were generated by the user while running local commands", "harness text"),
    ("[Request interrupted by user", "interrupted"),
    ("<cross-session-message", "another agent's message"),
    ("<agent-message", "another agent's message"),
    ("<teammate-message", "another agent's message"),
    ("<tick>", "harness text"),
    ("<user-prompt-submit-hook>", "harness text"),
    ("<system-reminder>", "harness text"),
)
# Who a prompt came from (`origin.kind`, and `turnOrigin` from 2.1.277), when it was not the person.
_ORIGINS = {
    "task-notification": "task notification",
    "task_notification": "task notification",
    "peer": "another agent's message",
    "coordinator": "another agent's message",
    "plugin": "harness text",
    "auto-continuation": "harness text",
    "auto_continuation": "harness text",
    "system": "harness text",
    "scheduled": "harness text",
}
_IDE_BLOCK = re.compile(r"<(ide_[a-z_]+)(?:\s[^<>]*)?>.*?</\1\s*>", re.S)
_IDE_OPEN = re.compile(r"<ide_[a-z_]+(?:\s[^<>]*)?>", re.S)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder\s*>", re.S)
_SPACE = re.compile(r"\s+")
# A message a channel (an MCP server: Slack, Telegram, a webhook) pushed into the session.
_CHANNEL = re.compile(r"<channel\s([^<>]*)>(.*?)(?:</channel\s*>|$)", re.S)
_ATTRIBUTE = re.compile(r'([A-Za-z_][\w-]*)="([^"]*)"')

Said = tuple[str, str, str]  # (role, text, speaker)


def wants(name: str) -> bool:
    return name.endswith(SUFFIXES)


def looks_like(path: Path) -> bool:
    """A Claude Code transcript: records of its own kinds among the first lines.

    A conversation record (`user`/`assistant` with a `message`, or `system`/`attachment`/`progress`)
    with a string `uuid` and `sessionId`; a `summary` with a `leafUuid`; a `file-history-snapshot`
    with a `snapshot`; a `queue-operation` with a known `operation`. OpenClaw's `message` entries,
    Codex's `payload` records and memgit's own `{ts, session, role, text}` lines have none of these.
    """
    for record in first_records(path):
        kind = record.get("type")
        ids = isinstance(record.get("uuid"), str) and isinstance(record.get("sessionId"), str)
        if kind in ("user", "assistant") and ids and isinstance(record.get("message"), dict):
            return True
        if kind in ("system", "attachment", "progress") and ids:
            return True
        if kind == "summary" and isinstance(record.get("leafUuid"), str):
            return True
        if kind == "file-history-snapshot" and isinstance(record.get("snapshot"), dict) and "messageId" in record:
            return True
        if kind == "queue-operation" and record.get("operation") in _QUEUE_OPERATIONS \
                and isinstance(record.get("sessionId"), str):
            return True
    return False


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the owner's and the assistant's turns of one Claude Code transcript, and a Skip per other record."""
    warnings: list[str] = []
    helper = path.parent.name == "subagents"
    said = _said_elsewhere(path)
    seen: set[str] = set()
    for number, record in json_records(path, warnings):
        uuid = string_field(record, "uuid")
        if uuid is not None and record.get("type") in ("user", "assistant", "attachment"):
            if uuid in seen:
                yield Skip("duplicate record")
                continue
            seen.add(uuid)
        item = _item(record, helper, said, owners)
        if isinstance(item, Skip):
            yield item
            continue
        role, text, speaker = item
        ts = iso_utc(record.get("timestamp"))
        if ts is None:
            warnings.append(f"{path}:{number}: no usable timestamp; line skipped")
            continue
        session = string_field(record, "sessionId") or path.stem
        yield Turn(ts=ts, session=session, role=role, text=text, speaker=speaker)
    return warnings


def _item(record: dict[str, Any], helper: bool, said: set[str], owners: frozenset[str]) -> Said | Skip:
    """(role, text) of a record that holds someone's words, or why it is left out."""
    kind = record.get("type")
    if helper or record.get("isSidechain"):
        return Skip("subagent")
    if kind == "queue-operation":
        return _queued_operation(record, said, owners)
    if kind == "attachment":
        return _attachment(record, owners)
    if kind in _TITLE_TYPES:
        return Skip("session title")
    if kind == "system":
        return Skip("system record")
    if kind == "progress":
        return Skip("progress")
    if kind not in ("user", "assistant"):
        return Skip("session metadata")
    message = record.get("message")
    if not isinstance(message, dict):
        return Skip(f"{kind} record without a message")
    if record.get("isCompactSummary"):
        return Skip("compaction summary")
    content = message.get("content")
    if kind == "user" and _CHANNEL.match(text_of(content)):
        return _channel(text_of(content), owners)
    if record.get("isMeta"):
        return Skip("harness text")
    if kind == "assistant" or message.get("role") == "assistant":
        return _assistant(record, message, content)
    for field in (record.get("origin"), record.get("turnOrigin")):
        origin = field.get("kind") if isinstance(field, dict) else field
        if isinstance(origin, str) and origin in _ORIGINS:
            return Skip(_ORIGINS[origin])
    return _owner_words(content)


def _assistant(record: dict[str, Any], message: dict[str, Any], content: object) -> Said | Skip:
    if message.get("model") == "<synthetic>" or record.get("isApiErrorMessage"):
        if record.get("isApiErrorMessage") or record.get("error"):
            return Skip("API error")
        return Skip("synthetic reply")
    text = text_of(content)
    if text:
        return ASSISTANT, text, ""
    kinds = {block.get("type") for block in content if isinstance(block, dict)} if isinstance(content, list) else set()
    if "tool_use" in kinds or "server_tool_use" in kinds:
        return Skip("tool call")
    if kinds & {"thinking", "redacted_thinking"}:
        return Skip("thinking")
    return Skip("empty reply")


def _owner_words(content: object) -> Said | Skip:
    """What the person wrote in a user `content`, without the context Claude Code wrapped around it."""
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return Skip("empty message")
    texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
             and isinstance(b.get("text"), str) and b["text"].strip()]
    kinds = {b.get("type") for b in blocks if isinstance(b, dict)}
    if not texts:
        if "tool_result" in kinds:
            return Skip("tool output")
        return Skip("image" if kinds & {"image", "document"} else "empty message")
    if "tool_result" in kinds:
        return Skip("tool output")
    words: list[str] = []
    ide = False
    for text in texts:
        # A notification merged after the person's words (queued together): it and all after it go.
        notice = text.find("<task-notification")
        if notice > 0:
            text = text[:notice]
        reason = _lead(text)
        if reason is not None:
            if reason == "harness text" and text.lstrip().startswith("<system-reminder>"):
                # A reminder block first, maybe the person's words after it: cut it, read on.
                text = _REMINDER.sub("", text)
                if not text.strip():
                    continue
                reason = _lead(text)
            if reason is not None:
                return Skip(reason)
        cut = _IDE_BLOCK.sub("", text)
        opened = _IDE_OPEN.search(cut)
        if opened:
            cut = cut[:opened.start()]
        ide = ide or cut != text
        cut = _REMINDER.sub("", cut).strip()
        if cut:
            words.append(cut)
    if not words:
        return Skip("IDE context" if ide else "harness text")
    return OWNER, "\n\n".join(words), ""


def _lead(text: str) -> str | None:
    start = text.lstrip()
    for lead, reason in _LEADS:
        if start.startswith(lead):
            return reason
    return None


def _attachment(record: dict[str, Any], owners: frozenset[str]) -> Said | Skip:
    """A `queued_command` attachment is a message typed while the agent worked; other attachments are context."""
    attachment = record.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
        return Skip("harness text")
    if _CHANNEL.match(text_of(attachment.get("prompt"))):
        return _channel(text_of(attachment.get("prompt")), owners)
    mode = attachment.get("commandMode")
    if mode in ("task-notification", "task_notification"):
        return Skip("task notification")
    origin = attachment.get("origin")
    kind = origin.get("kind") if isinstance(origin, dict) else None
    if isinstance(kind, str) and kind != "human":
        return Skip(_ORIGINS.get(kind, "harness text"))
    if record.get("isMeta") or attachment.get("isMeta"):
        return Skip("harness text")
    if mode == "bash":
        return Skip("shell command")
    if mode not in (None, "prompt"):
        return Skip("harness text")
    return _owner_words(attachment.get("prompt"))


def _queued_operation(record: dict[str, Any], said: set[str], owners: frozenset[str]) -> Said | Skip:
    """A `remove` the running turn absorbed holds words found nowhere else (before queued_command attachments)."""
    content = record.get("content")
    if record.get("operation") != "remove" or record.get("reason") not in _ABSORBED \
            or not isinstance(content, str) or not content.strip():
        return Skip("queued copy")
    if _norm(content) in said:
        return Skip("queued copy")
    if _CHANNEL.match(content.strip()):
        return _channel(content.strip(), owners)
    return _owner_words(content)


def _channel(text: str, owners: frozenset[str]) -> Said | Skip:
    """A channel message: a person's (`user` attribute: the owner when listed in `owners`, else another
    person, named), or an event no person wrote (no `user`: a webhook, a peer session)."""
    match = _CHANNEL.match(text)
    if match is None:
        return Skip("channel event")
    attributes = dict(_ATTRIBUTE.findall(match.group(1)))
    body = match.group(2).strip()
    person = attributes.get("user", "").strip()
    if not person or not body:
        return Skip("channel event")
    if person in owners:
        return OWNER, body, ""
    return OTHER, body, person


def _said_elsewhere(path: Path) -> set[str]:
    """The texts of the file's queued_command attachments and user records, to know a queued copy."""
    out: set[str] = set()
    for _, record in json_records(path, []):
        kind = record.get("type")
        if kind == "attachment" and isinstance(record.get("attachment"), dict):
            prompt = record["attachment"].get("prompt")
            if record["attachment"].get("type") == "queued_command":
                out.add(_norm(text_of(prompt)))
        elif kind == "user" and isinstance(record.get("message"), dict):
            out.add(_norm(text_of(record["message"].get("content"))))
    out.discard("")
    return out


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()
