"""memgit expire: old daily logs move to archive-YYYY-MM/ as renames (one proposal per month),
stale unreferenced P2 entries move to an archive file; all through proposals, against real repos."""
from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from memgit import proposals
from memgit.adopt import init
from memgit.errors import ConflictError, MemgitError
from memgit.lifecycle import priority
from memgit.lifecycle.expire import expire
from memgit.ops import Operation, apply
from memgit.workspace import Workspace

NOW = date(2026, 3, 20)

MEMORY_MD = """\
# MEMORY

## Environment [P0]
- Host: Mac mini M4, agent runs under launchd
- [P2] Old scratch note kept by hand on the host (2025-10-01)

## Agent Cases
- [P2] Case: the tunnel demo that failed twice (2025-11-02)

## Projects [P1]
- [P1] Cockpit v1 deployed on h1 (2025-12-02)

## Notes [P2]
- [P2] Tried Zed editor for a week, back to helix (2026-01-07)
- Benchmark: FastAPI cold start 1.8 s on h1, fine for now (2026-01-22)
- [P2] 想寫一個 reading tracker，還沒開始 (2026-01-18)
- [P2] Whisper large-v3 on the M4 is too slow for STT (2026-03-10)
- [P2] A note without any date
"""

LOGS = {
    "memory/2026-01-05.md": "# 2026-01-05\n\n- 09:00 Cockpit sidebar fixed\n",
    "memory/2026-01-20.md": "# 2026-01-20\n\n- 10:00 闲聊：周末可能去爬山。\n",
    "memory/2026-01-31.md": "# 2026-01-31\n\n- 11:00 Reviewed the gateway logs\n",
    "memory/2026-02-10.md": "# 2026-02-10\n\n- 12:00 Upgraded the indexer to v0.7\n",
    "memory/2026-02-28.md": "# 2026-02-28\n\n- 13:00 查了一下汇率，没变化。\n",
    "memory/2026-03-12.md": "# 2026-03-12\n\n- 14:00 The FastAPI cold start benchmark again: 1.8 s\n",
}

TOML = """\
[memory]
files = ["MEMORY.md"]
protected_sections = ["Agent Cases"]

[capacity]
"MEMORY.md" = 4000
"""


def make_ws(root: Path, files: dict[str, str], toml: str = TOML) -> Workspace:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in {**files, "memgit.toml": toml}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8"))
    init(root)
    return Workspace(root)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_ws(tmp_path / "ws", {"MEMORY.md": MEMORY_MD, **LOGS})


def rule(report, name):
    return [p for p in report.proposals if p["rule"] == name]


def tree(ws: Workspace, rev: str = "main") -> set[str]:
    return set(ws.repo.git("ls-tree", "-r", "--name-only", rev).split())


def log_bytes(ws: Workspace, rev: str) -> int:
    return sum(len(ws.repo.read(ws.repo.ref(rev), p)) for p in tree(ws, rev)
               if re.search(r"/\d{4}-\d{2}-\d{2}\.md$", p))


# -- (a) daily logs -------------------------------------------------------------------
def test_one_proposal_per_month_of_old_logs_made_of_pure_renames(ws: Workspace):
    main = ws.main()
    report = expire(ws, NOW)
    logs = rule(report, "logs")
    # cutoff 2026-02-18: January (3 logs) and 2026-02-10; 2026-02-28 and 2026-03-12 stay
    assert [(p["dest"], p["count"]) for p in logs] == [("memory/archive-2026-01", 3),
                                                      ("memory/archive-2026-02", 1)]
    assert ws.main() == main, "expire never writes main"
    for p in logs:
        status = ws.repo.git("diff", "-M", "--name-status", f"main...memgit/{p['id']}").splitlines()
        month = p["dest"][-7:]
        assert status and all(line.startswith("R100\t") for line in status), status
        for line in status:
            _, src, dst = line.split("\t")
            assert dst == f"memory/archive-{month}/{Path(src).name}"
            assert src[len("memory/"):].startswith(month)
        commit = ws.repo.ref(f"refs/heads/memgit/{p['id']}")
        assert ws.repo.info(commit).parents == (main,), "one commit on top of main"
    assert (ws.root / "memory" / "2026-01-05.md").exists(), "the working tree is not touched"


