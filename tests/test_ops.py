"""memgit.ops: Operation records and applying them to files read through a callback."""
from __future__ import annotations

import pytest

from memgit.errors import ConflictError, MemgitError
from memgit.ops import Evidence, Operation, apply

MEMORY = """\
# MEMORY

## Environment [P0]
- Host: Mac mini M4

## Projects [P1]
- [P1] Cockpit v1 待 push (2026-11-02)
- [P1] Blog runs on Astro (2026-08-15)

## Notes [P2]
- [P2] Temporary: Cloudflare tunnel for the demo (2026-11-09)
- [P2] To export the monthly report: Reports → Export (2026-10-01)
- [P2] 匯出月報：Reports → Export → CSV (2026-10-20)
""".encode()

COCKPIT = "- [P1] Cockpit v1 待 push (2026-11-02)"
TUNNEL = "- [P2] Temporary: Cloudflare tunnel for the demo (2026-11-09)"
EXPORT_EN = "- [P2] To export the monthly report: Reports → Export (2026-10-01)"
EXPORT_ZH = "- [P2] 匯出月報：Reports → Export → CSV (2026-10-20)"
HOST = "- Host: Mac mini M4"


def reader(files: dict[str, bytes]):
    return lambda path: files.get(path)


def lines(data: bytes) -> list[str]:
    return data.decode("utf-8").splitlines()


def test_prune_removes_exactly_the_entry():
    out = apply(Operation("prune", "MEMORY.md", (TUNNEL,)), reader({"MEMORY.md": MEMORY}))
    assert list(out) == ["MEMORY.md"]
    assert lines(out["MEMORY.md"]) == [ln for ln in lines(MEMORY) if ln != TUNNEL]


def test_refresh_replaces_the_entry_in_place():
    new = "[P1] Cockpit v1 已 push 上线 (2026-11-29)"
    out = apply(Operation("refresh", "MEMORY.md", (COCKPIT,), text=new), reader({"MEMORY.md": MEMORY}))
    assert lines(out["MEMORY.md"]) == [("- " + new if ln == COCKPIT else ln) for ln in lines(MEMORY)]


def test_merge_keeps_the_first_position_and_drops_the_rest():
    merged = "[P1] Export the monthly report: Reports → Export → CSV"
    out = apply(Operation("merge", "MEMORY.md", (EXPORT_ZH, EXPORT_EN), text=merged),
                reader({"MEMORY.md": MEMORY}))
    want = [ln for ln in lines(MEMORY) if ln != EXPORT_ZH]
    want[want.index(EXPORT_EN)] = "- " + merged
    assert lines(out["MEMORY.md"]) == want


def test_consolidate_appends_to_the_section_or_creates_it():
    out = apply(Operation("consolidate", "MEMORY.md", text="[P1] Notion sync hourly", section="projects"),
                reader({"MEMORY.md": MEMORY}))
    got = lines(out["MEMORY.md"])
    assert got[got.index("- [P1] Blog runs on Astro (2026-08-15)") + 1] == "- [P1] Notion sync hourly"
    out = apply(Operation("consolidate", "MEMORY.md", text="uses helix", section="Editors"),
                reader({"MEMORY.md": MEMORY}))
    assert out["MEMORY.md"] == MEMORY + b"\n## Editors\n\n- uses helix\n"
    out = apply(Operation("consolidate", "USER.md", text="prefers uv", section="Preferences"), reader({}))
    assert out["USER.md"] == b"## Preferences\n\n- prefers uv\n"


def test_move_entries_appends_them_to_the_destination():
    files = {"MEMORY.md": MEMORY, "memory/archive.md": b"# Archive"}
    out = apply(Operation("move", "MEMORY.md", (TUNNEL,), dest="memory/archive.md"), reader(files))
    assert TUNNEL not in out["MEMORY.md"].decode()
    assert out["memory/archive.md"] == ("# Archive\n" + TUNNEL + "\n").encode()
    out = apply(Operation("move", "MEMORY.md", (TUNNEL,), dest="memory/new.md", text="## 2026-11\n" + TUNNEL),
                reader(files))
    assert out["memory/new.md"] == ("## 2026-11\n" + TUNNEL + "\n").encode()


def test_move_a_whole_file():
    files = {"memory/2026-01-01.md": b"log\n"}
    out = apply(Operation("move", "memory/2026-01-01.md", dest="memory/archive-2026-01/2026-01-01.md"),
                reader(files))
    assert out == {"memory/2026-01-01.md": None, "memory/archive-2026-01/2026-01-01.md": b"log\n"}
    with pytest.raises(ConflictError, match="already exists"):
        apply(Operation("move", "memory/2026-01-01.md", dest="memory/2026-01-01.md"), reader(files))
    with pytest.raises(ConflictError, match="no longer exists"):
        apply(Operation("move", "memory/gone.md", dest="x.md"), reader(files))


def test_a_changed_or_vanished_target_is_a_conflict():
    changed = MEMORY.replace(b"Cockpit v1 \xe5\xbe\x85 push", b"Cockpit v1 shipped")
    with pytest.raises(ConflictError, match="changed or vanished"):
        apply(Operation("prune", "MEMORY.md", (COCKPIT,)), reader({"MEMORY.md": changed}))
    twice = MEMORY + (TUNNEL + "\n").encode()
    with pytest.raises(ConflictError, match="2 times"):
        apply(Operation("prune", "MEMORY.md", (TUNNEL,)), reader({"MEMORY.md": twice}))
    with pytest.raises(ConflictError, match="no longer exists"):
        apply(Operation("prune", "MEMORY.md", (TUNNEL,)), reader({}))


