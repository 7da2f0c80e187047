"""REM: find what should change in memory, as scored candidates.

Every rule works on meaning-bearing units (subject terms, versions, dates,
status words, negations) from `memgit.text`, never on whole-line equality,
and in English, Simplified and Traditional Chinese alike. Each candidate
carries its evidence (`path:line` and a verbatim, secret-free quote) and the
features its confidence was computed from.

The engine: the registry of rules (`memgit.dream.rules`) run over the shared model
(`memgit.dream.model`). Every candidate then passes the one gate (`memgit.dream.verify`).
"""
from __future__ import annotations

from functools import partial

from memgit.dream.model import Candidate, Context, Item, entry_evidence, fold
from memgit.dream.scoring import clamp
from memgit.dream.rules import RULES

__all__ = ["RULES", "Candidate", "Context", "Item", "clamp", "entry_evidence", "fold", "find_candidates"]


def find_candidates(ctx: Context) -> list[Candidate]:
    """Every rule's candidates, in registry order (on two processors when the window is large)."""
    from memgit.dream import parallel

    if parallel.worth_forking(len(ctx.obs)):
        # the registry's last rules first: its costliest
        found, _ = parallel.run_split([partial(rule, ctx) for rule in RULES], order=range(len(RULES) - 1, -1, -1))
        return [c for got in found for c in got]
    out: list[Candidate] = []
    for rule in RULES:
        out += rule(ctx)
    return out
