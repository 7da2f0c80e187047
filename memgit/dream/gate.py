"""The gate: what a model proposes is checked against the workspace before it may
become a dream candidate.

Pure functions over plain values (no I/O, no model): a `Ground` holds what the
model was shown (every window line and memory line by its `path:line`, redacted
exactly as sent) and what memory holds; `gate()` turns the model's raw
operations into the `Operation`s that pass, and a record of every one dropped
with its reason. Any backend, or the diary, can reuse it.

An operation passes only if: it is well formed (known op, the keys its op
needs, the right types); its file is a configured memory file; every evidence
quote occurs (whitespace-normalised) at its cited line of a window file or a
memory file; every target matches exactly one entry (its exact text, or one
unique whitespace-normalised match, with or without its list marker or with
its secrets redacted as the model saw them) and none is P0 or protected; a
consolidate does not go into a P0 or protected section; its new text and
section name hold nothing sensitive, no "[REDACTED]" placeholder and no P0
tag; its confidence reaches the threshold; and it is not already open,
rejected before, or repeated within the same answer.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memgit import sensitive
from memgit.memory import ISO_DATE_RE, TAG_RE, Document, Entry
from memgit.ops import Evidence, Operation

OPS = ("prune", "refresh", "consolidate", "merge")
SOURCE_RE = re.compile(r"^(?P<path>\S(?:.*\S)?):(?P<line>[1-9]\d*)$")
_ELLIPSIS = "….。 \t\n"


@dataclass(frozen=True)
class Ground:
    """The facts every proposed operation is checked against."""

    docs: Mapping[str, Document]       # memory files as they are on main
    lines: Mapping[str, str]           # "path:line" → that line's text as the model saw it (redacted)
    files: tuple[str, ...]             # the configured memory files
    threshold: float
    known: frozenset[str] = frozenset()  # fingerprints of open or rejected operations
    origin: str = "anthropic"


@dataclass(frozen=True)
class Verdict:
    passed: list[Operation]
    dropped: list[dict] = field(default_factory=list)


class Drop(Exception):
    """One operation fails the gate; the message is the recorded reason."""


def normalise(text: str) -> str:
    """Whitespace collapsed: the form quotes and targets are compared in."""
    return " ".join(text.split())


def redacted_lines(doc: Document) -> list[str]:
    """The document's lines as a model is shown them: sensitive values redacted."""
    return sensitive.redact(doc.text).splitlines()


def window_lines(observations: Iterable[Any]) -> dict[str, str]:
    """`path:line` → the redacted source line of each observation (a multi-line turn joined)."""
    parts: dict[str, list[str]] = {}
    for o in observations:
        parts.setdefault(o.ref, []).append(o.raw)
    return {ref: "\n".join(p) for ref, p in parts.items()}


def workspace_ground(ws: Any, col: Any, config: Any, origin: str) -> Ground:
    """The gate's facts for a workspace: memory and the window's lines as `col` collected them, and the
    fingerprints of every open and every rejected or reverted change."""
    from memgit import proposals

    known = {p.op.fingerprint for p in proposals.list_proposals(ws, check=False)}
    known |= proposals.rejected_fingerprints(ws)
    return Ground(col.docs, ground_lines(col.observations, col.docs), tuple(config.memory_files),
                  config.dream.threshold, frozenset(known), origin)


def ground_lines(observations: Iterable[Any], docs: Mapping[str, Document]) -> dict[str, str]:
    """Every line a model may cite: the window's observations and every memory file line."""
    lines = window_lines(observations)
    for name, doc in docs.items():
        for i, text in enumerate(redacted_lines(doc), 1):
            lines[f"{name}:{i}"] = text
    return lines


def _short(text: str, n: int = 60) -> str:
    t = normalise(text)
    return t if len(t) <= n else t[: n - 1] + "…"


def check_quote(lines: Mapping[str, str], source: str, quote: str) -> None:
    """Raise Drop unless `quote` occurs at `source` (whitespace-normalised)."""
    m = SOURCE_RE.match(source.strip())
    if not m:
        raise Drop(f"evidence source {_short(source, 40)!r} is not path:line")
    if source.strip() not in lines:
        raise Drop(f"evidence source {source.strip()} is not a line of the window's logs and sessions "
                   f"or of a memory file")
    q = normalise(quote).strip(_ELLIPSIS)
    if len(q) < 2:
        raise Drop(f"the evidence quote for {source.strip()} is empty")
    if q not in normalise(lines[source.strip()]):
        raise Drop(f"the quote {_short(q, 40)!r} does not occur at {source.strip()}")


