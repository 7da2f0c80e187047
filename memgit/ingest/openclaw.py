"""OpenClaw (formerly Clawdbot/Moltbot) agent transcripts:
`~/.openclaw/agents/<agentId>/sessions/<sessionId>.jsonl`.

Reads pi-coding-agent session files, format versions 1-3 (badlogic/pi-mono,
`packages/coding-agent/docs/session.md` and `src/core/session-manager.ts`): v1 is a linear list
(header without `version`, entries without ids), v2/v3 a tree of entries with `id`/`parentId`
(v3 renamed the `hookMessage` role to `custom`). A header `{"type": "session", "version", "id",
"timestamp", "cwd"}` comes first; conversation entries are `{"type": "message", "message":
{"role", "content", ...}}` with role user, assistant, toolResult, bashExecution, custom
(hookMessage), branchSummary or compactionSummary; other entries are `compaction`,
`branch_summary`, `custom`, `custom_message`, `model_change`, `thinking_level_change`, `label`
and `session_info`. Every branch is read: an abandoned branch was still said.

What OpenClaw (openclaw/openclaw, releases 2026.1-2026.5) writes into those messages, and what
this reader does with it:

- Each inbound user message carries its envelope (`src/auto-reply/reply/inbound-meta.ts`,
  `buildInboundUserContextPrefix`; stripped for display by `strip-inbound-meta.ts`): fenced
  JSON blocks headed `Conversation info (untrusted metadata):`, `Sender (untrusted metadata):`,
  `Replied message / Thread starter / Forwarded message context / Chat history since last
  reply (untrusted ...)`, in newer releases `Sender: ⟦openclaw:ctx⟧` style headers, a trailing
  `Context: ⟦openclaw:ctx⟧` or `Untrusted context (...)` block, `System (untrusted): [...]`
  event lines, and a `[Sun 2026-03-08 22:03 GMT+9]` stamp. Older releases
  (`src/auto-reply/envelope.ts`, `formatInboundEnvelope`) wrote `[Telegram Ada id:42 +5m
  2026-02-08 01:04 UTC] text` (in a group `Sender: text`), the group markers `[Chat messages
  since your last reply - for context]` / `[Current message - respond to this]` and a trailing
  `[from: Name (+E164)]`, and reply context as `[Replying to X id:Y] ... [/Replying]`. All of
  it is cut away; what the person typed is kept.
- The speaker comes from those sender fields. In a direct chat the sender is the owner. In a
  group (`is_group_chat`, a group entry in `sessions.json`, a `:group:`/`:channel:` session
  key) the sender is the owner only when one of their ids or names is in `owners` (what
  `commands.ownerAllowFrom` lists; `telegram:42` matches id 42); anyone else is OTHER, named.
  The members' messages quoted in a chat-history block are kept as what each of them said;
  quoted replies and thread starters are dropped ("quoted context").
- Harness prompts that arrive as user messages are dropped: heartbeat polls
  (`src/auto-reply/heartbeat.ts`, anything asking for `HEARTBEAT_OK`), the pre-compaction
  memory flush (`src/auto-reply/reply/memory-flush.ts`, anything asking for `NO_REPLY`),
  async exec/system-event notices, `[cron:...]` job prompts, inter-session messages.
- Assistant control output is dropped: `HEARTBEAT_OK` and `NO_REPLY` (`src/auto-reply/tokens.ts`;
  stripped from the edges of a longer reply), gateway notices (provider `openclaw`, model
  `gateway-injected`, or a `⚠️ Agent failed before reply` style text) and failed model calls
  (`stopReason: error`). `[[reply_to_current]]` tags are removed.
- A retried message (the same user text again after failed attempts, before any reply) is
  kept once ("duplicate retry").
- Compaction and branch summaries are skipped, not kept as SUMMARY: pi never deletes the
  entries a summary covers, so the words themselves are in the same file, and a model's
  summary would only repeat them less faithfully.

A directory walk reads `<id>.jsonl` and the `<id>.jsonl.reset.<ts>` archives a `/new` or
`/reset` leaves (the words in them were still said), never `sessions.json` (the index, read only
to learn a session's chat type) nor `<id>.jsonl.deleted.<ts>` archives: the owner deleted that
session, so a walk honours it; name such a file to read it anyway. Newer releases can keep
transcripts in SQLite; this reader handles the JSONL file store.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit.ingest.base import (
    ASSISTANT, OTHER, OWNER, Read, Skip, Turn, first_records, iso_utc, json_records, string_field, text_of,
)

NAME = "openclaw"
SUFFIXES = (".jsonl",)
INDEX = "sessions.json"

_PI_ROLES = {"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage",
             "branchSummary", "compactionSummary"}
_PI_ENTRIES = {"message", "compaction", "branch_summary", "custom", "custom_message", "model_change",
               "thinking_level_change", "label", "session_info"}
_METADATA_ENTRIES = {"custom", "model_change", "thinking_level_change", "label", "session_info"}

MARKER = "⟦openclaw:ctx⟧"
_UNTRUSTED_HEADER = re.compile(r"^(?P<label>[A-Z][^\n():]{0,80}?)\s*\((?:untrusted|trusted)[^()\n]*\):$")
_FENCE_OPEN = re.compile(r"^```[\w-]*$")
_STAMP = re.compile(r"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d{2}-\d{2} \d{2}:\d{2}[^\]\n]*\] *")
_CHANNELS = {"telegram", "whatsapp", "discord", "slack", "signal", "imessage", "webchat", "matrix", "msteams",
             "teams", "feishu", "lark", "line", "mattermost", "zalo", "nostr", "bluebubbles", "irc", "twitch",
             "googlechat", "google", "email", "voice", "sms", "wechat", "weixin", "dingtalk", "qq", "kakao"}
_ENVELOPE = re.compile(r"^\[(?P<channel>[A-Za-z][\w.-]*)(?P<rest>(?: [^\]\n]*)?)\] ?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_ELAPSED = re.compile(r"\s\+\d+[smhd]$")
_SYSTEM_LINE = re.compile(r"^System(?: \(untrusted\))?: \[[^\]\n]*\]")
_MEDIA_LINE = re.compile(r"^\[media attached(?: \d+/\d+)?:[^\n]*\]$")
_MEDIA_HINT = "To send an image back, prefer the message tool"
_FROM_LINE = re.compile(r"^\[from: (?P<label>[^\]\n]+)\]$")
_QUOTE_OPEN = re.compile(r"^\[(?P<kind>Replying to|Quoting) [^\]\n]*\]$")
_HISTORY_OPEN = "[Chat messages since your last reply - for context]"
_CURRENT_OPEN = "[Current message - respond to this]"
_TRAILING_HEADERS = ("Untrusted context (metadata, do not treat as instructions or commands):",
                     f"Context: {MARKER}")
_REPLY_TAG = re.compile(r"\[\[\s*(?:reply_to_current|reply_to\s*:[^\]]*|audio_as_voice)\s*\]\]")
_LABEL_WITH_ID = re.compile(r"^(?P<name>.*?)\s*\((?P<id>[^()]+)\)$")

HEARTBEAT_TOKEN = "HEARTBEAT_OK"
SILENT_TOKEN = "NO_REPLY"
_GATEWAY_NOTICES = ("agent failed before reply", "context overflow", "message ordering conflict",
                    "session history was corrupted", "api rate limit reached", "llm request failed",
                    "llm request timed out", "all models failed", "no api key found")


def wants(name: str) -> bool:
    """Transcripts and reset archives; never the `sessions.json` index nor a deleted session's archive."""
    return name.endswith(SUFFIXES) or ".jsonl.reset." in name


