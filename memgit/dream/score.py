"""Deep sleep: keep the candidates that are confident enough, in the right order,
and prune by value when a memory file is over its budget.

Value of an entry, in the spirit of importance × log(1 + references) / (1 + age / half_life):
P1 matters twice as much as P2, references are window observations naming the
entry, and age is days since its date (half-life 90 days for P1, 30 for P2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date

from memgit import ops
from memgit.dream import lexicon as lx
from memgit.dream.scoring import capacity_confidence
from memgit.dream.verify import MAX_REMOVED, removed_lines
from memgit.dream.signals import Candidate, Context, Item, entry_evidence
from memgit.errors import MemgitError
from memgit.ops import PHASE, Operation


@dataclass
class Selection:
    kept: list[Candidate]
    skipped: list[tuple[Candidate, str]]
    before: dict[str, int]
    after: dict[str, int]
    forced: list[str] = field(default_factory=list)


def value(ctx: Context, it: Item) -> float:
    e = it.entry
    importance = {"P1": 2.0, "P2": 1.0}.get(e.priority, 2.0)
    if lx.TEMP.search(it.folded) or lx.ERROR.search(it.folded):
        importance *= 0.5
    refs = sum(1 for o in ctx.obs_about(it) if ctx.mentions(o, it) >= 0.15)
    age = (ctx.now - e.date).days if e.date else 180
    half_life = 30 if e.priority == "P2" else 90
    return importance * math.log(2 + refs) / (1 + max(age, 0) / half_life)


def _bundle_forced(chosen: list[Candidate]) -> list[Candidate]:
    """More operations than a run may make, and a file must get back under its budget: each file's
    capacity prunes become proposals with several targets, each small enough to review; what does
    not fit waits for the next run."""
    by_file: dict[str, list[list[Candidate]]] = {}
    for c in chosen:
        if c.forced:
            groups = by_file.setdefault(c.op.file, [[]])
            held = sum(removed_lines(t) for g in groups[-1] for t in g.op.targets)
            if held + removed_lines(c.op.targets[0]) > MAX_REMOVED:
                groups.append([])
            groups[-1].append(c)
    out = [c for c in chosen if not c.forced]
    bundles = []
    for name, group in ((n, g) for n, gs in by_file.items() for g in gs if g):
        if len(group) == 1:
            bundles.append(group[0])
            continue
        targets = tuple(t for c in group for t in c.op.targets)
        op = Operation("prune", name, targets, confidence=min(c.score for c in group),
                       reason=f"{name} is over its forced-prune limit; these {len(targets)} entries are its "
                              f"lowest-value ones ({group[0].op.reason.split('; ', 1)[0]})",
                       evidence=tuple(e for c in group for e in c.op.evidence), origin="offline")
        bundles.append(Candidate(op, "capacity", op.confidence or 0.0, {"entries": len(targets)}, forced=True))
    return sorted(bundles + out, key=lambda c: (PHASE[c.op.op], not c.forced, -c.score))


def _chars(data: bytes | None) -> int:
    return len(data.decode("utf-8", "replace").lstrip("\ufeff")) if data else 0


def select(ctx: Context, candidates: list[Candidate], threshold: float, max_ops: int, pct: float,
           budgets: dict[str, int], known: set[str], protected: tuple[str, ...]) -> Selection:
    # Kept operations never share a target, so each is tried on memory as it is (parsed once) and
    # the file sizes after them are the sum of their deltas: no re-parse or rebuild per candidate.
    files = {name: doc.to_bytes() for name, doc in ctx.col.docs.items()}
    before = {n: _chars(d) for n, d in files.items()}
    size = dict(before)
    skipped: list[tuple[Candidate, str]] = []
    order = sorted(candidates, key=lambda c: (PHASE[c.op.op], -c.score, c.op.file, c.op.title))
    chosen: list[Candidate] = []
    claimed: set[tuple[str, str]] = set()
    seen_fp: set[str] = set()

    deltas: dict[str, dict[str, int] | None] = {}

    def delta(op: Operation) -> dict[str, int] | None:
        """How many characters `op` changes in each file it touches (None: it does not apply); memoised.

        Weighed on the parsed documents, at the cost of the edit: a forced prune tries one candidate
        per entry of a large file, and rebuilding the file for each was quadratic."""
        fp = op.fingerprint
        if fp not in deltas:
            try:
                deltas[fp] = ops.size_change(op, files.get, protected)
            except MemgitError:
                deltas[fp] = None
        return deltas[fp]

    for c in order:
        fp = c.op.fingerprint
        if fp in seen_fp:
            continue
        seen_fp.add(fp)
        if c.score < threshold:
            skipped.append((c, f"confidence {c.score:.2f} below threshold {threshold:.2f}"))
            continue
        if fp in known:
            skipped.append((c, "already open or rejected before"))
            continue
        keys = {(c.op.file, t) for t in c.op.targets}
        if keys & claimed:
            skipped.append((c, "its entry is already changed by a stronger operation"))
            continue
        d = delta(c.op)
        if d is None:
            skipped.append((c, "does not apply to current memory"))
            continue
        for n, x in d.items():
            size[n] = size.get(n, 0) + x
        claimed |= keys
        chosen.append(c)
    # forced pruning: a file past forced_prune_pct of its budget loses its lowest-value entries
    forced: list[str] = []
    for name, budget in budgets.items():
        if name not in files:
            continue
        limit = budget * pct / 100.0
        if size.get(name, 0) <= limit:
            continue
        # only what the person marked expendable (P2) and small enough to review is pruned for room;
        # over budget never means deleting identity, rules or untagged facts (janitor moves sections)
        pool = [it for it in ctx.items if it.entry.file == name and not it.frozen and it.entry.priority == "P2"
                and removed_lines(it.entry.text) <= MAX_REMOVED and (name, it.entry.text) not in claimed]
        pool.sort(key=lambda it: (value(ctx, it), it.entry.date or date.min))
        for it in pool:
            if size.get(name, 0) <= limit:
                break
            v = value(ctx, it)
            score = capacity_confidence(v, threshold)
            op = Operation("prune", name, (it.entry.text,), confidence=score,
                           reason=f"{name} is over {pct:g}% of its {budget}-character budget; "
                                  f"this is among its lowest-value P2 entries (value {v:.2f})",
                           evidence=(entry_evidence(it),), origin="offline")
            d = delta(op)
            if d is None:
                continue
            claimed.add((name, it.entry.text))
            c = Candidate(op, "capacity", score, {"value": round(v, 3)}, forced=True)
            if op.fingerprint in known:
                skipped.append((c, "already open or rejected before"))
                continue
            for n, x in d.items():
                size[n] = size.get(n, 0) + x
            chosen.append(c)
            forced.append(it.entry.text)
    chosen.sort(key=lambda c: (PHASE[c.op.op], not c.forced, -c.score))
    if len(chosen) > max_ops:
        chosen = _bundle_forced(chosen)
    kept = chosen[:max_ops]
    for c in chosen[max_ops:]:
        skipped.append((c, f"over the limit of {max_ops} operations per run"))
    # projected sizes after the kept operations (a bundle's delta is its members' sum)
    after = dict(before)
    for c in kept:
        for n, x in (delta(c.op) or {}).items():
            after[n] = after.get(n, 0) + x
    skipped.sort(key=lambda x: -x[0].score)
    return Selection(kept, skipped, before, after, forced)