def test_approve_moves_the_logs_byte_identical_and_revert_brings_them_back(ws: Workspace):
    before = {rel: (ws.root / rel).read_bytes() for rel in LOGS}
    total = log_bytes(ws, "main")
    jan = rule(expire(ws, NOW), "logs")[0]
    result = proposals.approve(ws, [jan["id"]])
    assert [p.id for p in result.approved] == [jan["id"]] and not result.refused
    for rel in ("memory/2026-01-05.md", "memory/2026-01-20.md", "memory/2026-01-31.md"):
        moved = ws.root / "memory" / "archive-2026-01" / Path(rel).name
        assert not (ws.root / rel).exists()
        assert moved.read_bytes() == before[rel]
        assert ws.repo.read(ws.main(), f"memory/archive-2026-01/{Path(rel).name}") == before[rel]
    assert log_bytes(ws, "main") == total, "live plus archived log bytes never change"
    # git follows the file across the rename along main's approvals (first parents)
    hist = ws.repo.git("log", "--first-parent", "--follow", "--format=%s", "--",
                       "memory/archive-2026-01/2026-01-05.md").splitlines()
    assert hist[0].startswith(f"memgit: approve {jan['id']}") and hist[-1] == "memgit: adopt workspace"
    proposals.revert(ws, jan["id"])
    for rel, data in before.items():
        assert (ws.root / rel).read_bytes() == data
        assert ws.repo.read(ws.main(), rel) == data
    assert not any(p.startswith("memory/archive-2026-01/") for p in tree(ws))
    assert log_bytes(ws, "main") == total


def test_approving_everything_conserves_log_bytes_and_keeps_recent_logs(ws: Workspace):
    total = log_bytes(ws, "main")
    expire(ws, NOW)
    result = proposals.approve(ws, [])
    assert len(result.approved) == 3 and not result.refused
    names = tree(ws)
    assert {"memory/2026-02-28.md", "memory/2026-03-12.md"} <= names
    assert "memory/archive-2026-02/2026-02-10.md" in names
    assert log_bytes(ws, "main") == total
    assert [f.path for f in priority.log_files(ws, ws.main()) if not f.archived] == [
        "memory/2026-02-28.md", "memory/2026-03-12.md"]


def test_second_run_proposes_nothing_new_while_the_first_is_open(ws: Workspace):
    first = expire(ws, NOW)
    assert len(first.made) == 3
    again = expire(ws, NOW)
    assert again.made == [] and again.proposals == []
    assert len(proposals.list_proposals(ws)) == 3
    # a month later more of February is old: only the newly old log is proposed, no overlap
    later = expire(ws, date(2026, 4, 5))
    logs = rule(later, "logs")
    assert [(p["dest"], p["count"]) for p in logs] == [("memory/archive-2026-02", 1)]
    assert proposals.get(ws, logs[0]["id"]).op.extra["files"] == [
        ["memory/2026-02-28.md", "memory/archive-2026-02/2026-02-28.md"]]
    result = proposals.approve(ws, [])
    assert not result.refused and len(result.approved) == 4


def test_a_reverted_month_is_not_proposed_again(ws: Workspace):
    jan = rule(expire(ws, NOW), "logs")[0]
    proposals.approve(ws, [jan["id"]])
    proposals.revert(ws, jan["id"])
    again = expire(ws, NOW)
    assert [p["status"] for p in rule(again, "logs") if p["dest"].endswith("2026-01")] == ["known"]


def test_approve_refuses_cleanly_when_a_source_log_vanished(ws: Workspace):
    jan = rule(expire(ws, NOW), "logs")[0]
    (ws.root / "memory" / "2026-01-20.md").unlink()  # the agent removed it meanwhile
    result = proposals.approve(ws, [jan["id"]])
    assert result.approved == []
    assert result.refused == [(jan["id"], "memory/2026-01-20.md no longer exists; reject this proposal.")]
    assert proposals.get(ws, jan["id"]).status == "open"
    assert (ws.root / "memory" / "2026-01-05.md").exists()
    assert not any(p.startswith("memory/archive-2026-01") for p in tree(ws))


