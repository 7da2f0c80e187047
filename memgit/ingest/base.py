"""What every transcript reader shares: the Turn value, the Reader protocol, and the
small parsing helpers (JSON lines, timestamps, text blocks) the readers have in common."""
from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

# The speakers a stored turn can have (see memgit.ingest.speakers, which decides them):
OWNER = "user"            # the person whose memory this is: only their words become facts about them
ASSISTANT = "assistant"   # the agent
OTHER = "other"           # another person (a group-chat member, a colleague): `speaker` names them
SUMMARY = "summary"       # text a model wrote about the conversation (a compaction summary): context only
ROLES = (OWNER, ASSISTANT)
SESSION_ROLES = (OWNER, ASSISTANT, OTHER, SUMMARY)


@dataclass(frozen=True)
class Turn:
    """One thing said in a session: `ts` is ISO-8601, `role` one of SESSION_ROLES.

    `speaker` names who spoke when `role` is OTHER (empty otherwise).
    """

    ts: str
    session: str
    role: str
    text: str
    speaker: str = ""


@dataclass(frozen=True)
class Skip:
    """A record a reader read and left out, and why ("tool output", "harness text", ...).

    Readers yield these beside their turns, so `memgit ingest` can say per file what it
    dropped; a Skip carries no text, so nothing of a dropped record travels further.
    """

    reason: str


Read = Generator["Turn | Skip", None, list[str]]


class Reader(Protocol):
    """Reads one transcript file and yields its turns and skips.

    A reader never raises for bad input: it skips what it cannot read and *returns*
    (as the generator's return value) one warning per bad line or file, each naming it.
    `owners` are the ids or names of the person the memory belongs to, for formats that
    carry a sender per message (group chats); a reader that cannot tell the owner in a
    group keeps other people's words as OTHER, never as the owner's.
    """

    def __call__(self, path: Path, owners: frozenset[str] = frozenset()) -> Read: ...


def json_records(path: Path, warnings: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each JSON object line of `path`; note bad lines in `warnings`."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        warnings.append(f"{path}: cannot be read ({exc.strerror or exc}); file skipped")
        return
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                warnings.append(f"{path}:{number}: not valid UTF-8; line skipped")
                continue
            line = line.lstrip("\ufeff").strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                warnings.append(f"{path}:{number}: malformed JSON; line skipped")
                continue
            if not isinstance(record, dict):
                warnings.append(f"{path}:{number}: not a JSON object; line skipped")
                continue
            yield number, record


def parse_moment(value: object) -> datetime | None:
    """An aware UTC datetime from an ISO-8601 string or a Unix time (seconds or milliseconds).

    A naive ISO string is taken as UTC; anything unparseable gives None.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        # Millisecond clocks (JavaScript's Date.now()) pass 1e11 in 1973; second clocks won't until 5138.
        seconds = value / 1000 if abs(value) > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    return None


def iso_utc(value: object) -> str | None:
    """`value` as a UTC ISO-8601 string with milliseconds (`2026-01-06T10:00:00.000Z`), or None."""
    moment = parse_moment(value)
    if moment is None:
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def text_of(content: object) -> str:
    """The human-readable text of a message `content`: a string, or the `text` blocks of a list.

    Every other block (tool calls, tool results, thinking, images) is dropped.
    """
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"].strip()
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    return "\n\n".join(part for part in parts if part)


def string_field(record: dict[str, Any], key: str) -> str | None:
    """`record[key]` when it is a non-empty string, else None."""
    value = record.get(key)
    return value if isinstance(value, str) and value else None


def first_records(path: Path, limit: int = 40) -> list[dict[str, Any]]:
    """Up to `limit` JSON objects from the first lines of `path`, for recognising a format.

    Never raises: an unreadable file or a line that is no JSON object just gives fewer records.
    """
    out: list[dict[str, Any]] = []
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle):
                if number >= limit * 4 or len(out) >= limit:
                    break
                try:
                    record = json.loads(raw.decode("utf-8").lstrip("\ufeff"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    continue
                if isinstance(record, dict):
                    out.append(record)
    except OSError:
        pass
    return out
