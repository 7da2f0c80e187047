"""Concurrency: two dreams at once, an agent writing during a dream and before approve,
a cron dream while a person approves. Every write survives; nothing is proposed twice."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from memgit import proposals
from memgit.adopt import init
from memgit.workspace import Workspace

MEMORY = """# MEMORY

## Environment [P0]
- Host: test box

## Projects [P1]
- [P1] Alpha v1 pending push (2026-05-01)
- [P1] Beta runs v0.3 (2026-05-02)

## Notes [P2]
- [P2] something to keep (2026-05-03)
"""


def start(root: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "memgit", "-C", str(root), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "MEMGIT_LOCK_TIMEOUT": "60",
                                                                     **(env or {})})


def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (root / "memory" / "2026-05-29.md").write_text("# 2026-05-29\n\n- 10:00 Alpha v1 pushed and deployed.\n")
    (root / "memory" / "2026-05-30.md").write_text("# 2026-05-30\n\n- 10:00 Upgraded Beta from v0.3 to v0.5.\n"
                                                   "- 11:00 Beta v0.5 stable.\n")
    init(root)
    return Workspace(root)


def test_two_dreams_at_once_never_duplicate(tmp_path):
    ws = workspace(tmp_path)
    procs = [start(ws.root, "dream", "--now", "2026-06-01") for _ in range(3)]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    for _out, err, code in results:
        assert code == 0 or "holds the lock" in err, err
        assert "Traceback" not in err
    ids = [p.id for p in proposals.list_proposals(ws)]
    assert len(ids) == len(set(ids)) == 2
    branches = subprocess.run(["git", "branch", "--list", "memgit/*"], cwd=ws.root, capture_output=True,
                              text=True).stdout.split()
    assert len(branches) == 2


class Agent(threading.Thread):
    """Appends a line to MEMORY.md every few milliseconds, as a live agent would."""

    def __init__(self, path: Path, tag: str):
        super().__init__(daemon=True)
        self.path, self.tag, self.lines, self.stop = path, tag, [], threading.Event()

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            line = f"- [P2] {self.tag} note {i} (2026-05-31)\n"
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line)
            self.lines.append(line)
            i += 1
            time.sleep(0.01)


def test_agent_writes_during_dream_and_before_approve_all_survive(tmp_path):
    ws = workspace(tmp_path)
    agent = Agent(ws.root / "MEMORY.md", "during-dream")
    agent.start()
    p = start(ws.root, "dream", "--now", "2026-06-01")
    out, err = p.communicate(timeout=120)
    agent.stop.set()
    agent.join()
    assert p.returncode == 0, err
    assert len(proposals.list_proposals(ws)) == 2
    # and between dream and approve, and during approve
    agent2 = Agent(ws.root / "MEMORY.md", "during-approve")
    agent2.start()
    time.sleep(0.1)
    p = start(ws.root, "approve", "--all")
    out, err = p.communicate(timeout=120)
    time.sleep(0.1)
    agent2.stop.set()
    agent2.join()
    assert p.returncode == 0, err
    # one more command picks up whatever the agent wrote after approve's last snapshot
    assert subprocess.run([sys.executable, "-m", "memgit", "-C", str(ws.root), "dream", "--now", "2026-06-01"],
                          capture_output=True).returncode == 0
    text = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    for line in agent.lines + agent2.lines:
        assert line in text, f"lost the agent's write {line!r}"
    assert "Alpha v1 deployed" in text and "Beta runs v0.5" in text
    assert ws.repo.read(ws.main(), "MEMORY.md").decode() == text


def test_cron_dream_while_a_person_approves(tmp_path):
    ws = workspace(tmp_path)
    assert subprocess.run([sys.executable, "-m", "memgit", "-C", str(ws.root), "dream", "--now", "2026-06-01"],
                          capture_output=True).returncode == 0
    approve = start(ws.root, "approve", "--all")
    dream = start(ws.root, "dream", "--now", "2026-06-01")
    a_out, a_err = approve.communicate(timeout=120)
    d_out, d_err = dream.communicate(timeout=120)
    assert approve.returncode == 0, a_err
    assert dream.returncode == 0, d_err
    text = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "Alpha v1 deployed" in text and "Beta runs v0.5" in text
    assert "Alpha v1 pending push" not in text
    # the dream that ran beside the approval proposed nothing already done
    assert proposals.list_proposals(ws) == []