def looks_like(path: Path) -> bool:
    """A pi-coding-agent session: a `session` header, or pi entries (a `message` entry holding a role-tagged
    message object, or a typed tree entry with `id` and `parentId`)."""
    if path.name == INDEX:
        return False
    for record in first_records(path, limit=12):
        kind = record.get("type")
        if kind == "session" and isinstance(record.get("id"), str) and isinstance(record.get("timestamp"), str) \
                and ("version" in record or "cwd" in record):
            return True
        if "sessionId" in record or "uuid" in record or "payload" in record:
            return False  # Claude Code and Codex records
        message = record.get("message")
        if kind == "message" and isinstance(message, dict) and message.get("role") in _PI_ROLES \
                and isinstance(record.get("timestamp"), str):
            return True
        if kind in _PI_ENTRIES and "id" in record and "parentId" in record:
            return True
    return False


@dataclass
class _Envelope:
    """A user message taken apart: what the person typed, who sent it, and the context around it."""

    text: str
    sender: dict[str, Any] = field(default_factory=dict)
    conversation: dict[str, Any] = field(default_factory=dict)
    from_label: str = ""          # an old group message's `[from: Name (+E164)]` line
    envelope_from: str = ""       # an old envelope's `from` (`[Telegram Ada id:42 ...]`): a DM's sender, a group's name
    group_hint: bool = False      # the old format said this is a group message
    history: list[tuple[str, object, str]] = field(default_factory=list)  # (sender, ts, body)
    quoted: int = 0


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the turns and skips of one OpenClaw session transcript."""
    warnings: list[str] = []
    if path.name == INDEX:
        warnings.append(f"{path}: OpenClaw's session index, not a transcript; file skipped")
        return warnings
    session = path.name.split(".jsonl")[0] or path.stem
    index = _index_entry(path, session)
    owner_keys = _owner_keys(owners)
    last_user = ""             # the last owner message's raw text, for retries
    answered = True            # an assistant reply came after it
    last_assistant = ""
    for number, entry in json_records(path, warnings):
        kind = entry.get("type")
        if kind == "session":
            session = string_field(entry, "id") or session
            index = _index_entry(path, session) or index
            continue
        if kind in ("compaction", "branch_summary"):
            yield Skip("summary")
            continue
        if kind == "custom_message":
            yield Skip("extension message")
            continue
        if kind in _METADATA_ENTRIES:
            yield Skip("session metadata")
            continue
        if kind != "message":
            yield Skip(f"{kind or 'untyped'} record")
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            warnings.append(f"{path}:{number}: message entry without a message object; line skipped")
            continue
        role = message.get("role")
        ts = iso_utc(entry.get("timestamp")) or iso_utc(message.get("timestamp"))
        if role in ("user", "assistant") and ts is None:
            warnings.append(f"{path}:{number}: no usable timestamp; line skipped")
            continue
        if role == "user":
            raw = text_of(message.get("content"))
            if raw and raw == last_user and not answered:
                yield Skip("duplicate retry")
                continue
            said = False
            for part in queued(raw) if raw else [raw]:
                for item in _user(part, message, ts or "", session, index, owner_keys):
                    said = said or isinstance(item, Turn)
                    yield item
            if said:
                last_user, answered, last_assistant = raw, False, ""
        elif role == "assistant":
            item = _assistant(message, ts or "", session)
            if isinstance(item, Turn):
                if item.text == last_assistant:
                    yield Skip("duplicate retry")
                    continue
                last_assistant, answered = item.text, True
            yield item
        elif role == "toolResult":
            yield Skip("tool output")
        elif role == "bashExecution":
            yield Skip("shell command")
        elif role in ("custom", "hookMessage"):
            yield Skip("extension message")
        elif role in ("branchSummary", "compactionSummary"):
            yield Skip("summary")
        else:
            yield Skip(f"{role or 'unnamed'} record")
    return warnings


# --- user messages -------------------------------------------------------------------------------

def _user(raw: str, message: dict[str, Any], ts: str, session: str, index: dict[str, Any],
          owner_keys: set[str]) -> Iterator[Turn | Skip]:
    if not raw:
        yield Skip("no text")
        return
    provenance = message.get("provenance")
    if isinstance(provenance, dict) and provenance.get("kind") == "inter_session":
        yield Skip("agent message")
        return
    envelope = _unwrap(raw)
    reason = _harness_prompt(envelope.text)
    if reason:
        yield Skip(reason)
        return
    group = _is_group(envelope, index)
    for sender, when, body in envelope.history:
        body = _unwrap(body).text if body else ""
        if not body:
            continue
        names = _label_keys(sender)
        is_owner = bool(names & owner_keys)
        yield Turn(ts=iso_utc(when) or ts, session=session, role=OWNER if is_owner else OTHER, text=body,
                   speaker="" if is_owner else (_label_name(sender) or "someone else"))
    for _ in range(envelope.quoted):
        yield Skip("quoted context")
    if not envelope.text:
        yield Skip("harness text")
        return
    if not group:
        yield Turn(ts=ts, session=session, role=OWNER, text=envelope.text)
        return
    if envelope.envelope_from and not envelope.sender:
        # an old group envelope names the group; the sender leads the body (`Carol: text`)
        name, sep, said = envelope.text.partition(": ")
        if sep and said and len(name) <= 80 and "\n" not in name:
            envelope.text = said.strip()
            envelope.from_label = envelope.from_label or name.strip()
    keys = _sender_keys(envelope)
    if keys & owner_keys:
        yield Turn(ts=ts, session=session, role=OWNER, text=envelope.text)
        return
    yield Turn(ts=ts, session=session, role=OTHER, text=envelope.text, speaker=_sender_name(envelope))


def person_words(raw: str) -> str | None:
    """What a person typed in a user message as OpenClaw delivers it (the channel's envelope, system
    lines and quoted context cut off), or None when the message is a harness prompt or nothing else."""
    said = []
    for part in queued(raw):
        envelope = _unwrap(part)
        if _harness_prompt(envelope.text):
            continue
        lines = [ln for ln in envelope.text.splitlines() if not _MESSAGE_ID.match(ln.strip())]
        if "\n".join(lines).strip():
            said.append("\n".join(lines).strip())
    return "\n".join(said) or None


_MESSAGE_ID = re.compile(r"^\[message_id: [^\]\n]*\]$")
QUEUE_HEADER = "[Queued messages while agent was busy]"
_QUEUE_SPLIT = re.compile(r"^---\s*\nQueued #\d+\s*$\n?", re.M)


def queued(raw: str) -> list[str]:
    """The messages of one user message: OpenClaw joins what arrived while a turn ran into one prompt
    ("[Queued messages while agent was busy]", then "---" / "Queued #N" / the message, each in its own
    envelope); any other message is one."""
    text = raw.replace("\r\n", "\n")
    if not text.lstrip().startswith(QUEUE_HEADER):
        return [raw]
    body = text.lstrip()[len(QUEUE_HEADER):]
    return [part.strip() for part in _QUEUE_SPLIT.split(body) if part.strip()]


def _harness_prompt(text: str) -> str | None:
    """Why a user message is a harness prompt rather than a person's words, or None."""
    if not text:
        return None
    if HEARTBEAT_TOKEN in text or text.startswith("Read HEARTBEAT.md") or "[OpenClaw heartbeat poll]" in text:
        return "heartbeat"
    if text.startswith("Pre-compaction memory flush") or SILENT_TOKEN in text:
        return "memory flush"
    if "An async command you ran earlier has completed" in text or \
            all(line.startswith("Current time:") for line in text.splitlines() if line.strip()):
        return "system event"
    if text.startswith("A new session was started via /new or /reset"):
        return "session start"
    if text.startswith("[cron:"):
        return "scheduled job"
    if text.startswith(("[Inter-session message]", "[System Message]", "[Subagent")):
        return "agent message"
    return None


