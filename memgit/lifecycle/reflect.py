"""`memgit reflect`: the daily advisory pass.

It reads the same window as a dream and reports three things: contradictions
between recent logs and long-term memory (and within memory), facts recorded on
three or more days that memory lacks (promotion candidates), and entries not
referenced for a long time (decay markers). The report goes to
`reflections/YYYY-MM-DD.md` through a proposal (kept out of main unless a person
approves it); candidates confident enough become proposals of their own, exactly
as a dream would make them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

from memgit import proposals
from memgit.ops import Operation
from memgit.workspace import Workspace

CONTRADICTION_KINDS = ("status", "version", "preference", "contradiction", "stale")


@dataclass
class Reflection:
    now: str
    contradictions: list[dict] = field(default_factory=list)
    promotions: list[dict] = field(default_factory=list)
    decay: list[dict] = field(default_factory=list)
    proposals: list[str] = field(default_factory=list)
    report_proposal: str | None = None
    text: str = ""

    def to_dict(self) -> dict:
        return {"now": self.now, "contradictions": self.contradictions, "promotions": self.promotions,
                "decay": self.decay, "proposals": self.proposals, "report_proposal": self.report_proposal,
                "text": self.text}


def reflect(ws: Workspace, now: date, dry_run: bool = False) -> Reflection:
    from memgit.dream import dream
    from memgit.dream.signals import find_candidates

    # proposals first (a dream of the same window): confident candidates become reviewable changes;
    # the report is classified from the offline rules over what that dream read
    report = dream(ws, now, dry_run=dry_run)
    ctx = report.context
    cands = report.candidates if report.backend == "offline" else find_candidates(ctx)
    r = Reflection(now.isoformat(), proposals=[p["id"] for p in report.proposals if p["id"]])
    refused = proposals.rejected_fingerprints(ws)
    for c in cands:
        if c.op.fingerprint in refused:
            continue  # a person said no to this change: it is settled, not a contradiction to report
        item = {"kind": c.kind, "op": c.op.op, "file": c.op.file, "title": c.op.title,
                "confidence": round(c.score, 2), "sources": [e.source for e in c.op.evidence]}
        if c.kind in CONTRADICTION_KINDS:
            r.contradictions.append(item)
        elif c.kind == "recurring" and c.features.get("days", 0) >= 3:
            r.promotions.append(item)
    r.decay = decay_markers(ws, ctx, now)
    r.text = render(r)
    findings = _findings_key(r)
    if not dry_run and findings is not None:
        # a report is filed only when it says something, and not again while the same findings wait
        # for review (or were already seen): one reflection a day would otherwise be one more to reject
        known = {p.op.reason for p in proposals.list_proposals(ws, check=False)} | _closed_reasons(ws)
        reason = f"daily reflection report (findings {findings})"
        if reason not in known:
            path = f"reflections/{now.isoformat()}.md"
            op = Operation("append", path, text=r.text, reason=reason, origin="offline", confidence=None)
            with ws.repo.lock():
                made = proposals.create(ws, [op], skip_known=True)
            r.report_proposal = made[0].id if made else None
    return r


def _findings_key(r: Reflection) -> str | None:
    """A short digest of what the report found (None when it found nothing), independent of the day."""
    import hashlib

    items = sorted([f"c:{c['file']}:{c['title']}" for c in r.contradictions]
                   + [f"p:{c['file']}:{c['title']}" for c in r.promotions]
                   + [f"d:{d['file']}:{d['text']}" for d in r.decay])
    if not items:
        return None
    return hashlib.sha256("\n".join(items).encode("utf-8")).hexdigest()[:12]


def _closed_reasons(ws: Workspace) -> set[str]:
    out = set()
    for pid, state in proposals.closed_states(ws).items():
        if not str(state.get("file", "reflections/")).startswith("reflections/"):
            continue  # the journal names each closed proposal's file; only reports are read
        p = proposals.get(ws, pid)
        if p is not None and p.op.file.startswith("reflections/"):
            out.add(p.op.reason)
    return out


def decay_markers(ws: Workspace, ctx, now: date) -> list[dict]:
    """Entries whose subject no log of the last p1_days / p2_days mentions, and that are at least that old."""
    from memgit.dream.collect import collect
    from memgit.dream.signals import Context

    lc = ws.config.lifecycle
    horizon = max(lc.p1_days, lc.p2_days)
    wide = collect(ws, now, horizon)
    wctx = Context(wide, ctx.primary, ctx.user_file)
    out = []
    for it in wctx.items:
        e = it.entry
        if e.frozen or not it.subject:
            continue
        days = lc.p2_days if e.priority == "P2" else lc.p1_days
        if e.date and e.date > now - timedelta(days=days):
            continue
        since = now - timedelta(days=days)
        seen = [o.day for o in wide.observations if o.day >= since and wctx.mentions(o, it) >= 0.15]
        if seen:
            continue
        out.append({"file": e.file, "line": e.line, "priority": e.priority,
                    "date": e.date.isoformat() if e.date else None, "unreferenced_days": days,
                    "text": e.text.split("\n")[0]})
    return out


def render(r: Reflection) -> str:
    from memgit import sensitive

    lines = [f"# Reflection {r.now}", ""]
    lines.append(f"## Contradictions ({len(r.contradictions)})")
    lines += [f"- {c['kind']}: {c['title']} — confidence {c['confidence']:.2f} "
              f"({', '.join(c['sources'][:3])})" for c in r.contradictions] or ["- none"]
    lines += ["", f"## Promotion candidates ({len(r.promotions)})"]
    lines += [f"- {c['title']} — confidence {c['confidence']:.2f} ({', '.join(c['sources'][:3])})"
              for c in r.promotions] or ["- none"]
    lines += ["", f"## Decay markers ({len(r.decay)})"]
    lines += [f"- {d['file']}:{d['line']} [{d['priority']}] not referenced for {d['unreferenced_days']}+ days: "
              f"{d['text']}" for d in r.decay] or ["- none"]
    if r.proposals:
        lines += ["", f"## Proposals made: {', '.join(r.proposals)}"]
    return sensitive.redact("\n".join(lines) + "\n")
