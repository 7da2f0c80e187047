"""The one gate every dream candidate passes, whatever backend made it.

The model gate (`memgit.dream.gate`) turns a model's raw answer into
operations; this gate then checks every candidate — offline or model — against
the workspace before selection, so what reaches a person is:

- **resolved**: each target is exactly one entry of its file as main has it;
- **evidenced**: each quote occurs at the `path:line` it cites (a window line
  or a memory line, as written or as redacted);
- **grounded**: every number or version in the new text occurs in a target or
  in a quote (a new value is never invented or taken from nowhere);
- **well formed**: the new text keeps its `**` and backticks balanced, and a
  labelled entry (`**Label:** value`) keeps its label;
- **frozen lines untouched**: no target is P0, protected, identity or a marked
  rule (a secret's prune alone may remove such a line: the secret must go; a marked
  rule may lose a tool a quoted line retires, and a tagged fact holding a rule's word
  may have its tool's name swapped, nothing else);
- **reviewable**: it deletes at most `MAX_REMOVED` lines of a memory file;
- **secret-free**: nothing sensitive in its new text, reason or section;
- **not overlapping** an open proposal's targets;
- **not overruling a person**: a target whose text a person approved is not
  changed on evidence older than that approval.

Pure over plain values; `check()` says why a candidate fails, `gate()` splits
a list into what passes and what was dropped (with reasons, nothing sensitive).
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date

from memgit import sensitive
from memgit.dream.gate import dropped as drop_record, normalise
from memgit.lifecycle.priority import core_kind, is_core
from memgit.memory import Document, Entry, entry_body
from memgit.ops import HASHED, Operation, hash_target
from memgit.text import CODE_SPAN_RE

MAX_REMOVED = 12
VALUE_RE = re.compile(r"(?<![\w.])v?\d+(?:[.:,]\d+)*(?:%|[kKmMgG][bB]?)?(?![\w])")
DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
LABEL_MARKUP_RE = re.compile(r"^(\*\*[^*\n]{1,40}?[:：]?\*\*[:：]?|__[^_\n]{1,40}?__[:：]?)")
WRITES = ("refresh", "merge", "consolidate")


def values(text: str) -> set[str]:
    """Numbers and versions in a text, dates left out (a new entry carries its evidence's date)."""
    return {v.lower().lstrip("v") for v in VALUE_RE.findall(DATE_RE.sub(" ", text or ""))}


@dataclass(frozen=True)
class Decision:
    """A text a person approved into a memory file, and the day they did."""

    file: str
    text: str
    day: date


@dataclass
class Ground:
    """What every candidate is checked against."""

    docs: Mapping[str, Document]
    lines: Mapping[str, tuple[str, ...]]               # "path:line" → the line's forms (raw, redacted)
    days: Mapping[str, date] = field(default_factory=dict)  # window "path:line" → its day
    open_targets: frozenset[tuple[str, str]] = frozenset()  # (file, target text) of open proposals
    decisions: Mapping[tuple[str, str], date] = field(default_factory=dict)  # (file, normalised text) → day
    max_removed: int = MAX_REMOVED


def build(docs: Mapping[str, Document], observations: Iterable, open_ops: Iterable[Operation] = (),
          decisions: Iterable[Decision] = (), max_removed: int = MAX_REMOVED) -> Ground:
    lines: dict[str, tuple[str, ...]] = {}
    days: dict[str, date] = {}
    for o in observations:
        prev = lines.get(o.ref, ())
        lines[o.ref] = (*prev, o.raw, o.text)
        days[o.ref] = o.day
    for name, doc in docs.items():
        raw = doc.text.splitlines()
        red = sensitive.redact(doc.text).splitlines()
        for i, text in enumerate(raw, 1):
            lines[f"{name}:{i}"] = (text, red[i - 1] if i - 1 < len(red) else text)
    targets = frozenset((op.file, t) for op in open_ops for t in op.targets)
    dec: dict[tuple[str, str], date] = {}
    for d in decisions:
        key = (d.file, _key(d.text))
        dec[key] = max(dec.get(key, d.day), d.day)
    return Ground(docs, lines, days, targets, dec, max_removed)


def _key(text: str) -> str:
    return normalise(entry_body(text))


class Fail(Exception):
    """The candidate fails the gate; the message is the recorded reason."""


def _entry(doc: Document, target: str) -> Entry:
    if target.startswith(HASHED):
        hits = [e for e in doc.entries if hash_target(e.text) == target]
    else:
        hits = doc.exact(target)
    if len(hits) != 1:
        raise Fail(f"a target is {'not' if not hits else 'more than one'} entry of {doc.name}")
    return hits[0]


def removed_lines(text: str) -> int:
    """The lines a diff shows deleted when `text` (an entry) is removed: its non-blank lines."""
    return sum(1 for ln in text.split("\n") if ln.strip())


def _quote_ok(ground: Ground, source: str, quote: str) -> bool:
    forms = ground.lines.get(source.strip())
    if forms is None:
        return False
    q = normalise(quote).strip("….。 ")
    if len(q) < 2:
        return False
    return any(q in normalise(f) for f in forms) or any(q in normalise(sensitive.redact(f)) for f in forms)


def _balanced(text: str) -> bool:
    return text.count("**") % 2 == 0 and text.count("`") % 2 == 0 and text.count("__") % 2 == 0


def _label(text: str) -> str | None:
    m = LABEL_MARKUP_RE.match(entry_body(text))
    return m.group(1) if m else None


def _code_names(text: str) -> set[str]:
    """What the text writes as code, in lower case."""
    return {c.strip().lower() for c in CODE_SPAN_RE.findall(text)}


def _superseded(op: Operation, e: Entry, ground: Ground) -> bool:
    """A marked rule rewritten after the person's own newer words retired the tool it prescribes: the
    rule stays a rule, the retired tool (as code in the target) is gone from it, and a window line
    quoted as evidence retires that very tool. Nothing else changes a marked rule."""
    from dataclasses import replace

    from memgit.dream import lexicon as lx
    from memgit.text import norm

    if op.op != "refresh" or not op.text or len(op.targets) != 1 or not is_core(replace(e, text=op.text)):
        return False
    gone = _code_names(e.text) - _code_names(op.text)
    for ev in op.evidence:
        if ev.source not in ground.days or not lx.RETIRED.search(norm(ev.quote)):
            continue
        named = _code_names(ev.quote)
        if any(g in named or g.rsplit("/", 1)[-1] in named for g in gone):
            return True
    return False


def _name_swapped(op: Operation, e: Entry, kind: str | None, doc: Document, ground: Ground) -> bool:
    """A fact holding a rule's word ("Lifeguard rota lives in When I Work; shift swaps must be approved by Dana"),
    refreshed with the name of what does its work alone replaced by one a quoted window line writes: the rule is
    kept word for word. No other kind of core entry, and no other change."""
    from dataclasses import replace

    from memgit.text import norm

    if op.op != "refresh" or not op.text or len(op.targets) != 1 or e.own_tag is None or kind != "word":
        return False  # (a tagged entry of memory's: never an untagged line of a list of rules)
    if core_kind(replace(e, text=op.text), doc.section_at(e.start), doc) != "word":
        return False  # (the rule's word is kept, and no other sign of a rule comes in)
    a, b = _TOKEN.findall(entry_body(e.text)), _TOKEN.findall(entry_body(op.text))
    hunks = [h for h in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if h[0] != "equal"]
    if len(hunks) != 1 or hunks[0][0] != "replace":
        return False
    _, i1, i2, j1, j2 = hunks[0]
    if i2 - i1 > _SWAP_TOKENS or j2 - j1 > _SWAP_TOKENS:
        return False
    new = norm(" ".join(b[j1:j2]))
    return bool(new.strip()) and any(ev.source in ground.days and new in norm(" ".join(_TOKEN.findall(ev.quote)))
                                     for ev in op.evidence)


_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’.-][A-Za-z0-9]+)*|\S")
_SWAP_TOKENS = 8  # (a name of a few words, or of Chinese characters: "When I Work", "飞书多维表格")