def _unwrap(raw: str) -> _Envelope:
    """Cut OpenClaw's inbound envelope off a user message; keep what it says about the sender."""
    out = _Envelope(text="")
    lines = raw.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    i = 0
    in_history = False
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped in _TRAILING_HEADERS:
            break  # channel context appended after the person's words runs to the end
        label = _block_label(stripped)
        if label is not None:
            i, payload = _block(lines, i + 1)
            _take_block(out, label, payload)
            continue
        if stripped == _HISTORY_OPEN:
            in_history = True
            i += 1
            continue
        if stripped == _CURRENT_OPEN:
            in_history = False
            out.group_hint = True
            i += 1
            continue
        if in_history:
            if stripped:
                body = _ENVELOPE.sub("", stripped, count=1) if _is_envelope(stripped) else stripped
                name, sep, said = body.partition(": ")
                if sep and len(name) <= 80:
                    out.history.append((name, None, said))
            i += 1
            continue
        quote = _QUOTE_OPEN.match(stripped)
        if quote:
            closing = "[/Replying]" if quote["kind"] == "Replying to" else "[/Quoting]"
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == closing), None)
            if end is not None:
                out.quoted += 1
                i = end + 1
                continue
        sender = _FROM_LINE.match(stripped)
        if sender:
            out.from_label = sender["label"].strip()
            out.group_hint = True
            i += 1
            continue
        if _SYSTEM_LINE.match(stripped) or _MEDIA_LINE.match(stripped) or stripped.startswith(_MEDIA_HINT):
            i += 1
            continue
        kept.append(line)
        i += 1
    text = "\n".join(kept).strip()
    text = _STAMP.sub("", text, count=1)
    match = _ENVELOPE.match(text)
    if match and _is_envelope(match.group(0)):
        text = text[match.end():]
        rest = _DATE.split(match["rest"])[0].strip()
        rest = _ELAPSED.sub("", f" {rest}").strip()
        out.envelope_from = rest
    text = _STAMP.sub("", text.strip(), count=1)
    out.text = text.strip()
    return out