def _forms(e: Entry) -> set[str]:
    """The texts a model may give for an entry: as written, without its list marker, redacted."""
    bare = e.text[len(e.marker):] if e.marker and e.text.startswith(e.marker) else e.text
    out = {normalise(e.text), normalise(bare)}
    out |= {normalise(sensitive.redact(t)) for t in (e.text, bare)}
    return out


def resolve_target(doc: Document, text: str) -> Entry:
    """The one entry `text` names: its exact text, else one unique normalised match."""
    exact = doc.exact(text)
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        raise Drop(f"the target {_short(text, 40)!r} matches {len(exact)} entries of {doc.name}")
    n = normalise(text)
    hits = [e for e in doc.entries if n and n in _forms(e)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise Drop(f"the target {_short(text, 40)!r} matches {len(hits)} entries of {doc.name}")
    # Models shorten targets ("Cockpit v1 待 push" for "- [P1] Cockpit v1 待 push (2026-05-02)"): a part
    # of one entry only, and most of what the entry says, names it as `memgit propose --entry` would.
    part = [e for e in doc.entries if n and any(n in f for f in _forms(e))]
    if len(part) > 1:
        raise Drop(f"the target {_short(text, 40)!r} is part of {len(part)} entries of {doc.name}; "
                   f"it names none of them")
    if part and _substantial(n, part[0]):
        return part[0]
    raise Drop(f"the target {_short(text, 40)!r} is not an entry of {doc.name}")


SHORT_TARGET_CHARS = 8     # a shortened target holds at least this many characters …
SHORT_TARGET_SHARE = 0.4   # … and this share of what the entry says (without marker, tags and dates)


def _substantial(part: str, e: Entry) -> bool:
    said = normalise(ISO_DATE_RE.sub(" ", TAG_RE.sub(" ", e.text[len(e.marker):] if e.marker else e.text)))
    said = said.strip(" ()（）-—:：")
    return len(part) >= SHORT_TARGET_CHARS and len(part) >= SHORT_TARGET_SHARE * max(len(said), 1)


def _str(item: dict, key: str, required: bool = False) -> str | None:
    v = item.get(key)
    if v is None:
        if required:
            raise Drop(f"missing {key!r}")
        return None
    if not isinstance(v, str):
        raise Drop(f"{key!r} must be a string")
    if required and not v.strip():
        raise Drop(f"{key!r} is empty")
    return v


def _shape(item: Any) -> dict:
    """The item's fields, type-checked; raises Drop on a malformed item."""
    if not isinstance(item, dict):
        raise Drop("an operation must be an object")
    op = _str(item, "op", True)
    if op not in OPS:
        raise Drop(f"unknown op {_short(op or '', 20)!r}; expected one of {', '.join(OPS)}")
    file = _str(item, "file", True)
    targets = item.get("targets")
    if targets is None:
        targets = []
    if not isinstance(targets, list) or not all(isinstance(t, str) and t.strip() for t in targets):
        raise Drop("'targets' must be a list of non-empty strings")
    section = _str(item, "section")
    text = _str(item, "text")
    conf = item.get("confidence")
    if conf is None:
        raise Drop("missing 'confidence'")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 <= conf <= 1.0:
        raise Drop("'confidence' must be a number between 0 and 1")
    reason = _str(item, "reason", True)
    evidence = item.get("evidence")
    if evidence is None:
        raise Drop("missing 'evidence'")
    if not isinstance(evidence, list) or not evidence:
        raise Drop("'evidence' must be a non-empty list")
    for ev in evidence:
        if not isinstance(ev, dict) or not isinstance(ev.get("source"), str) or not isinstance(ev.get("quote"), str):
            raise Drop("each evidence item needs a 'source' and a 'quote' string")
    need = {"prune": (1, None, False), "refresh": (1, 1, True), "merge": (2, None, True),
            "consolidate": (0, 0, True)}[op]
    lo, hi, needs_text = need
    if len(targets) < lo or (hi is not None and len(targets) > hi):
        want = {"prune": "one or more targets", "refresh": "exactly one target", "merge": "two or more targets",
                "consolidate": "no targets"}[op]
        raise Drop(f"{op} needs {want}, got {len(targets)}")
    if needs_text and not (text and text.strip()):
        raise Drop(f"{op} needs the new entry's 'text'")
    return {"op": op, "file": file, "targets": targets, "section": section,
            "text": text if needs_text else None, "confidence": float(conf), "reason": reason,
            "evidence": evidence}


def _check_new_text(label: str, text: str) -> None:
    if sensitive.has_sensitive(text):
        raise Drop(f"the {label} holds sensitive data ({', '.join(sensitive.kinds(text))})")
    if sensitive.REDACTED in text:
        raise Drop(f"the {label} copies a redacted value")
    m = TAG_RE.search(text)
    if m and m.group(1).upper() == "P0":
        raise Drop(f"the {label} claims P0, which only a person may give")


def check(item: Any, ground: Ground) -> Operation:
    """The Operation `item` stands for, or Drop with the reason it fails the gate."""
    f = _shape(item)
    name = f["file"].strip()
    if name not in ground.files:
        raise Drop(f"{_short(name, 40)} is not a memory file (memory files: {', '.join(ground.files)})")
    doc = ground.docs.get(name)
    if doc is None and f["op"] != "consolidate":
        raise Drop(f"{name} does not exist yet, so it has no entry to {f['op']}")
    evidence = []
    for ev in f["evidence"]:
        check_quote(ground.lines, ev["source"], ev["quote"])
        evidence.append(Evidence(ev["source"].strip(), normalise(ev["quote"])))
    targets: list[str] = []
    for t in f["targets"] if doc is not None else ():  # only consolidate, with no targets, lacks a doc
        e = resolve_target(doc, t)
        if e.frozen:
            raise Drop(f"{name} line {e.line} is P0 or protected and is never changed automatically")
        if e.text in targets:
            raise Drop(f"{name} line {e.line} is named twice as a target")
        targets.append(e.text)
    section = f["section"].strip() if f["op"] == "consolidate" and f["section"] else None
    if section:
        want = TAG_RE.sub("", section).strip().strip("#").strip()
        hits = [s for s in (doc.sections if doc else []) if s.title.casefold() == want.casefold()]
        if hits:
            if hits[0].priority == "P0" or hits[0].protected:
                raise Drop(f"section {hits[0].title!r} of {name} is P0 or protected")
            section = hits[0].title
        else:  # a new section: its name is new text too
            _check_new_text("section name", section)
            section = want or None
    if f["text"] is not None:
        _check_new_text("new text", f["text"])
    if f["confidence"] < ground.threshold:
        raise Drop(f"confidence {f['confidence']:.2f} is below the threshold {ground.threshold:.2f}")
    return Operation(f["op"], name, tuple(targets), f["text"].strip() if f["text"] else None, section,
                     confidence=round(f["confidence"], 3), reason=sensitive.redact(normalise(f["reason"])),
                     evidence=tuple(evidence), origin=ground.origin)


def dropped(item: Any, reason: str, index: int | None = None) -> dict:
    """The record of one dropped operation: what it was, and why; nothing sensitive."""
    d = item if isinstance(item, dict) else {}
    op = d.get("op") if isinstance(d.get("op"), str) else None
    file = d.get("file") if isinstance(d.get("file"), str) else None
    what = d.get("text")
    if not isinstance(what, str) or not what.strip():
        ts = d.get("targets")
        what = ts[0] if isinstance(ts, list) and ts else None
    rec: dict = {"op": op and _short(op, 20), "file": file and sensitive.redact(_short(file, 60)),
                 "reason": sensitive.redact(reason)}
    if isinstance(what, str) and what.strip():
        rec["text"] = sensitive.redact(_short(what))
    if index is not None:
        rec["index"] = index
    return rec


def gate(items: Any, ground: Ground) -> Verdict:
    """Check every item of a model's answer; return what passes and what was dropped, with reasons."""
    if not isinstance(items, list):
        return Verdict([], [dropped(None, "the answer's 'operations' is not a list")])
    passed: list[Operation] = []
    out: list[dict] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        try:
            op = check(item, ground)
            fp = op.fingerprint
            if fp in ground.known:
                raise Drop("the same change is already open or was rejected before")
            if fp in seen:
                raise Drop("the same change appears twice in the answer")
        except Drop as e:
            out.append(dropped(item, str(e), i))
            continue
        seen.add(fp)
        passed.append(op)
    return Verdict(passed, out)
