"""Where the secrets filter found something in a file, remembered so an unchanged log is not scanned twice.

The clean filter (memgit.gitfilter) scans every daily log git stages; the dream then reads the same
logs and would scan them again (about 50 ms for 10,000 lines). This cache, `.git/memgit/redaction-cache`,
maps the SHA-256 of a text to the spans `sensitive.spans` found in it, so the dream redacts an unchanged
log at the cost of a hash.

What it holds and why that is safe:
- spans only (line, start, end), never a value and never redacted or raw text;
- only texts of `MIN_CHARS` or more, so a hash cannot confirm a guess at a short secret-bearing text;
- a fingerprint of the filter's code (sensitive.py, the detect-secrets plugins it runs, this file's
  `CACHE_VERSION`): when any of them changes, every entry is dropped, as a rule added to the filter
  must see every log again.
The file is read as untrusted input: anything malformed (not JSON, wrong types, a span outside its
line, overlapping spans, a file that is not a regular file or is too large) is ignored and the text
is scanned as if the cache were empty. It is as trusted as the rest of `.git/`: whoever can write
there can already change the filter command in `.git/config`.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from functools import lru_cache
from pathlib import Path

from memgit import sensitive

CACHE_NAME = "redaction-cache"
CACHE_VERSION = 1
MIN_CHARS = 4096            # shorter texts are cheap to scan and their hash could confirm a guess
MAX_ENTRIES = 2048          # about 15 days of logs, sessions and their edits; oldest go first
MAX_FILE_BYTES = 4 * 1024 * 1024


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """The filter's code: sensitive.py, the detect-secrets plugins it runs, and this cache's version."""
    h = hashlib.sha256(f"{CACHE_VERSION}".encode())
    ds = sensitive.detect_secrets_fingerprint()
    try:
        h.update(Path(sensitive.__file__ or "").read_bytes())
    except OSError:
        ds = None
    if ds is None:
        h.update(str(time.time_ns()).encode())  # unknown code: never trust the cache
    else:
        h.update(ds.encode())
    return h.hexdigest()[:32]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _valid(text: str, raw: object) -> list[sensitive.Span] | None:
    """The spans of a cache entry if they could be `sensitive.spans(text)`, else None."""
    if not isinstance(raw, list):
        return None
    if not raw:
        return []
    lines = text.split("\n")
    out: list[sensitive.Span] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 3 and all(type(x) is int for x in item)):
            return None
        number, start, end = item
        if not 1 <= number <= len(lines) or not 0 <= start < end <= len(lines[number - 1]):
            return None
        if out and (number < out[-1][0] or number == out[-1][0] and start <= out[-1][2]):
            return None  # spans come in reading order, merged
        out.append((number, start, end))
    return out


class RedactionCache:
    """The spans of texts the filter has scanned; `redact` uses them, or scans and remembers."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, list] = self._load() if path is not None else {}
        self.dirty = False

    @classmethod
    def for_git_dir(cls, git_dir: Path | str) -> RedactionCache:
        return cls(Path(git_dir) / "memgit" / CACHE_NAME)

    def _load(self) -> dict[str, list]:
        assert self.path is not None
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return {}
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                return {}
            with os.fdopen(fd, "rb", closefd=False) as f:
                raw = json.loads(f.read(MAX_FILE_BYTES + 1).decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        finally:
            os.close(fd)
        if not isinstance(raw, dict) or raw.get("fingerprint") != fingerprint():
            return {}
        entries = raw.get("entries")
        return entries if isinstance(entries, dict) else {}

    def spans(self, text: str) -> list[sensitive.Span]:
        """`sensitive.spans(text)`, from the cache when it holds a sound entry for this text."""
        if len(text) < MIN_CHARS:
            return sensitive.spans(text)
        key = _key(text)
        got = _valid(text, self.entries.get(key))
        if got is None:
            got = sensitive.spans(text)
            self.record(text, got, key)
        return got

    def redact(self, text: str) -> str:
        """`sensitive.redact(text)`, through the cache."""
        return sensitive.apply_spans(text, self.spans(text))

    def record(self, text: str, where: list[sensitive.Span], key: str | None = None) -> None:
        """Remember the spans `sensitive.spans` gave for `text`."""
        if len(text) < MIN_CHARS:
            return
        key = key or _key(text)
        self.entries.pop(key, None)
        self.entries[key] = [list(s) for s in where]
        self.dirty = True

    def save(self) -> None:
        """Write the cache if it changed; a failure only costs the next run a scan."""
        if not self.dirty or self.path is None:
            return
        from memgit.repo import atomic_write

        entries = dict(list(self.entries.items())[-MAX_ENTRIES:])
        data = json.dumps({"fingerprint": fingerprint(), "entries": entries}, separators=(",", ":"))
        try:
            atomic_write(self.path, data.encode("utf-8"))
        except OSError:
            return
        self.dirty = False