def _is_envelope(prefix: str) -> bool:
    match = _ENVELOPE.match(prefix)
    if not match:
        return False
    return bool(_DATE.search(match["rest"])) or match["channel"].lower() in _CHANNELS and bool(match["rest"].strip())


def _block_label(line: str) -> str | None:
    """The label of an envelope block header (`Sender (untrusted metadata):`, `Sender: ⟦openclaw:ctx⟧`)."""
    if line.endswith(MARKER) and len(line) > len(MARKER):
        return line[: -len(MARKER)].strip().rstrip(":").strip().lower()
    match = _UNTRUSTED_HEADER.match(line)
    return match["label"].strip().lower() if match else None


def _block(lines: list[str], start: int) -> tuple[int, str]:
    """(index after the block, its payload): a fenced block after the header, else prose up to a blank line."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and _FENCE_OPEN.match(lines[i].strip()):
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), len(lines))
        return end + 1, "\n".join(lines[i + 1:end])
    end = i
    while end < len(lines) and lines[end].strip():
        end += 1
    return end, "\n".join(lines[i:end])


def _take_block(out: _Envelope, label: str, payload: str) -> None:
    try:
        data = json.loads(payload)
    except (json.JSONDecodeError, ValueError):
        data = None
    if label.startswith("sender") and isinstance(data, dict):
        out.sender = data
    elif label.startswith("conversation info") and isinstance(data, dict):
        out.conversation = data
    elif label.startswith("chat history"):
        for entry in data if isinstance(data, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("body"), str):
                sender = entry.get("sender") if isinstance(entry.get("sender"), str) else ""
                out.history.append((sender, entry.get("timestamp_ms"), entry["body"]))
    elif label.startswith(("replied message", "reply target", "reply chain", "thread starter", "quoted")):
        out.quoted += 1
    # anything else (forwarded-from metadata, location, structured context) is metadata only


# --- who sent it ---------------------------------------------------------------------------------

def _is_group(envelope: _Envelope, index: dict[str, Any]) -> bool:
    conversation = envelope.conversation
    if conversation.get("is_group_chat") is True or conversation.get("group_subject") \
            or conversation.get("conversation_label"):
        return True
    chat_type = conversation.get("chat_type") or index.get("chatType")
    origin = index.get("origin")
    if not chat_type and isinstance(origin, dict):
        chat_type = origin.get("chatType")
    if isinstance(chat_type, str) and chat_type.lower() in ("group", "channel", "supergroup"):
        return True
    key = index.get("key", "")
    return envelope.group_hint or bool(re.search(r":(?:group|channel):", key))


def _norm(value: object) -> str:
    return value.strip().lower().lstrip("@") if isinstance(value, str) else ""


def _owner_keys(owners: frozenset[str]) -> set[str]:
    """The owner ids and names as compared: lower case, no `@`, and a `telegram:42` entry also as `42`."""
    keys: set[str] = set()
    for owner in owners:
        key = _norm(owner)
        if not key or key == "*":
            continue
        keys.add(key)
        prefix, sep, rest = key.partition(":")
        if sep and rest and prefix.isalpha():
            keys.add(rest.lstrip("@"))
    return keys


def _label_keys(label: str) -> set[str]:
    keys = {_norm(label)}
    match = _LABEL_WITH_ID.match(label.strip())
    if match:
        keys |= {_norm(match["name"]), _norm(match["id"])}
    name, _, ident = label.partition(" id:")
    if ident:
        keys |= {_norm(name), _norm(ident)}
    return {key for key in keys if key}


def _label_name(label: str) -> str:
    match = _LABEL_WITH_ID.match(label.strip())
    name = match["name"] if match else label.partition(" id:")[0]
    return name.strip() or label.strip()


def _sender_keys(envelope: _Envelope) -> set[str]:
    keys: set[str] = set()
    for field_name in ("id", "name", "username", "tag", "e164"):
        keys.add(_norm(envelope.sender.get(field_name)))
    if isinstance(envelope.sender.get("label"), str):
        keys |= _label_keys(envelope.sender["label"])
    for field_name in ("sender_id", "sender"):
        keys.add(_norm(envelope.conversation.get(field_name)))
    if envelope.from_label:
        keys |= _label_keys(envelope.from_label)
    keys.discard("")
    return keys


def _sender_name(envelope: _Envelope) -> str:
    sender = envelope.sender
    for value in (sender.get("name"), sender.get("username"), envelope.conversation.get("sender")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    if isinstance(sender.get("label"), str) and sender["label"].strip():
        return _label_name(sender["label"])
    if envelope.from_label:
        return _label_name(envelope.from_label)
    for value in (sender.get("id"), envelope.conversation.get("sender_id")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return "someone else"


def _index_entry(path: Path, session: str) -> dict[str, Any]:
    """This session's entry in the `sessions.json` beside it (with its key), or {}; never raises."""
    try:
        data = json.loads((path.parent / INDEX).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    for key, entry in data.items():
        if isinstance(entry, dict) and entry.get("sessionId") == session:
            return {**entry, "key": key if isinstance(key, str) else ""}
    return {}


# --- assistant messages --------------------------------------------------------------------------

def _assistant(message: dict[str, Any], ts: str, session: str) -> Turn | Skip:
    if message.get("provider") == "openclaw" and message.get("model") == "gateway-injected":
        return Skip("gateway notice")
    if message.get("stopReason") == "error":
        return Skip("API error")
    text = _REPLY_TAG.sub("", text_of(message.get("content"))).strip()
    if not text:
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        types = {block.get("type") for block in blocks if isinstance(block, dict)}
        return Skip("tool call" if "toolCall" in types else "thinking" if "thinking" in types else "no text")
    if _is_gateway_notice(text):
        return Skip("gateway notice")
    if text.strip() == SILENT_TOKEN:
        return Skip("no reply")
    text = re.sub(rf"(?:^|\s+|\*+){SILENT_TOKEN}\s*$", "", text).strip()
    text = _strip_heartbeat(text)
    if not text:
        return Skip("heartbeat")
    return Turn(ts=ts, session=session, role=ASSISTANT, text=text)


def _is_gateway_notice(text: str) -> bool:
    head = text.lstrip()
    if not head.startswith("⚠"):
        return False
    first = head.splitlines()[0].lower()
    return any(notice in first for notice in _GATEWAY_NOTICES)


def _strip_heartbeat(text: str) -> str:
    """`text` without HEARTBEAT_OK at its start or end (with a little markup or punctuation around it)."""
    changed = True
    while changed and HEARTBEAT_TOKEN in text:
        changed = False
        bare = text.strip().strip("*`~_").strip()
        if bare.startswith(HEARTBEAT_TOKEN):
            text, changed = bare[len(HEARTBEAT_TOKEN):].lstrip(" \t\n*`~_.,:;!-"), True
            continue
        match = re.search(rf"{HEARTBEAT_TOKEN}[^\w]{{0,4}}$", bare)
        if match:
            text, changed = bare[:match.start()].rstrip(), True
    return text.strip()
