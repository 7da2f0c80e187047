"""The offline engine's rules: each module holds one kind of change, each rule is a function
`rule(ctx) -> list[Candidate]` over the shared model (`memgit.dream.model`). `RULES` is the registry
the engine runs, in order; word lists live in `memgit.dream.lexicon`, never in a rule."""
from __future__ import annotations

from memgit.dream.rules.counts import count_growth
from memgit.dream.rules.duplicates import duplicates_and_contradictions
from memgit.dream.rules.preference import preference_changes
from memgit.dream.rules.prune import (passed_conditions, retired_subjects, secret_entries, stale_entries,
                                      superseded_tools)
from memgit.dream.rules.recurring import recurring
from memgit.dream.rules.restated import restated_slots
from memgit.dream.rules.schedule import schedule_moves
from memgit.dream.rules.status import state_regressions, status_changes
from memgit.dream.rules.versions import slot_changes, version_changes

__all__ = ["RULES", "count_growth", "duplicates_and_contradictions", "passed_conditions", "preference_changes",
           "recurring", "restated_slots", "retired_subjects", "schedule_moves", "secret_entries", "slot_changes",
           "stale_entries", "state_regressions", "status_changes", "superseded_tools", "version_changes"]

RULES = (secret_entries, stale_entries, status_changes, state_regressions, slot_changes, retired_subjects,
         superseded_tools, passed_conditions, version_changes, count_growth, schedule_moves, preference_changes,
         restated_slots, duplicates_and_contradictions, recurring)