def _kept_as_written(op: Operation, e: Entry) -> bool:
    """A merge that keeps the marked rule word for word and drops only its unmarked twin."""
    from memgit.memory import MARKER_RE

    return op.op == "merge" and bool(op.text) and op.text.split() == MARKER_RE.sub("", e.text, count=1).split()


def check(op: Operation, ground: Ground) -> None:
    """Raise Fail with the reason `op` may not become a proposal."""
    doc = ground.docs.get(op.file)
    entries: list[Entry] = []
    if op.targets:
        if doc is None:
            raise Fail(f"{op.file} has no entry to {op.op}")
        entries = [_entry(doc, t) for t in op.targets]
    secret_prune = op.op == "prune" and any(t.startswith(HASHED) for t in op.targets)
    for e in entries:
        if secret_prune and (sensitive.has_sensitive(e.text) or sensitive.REDACTED in e.text):
            continue  # a secret must go, wherever it stands
        if e.frozen:
            raise Fail(f"{op.file} line {e.line} is P0 or protected")
        kind = core_kind(e, doc.section_at(e.start), doc)
        if kind is not None and not _superseded(op, e, ground) \
                and not _kept_as_written(op, e) and not _name_swapped(op, e, kind, doc, ground):
            raise Fail(f"{op.file} line {e.line} is identity or a marked rule, never changed automatically")
        if (op.file, e.text) in ground.open_targets or (op.file, hash_target(e.text)) in ground.open_targets:
            raise Fail(f"{op.file} line {e.line} is already the target of an open proposal")
    removed = sum(removed_lines(e.text) for e in entries)
    if op.op in ("prune", "merge", "refresh") and removed > ground.max_removed:
        raise Fail(f"it would delete {removed} lines of {op.file}, more than the {ground.max_removed} a person "
                   f"can review in one proposal")
    for ev in op.evidence:
        if not _quote_ok(ground, ev.source, ev.quote):
            raise Fail(f"its evidence quote does not occur at {ev.source}")
    for label, t in (("new text", op.text), ("reason", op.reason), ("section", op.section)):
        if t and sensitive.has_sensitive(t):
            raise Fail(f"its {label} holds sensitive data")
    if op.op in WRITES and op.text:
        if not _balanced(op.text):
            raise Fail("its new text leaves ** or ` unbalanced")
        known = set().union(*(values(e.text) for e in entries), *(values(ev.quote) for ev in op.evidence)) \
            if (entries or op.evidence) else set()
        invented = values(op.text) - known
        if invented:
            raise Fail(f"its new text holds values found in neither its target nor its evidence "
                       f"({', '.join(sorted(invented)[:3])})")
        if op.op == "refresh" and entries:
            old = _label(entries[0].text)
            if old and not op.text.lstrip("-*+ ").replace("[P1] ", "").replace("[P2] ", "").startswith(old) \
                    and old not in op.text:
                raise Fail("its new text drops the entry's label")
    newest = max((ground.days[ev.source] for ev in op.evidence if ev.source in ground.days), default=None)
    for e in entries:
        when = ground.decisions.get((op.file, _key(e.text)))
        if when is not None and (newest is None or newest <= when):
            raise Fail(f"a person approved {op.file} line {e.line} on {when.isoformat()}, after its evidence")


def gate(candidates: list, ground: Ground) -> tuple[list, list[dict]]:
    """Candidates that pass, and a record of each dropped one with its reason."""
    kept, out = [], []
    for c in candidates:
        try:
            check(c.op, ground)
        except Fail as e:
            out.append({**drop_record({"op": c.op.op, "file": c.op.file, "text": c.op.text,
                                       "targets": list(c.op.targets)}, str(e)), "stage": "gate"})
            continue
        kept.append(c)
    return kept, out
