"""The model gate names an entry the way `memgit propose --entry` does: exactly, or by a unique,
substantial part of it; an ambiguous or slight part names nothing."""
from __future__ import annotations

import pytest

from memgit.dream.gate import Drop, resolve_target
from memgit.memory import parse

DOC = parse("MEMORY.md", """\
# Memory

## Projects [P1]
- [P1] Cockpit v1 待 push (2026-05-02)
- [P1] Cockpit v2 design review with Jw (2026-05-03)
- Playwright MCP pinned to 0.0.41 because 0.0.42 broke screenshots (2026-04-10)
- [P2] 3thing 落地頁文案初稿已完成，等 Jw 定稿 (2026-04-11)
""".encode())


@pytest.mark.parametrize("target, line", [
    ("- [P1] Cockpit v1 待 push (2026-05-02)", 4),      # exactly
    ("Cockpit v1 待 push", 4),                          # without marker, tag and date
    ("[P1] Cockpit v1 待 push", 4),
    ("3thing 落地頁文案初稿已完成", 7),                   # most of a Chinese entry
])
def test_a_unique_substantial_part_names_its_entry(target, line):
    assert resolve_target(DOC, target).line == line


@pytest.mark.parametrize("target, why", [
    ("Cockpit v", "is part of 2 entries"),               # ambiguous
    ("Jw", "is part of 2 entries"),
    ("Playwright MCP", "is not an entry"),               # too slight a part of a long entry
    ("Cockpit v3", "is not an entry"),
])
def test_an_ambiguous_or_slight_part_names_nothing(target, why):
    with pytest.raises(Drop, match=why):
        resolve_target(DOC, target)
