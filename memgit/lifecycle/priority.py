"""P0 / P1 / P2: what the lifecycle may do to an entry, and when an entry counts as referenced.

- P0 (core preferences, infrastructure, identity) is permanent: no automated
  operation touches it. Sections named in `protected_sections` count as P0.
- P1 (technical decisions, tool settings) is dated; a section whose entries are
  all older than `p1_days` and unmentioned for as long moves its details to
  `reference/` (janitor).
- P2 (experiments, temporary notes) is compressed to its conclusion after
  `p2_days` (janitor), and archived when also unmentioned for `p2_days` (expire).

A heading's tag applies to its entries, an entry's own tag wins and an untagged
entry is P1: `memgit.memory` computes this as `Entry.priority` / `Entry.frozen`.
An entry without a date has no known age, so no age rule ever moves it.

"Referenced" means that one line of a daily log of the window (live or
archived) shares at least two of the entry's terms (`memgit.text.terms`:
stemmed English words, Chinese words with Traditional folded to Simplified,
versions, paths), or every term when the entry has fewer than two.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from datetime import date, timedelta

from memgit.memory import Document, Entry, Section
from memgit.text import term_set
from memgit.wordlists import alternation, pattern
from memgit.workspace import Workspace, log_day

ARCHIVE_DIR_RE = re.compile(r"^archive-\d{4}-\d{2}$")
RANK = {"P0": 0, "P1": 1, "P2": 2}


def holds_secret(file: str, entry: Entry, warnings: list[str], verdict: str = "left as it is") -> bool:
    """True (with a warning naming file and line) when an entry holds sensitive data: the lifecycle
    never moves or rewrites it; the next dream proposes pruning it."""
    from memgit import sensitive

    # "[REDACTED]": git holds the entry redacted (memgit.gitfilter), the live file holds the value
    if sensitive.REDACTED not in entry.text and not sensitive.has_sensitive(entry.text):
        return False
    warnings.append(f"{file}:{entry.line} is {verdict}: it holds sensitive data; remove it "
                    f"(the next dream proposes that).")
    return True


def is_events(section: Section | None) -> bool:
    """An "Events"/timeline section, whose old months the janitor folds."""
    return section is not None and bool(_patterns()["EVENTS_RE"].search(section.title))


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    """The section titles and entry lines that mark events, identity, rules and standing preferences,
    built from the word lists on first use: every CLI start imports this module, few commands need them."""
    return {
        "EVENTS_RE": pattern("as_written.events_title", re.IGNORECASE),
        # what an agent is and who it serves: a section about it, or a field naming it, is core memory
        "IDENTITY_TITLE_RE": pattern("as_written.identity_title", re.IGNORECASE),
        "IDENTITY_LABEL_RE": re.compile(rf"^(?:\*\*|__)?\s*(?:{alternation('as_written.identity_label')})"
                                        r"\s*(?:\*\*|__)?\s*[:：]", re.IGNORECASE),
        # a rule the person set: never removed or rewritten automatically, tagged or not
        # (or a line saying who it is: "I am Ember, the … assistant", "我是阿球，…的后勤助理")
        "IDENTITY_LEAD_RE": re.compile(rf"^(?:\*\*|__)?\s*(?:{alternation('as_written.identity_lead')})(?![A-Za-z0-9_])",
                                       re.IGNORECASE),
        "RULE_MARK_RE": pattern("as_written.rule_mark"),
        # (an English word whole, "never" not "neverland"; a Chinese one runs on into its sentence: "不要答应…")
        "RULE_LEAD_RE": re.compile(rf"^(?:\*\*|__)?\s*(?:{alternation('as_written.rule_lead')})(?![A-Za-z0-9_])",
                                   re.IGNORECASE),
        "RULE_WORD_RE": pattern("as_written.rule_word", re.IGNORECASE),
        "STANDING_TITLE_RE": pattern("as_written.standing_title", re.IGNORECASE),
    }


def __getattr__(name: str) -> re.Pattern[str]:
    """`priority.EVENTS_RE` and the other patterns, for callers outside this module."""
    try:
        return _patterns()[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def is_core(entry: Entry, section: Section | None = None, doc: Document | None = None) -> bool:
    """Identity (a section about who the agent is or whom it serves, or a name/handle/contact field,
    or, given its `doc`, one of the file's opening lines: `is_opening`) and rules marked NEVER /
    ALWAYS / CRITICAL / 必须 / 禁止 …: never removed automatically."""
    return core_kind(entry, section, doc) is not None


def core_kind(entry: Entry, section: Section | None = None, doc: Document | None = None) -> str | None:
    """Why an entry is core (`is_core`), or None: "opening", "mark", "lead", "identity", "section", or "word" for an
    entry whose only sign is a rule's word inside it ("Lifeguard rota lives in When I Work; shift swaps must be approved
    by Dana"): the one kind whose tool's name may be swapped, every word of the rule kept (memgit.dream.verify)."""
    from memgit.memory import entry_body

    if doc is not None and is_opening(entry, doc):
        return "opening"
    body = entry_body(entry.text)
    first = body.split("\n")[0]
    p = _patterns()
    title = section.title if section is not None else (entry.section or "")
    # (a section marked IMPORTANT / CRITICAL / 必须 holds rules, whatever each line says)
    for kind, hit in (("mark", lambda: p["RULE_MARK_RE"].search(body)), ("lead", lambda: p["RULE_LEAD_RE"].match(first)),
                      ("identity", lambda: p["IDENTITY_LABEL_RE"].match(first) or p["IDENTITY_LEAD_RE"].match(first)),
                      ("section", lambda: title and (p["IDENTITY_TITLE_RE"].search(title)
                                                      or p["RULE_MARK_RE"].search(title))),
                      ("word", lambda: p["RULE_WORD_RE"].search(body))):
        if hit():
            return kind
    return None


def is_opening(entry: Entry, doc: Document) -> bool:
    """An entry written untagged and undated under the file's title, before its first section ("- 徐哲宇（阿哲），主攝兼
    老闆" under "# USER"), in a file whose entries stand in sections: the file's opening lines, who and what it is
    about."""
    sec = doc.section_at(entry.start)
    return entry.own_tag is None and entry.date is None and (sec is None or sec.level == 1) \
        and any(s.level >= 2 for s in doc.sections)


def is_standing(doc_name: str, section: Section | None) -> bool:
    """What the agent applies every day: a person's preferences and conventions, and the whole profile
    of the person (USER.md). Logs rarely mention them *because* they are followed, so their silence
    in the logs is no sign of staleness."""
    if Path(doc_name).name.upper().startswith("USER"):
        return True
    return section is not None and bool(_patterns()["STANDING_TITLE_RE"].search(section.title))


def section_frozen(section: Section | None) -> bool:
    return section is not None and (section.priority == "P0" or section.protected)


def older(entry: Entry, cutoff: date) -> bool:
    """Dated before `cutoff` (an undated entry is never old)."""
    return entry.date is not None and entry.date < cutoff


def cutoff(now: date, days: int) -> date:
    return now - timedelta(days=days)


def month_of(d: date) -> str:
    return f"{d.year:04d}-{d.month:02d}"


def month_end(d: date) -> date:
    nxt = date(d.year + (d.month == 12), d.month % 12 + 1, 1)
    return nxt - timedelta(days=1)


def archive_folder(archive_dir: str, month: str) -> str:
    return f"{archive_dir.rstrip('/')}/archive-{month}"


def slug(title: str) -> str:
    """A file name for a section title: lower-case words joined by '-', Chinese kept as written."""
    t = unicodedata.normalize("NFKC", title).casefold()
    t = re.sub(r"[^\w]+", "-", t).strip("-_")
    return t[:80].strip("-_") or "section"


def strongest(priorities: list[str]) -> str:
    return min(priorities, key=lambda p: RANK.get(p, 1)) if priorities else "P1"


# -- daily logs ------------------------------------------------------------------
@dataclass(frozen=True)
class LogFile:
    path: str
    day: date
    archived: bool


def _day(name: str) -> date | None:
    return log_day(name)


def log_files(ws: Workspace, commit: str) -> list[LogFile]:
    """Daily logs in `commit`: live ones directly in logs_dir, archived ones in archive-YYYY-MM/ folders."""
    mem = ws.config.memory
    logs_dir, arch = mem.logs_dir.strip("/"), mem.archive_dir.strip("/")
    seen: dict[str, LogFile] = {}
    for top in dict.fromkeys((logs_dir, arch)):
        for path in ws.repo.list_files(commit, top):
            folder, _, name = path.rpartition("/")
            day = _day(name)
            if day is None:
                continue
            if folder == logs_dir:
                seen[path] = LogFile(path, day, False)
            elif folder.startswith(arch + "/") and ARCHIVE_DIR_RE.match(folder[len(arch) + 1:]):
                seen[path] = LogFile(path, day, True)
    return sorted(seen.values(), key=lambda f: (f.day, f.path))


class References:
    """The log lines of a window, indexed by term, answering "is this entry mentioned?"."""

    def __init__(self, lines: list[tuple[str, frozenset[str]]]):
        self.sources = [src for src, _ in lines]
        self.index: dict[str, list[int]] = defaultdict(list)
        for i, (_, terms) in enumerate(lines):
            for t in terms:
                self.index[t].append(i)

    @classmethod
    def window(cls, ws: Workspace, commit: str, now: date, days: int,
               logs: list[LogFile] | None = None) -> References:
        """Lines of the logs dated within the last `days` days up to `now` (live and archived)."""
        start = cutoff(now, days)
        lines: list[tuple[str, frozenset[str]]] = []
        for lf in logs if logs is not None else log_files(ws, commit):
            if not (start <= lf.day <= now):
                continue
            data = ws.repo.read(commit, lf.path)
            if data is None:
                continue
            for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                s = line.strip()
                if s and not s.startswith("#"):
                    lines.append((f"{lf.path}:{n}", term_set(s)))
        return cls(lines)

    def mention(self, text: str) -> str | None:
        """The `path:line` of a log line mentioning `text`, or None."""
        terms = term_set(text)
        if not terms:
            return None
        need = min(2, len(terms))
        hits: Counter[int] = Counter()
        for t in terms:
            for i in self.index.get(t, ()):
                hits[i] += 1
        best = [i for i, n in hits.items() if n >= need]
        return self.sources[min(best)] if best else None


def entries_by_section(doc: Document) -> list[tuple[Section | None, list[Entry]]]:
    """Each section (None for entries before the first heading) with its own entries, in file order."""
    out: list[tuple[Section | None, list[Entry]]] = []
    first = doc.sections[0].line if doc.sections else None
    head = [e for e in doc.entries if first is None or e.start < first]
    if head:
        out.append((None, head))
    for s in doc.sections:
        out.append((s, doc.entries_in(s)))
    return out