def test_a_log_whose_archive_copy_exists_is_left_with_a_warning(tmp_path: Path):
    files = {"MEMORY.md": MEMORY_MD, **LOGS,
             "memory/archive-2026-01/2026-01-05.md": "# an older copy\n"}
    ws = make_ws(tmp_path / "ws", files)
    report = expire(ws, NOW, dry_run=True)
    jan = [p for p in rule(report, "logs") if p["dest"].endswith("2026-01")]
    assert jan[0]["count"] == 2
    assert any("memory/2026-01-05.md is not archived" in w for w in report.warnings)


def test_archive_dir_setting_and_stray_files_are_respected(tmp_path: Path):
    toml = TOML.replace('protected_sections', 'archive_dir = "old"\nprotected_sections')
    files = {"MEMORY.md": MEMORY_MD, **LOGS, "memory/drafts/2026-01-02.md": "draft\n",
             "memory/2026-13-40.md": "not a date\n", "memory/notes.md": "x\n"}
    ws = make_ws(tmp_path / "ws", files, toml)
    report = expire(ws, NOW)
    assert [p["dest"] for p in rule(report, "logs")] == ["old/archive-2026-01", "old/archive-2026-02"]
    proposals.approve(ws, [])
    names = tree(ws)
    assert {"memory/drafts/2026-01-02.md", "memory/2026-13-40.md", "memory/notes.md"} <= names
    assert "old/archive-2026-01/2026-01-31.md" in names
    # archived logs still count as logs, for references and for the next run
    assert sum(f.archived for f in priority.log_files(ws, ws.main())) == 4


def test_dry_run_proposes_nothing(ws: Workspace):
    refs = ws.repo.git("for-each-ref")
    report = expire(ws, NOW, dry_run=True)
    assert {p["status"] for p in report.proposals} == {"dry-run"}
    assert len(report.proposals) == 3
    assert ws.repo.git("for-each-ref") == refs


# -- (b) P2 entries ---------------------------------------------------------------------
def test_stale_unreferenced_p2_entries_move_to_the_month_archive(ws: Workspace):
    report = expire(ws, NOW)
    (p2,) = rule(report, "p2-archive")
    assert p2["dest"] == "memory/archive-2026-03/MEMORY.archived.md"
    op = proposals.get(ws, p2["id"]).op
    assert op.targets == (
        "- [P2] Tried Zed editor for a week, back to helix (2026-01-07)",
        "- [P2] 想寫一個 reading tracker，還沒開始 (2026-01-18)",
    )
    # referenced on 2026-03-12 (FastAPI, cold start), too recent (Whisper), undated: all stay
    proposals.approve(ws, [p2["id"]])
    memory = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    archive = (ws.root / "memory/archive-2026-03/MEMORY.archived.md").read_text(encoding="utf-8")
    for t in op.targets:
        assert t not in memory and t in archive.splitlines()
    assert archive.startswith("## Notes (from MEMORY.md) [P2]\n")
    for kept in ("Benchmark: FastAPI cold start", "Whisper large-v3", "A note without any date"):
        assert kept in memory
    assert memory == MEMORY_MD.replace("- [P2] Tried Zed editor for a week, back to helix (2026-01-07)\n", "").replace(
        "- [P2] 想寫一個 reading tracker，還沒開始 (2026-01-18)\n", ""), "only the archived lines change"


def test_p0_and_protected_sections_are_never_touched(ws: Workspace):
    expire(ws, date(2027, 6, 1))   # everything is old and unreferenced by then
    proposals.approve(ws, [])
    memory = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    for line in MEMORY_MD.splitlines()[:9]:   # Environment [P0] and the protected Agent Cases
        assert line in memory.splitlines()
    assert "Old scratch note" in memory and "Case: the tunnel demo" in memory
    assert "Tried Zed" not in memory