def test_a_target_must_match_a_whole_entry_not_a_substring():
    with pytest.raises(ConflictError):
        apply(Operation("prune", "MEMORY.md", ("Cloudflare tunnel",)), reader({"MEMORY.md": MEMORY}))


def test_no_operation_touches_p0_or_protected_entries_unless_the_caller_allows_it():
    # the record's origin is no pass: "manual" is what anyone crafting a record would write
    for origin in ("offline", "anthropic", "manual"):
        with pytest.raises(ConflictError, match="P0"):
            apply(Operation("prune", "MEMORY.md", (HOST,), origin=origin), reader({"MEMORY.md": MEMORY}))
        with pytest.raises(ConflictError, match="protected"):
            apply(Operation("prune", "MEMORY.md", (TUNNEL,), origin=origin), reader({"MEMORY.md": MEMORY}),
                  protected=("Notes",))
        with pytest.raises(ConflictError, match="protected"):
            apply(Operation("consolidate", "MEMORY.md", text="x", section="Notes", origin=origin),
                  reader({"MEMORY.md": MEMORY}), protected=("Notes",))
    # the caller opts in (a person proposing it, or approving it by id with --allow-p0)
    assert HOST not in apply(Operation("prune", "MEMORY.md", (HOST,)),
                             reader({"MEMORY.md": MEMORY}), allow_p0=True)["MEMORY.md"].decode()
    assert apply(Operation("prune", "MEMORY.md", (HOST,), origin="offline"), reader({"MEMORY.md": MEMORY}),
                 allow_p0=True)


@pytest.mark.parametrize("op", [
    Operation("prune", "MEMORY.md"),
    Operation("refresh", "MEMORY.md", (COCKPIT,)),
    Operation("merge", "MEMORY.md", (COCKPIT,), text="x"),
    Operation("consolidate", "MEMORY.md", section="Projects"),
    Operation("move", "MEMORY.md"),
])
def test_incomplete_operations_are_clean_errors(op):
    with pytest.raises(MemgitError):
        apply(op, reader({"MEMORY.md": MEMORY}))


def test_unknown_kind_is_refused():
    with pytest.raises(MemgitError, match="unknown operation"):
        Operation("delete", "MEMORY.md")


def test_fingerprint_is_the_change_not_its_metadata():
    a = Operation("prune", "MEMORY.md", (TUNNEL,), reason="demo over", confidence=0.9, origin="offline",
                  evidence=(Evidence("memory/2026-11-12.md:3", "demo done"),), run="r1")
    b = Operation("prune", "MEMORY.md", (TUNNEL,), reason="other words")
    assert a.fingerprint == b.fingerprint and a.id == b.id and len(a.id) == 8
    assert Operation("prune", "USER.md", (TUNNEL,)).id != a.id
    r1 = Operation("refresh", "MEMORY.md", (COCKPIT,), text="new  text")
    r2 = Operation("refresh", "MEMORY.md", (COCKPIT,), text="new text")
    assert r1.fingerprint == r2.fingerprint  # whitespace in the new text is not a different change


def test_record_round_trips_through_a_dict():
    a = Operation("merge", "MEMORY.md", (EXPORT_EN, EXPORT_ZH), text="merged", section=None, confidence=0.82,
                  reason="duplicates", evidence=(Evidence("MEMORY.md:11", "To export"),), origin="offline",
                  run="2026-11-30T03:00", extra={"note": "kept"})
    d = a.to_dict()
    assert d["targets"] == [EXPORT_EN, EXPORT_ZH] and d["note"] == "kept"
    assert d["evidence"] == [{"source": "MEMORY.md:11", "quote": "To export"}]
    b = Operation.from_dict(d)
    assert b == a and b.extra == {"note": "kept"}


def test_titles_are_short_and_name_the_change():
    assert Operation("prune", "MEMORY.md", (TUNNEL,)).title.startswith("prune ")
    long = Operation("refresh", "MEMORY.md", (COCKPIT,), text="x" * 200).title
    assert len(long) < 80 and long.endswith("…")
    assert "Projects" in Operation("consolidate", "MEMORY.md", text="y", section="Projects").title
    assert "2 entries" in Operation("merge", "MEMORY.md", (COCKPIT, TUNNEL), text="z").title
    assert "archive" in Operation("move", "a.md", dest="archive/a.md").title


def test_consolidating_an_entry_that_is_already_there_changes_nothing():
    for text in ("[P2] To export the monthly report: Reports → Export (2026-10-01)",
                 "To export the monthly report:  Reports → Export"):
        out = apply(Operation("consolidate", "MEMORY.md", text=text, section="Notes"),
                    reader({"MEMORY.md": MEMORY}))
        assert out == {"MEMORY.md": MEMORY}


@pytest.mark.parametrize("bad", ["../evil.md", "/tmp/abs.md", ".git/hooks/post-commit",
                                 "memory/../../evil.md", "memory\\..\\evil.md", "memory//x.md", "./x.md"])
def test_paths_outside_the_workspace_are_refused(bad):
    files = {"memory/2026-01-01.md": b"log\n", bad: b"- a\n"}
    for op in (Operation("move", "memory/2026-01-01.md", dest=bad), Operation("move", bad, dest="memory/x.md"),
               Operation("consolidate", bad, text="x"), Operation("prune", bad, ("- a",))):
        with pytest.raises(MemgitError, match="outside the workspace"):
            apply(op, reader(files))
