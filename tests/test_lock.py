"""The repo lock: a second memgit process waits for it or fails with a clean LockError, and a holder
killed with SIGKILL never leaves it stuck."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from memgit.errors import LockError
from memgit.repo import Repo

HOLDER = """\
import sys
from memgit.repo import Repo
with Repo(sys.argv[1]).lock():
    print("held", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


@pytest.fixture
def holder(workspace):
    """Start a process holding the workspace's lock; yields the Popen, ends it afterwards."""
    procs = []

    def start() -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-c", HOLDER, str(workspace.root)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        procs.append(p)
        assert p.stdout.readline().strip() == "held"
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


def test_a_second_process_fails_with_a_clean_lock_error(workspace, holder, run_cli, git):
    h = holder()
    before = git(workspace.root, "for-each-ref")
    code, out, err = run_cli(workspace, "propose", "prune", "MEMORY.md", "--entry", "Tried Zed")
    assert code == 1 and out == ""
    assert err.startswith("Error: another memgit process holds the lock on ")
    assert f"pid {h.pid}" in err and "retry" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert git(workspace.root, "for-each-ref") == before


def test_lock_error_in_process(workspace, holder):
    holder()
    with pytest.raises(LockError, match="wait for it to finish"), Repo(workspace.root).lock(timeout=0.2):
        pass


def test_a_second_process_waits_for_the_lock(workspace, holder, run_cli):
    h = holder()
    cmd = [sys.executable, "-m", "memgit", "-C", str(workspace.root), "propose", "prune", "MEMORY.md",
           "--entry", "Tried Zed"]
    waiting = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "MEMGIT_LOCK_TIMEOUT": "60"})
    try:
        time.sleep(1.0)
        assert waiting.poll() is None  # still waiting for the holder
        h.stdin.write("\n")
        h.stdin.flush()
        assert h.stdout.readline().strip() == "released"
        out, err = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 0, err
    assert out.startswith("Proposed ")


def test_a_killed_holder_does_not_leave_the_lock_stuck(workspace, holder, run_cli):
    h = holder()
    os.kill(h.pid, signal.SIGKILL)
    h.wait(timeout=10)
    assert (workspace.root / ".git" / "memgit.lock").exists()  # the file stays; the lock does not
    code, _out, err = run_cli(workspace, "propose", "prune", "MEMORY.md", "--entry", "Tried Zed")
    assert code == 0, err
    with Repo(workspace.root).lock(timeout=0):
        pass


def test_the_lock_is_released_after_an_error_inside(workspace):
    repo = Repo(workspace.root)
    with pytest.raises(RuntimeError), repo.lock():
        raise RuntimeError("boom")
    with repo.lock(timeout=0):
        pass
