"""The dream diary: non-obvious links across days and topics, appended to memgit-diary.md.

`memgit dream --associate` (or `associate = true` under [dream]) samples up to
8 snippets from the last 30 days of logs and up to 5 memory sections at random
(seedable), and links snippets from different days whose topics otherwise
differ but that share an uncommon term or entity. At most 3 insights of one or
two sentences each become one `append` proposal to memgit-diary.md; a run with no
association strong enough proposes nothing. The offline engine links by shared
uncommon terms; the anthropic backend may phrase better links when it is on.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import date

from memgit import proposals, sensitive
from memgit.ops import Operation
from memgit.workspace import Workspace

DIARY = "memgit-diary.md"
MAX_SNIPPETS = 8
MAX_SECTIONS = 5
MAX_INSIGHTS = 3


@dataclass(frozen=True)
class Snippet:
    source: str
    day: date | None
    text: str
    terms: frozenset[str]
    topic: str           # the log day or the memory section: links must cross these


def _sample(ws: Workspace, now: date, rng: random.Random) -> list[Snippet]:
    from memgit.dream.collect import collect

    col = collect(ws, now, 30)
    from memgit.dream import lexicon as lx
    from memgit.dream.signals import fold

    logs = [o for o in col.observations if not o.sensitive and len(o.terms) >= 3
            and not lx.CHATTER.search(fold(o.text))]
    chosen = rng.sample(logs, min(MAX_SNIPPETS, len(logs)))
    out = [Snippet(o.ref, o.day, o.text, o.terms, f"log {o.day}") for o in chosen]
    sections = []
    for doc in col.docs.values():
        for s in doc.sections:
            entries = doc.entries_in(s)
            if entries:
                sections.append((doc, s, entries))
    for doc, s, entries in rng.sample(sections, min(MAX_SECTIONS, len(sections))):
        for e in entries:
            if not sensitive.has_sensitive(e.text):
                from memgit.text import term_set

                out.append(Snippet(f"{doc.name}:{e.line}", e.date, e.body, term_set(e.body),
                                   f"{doc.name} § {s.title}"))
    return out


def associations(snippets: list[Snippet]) -> list[tuple[float, Snippet, Snippet, list[str]]]:
    df: dict[str, int] = {}
    for s in snippets:
        for t in s.terms:
            df[t] = df.get(t, 0) + 1
    n = max(len(snippets), 1)
    links = []
    for i, a in enumerate(snippets):
        for b in snippets[i + 1:]:
            if a.topic == b.topic or (a.day and b.day and a.day == b.day):
                continue
            shared = a.terms & b.terms
            rare = [t for t in shared if df[t] <= 2 and len(t) >= 2 and _specific(t)]
            if not rare:
                continue
            # non-obvious: they share an uncommon term but little else
            overlap = len(shared) / max(1, min(len(a.terms), len(b.terms)))
            if overlap > 0.5:
                continue
            strength = sum(math.log(1 + n / df[t]) for t in rare) * (1 - overlap / 2)
            links.append((strength, a, b, sorted(rare)))
    links.sort(key=lambda x: -x[0])
    return links


def associate(ws: Workspace, now: date, seed: int | None = None, dry_run: bool = False,
              backend: str = "offline", min_strength: float = 1.0) -> dict:
    """Find up to 3 insights and propose appending them to memgit-diary.md."""
    rng = random.Random(seed if seed is not None else now.toordinal())
    snippets = _sample(ws, now, rng)
    if backend == "anthropic" and len(snippets) >= 2:
        return _with_model(ws, now, snippets, dry_run)
    insights, used = [], set()
    for strength, a, b, rare in associations(snippets):
        if strength < min_strength or a.source in used or b.source in used:
            continue
        used |= {a.source, b.source}
        term = ", ".join(f"“{t}”" for t in rare[:2])
        insights.append({
            "strength": round(strength, 2), "sources": [a.source, b.source],
            "text": sensitive.redact(f"{term} links {a.topic} ({a.source}) with {b.topic} ({b.source}): "
                                     f"“{_short(a.text)}” and “{_short(b.text)}”. Worth one entry that "
                                     f"connects them?"),
        })
        if len(insights) >= MAX_INSIGHTS:
            break
    return _propose(ws, now, {"snippets": len(snippets), "insights": insights, "proposal": None}, dry_run,
                    "offline")


def _with_model(ws: Workspace, now: date, snippets: list[Snippet], dry_run: bool) -> dict:
    """The anthropic backend finds the links; memgit checks them (cited ids, two topics, length, no secrets)."""
    from memgit.dream.anthropic_backend import associate as model_associate
    from memgit.errors import MemgitError

    try:
        insights, dropped, tokens = model_associate(snippets, ws.config)
    except MemgitError as e:
        if not ws.config.llm.fallback_offline:
            raise
        result = associate(ws, now, dry_run=dry_run, backend="offline")
        ws.warnings.append(f"{e} The diary fell back to the offline engine.")
        return result
    for x in insights:
        x["text"] = f"{x['text']} ({', '.join(x['sources'])})"
    return _propose(ws, now, {"snippets": len(snippets), "insights": insights, "dropped": dropped,
                              "tokens": tokens, "proposal": None}, dry_run, "anthropic")


def _propose(ws: Workspace, now: date, result: dict, dry_run: bool, origin: str) -> dict:
    insights = result["insights"]
    if insights and not dry_run:
        body = f"## {now.isoformat()}\n\n" + "\n".join(f"- {x['text']}" for x in insights) + "\n"
        op = Operation("append", DIARY, text=body, reason=f"dream diary: {len(insights)} association(s)",
                       origin=origin)
        with ws.repo.lock():
            made = proposals.create(ws, [op], skip_known=True)
        result["proposal"] = made[0].id if made else None
    return result


def _specific(term: str) -> bool:
    """A term that names something (not a status, rule or time word)."""
    from memgit.dream import lexicon as lx

    generic = (lx.STATE_WORDS, lx.RULE, lx.AGAIN, lx.PREFERENCE, lx.EXCEPTION, lx.TEMP, lx.CHATTER)
    return not any(p.search(term) for p in generic) and not term.isdigit()


def _short(text: str, n: int = 70) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"
