"""Confidence in one place: every kind of dream candidate, its base and the weight of each feature.

A rule measures features (distinct days, whether a change was stated explicitly, whether it relapsed, how
recent — `recent` is the 0.05 `Context.recency` gives for the last three days) and asks `confidence()`;
no rule holds a number of its own. `benchmarks/bands.py` shows how many proposals fall in each band on
labelled workspaces; the default threshold (0.7, `[dream] threshold`) is set so that what passes is right.
"""
from __future__ import annotations

from memgit.errors import MemgitError

# kind → {"base": …, feature: weight}; a feature's value is a number or a bool, already capped by the rule
WEIGHTS: dict[str, dict[str, float]] = {
    "status": {"base": 0.55, "explicit": 0.15, "extra_days": 0.08, "confirming_days": 0.06, "relapsed": -0.3,
               "recent": 1.0},
    "state": {"base": 0.70, "extra_days": 0.05, "persists": 0.05, "recent": 1.0},
    "version": {"base": 0.50, "explicit": 0.15, "extra_days": 0.15, "instance": 0.10, "recent": 1.0},
    "slot": {"base": 0.72, "extra_days": 0.08, "recent": 1.0},
    "count": {"base": 0.74, "recent": 1.0},
    "preference": {"base": 0.60, "negates_old": 0.10, "acknowledged": 0.10, "restated": 0.05, "again_days": 0.05,
                   "in_their_words": 0.05, "change_verb": 0.05, "recent": 1.0},
    "expired": {"base": 0.80, "reported_gone": 0.10},
    "fixed": {"base": 0.65, "days": 0.10, "recent": 1.0},
    "retired": {"base": 0.76, "typed_by_person": 0.04, "recent": 1.0},
    "passed": {"base": 0.72, "extra_log_days": 0.03},
    "superseded": {"base": 0.72, "named": 0.08, "newer_used": 0.08},
    "label-conflict": {"base": 0.62, "only_newer_used": 0.10, "short": 0.05},
    "duplicate": {"base": 0.60, "similarity": 0.35, "extra_entries": 0.03},
    "recurring": {"base": 0.66, "extra_days": 0.04, "rule_form": 0.08, "sessions": 0.02, "recent": 1.0,
                  "covered_beyond": -0.6},
}


def clamp(x: float) -> float:
    return max(0.0, min(1.0, round(x, 3)))


def confidence(kind: str, **features: float) -> float:
    """The confidence of a candidate of `kind` with these features, in [0, 1]."""
    weights = WEIGHTS.get(kind)
    if weights is None:
        raise MemgitError(f"no confidence weights for candidates of kind {kind!r}")
    unknown = set(features) - set(weights)
    if unknown:
        raise MemgitError(f"unknown feature(s) {', '.join(sorted(unknown))} for candidates of kind {kind!r}")
    return clamp(weights["base"] + sum(weights[k] * float(v) for k, v in features.items()))


def capacity_confidence(value: float, threshold: float) -> float:
    """A P2 entry pruned for room: surer the less it is worth, never below the threshold (the file must
    shed something), never above 0.95 (it is a choice among expendable entries, not a finding)."""
    return round(min(0.95, max(threshold, 0.9 - 0.05 * value)), 3)
