"""Memory files ⇄ Document / Section / Entry, byte-exact.

The only module that imports markdown-it-py. A Document keeps the file's lines
with their own line endings (and its BOM), so writing back an untouched
document gives identical bytes, and an edit changes only its entry's lines.
Entries are top-level list items (with continuation lines and nested lists);
Hermes-style files whose entries are separated by a line holding only `§` are
read and written in that format.
"""
from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property, lru_cache

from memgit.errors import AmbiguousError, MemgitError, NotFoundError
from memgit.text import compile_words

BOM = "\ufeff"
HERMES_SEP = "§"
TAG_RE = re.compile(r"\[(P[012])\]", re.I)
# the lookbehind starts a match only where a whitespace run begins: a bare leading `\s*` retries
# from every space of a deeply indented entry (cubic in its depth)
DATE_TAIL_RE = compile_words(r"(?<!\s)\s*[（(](\d{4}-\d{2}-\d{2})[)）]\s*$")
ISO_DATE_RE = compile_words(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
MARKER_RE = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])(\s+|$)")
FRONT_MATTER_RE = re.compile(r"^(---|\+\+\+)\s*$")


Edit = tuple[int, int, list[str]]  # (start line, end line, new lines): lines[start:end] = new


@dataclass(frozen=True)
class Section:
    """A heading and the lines up to the next heading of the same or higher level."""

    title: str          # heading text without its tag
    level: int
    line: int           # 0-based line of the heading
    end: int            # exclusive end line of the section's own body
    tag: str | None     # the heading's own tag
    priority: str       # effective priority (own tag, else an ancestor's, else P1)
    protected: bool = False


@dataclass(frozen=True)
class Entry:
    """One memory entry: a top-level list item or a §-separated chunk."""

    file: str
    start: int          # 0-based first line
    end: int            # exclusive
    text: str           # the entry as written, lines joined with \n, no final newline
    section: str | None
    priority: str
    own_tag: str | None
    date: date | None
    marker: str         # list marker with its indentation and spacing, e.g. "- "

    @cached_property
    def body(self) -> str:
        """The entry's words: no list marker, tag or trailing date."""
        return entry_body(self.text)

    @property
    def line(self) -> int:
        """1-based line number, for `path:line` sources."""
        return self.start + 1

    @property
    def frozen(self) -> bool:
        """P0 and protected entries are never touched by an automated operation."""
        return self.priority == "P0"


def entry_body(text: str) -> str:
    first, *rest = text.split("\n")
    first = MARKER_RE.sub("", first, count=1)
    first = TAG_RE.sub("", first, count=1).strip()
    body = "\n".join([first, *[r.strip() for r in rest]]).strip()
    return DATE_TAIL_RE.sub("", body).strip()


def _parse_date(text: str) -> date | None:
    m = DATE_TAIL_RE.search(text.split("\n")[0]) or DATE_TAIL_RE.search(text)
    if m:
        y, mo, d = m.group(1).split("-")
    else:
        m2 = ISO_DATE_RE.search(text)
        if not m2:
            return None
        y, mo, d = m2.groups()
    try:
        return date(int(y), int(mo), int(d))
    except ValueError:
        return None


@lru_cache(maxsize=1)
def _md():
    from markdown_it import MarkdownIt

    # only block structure is needed (headings, lists, fences): inline parsing is skipped
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