def test_ops_refuse_an_automated_move_of_a_p0_entry():
    data = MEMORY_MD.encode()
    op = Operation("move", "MEMORY.md", ("- Host: Mac mini M4, agent runs under launchd",),
                   dest="memory/archive-2026-03/MEMORY.archived.md", origin="offline")
    with pytest.raises(ConflictError, match="P0 or protected"):
        apply(op, {"MEMORY.md": data}.get)


def test_a_p2_entry_holding_a_secret_is_not_archived(tmp_path: Path):
    secret = "- [P2] staging db password: hunter2-Xq9!zz (2026-01-03)\n"
    ws = make_ws(tmp_path / "ws", {"MEMORY.md": MEMORY_MD + secret, **LOGS})
    report = expire(ws, NOW)
    op = proposals.get(ws, rule(report, "p2-archive")[0]["id"]).op
    assert not any("hunter2" in t for t in op.targets)
    assert any("sensitive" in w for w in report.warnings)
    assert all("hunter2" not in json.dumps(p, ensure_ascii=False) for p in report.proposals)


# -- the multi-file move operation ---------------------------------------------------
FILES = [["memory/2026-01-05.md", "memory/archive-2026-01/2026-01-05.md"],
         ["memory/2026-01-20.md", "memory/archive-2026-01/2026-01-20.md"]]


def test_multi_file_move_applies_and_round_trips_through_its_record():
    op = Operation("move", "memory", dest="memory/archive-2026-01", origin="offline", extra={"files": FILES})
    files = {k: v.encode() for k, v in LOGS.items()}
    out = apply(op, files.get)
    assert out == {"memory/2026-01-05.md": None, "memory/archive-2026-01/2026-01-05.md": files[FILES[0][0]],
                   "memory/2026-01-20.md": None, "memory/archive-2026-01/2026-01-20.md": files[FILES[1][0]]}
    again = Operation.from_dict(json.loads(json.dumps(op.to_dict())))
    assert again.extra["files"] == FILES and again.fingerprint == op.fingerprint
    assert op.title == "move 2 files memory/ → memory/archive-2026-01/"
    other = op.with_(extra={"files": FILES[:1]})
    assert other.fingerprint != op.fingerprint
    # an op without files keeps the fingerprint it always had
    plain = Operation("move", "a.md", dest="b.md")
    assert plain.fingerprint == plain.with_(extra={"files": []}).fingerprint


@pytest.mark.parametrize("files, error", [
    ([["memory/2026-01-05.md", "memory/2026-01-20.md"]], ConflictError),      # destination exists
    ([["memory/2026-01-06.md", "memory/x.md"]], ConflictError),               # source vanished
    ([["../etc/passwd", "memory/x.md"]], MemgitError),
    ([["/abs.md", "memory/x.md"]], MemgitError),
    ([["memory/2026-01-05.md", ".git/hooks/x"]], MemgitError),
    ([["memory/2026-01-05.md"]], MemgitError),
    ([["memory/2026-01-05.md", "a.md"], ["memory/2026-01-05.md", "b.md"]], MemgitError),
])
def test_multi_file_move_refuses_bad_or_stale_records(files, error):
    op = Operation("move", "memory", dest="memory/archive", origin="offline", extra={"files": files})
    with pytest.raises(error):
        apply(op, {k: v.encode() for k, v in LOGS.items()}.get)


# -- the CLI ----------------------------------------------------------------------------
def test_cli_expire_json_and_dry_run(ws: Workspace, run_cli):
    code, out, err = run_cli(ws, "expire", "--now", NOW.isoformat(), "--dry-run", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["dry_run"] is True and len(data["proposals"]) == 3
    assert {"prepare", "plan", "propose", "total"} <= set(data["timings"])
    code, out, err = run_cli(ws, "expire", "--now", NOW.isoformat())
    assert code == 0, err
    assert "proposed 3 change(s)" in out and "move 3 files memory/ → memory/archive-2026-01/" in out
    code, out, err = run_cli(ws, "expire", "--now", "not-a-date")
    assert code == 1 and err.startswith("Error: --now")


def test_cli_help_has_an_example(run_cli):
    code, out, _ = run_cli(None, "expire", "--help")
    assert code == 0 and "Example: memgit expire" in out
