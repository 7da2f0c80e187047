"""Light sleep: read the window's daily logs and sessions, and the memory files.

Nothing is judged here. Unreadable inputs (invalid UTF-8, binary, oversized,
malformed JSON lines, symlinks leading out of the workspace) are skipped with
a warning. Every observation is redacted at once, so no secret travels further.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import cached_property
from pathlib import Path

from memgit import sensitive
from memgit.memory import Document
from memgit.redaction_cache import RedactionCache
from memgit.text import strip_time, term_set
from memgit.workspace import Capacity, Workspace, log_day

DATED_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
MAX_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Observation:
    """One line of evidence from a daily log or a session turn."""

    source: str        # workspace-relative path
    line: int          # 1-based
    day: date
    text: str          # redacted, without list marker and time prefix
    raw: str           # the line as written, redacted
    kind: str          # "log" | "session"
    role: str = "log"  # user | assistant | log
    session: str = ""
    sensitive: bool = False

    @property
    def ref(self) -> str:
        return f"{self.source}:{self.line}"

    @cached_property
    def terms(self) -> frozenset[str]:
        # computed once per observation (a frozen dataclass still has a __dict__ for it); equality and
        # hashing use the fields only
        return _terms(self.text.replace(sensitive.REDACTED, " ") if self.sensitive else self.text)

    def quote(self) -> str:
        """A verbatim excerpt of the source line free of sensitive values (empty if none is)."""
        if sensitive.REDACTED not in self.raw:
            return strip_time(self.raw)  # the cited line itself (continuation lines are not quoted)
        head = self.raw.split(sensitive.REDACTED)[0]
        return strip_time(head).rstrip(" :：=,，") if len(strip_time(head)) >= 8 else ""


_term_cache: dict[str, frozenset[str]] = {}


def _terms(text: str) -> frozenset[str]:
    t = _term_cache.get(text)
    if t is None:
        from memgit.dream.lexicon import concept_terms

        t = term_set(text) | concept_terms(text)
        if len(_term_cache) < 200_000:
            _term_cache[text] = t
    return t


@dataclass
class Collected:
    now: date
    start: date
    observations: list[Observation]
    docs: dict[str, Document]
    capacity: list[Capacity]
    logs_read: list[str] = field(default_factory=list)
    sessions_read: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    # entries git stores redacted (memgit.gitfilter) whose live line still holds the value: (file, text)
    live_secrets: frozenset[tuple[str, str]] = frozenset()

    def days(self) -> list[date]:
        return sorted({o.day for o in self.observations})


def _inside(root: Path, p: Path) -> bool:
    try:
        p.resolve().relative_to(root)
        return True
    except (ValueError, OSError):
        return False


def _read_text(root: Path, p: Path, warnings: list[str]) -> str | None:
    rel = p.relative_to(root).as_posix()
    if p.is_symlink() and not _inside(root, p):
        warnings.append(f"{rel}: a symlink leading outside the workspace, not followed.")
        return None
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            warnings.append(f"{rel}: {size // (1024 * 1024)} MB is over the {MAX_BYTES // (1024 * 1024)} MB "
                            f"limit, skipped; split or archive it.")
            return None
        data = p.read_bytes()
    except OSError as e:
        warnings.append(f"{rel}: cannot be read ({e.strerror}), skipped.")
        return None
    if b"\x00" in data[:8192]:
        warnings.append(f"{rel}: binary data, skipped.")
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warnings.append(f"{rel}: not valid UTF-8, skipped; save it as UTF-8.")
        return None


ITEM_START = re.compile(r"^(?:[-*+]|\d{1,9}[.)])\s")
# a transcript turn written into a log ("user: …" / "assistant: …"), as OpenClaw's session-memory
# hook writes a conversation's summary into memory/YYYY-MM-DD-HHMM.md
TURN_START = re.compile(r"^(user|assistant):(?:\s|$)")


def _log_observations(rel: str, day: date, text: str, cache: RedactionCache | None = None
                      ) -> list[Observation]:
    """One observation per log item: a list item with its continuation lines (a PEM block pasted
    under "- deploy key:" is one redacted item, not lines of its own). A transcript turn written into
    the log ("user: …", "assistant: …", up to the next turn or heading) is one observation with its
    speaker's role; a user turn is the person's words only once the channel's envelope is cut off,
    and a harness prompt (a heartbeat poll, a memory flush) is no one's words (memgit.ingest.openclaw).
    The file is redacted as a whole first, so multi-line secrets are caught; an unchanged file the
    clean filter has already scanned is redacted from its spans (memgit.redaction_cache)."""
    from memgit.ingest import openclaw

    out = []
    fence = False
    raw_lines = text.splitlines()
    red_lines = (cache.redact(text) if cache is not None else sensitive.redact(text)).splitlines()
    if len(red_lines) != len(raw_lines):  # never expected: redact keeps every line
        red_lines = [sensitive.redact(ln) for ln in raw_lines]
    item: list[int] = []
    turn = ""  # the role of the transcript turn being read, if any

    def flush() -> None:
        if not item:
            return
        first = red_lines[item[0]]
        changed = any(red_lines[j] != raw_lines[j] for j in item)
        if turn:
            said = "\n".join([TURN_START.sub("", raw_lines[item[0]], count=1),
                              *(raw_lines[j] for j in item[1:])])
            if turn == "user":
                said = openclaw.person_words(said) or ""
            red = sensitive.redact(said)
            body = " ".join(ln.strip() for ln in red.splitlines() if ln.strip())
            if body:
                out.append(Observation(rel, item[0] + 1, day, strip_time(body), first, "log", turn, "",
                                       changed or red != said))
        else:
            rest = " ".join(red_lines[j].strip() for j in item[1:])
            out.append(Observation(rel, item[0] + 1, day, (strip_time(first) + (" " + rest if rest else "")).strip(),
                                   first, "log", "log", "", changed))
        item.clear()

    for i, line in enumerate(raw_lines):
        s = line.strip()
        if s.startswith(("```", "~~~")):
            if turn:
                item.append(i)  # a fence inside a turn is part of what was said
                continue
            flush()
            fence = not fence
            continue
        if fence:
            continue
        m = TURN_START.match(line)
        if m:
            flush()
            turn = m.group(1)
            item.append(i)
            continue
        if s.startswith("#"):
            flush()
            turn = ""
            continue
        if turn:
            if s:
                item.append(i)
            continue
        if not s or s in ("---", "§"):
            flush()
            continue
        if ITEM_START.match(line) or not item:
            flush()
        item.append(i)
    flush()
    return out


def _observation(rel: str, line: int, day: date, raw: str, kind: str, role: str = "log",
                 session: str = "") -> Observation:
    red = sensitive.redact(raw)
    return Observation(rel, line, day, strip_time(red), red, kind, role, session, red != raw)


def _session_observations(rel: str, text: str, start: date, now: date, warnings: list[str]
                          ) -> list[Observation]:
    out = []
    bad = 0
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            ts = datetime.fromisoformat(str(rec["ts"]).replace("Z", "+00:00"))
            txt = rec["text"]
            role = rec.get("role", "user")
            if not isinstance(txt, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            bad += 1
            continue
        if role not in ("user", "assistant"):
            # another person's words are theirs, not the owner's, and a model's summary is no
            # one's words: neither may become a fact or preference of the person (memgit.ingest.speakers)
            continue
        day = ts.date()
        if not (start <= day <= now):
            continue
        # one observation per turn, redacted as a whole (a key pasted over several lines is caught)
        red = sensitive.redact(txt)
        lines = [ln.strip() for ln in red.splitlines() if ln.strip()][:40]
        if lines:
            # a turn's time is its record's: a clock time opening it is what the person said ("08:30, before
            # we open"), not a log's timestamp
            out.append(Observation(rel, i, day, " ".join(lines), lines[0], "session", str(role),
                                   str(rec.get("session", "")), red != txt))
    if bad:
        warnings.append(f"{rel}: {bad} malformed JSON line(s) skipped.")
    return out


_SENTENCE_CUT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；;])\s*")


def _clean_parts(obs: list[Observation]) -> list[Observation]:
    """Each line a secret was redacted from, and also its sentences that hold no part of it, as lines of
    their own ("decided: cut-off moves to 11:00. Priya also pasted the key: [REDACTED]" says the cut-off
    without the key): what the person did beside pasting a secret still counts, and its quote is only
    that sentence."""
    out = []
    for o in obs:
        out.append(o)
        if not o.sensitive or o.role == "assistant":
            continue
        for part in _SENTENCE_CUT.split(o.text):
            part = part.strip()
            if len(part) >= 12 and sensitive.REDACTED not in part and not sensitive.has_sensitive(part):
                out.append(Observation(o.source, o.line, o.day, part, part, o.kind, o.role, o.session, False))
    return out


_NAME_LABEL = re.compile(r"^\s*(?:\*\*)?(?:name|full name|nickname|姓名|名字|称呼|稱呼|昵称|暱稱)(?:\*\*)?"
                         r"\s*[:：]\s*(.+)$", re.I)
_LEADING_NAME = re.compile(r"^([A-Z][a-z]+(?:[ -][A-Z][\w'-]+){1,3})\s*[,，(（]")
_NAME_WORD = re.compile(r"[A-Z][a-z]{1,20}|[\u4e00-\u9fff]{2,4}")
# a log line quoting someone: who ("Gwen", "Hal rang about the report", "思远说"), a colon, and the quote
_QUOTED = re.compile(r"^(?P<who>[^:：\"“”「」『』]{1,48}?)\s*[:：]\s*[\"“「『]"
                     r"(?P<said>[^\"“”「」『』]{8,})[\"”」』]\s*[.。]?\s*$")
_SAY_VERB = re.compile(r"(?:说|說|讲|講|表示|交代|留言|回复|回覆)$")


def person_names(docs: dict[str, Document]) -> frozenset[str]:
    """What the person the memory serves is called, from their user file: the words of its name entry
    ("Name: Halvard Osei-Lind (call him Hal)", "称呼：思远"), or the name its first entry opens with
    ("Gwen Pritchard, runs the farm shop"). Nothing when the file names no one."""
    user = next((d for n, d in docs.items() if n.rsplit("/", 1)[-1].upper().startswith("USER")), None)
    if user is None:
        return frozenset()
    names: set[str] = set()
    for k, e in enumerate(user.entries[:8]):
        body = e.body.strip()
        m = _NAME_LABEL.match(body)
        part = m.group(1) if m else (lm.group(1) if k == 0 and (lm := _LEADING_NAME.match(body)) else "")
        if m:
            part = re.split(r"[,，;；]", part, maxsplit=1)[0]
        names |= set(_NAME_WORD.findall(part)) - {"Call", "Him", "Her", "Them", "Me"}
    return frozenset(names)


def _person_quoted(obs: list[Observation], names: frozenset[str]) -> list[Observation]:
    """A log line quoting the person ("Gwen rang about the report: \"Send it at 7:30 instead.\"",
    "思远说：「以后用 pnpm」") holds their own words: the quote becomes a line of theirs, as a user
    turn written into the log is. Whom it quotes is the first word before the colon, one of their names."""
    if not names:
        return obs
    out = []
    for o in obs:
        m = _QUOTED.match(o.text) if o.role == "log" and o.kind == "log" else None
        if m:
            who = _SAY_VERB.sub("", m.group("who").strip())
            first = re.match(r"[A-Za-z][\w-]*|[\u4e00-\u9fff]+", who)
            # (a Chinese name runs on into the words after it: "思远打电话来：" opens with 思远)
            if first and (first.group(0) in names
                          or any(not n.isascii() and first.group(0).startswith(n) for n in names)):
                o = Observation(o.source, o.line, o.day, m.group("said").strip(), o.raw, o.kind, "user",
                                o.session, o.sensitive)
        out.append(o)
    return out


def collect(ws: Workspace, now: date, window_days: int) -> Collected:
    root = ws.root
    start = now - timedelta(days=window_days)
    warnings: list[str] = []
    obs: list[Observation] = []
    logs_read: list[str] = []
    sessions_read: set[str] = set()
    cfg = ws.config.memory
    logs_dir = root / cfg.logs_dir
    cache = RedactionCache.for_git_dir(root / ws.repo.git_dir)  # git_dir may be relative to the root
    if logs_dir.is_dir():
        for name in sorted(os.listdir(logs_dir)):
            day = log_day(name)
            if day is None:
                continue
            if not (start <= day <= now):
                continue
            p = logs_dir / name
            text = _read_text(root, p, warnings)
            if text is None:
                continue
            rel = p.relative_to(root).as_posix()
            logs_read.append(rel)
            obs += _log_observations(rel, day, text, cache)
    cache.save()
    sess_dir = root / cfg.sessions_dir
    if sess_dir.is_dir():
        floor = datetime.combine(start - timedelta(days=1), datetime.min.time()).timestamp()
        # (a window that begins after the machine's clock, a dream run for a later day, says nothing of when its files
        # were written: every undated file is read)
        if floor > time.time():
            floor = float("-inf")
        for name in sorted(os.listdir(sess_dir)):
            if not name.endswith(".jsonl"):
                continue
            p = sess_dir / name
            m = DATED_NAME_RE.match(name)
            if m:
                try:
                    fday = date.fromisoformat(m.group(1))
                    if not (start - timedelta(days=1) < fday <= now + timedelta(days=1)):
                        continue
                except ValueError:
                    pass
            else:
                try:
                    if p.stat().st_mtime < floor:
                        continue
                except OSError:
                    continue
            text = _read_text(root, p, warnings)
            if text is None:
                continue
            rel = p.relative_to(root).as_posix()
            got = _session_observations(rel, text, start, now, warnings)
            if got:
                sessions_read.add(rel)
                obs += got
    docs = ws.documents()
    warnings += ws.warnings
    ws.warnings.clear()
    capacity = ws.capacity()
    obs = _person_quoted(obs, person_names(docs))
    return Collected(now, start, _clean_parts(obs), docs, capacity, logs_read, sessions_read, warnings,
                     live_secrets(ws, docs))


def live_secrets(ws, docs: dict[str, Document]) -> frozenset[tuple[str, str]]:
    """An entry main holds as "[REDACTED]" that the agent's live file holds otherwise: the clean
    filter redacted a secret on its way into git, and the live file still has it."""
    from memgit.sensitive import REDACTED

    out = set()
    for name, doc in docs.items():
        hits = [e for e in doc.entries if REDACTED in e.text]
        if not hits:
            continue
        try:
            live = (ws.root / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out.update((name, e.text) for e in hits if e.text not in live)
    return frozenset(out)