class Document:
    """A parsed memory file. Treat as immutable: edits return new bytes."""

    def __init__(self, name: str, data: bytes, protected_sections: tuple[str, ...] = ()):
        self.name = name
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise MemgitError(f"{name} is not valid UTF-8; save it as UTF-8 text and retry.") from None
        if "\x00" in text:
            raise MemgitError(f"{name} looks like a binary file; restore it as markdown text and retry.")
        self.bom = text.startswith(BOM)
        if self.bom:
            text = text[1:]
        self.lines: list[str] = text.splitlines(keepends=True)
        self.newline = "\r\n" if self.lines and self.lines[0].endswith("\r\n") else "\n"
        self.protected_names = tuple(p.casefold() for p in protected_sections)
        self.hermes = any(_strip_eol(ln).strip() == HERMES_SEP for ln in self.lines)
        self.sections: list[Section] = []
        self._section_lines: list[int] = []  # each section's heading line, for section_at's bisect
        self.entries: list[Entry] = []
        if self.hermes:
            self._parse_hermes()
        else:
            self._parse_markdown()

    # -- parsing ---------------------------------------------------------
    def _parse_markdown(self) -> None:
        plain = [_strip_eol(ln) for ln in self.lines]
        # Front matter is not markdown: blank it (keeping line numbers) so it is never an entry.
        if plain and FRONT_MATTER_RE.match(plain[0]):
            for i in range(1, len(plain)):
                if plain[i].strip() == plain[0].strip():
                    plain[: i + 1] = [""] * (i + 1)
                    break
        tokens = _md().parse("\n".join(plain) + "\n")
        headings: list[tuple[int, int, str]] = []  # (line, level, raw text)
        items: list[tuple[int, int]] = []
        depth = 0
        quote = 0
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open" and tok.map and depth == 0 and quote == 0:
                headings.append((tok.map[0], int(tok.tag[1:]), tokens[i + 1].content))
            elif tok.type == "blockquote_open":
                quote += 1
            elif tok.type == "blockquote_close":
                quote -= 1
            elif tok.type == "list_item_open":
                if depth == 0 and quote == 0 and tok.map:
                    items.append((tok.map[0], tok.map[1]))
                depth += 1
            elif tok.type == "list_item_close":
                depth -= 1
        n = len(self.lines)
        # the enclosing headings, each with its effective tag and whether it is protected: one pass,
        # linear in the number of headings
        stack: list[tuple[int, str | None, bool]] = []
        for k, (line, level, raw) in enumerate(headings):
            end = headings[k + 1][0] if k + 1 < len(headings) else n
            m = TAG_RE.search(raw)
            tag = m.group(1).upper() if m else None
            title = TAG_RE.sub("", raw).strip().strip("#").strip()
            while stack and stack[-1][0] >= level:
                stack.pop()
            inherited = stack[-1][1] if stack else None
            prio = tag or inherited or "P1"
            protected = title.casefold() in self.protected_names or bool(stack and stack[-1][2])
            stack.append((level, tag or inherited, protected))
            self.sections.append(Section(title, level, line, end, tag, prio, protected))
        self._section_lines = [s.line for s in self.sections]
        for start, end in items:
            while end > start + 1 and not plain[end - 1].strip():
                end -= 1
            self.entries.append(self._entry(start, end))

    def _parse_hermes(self) -> None:
        chunk: list[int] = []
        for i, ln in enumerate(self.lines + [HERMES_SEP]):
            if _strip_eol(ln).strip() == HERMES_SEP:
                body = [j for j in chunk if self.lines[j].strip()]
                if body:
                    self.entries.append(self._entry(body[0], body[-1] + 1))
                chunk = []
            else:
                chunk.append(i)

    def section_at(self, line: int) -> Section | None:
        """The last section whose heading is at or above `line`."""
        k = bisect_right(self._section_lines, line)
        return self.sections[k - 1] if k else None

    def _entry(self, start: int, end: int) -> Entry:
        text = "\n".join(_strip_eol(ln) for ln in self.lines[start:end])
        first = text.split("\n")[0]
        m = MARKER_RE.match(first) if not self.hermes else None
        marker = m.group(0) if m else ""
        if m and not m.group(3):
            marker += " "
        tag_m = TAG_RE.search(first)
        own = tag_m.group(1).upper() if tag_m else None
        sec = self.section_at(start)
        prio = own or (sec.priority if sec else "P1")
        if sec and sec.protected:
            prio = "P0"
        return Entry(self.name, start, end, text, sec.title if sec else None, prio, own,
                     _parse_date(text), marker)

    # -- queries ---------------------------------------------------------
    @cached_property
    def normalized_bodies(self) -> frozenset[str]:
        """Each entry's words with whitespace collapsed: to tell whether a text is already there."""
        return frozenset(" ".join(e.body.split()) for e in self.entries)

    @cached_property
    def text(self) -> str:
        return "".join(self.lines)

    def to_bytes(self) -> bytes:
        return ((BOM if self.bom else "") + self.text).encode("utf-8")

    @cached_property
    def chars(self) -> int:
        """Characters used, the unit of a capacity budget."""
        return len(self.text)

    def find_entries(self, needle: str) -> list[Entry]:
        """Entries containing `needle` as written; falls back to whitespace-normalised matching."""
        hits = [e for e in self.entries if needle in e.text]
        if not hits:
            n = " ".join(needle.split())
            hits = [e for e in self.entries if n and n in " ".join(e.text.split())]
        return hits

    def entry(self, needle: str) -> Entry:
        """The one entry matching `needle`, else a clean error listing the candidates."""
        hits = self.find_entries(needle)
        if not hits:
            raise NotFoundError(f"no entry in {self.name} contains {needle!r}; "
                                f"run `memgit status` or open the file to copy its text.")
        exact = [e for e in hits if e.text == needle]
        if len(exact) == 1:
            return exact[0]
        if len(hits) > 1:
            listing = "; ".join(f"line {e.line}: {e.text.splitlines()[0][:60]}" for e in hits[:8])
            raise AmbiguousError(f"{needle!r} matches {len(hits)} entries in {self.name} ({listing}); "
                                 f"give more of the entry's text.")
        return hits[0]

    @cached_property
    def _by_text(self) -> dict[str, list[Entry]]:
        out: dict[str, list[Entry]] = {}
        for e in self.entries:
            out.setdefault(e.text, []).append(e)
        return out

    @cached_property
    def _by_sha256(self) -> dict[str, list[Entry]]:
        out: dict[str, list[Entry]] = {}
        for e in self.entries:
            out.setdefault(hashlib.sha256(e.text.encode("utf-8")).hexdigest(), []).append(e)
        return out

    def by_sha256(self, digest: str) -> list[Entry]:
        """Entries whose text has this SHA-256 hex digest (how a target holding a secret is named)."""
        return list(self._by_sha256.get(digest, ()))

    def exact(self, text: str) -> list[Entry]:
        """Entries whose text is `text`, in file order (an index: no scan per lookup)."""
        return list(self._by_text.get(text, ()))

    def section(self, name: str) -> Section:
        """The section whose heading text (without its tag) is `name`, case-insensitively."""
        want = TAG_RE.sub("", name).strip().strip("#").strip().casefold()
        hits = [s for s in self.sections if s.title.casefold() == want]
        if not hits:
            hits = [s for s in self.sections if want and want in s.title.casefold()]
        if not hits:
            names = ", ".join(s.title for s in self.sections) or "none"
            raise NotFoundError(f"no section {name!r} in {self.name} (sections: {names}); "
                                f"pick one of them.")
        if len(hits) > 1 and not all(h.title.casefold() == want for h in hits[:1]):
            raise AmbiguousError(f"section {name!r} matches {', '.join(h.title for h in hits)} in "
                                 f"{self.name}; give the full heading.")
        return hits[0]

    def entries_in(self, section: Section) -> list[Entry]:
        return [e for e in self.entries if section.line < e.start < section.end]

    # -- edits (each returns the new file bytes) ----------------------------
    def format_entry(self, text: str, like: Entry | None = None) -> list[str]:
        """New entry text as lines (with this file's newline), marked like `like`."""
        text = text.replace("\r\n", "\n").strip("\n")
        if self.hermes:
            return [ln + self.newline for ln in text.split("\n")]
        marker = like.marker if like else "- "
        first, *rest = text.split("\n")
        if not MARKER_RE.match(first):
            first = marker + first.lstrip()
        elif like:
            indent = re.match(r"\s*", like.marker).group(0)
            first = indent + first.lstrip()
        pad = " " * len(MARKER_RE.match(first).group(0))
        rest = [r if not r.strip() or r.startswith(pad) else pad + r.lstrip() for r in rest]
        return [ln + self.newline for ln in [first, *rest]]

    def splice(self, edits: list[Edit]) -> bytes:
        """The file's bytes with each (start, end, new lines) edit applied."""
        lines = list(self.lines)
        if lines and not lines[-1].endswith(("\n", "\r")):
            # an inserted line after a last line without a newline needs one there
            if any(s >= len(lines) or e >= len(lines) for s, e, _ in edits):
                lines[-1] += self.newline
        for s, e, new in sorted(edits, key=lambda x: x[0], reverse=True):
            lines[s:e] = new
        return ((BOM if self.bom else "") + "".join(lines)).encode("utf-8")

    def size_change(self, edits: list[Edit]) -> int | None:
        """Characters the edits add (negative: remove), None when the bytes stay the same.

        Costs the size of the edits, not of the file, so a selection can weigh thousands of
        candidate edits without rebuilding the file for each one.
        """
        n = len(self.lines)
        spans = sorted((s, e) for s, e, _ in edits)
        overlap = any(a[1] > b[0] for a, b in zip(spans, spans[1:]))
        eol_fix = bool(self.lines) and not self.lines[-1].endswith(("\n", "\r")) and any(
            s >= n or e >= n for s, e, _ in edits)
        if overlap or eol_fix:  # rare: let the splice itself decide
            new = self.splice(edits)
            if new == self.to_bytes():
                return None
            return len(new.decode("utf-8").lstrip(BOM)) - self.chars
        if all(self.lines[s:e] == new for s, e, new in edits):
            return None
        return sum(sum(map(len, new)) - sum(map(len, self.lines[s:e])) for s, e, new in edits)

    def _removal(self, entry: Entry) -> tuple[int, int]:
        s, e = entry.start, entry.end
        if self.hermes:
            # take the separator before the entry (or after it, for the first entry)
            j = s - 1
            while j >= 0 and not self.lines[j].strip():
                j -= 1
            if j >= 0 and _strip_eol(self.lines[j]).strip() == HERMES_SEP:
                return j, e
            k = e
            while k < len(self.lines) and not self.lines[k].strip():
                k += 1
            if k < len(self.lines) and _strip_eol(self.lines[k]).strip() == HERMES_SEP:
                return s, k + 1
        return s, e

    def remove_edits(self, entries: list[Entry]) -> list[Edit]:
        return [(*self._removal(e), []) for e in entries]

    def replace_edits(self, entry: Entry, text: str) -> list[Edit]:
        return [(entry.start, entry.end, self.format_entry(text, entry))]

    def merge_edits(self, entries: list[Entry], text: str) -> list[Edit]:
        first = min(entries, key=lambda e: e.start)
        edits = [(first.start, first.end, self.format_entry(text, first))]
        return edits + [(*self._removal(e), []) for e in entries if e is not first]

    def insert_edits(self, section: Section | None, text: str, create_title: str | None = None) -> list[Edit]:
        """Add an entry at the end of `section`'s entries (or of the file)."""
        if self.hermes:
            new = self.format_entry(text)
            if self.entries:
                last = self.entries[-1].end
                return [(last, last, [HERMES_SEP + self.newline, *new])]
            return [(len(self.lines), len(self.lines), new)]
        if section is None:
            lines = []
            if self.lines and self.lines[-1].strip():
                lines.append(self.newline)
            title = create_title or "Notes"
            lines += [f"## {title}{self.newline}", self.newline, *self.format_entry(text)]
            return [(len(self.lines), len(self.lines), lines)]
        own = self.entries_in(section)
        like = own[-1] if own else None
        new = self.format_entry(text, like)
        if own:
            at = own[-1].end
        else:
            at = section.line + 1
            if at < len(self.lines) and not self.lines[at].strip():
                at += 1
            else:
                new = [self.newline, *new]
            if at < len(self.lines) and self.lines[at].strip():
                new = [*new, self.newline]  # else a paragraph below becomes the entry's lazy continuation
        return [(at, at, new)]

    def remove(self, entries: list[Entry]) -> bytes:
        return self.splice(self.remove_edits(entries))

    def replace(self, entry: Entry, text: str) -> bytes:
        return self.splice(self.replace_edits(entry, text))

    def merge(self, entries: list[Entry], text: str) -> bytes:
        return self.splice(self.merge_edits(entries, text))

    def insert(self, section: Section | None, text: str, create_title: str | None = None) -> bytes:
        """Add an entry at the end of `section`'s entries (or of the file)."""
        return self.splice(self.insert_edits(section, text, create_title))


_CACHE: dict[tuple[str, bytes, tuple[str, ...]], Document] = {}


def parse(name: str, data: bytes, protected_sections: tuple[str, ...] = ()) -> Document:
    """A Document, shared between callers that parse the same bytes (Documents are never mutated)."""
    key = (name, data, tuple(protected_sections))
    doc = _CACHE.get(key)
    if doc is None:
        if len(_CACHE) >= 64:
            _CACHE.clear()
        doc = _CACHE[key] = Document(name, data, protected_sections)
    return doc


def with_priority(entry: Entry, priority: str) -> Entry:
    return replace(entry, priority=priority)
