"""[agent] direct_writes = false: the agent's own edits to memory files wait for review as proposals;
its live file keeps the edit, and approve / reject settle it as any other proposal."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MEMGIT_TOML, WORKSPACE_FILES, write_files
from memgit import proposals
from memgit.adopt import init
from memgit.workspace import Workspace

NEW = "- [P1] Cockpit v2 kickoff is on 2026-12-08 with the whole team (2026-12-01)"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    write_files(root, {**WORKSPACE_FILES, "memgit.toml": MEMGIT_TOML + "\n[agent]\ndirect_writes = false\n"})
    init(root)
    return Workspace(root)


def edits(run_cli, ws) -> list[dict]:
    code, out, err = run_cli(ws, "proposals", "--json")
    assert code == 0, err
    return [d for d in json.loads(out) if d["op"] == "edit"]


def main_text(ws) -> str:
    return ws.repo.read(ws.main(), "MEMORY.md").decode()


def test_an_agent_edit_becomes_a_proposal_and_approve_applies_it(ws, run_cli):
    mem = ws.root / "MEMORY.md"
    agent = mem.read_text().replace("## Tools\n", f"## Tools\n{NEW}\n")
    mem.write_text(agent)
    log = ws.root / "memory" / "2026-12-01.md"
    log.write_text("# 2026-12-01\n\n- 10:00 planned the Cockpit v2 kickoff\n")
    before = ws.main()
    code, out, err = run_cli(ws, "dream", "--now", "2026-12-01")  # any command that reads memory snapshots
    assert code == 0, err
    [e] = edits(run_cli, ws)
    assert e["file"] == "MEMORY.md" and e["origin"] == "agent"
    assert NEW not in main_text(ws)                        # main waits for review …
    assert ws.repo.read(ws.main(), "memory/2026-12-01.md")  # … while the log is committed as before
    assert ws.main() != before
    assert mem.read_text() == agent                        # the agent's file is untouched
    code, out, err = run_cli(ws, "show", e["id"])
    assert code == 0 and f"+{NEW}" in out
    code, out, err = run_cli(ws, "approve", e["id"])
    assert code == 0, err
    assert NEW in main_text(ws) and mem.read_text() == agent
    code, out, err = run_cli(ws, "dream", "--now", "2026-12-01")
    assert edits(run_cli, ws) == []  # settled: nothing proposed again


def test_a_rejected_edit_leaves_main_and_returns_the_file_to_it(ws, run_cli):
    mem = ws.root / "MEMORY.md"
    original = mem.read_text()
    mem.write_text(original.replace("- Timezone: Asia/Shanghai (+08:00)\n", "").replace("## Tools\n", f"## Tools\n{NEW}\n"))
    assert run_cli(ws, "dream", "--now", "2026-12-01")[0] == 0
    [e] = edits(run_cli, ws)
    # the edit drops a P0 line: approving it needs a person's explicit --allow-p0
    code, out, err = run_cli(ws, "approve", e["id"])
    assert code == 1 and "--allow-p0" in err
    code, out, err = run_cli(ws, "reject", e["id"], "--reason", "keep the timezone")
    assert code == 0, err
    assert main_text(ws) == original and mem.read_text() == original
    assert run_cli(ws, "dream", "--now", "2026-12-01")[0] == 0
    assert edits(run_cli, ws) == []


def test_a_later_edit_supersedes_the_earlier_one(ws, run_cli):
    mem = ws.root / "MEMORY.md"
    original = mem.read_text()
    mem.write_text(original + NEW + "\n")
    assert run_cli(ws, "dream", "--now", "2026-12-01")[0] == 0
    [first] = edits(run_cli, ws)
    mem.write_text(original + NEW + "\n- [P2] and one more thing (2026-12-01)\n")
    assert run_cli(ws, "dream", "--now", "2026-12-01")[0] == 0
    [second] = edits(run_cli, ws)
    assert second["id"] != first["id"]
    assert proposals.closed_states(ws)[first["id"]]["reason"].startswith("superseded")
    assert run_cli(ws, "approve", second["id"])[0] == 0
    assert main_text(ws) == mem.read_text()


def test_direct_writes_on_commits_agent_edits_to_main_as_before(tmp_path, run_cli):
    root = tmp_path / "on"
    root.mkdir()
    write_files(root, WORKSPACE_FILES)
    init(root)
    ws = Workspace(root)
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + NEW + "\n")
    assert run_cli(ws, "dream", "--now", "2026-12-01")[0] == 0
    assert NEW in main_text(ws) and edits(run_cli, ws) == []
