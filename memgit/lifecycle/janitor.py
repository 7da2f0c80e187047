"""`memgit janitor`: structural compaction of the memory files, as proposals.

Three rules, applied in this order to each memory file (an entry taken by one
rule, or by any open proposal, is left to it):

1. Events fold. In an "Events"/timeline section (heading matching events,
   timeline, history, 大事记, 時間線, 时间线 …), the entries of each month that
   ended more than `events_days` ago (two or more of them) fold into one line
   `- [P1] 2026-06: A; B; C` that keeps every entry's words; the full original
   lines go to `reference/<section-slug>.md`. One proposal per month.
2. Reference move. A P1 section whose entries are all dated more than
   `p1_days` ago and none mentioned in that many days of logs moves its
   entries to `reference/<section-slug>.md` (never a standing section: a
   person's preferences or conventions, or anything in USER.md, which the
   agent applies daily without the logs naming it), leaving one index entry
   `- [P1] <Section>: see reference/<slug>.md`. One proposal per section, made
   only when the index line is shorter than what it replaces.
3. P2 compression. A P2 entry dated more than `p2_days` ago is refreshed to its
   conclusion (see `conclusion`), date kept. One proposal per entry.

P0 and protected sections and entries never change; entries holding sensitive
data are left for the dream to remove. Moves are `move` operations with a
`leave` entry (see `memgit.ops`), so the section and the reference file change
in one commit and nothing is lost: the original lines stay in the repo.
"""
from __future__ import annotations

import re
from datetime import date

from memgit.lifecycle import priority
from memgit.lifecycle.expire import Claims, Planned, Report, run
from memgit.lifecycle.priority import References
from memgit.memory import Document, Entry, Section
from memgit.ops import Evidence, Operation
from memgit.text import clauses, norm, term_set
from memgit.wordlists import alternation
from memgit.workspace import Workspace

ARROW_RE = re.compile(r"→|=>|" + alternation("as_written.conclusion"))
SO_RE = re.compile(r"(?:^|[\s,;])so\s+", re.IGNORECASE)


def janitor(ws: Workspace, now: date, dry_run: bool = False) -> Report:
    """Propose folding old events, moving stale P1 sections to reference/, compressing old P2 entries."""
    return run(ws, "janitor", now, dry_run, plan)


def plan(ws: Workspace, main: str, now: date, claims: Claims, warnings: list[str]) -> list[Planned]:
    cfg = ws.config
    out: list[Planned] = []
    refs: References | None = None
    for doc in ws.documents(main).values():
        out += _fold_events(ws, doc, now, claims, warnings)
        if refs is None and any(s.priority == "P1" for s in doc.sections):
            refs = References.window(ws, main, now, cfg.lifecycle.p1_days)
        if refs is not None:
            out += _to_reference(ws, doc, now, claims, refs, warnings)
        out += _compress_p2(doc, now, cfg.lifecycle.p2_days, claims, warnings)
    return out


def _usable(doc: Document, entries: list[Entry], claims: Claims, warnings: list[str]) -> list[Entry]:
    """Entries an automated rule may take: not P0, not claimed, not holding sensitive data."""
    out = []
    for e in entries:
        if e.frozen or claims.has(doc.name, e.text) or priority.holds_secret(doc.name, e, warnings):
            continue
        out.append(e)
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _fold_events(ws: Workspace, doc: Document, now: date, claims: Claims, warnings: list[str]
                 ) -> list[Planned]:
    cfg = ws.config
    limit = priority.cutoff(now, cfg.lifecycle.events_days)
    out = []
    for section, entries in priority.entries_by_section(doc):
        if section is None or not priority.is_events(section) or priority.section_frozen(section):
            continue
        months: dict[str, list[Entry]] = {}
        for e in entries:
            if e.date is not None and priority.month_end(e.date) < limit:
                months.setdefault(priority.month_of(e.date), []).append(e)
        dest = _reference_path(ws, section)
        for month, group in sorted(months.items()):
            group = _usable(doc, group, claims, warnings)
            if len(group) < 2:
                continue
            claims.take(doc.name, [e.text for e in group])
            tag = priority.strongest([e.priority for e in group])
            facts = "; ".join(_one_line(e.body).rstrip(";；") for e in group)
            leave = f"[{tag}] {month}: {facts}"
            block = "\n".join([f"## {section.title} {month} (from {doc.name}) [{section.priority}]",
                               *(e.text for e in group)])
            op = Operation("move", doc.name, tuple(e.text for e in group), text=block, dest=dest,
                           confidence=0.9, origin="offline",
                           evidence=tuple(Evidence(f"{doc.name}:{e.line}", e.body) for e in group[:20]),
                           reason=f"{len(group)} {section.title} entries of {month} (older than "
                                  f"{cfg.lifecycle.events_days} days) fold into one line; the original lines "
                                  f"go to {dest}.",
                           extra={"leave": leave})
            out.append(Planned("events-fold", op, len(group)))
    return out


