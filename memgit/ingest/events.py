"""Structured agent event logs: one JSON object a line with `event_id`, `timestamp`
(ISO-8601 or Unix seconds/milliseconds), `goal_id`, `action`, `input`, `observation`,
`outcome`, `tags` (a list of strings, or one string) and `session_id`.

An event becomes up to two turns, both at the event's timestamp:
- a "user" turn whose text is `input`: what the agent was given or asked;
- an "assistant" turn for what the agent did and saw, one labelled line per field
  present: `Action: ...`, `Observation: ...`, `Outcome: ...`, then `Goal: <goal_id>` and
  `Tags: a, b` so the dream can still group by goal and tag.
A field that is not a string (a dict, list or number) is written as compact JSON. An
event without `session_id` belongs to a session named after its file; an event with
none of input, action, observation and outcome is skipped with a warning. `event_id`
is not copied: turns are deduplicated by their content.
"""
from __future__ import annotations

import json
from pathlib import Path

from memgit.ingest.base import Read, Turn, first_records, iso_utc, json_records, string_field

NAME = "events"
SUFFIXES = (".jsonl", ".ndjson")


def wants(name: str) -> bool:
    return name.endswith(SUFFIXES)


def looks_like(path: Path) -> bool:
    """Event records: a timestamp and at least one of input, action, observation, outcome."""
    records = first_records(path)
    return bool(records) and all(
        "timestamp" in r and any(k in r for k in ("input", "action", "observation", "outcome")) for r in records)

_DOINGS = (("Action", "action"), ("Observation", "observation"), ("Outcome", "outcome"))


def read(path: Path, owners: frozenset[str] = frozenset()) -> Read:
    """Yield the turns of one event log."""
    warnings: list[str] = []
    for number, event in json_records(path, warnings):
        ts = iso_utc(event.get("timestamp"))
        if ts is None:
            warnings.append(f"{path}:{number}: no usable timestamp; line skipped")
            continue
        session = string_field(event, "session_id") or path.stem
        asked = _render(event.get("input"))
        done = [f"{label}: {value}" for label, key in _DOINGS if (value := _render(event.get(key)))]
        if not asked and not done:
            warnings.append(f"{path}:{number}: event has no input, action, observation or outcome; skipped")
            continue
        if asked:
            yield Turn(ts=ts, session=session, role="user", text=asked)
        if done:
            if goal := _render(event.get("goal_id")):
                done.append(f"Goal: {goal}")
            tags = event.get("tags")
            if isinstance(tags, str):
                tags = [tags]
            if isinstance(tags, list) and (names := [str(tag) for tag in tags if str(tag).strip()]):
                done.append(f"Tags: {', '.join(names)}")
            yield Turn(ts=ts, session=session, role="assistant", text="\n".join(done))
    return warnings


def _render(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