def _reference_path(ws: Workspace, section: Section) -> str:
    return f"{ws.config.memory.reference_dir.strip('/')}/{priority.slug(section.title)}.md"


def _to_reference(ws: Workspace, doc: Document, now: date, claims: Claims, refs: References,
                  warnings: list[str]) -> list[Planned]:
    cfg = ws.config
    days = cfg.lifecycle.p1_days
    limit = priority.cutoff(now, days)
    out = []
    for section, entries in priority.entries_by_section(doc):
        if (section is None or section.priority != "P1" or priority.section_frozen(section)
                or priority.is_events(section) or priority.is_standing(doc.name, section)):
            continue
        dest = _reference_path(ws, section)
        index = [e for e in entries if f"see {dest}" in e.text]
        movable = [e for e in entries if not e.frozen and e not in index]
        if not movable or any(claims.has(doc.name, e.text) for e in movable):
            continue
        if not all(priority.older(e, limit) for e in movable):
            continue
        if any(refs.mention(e.body) for e in movable):
            continue
        if len(_usable(doc, movable, claims, warnings)) != len(movable):
            continue
        leave = None if index else f"[P1] {section.title}: see {dest}"
        if leave and len(leave) + 2 >= sum(len(e.text) + 1 for e in movable):
            continue  # an index line would not make the section any shorter
        claims.take(doc.name, [e.text for e in movable])
        block = "\n".join([f"## {section.title} (from {doc.name}) [{section.priority}]",
                           *(e.text for e in movable)])
        op = Operation("move", doc.name, tuple(e.text for e in movable), text=block, dest=dest,
                       confidence=0.85, origin="offline",
                       evidence=tuple(Evidence(f"{doc.name}:{e.line}", e.body) for e in movable[:20]),
                       reason=f"every entry of {section.title} is older than {days} days and none is mentioned "
                              f"in the last {days} days of logs; the details move to {dest}.",
                       extra={"leave": leave} if leave else {})
        out.append(Planned("p1-reference", op, len(movable)))
    return out


def conclusion(body: str) -> str | None:
    """The conclusion of an entry's words, or None when it would not save at least 15%.

    The text after the last "→", "=>" or "结论", else after " so ", else the
    last clause. A conclusion that does not name the entry's subject (it shares
    no term with the words before it) keeps the first clause in front:
    "subject → end".
    """
    body = _one_line(body)
    parts = ARROW_RE.split(body)
    if len(parts) > 1:
        head, tail = "".join(parts[:-1]), parts[-1]
    else:
        so = list(SO_RE.finditer(body))
        if so:
            head, tail = body[:so[-1].start()], body[so[-1].end():]
        else:
            cl = clauses(body)
            if len(cl) < 2:
                return None
            head, tail = cl[0], cl[-1]
    tail = tail.strip(" :：,，;；。.")
    first = (clauses(head) or [head])[0].strip(" :：,，;；") if head.strip() else ""
    if not tail:
        return None
    result = tail
    if first and not (term_set(tail) & term_set(head)):
        result = f"{first} → {tail}"
    if norm(result) == norm(body) or len(result) > 0.85 * len(body):
        return None  # a reworded entry is not a compression
    return result


def _compress_p2(doc: Document, now: date, days: int, claims: Claims, warnings: list[str]) -> list[Planned]:
    limit = priority.cutoff(now, days)
    out = []
    for section, entries in priority.entries_by_section(doc):
        if priority.section_frozen(section):
            continue
        old = [e for e in entries if e.priority == "P2" and priority.older(e, limit)]
        for e in _usable(doc, old, claims, warnings):
            short = conclusion(e.body)
            if not short:
                continue
            text = (f"[{e.own_tag}] " if e.own_tag else "") + f"{short} ({e.date.isoformat()})"
            claims.take(doc.name, [e.text])
            op = Operation("refresh", doc.name, (e.text,), text=text, confidence=0.75, origin="offline",
                           evidence=(Evidence(f"{doc.name}:{e.line}", e.body),),
                           reason=f"P2 entry older than {days} days compresses into its conclusion "
                                  f"(the full text stays in git history).")
            out.append(Planned("p2-compress", op, 1))
    return out
