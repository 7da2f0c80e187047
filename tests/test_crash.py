"""Crash safety: a kill at each point where memgit changes state loses nothing.

The points (MEMGIT_CRASH_AT=<name> makes the process exit hard there):
  snapshot:before-commit   an agent snapshot's commit is written, main not yet moved
  propose:before-refs      proposal objects written, no ref yet (dream, expire, janitor, propose)
  dream:before-propose     a dream has chosen its operations, nothing proposed yet
  dream:before-journal     proposals made, the dream's journal entry not yet written
  approve:before-refs      the merge commit is written, main not yet moved
  approve:after-refs       main, the proposal ref and the journal moved, the working tree not yet
  approve:after-worktree   everything done but the process has not returned
  revert:before-refs / revert:after-refs
After any of them: `git fsck` is clean, every proposal is fully applied (and
closed) or not applied (and open), the next command repairs the working tree
without discarding an agent's write, and a second `approve --all` ends in
exactly the memory an uninterrupted run gives.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgit import proposals
from memgit.adopt import init
from memgit.ops import Operation
from memgit.repo import CLOSED_PREFIX, PROPOSAL_PREFIX
from memgit.workspace import Workspace

MEMORY = """# MEMORY

## Environment [P0]
- Host: test box

## Projects [P1]
- [P1] Alpha v1 pending push (2026-05-01)
- [P1] Beta runs v0.3 (2026-05-02)
- [P1] Gamma dashboard on h1 (2026-05-03)

## Notes [P2]
""" + "".join(f"- [P2] note {i}: something worth keeping for a while (2026-04-{i + 1:02d})\n" for i in range(20))


def memgit(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memgit", "-C", str(root), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def setup(tmp_path: Path, n_extra: int = 0) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (root / "memgit.toml").write_text('[capacity]\n"MEMORY.md" = 100000\n')
    init(root)
    ws = Workspace(root)
    ops = [
        Operation("refresh", "MEMORY.md", ("- [P1] Alpha v1 pending push (2026-05-01)",),
                  text="[P1] Alpha v1 deployed (2026-05-30)"),
        Operation("prune", "MEMORY.md", ("- [P2] note 3: something worth keeping for a while (2026-04-04)",)),
        Operation("consolidate", "MEMORY.md", text="[P1] Delta runs on the NAS (2026-05-30)", section="Projects"),
    ]
    ops += [Operation("consolidate", "MEMORY.md", text=f"[P2] fact {i} learned (2026-05-30)", section="Notes")
            for i in range(n_extra)]
    proposals.create(ws, ops)
    return ws


def expected_after_all(ws: Workspace, tmp_path: Path) -> bytes:
    """The memory an uninterrupted `approve --all` gives, from a copy of the same repo."""
    twin = tmp_path / "twin"
    shutil.copytree(ws.root, twin, symlinks=True)
    assert memgit(twin, "approve", "--all").returncode == 0
    return (twin / "MEMORY.md").read_bytes()


def fsck_clean(root: Path) -> None:
    p = subprocess.run(["git", "fsck", "--no-progress", "--no-dangling"], cwd=root, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "error" not in p.stderr.lower() and "missing" not in p.stdout.lower()


def consistent(ws: Workspace) -> None:
    """Each proposal is either applied and closed, or not applied and open — never half."""
    open_ = set(ws.repo.refs(PROPOSAL_PREFIX.rstrip("/")))
    closed = set(ws.repo.refs(CLOSED_PREFIX.rstrip("/")))
    main_log = ws.repo.git("log", "--first-parent", "--format=%B", "main")
    for ref in open_:
        pid = ref.rsplit("/", 1)[1]
        assert f"Memgit-Proposal: {pid}" not in main_log, f"{pid} applied but still open"
        assert CLOSED_PREFIX + pid not in closed
    for ref in closed:
        pid = ref.rsplit("/", 1)[1]
        assert f"Memgit-Proposal: {pid}" in main_log, f"{pid} closed but not in main"


@pytest.mark.parametrize("point", ["approve:before-refs", "approve:after-refs", "approve:after-worktree",
                                   "snapshot:before-commit"])
def test_kill_during_approve(tmp_path, point):
    ws = setup(tmp_path)
    want = expected_after_all(ws, tmp_path)
    if point == "snapshot:before-commit":  # only reached when there is a live edit to snapshot
        with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as f:
            f.write("- [P2] agent wrote this before the crash (2026-05-31)\n")
        want = None
    p = memgit(ws.root, "approve", "--all", env={"MEMGIT_CRASH_AT": point})
    assert p.returncode == 137, p.stderr
    fsck_clean(ws.root)
    assert memgit(ws.root, "status").returncode == 0  # the next command repairs
    consistent(ws)
    # the agent writes while memgit is down
    with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- [P2] agent wrote this after the crash (2026-05-31)\n")
    p = memgit(ws.root, "approve", "--all")
    assert p.returncode == 0, p.stderr
    fsck_clean(ws.root)
    consistent(ws)
    assert proposals.list_proposals(ws) == []
    text = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "agent wrote this after the crash" in text
    in_main = ws.repo.read(ws.main(), "MEMORY.md").decode()
    # committed as a snapshot, or (when nothing was left to approve) still live, waiting for the next one
    assert in_main in (text, text.replace("- [P2] agent wrote this after the crash (2026-05-31)\n", ""))
    if want is not None:
        assert text.replace("- [P2] agent wrote this after the crash (2026-05-31)\n", "") == want.decode()
    else:
        assert "agent wrote this before the crash" in text
        for needle in ("Alpha v1 deployed", "Delta runs on the NAS"):
            assert needle in text
        assert "note 3:" not in text


@pytest.mark.parametrize("point", ["revert:before-refs", "revert:after-refs"])
def test_kill_during_revert(tmp_path, point):
    ws = setup(tmp_path)
    (p,) = [x for x in proposals.list_proposals(ws) if x.op.op == "refresh"]
    assert memgit(ws.root, "approve", p.id).returncode == 0
    r = memgit(ws.root, "revert", p.id, env={"MEMGIT_CRASH_AT": point})
    assert r.returncode == 137
    fsck_clean(ws.root)
    r = memgit(ws.root, "status")
    assert r.returncode == 0
    if point == "revert:before-refs":
        assert memgit(ws.root, "revert", p.id).returncode == 0
    # either way, one clean revert ends with the old entry back, in main and in the working tree
    text = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "Alpha v1 pending push" in text and "Alpha v1 deployed" not in text
    assert ws.repo.read(ws.main(), "MEMORY.md").decode() == text


@pytest.mark.parametrize("point", ["dream:before-propose", "propose:before-refs", "dream:before-journal"])
def test_kill_during_dream(tmp_path, point):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (root / "memory").mkdir()
    (root / "memory" / "2026-05-29.md").write_text("# 2026-05-29\n\n- 10:00 Alpha v1 pushed and deployed.\n")
    (root / "memory" / "2026-05-30.md").write_text("# 2026-05-30\n\n- 10:00 Upgraded Beta from v0.3 to v0.5.\n"
                                                   "- 11:00 Beta v0.5 stable.\n")
    init(root)
    ws = Workspace(root)
    main = ws.main()
    r = memgit(root, "dream", "--now", "2026-06-01", env={"MEMGIT_CRASH_AT": point})
    assert r.returncode == 137
    fsck_clean(root)
    assert ws.main() == main
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == MEMORY
    opened = len(proposals.list_proposals(ws))
    assert opened == (2 if point == "dream:before-journal" else 0)
    r = memgit(root, "dream", "--now", "2026-06-01")
    assert r.returncode == 0, r.stderr
    assert len(proposals.list_proposals(ws)) == 2  # never duplicated


def test_real_kill_9_during_approve_all(tmp_path):
    ws = setup(tmp_path, n_extra=40)
    want = expected_after_all(ws, tmp_path)
    total = len(proposals.list_proposals(ws))
    for delay in (0.6, 0.9, 1.3):
        proc = subprocess.Popen([sys.executable, "-m", "memgit", "-C", str(ws.root), "approve", "--all"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        fsck_clean(ws.root)
        assert memgit(ws.root, "status").returncode == 0  # the next command repairs
        consistent(ws)
        if not proposals.list_proposals(ws):
            break
    left = len(proposals.list_proposals(ws))
    assert left <= total
    r = memgit(ws.root, "approve", "--all")
    assert r.returncode == 0, r.stderr
    consistent(ws)
    assert proposals.list_proposals(ws) == []
    assert (ws.root / "MEMORY.md").read_bytes() == want
    assert ws.repo.read(ws.main(), "MEMORY.md") == want
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ws.root, capture_output=True, text=True).stdout
    assert "MEMORY.md" not in status


def test_lock_held_by_a_killed_process_is_released(tmp_path):
    ws = setup(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys,time; from pathlib import Path; from memgit.repo import Repo\n"
                               "with Repo(Path(sys.argv[1])).lock():\n print('held', flush=True); time.sleep(60)",
                               str(ws.root)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    r = memgit(ws.root, "approve", "--all", env={"MEMGIT_LOCK_TIMEOUT": "0.5"})
    assert r.returncode == 1 and "holds the lock" in r.stderr and "Traceback" not in r.stderr
    holder.kill()
    holder.wait()
    r = memgit(ws.root, "approve", "--all", env={"MEMGIT_LOCK_TIMEOUT": "5"})
    assert r.returncode == 0, r.stderr


def test_a_temp_file_left_by_a_crash_is_never_committed(tmp_path):
    ws = setup(tmp_path)
    (ws.root / ".MEMORY.md.memgit-4242.tmp").write_text("half-written\n")
    with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- [P2] a live agent edit (2026-05-31)\n")
    with ws.repo.lock():
        ws.prepare()
    files = ws.repo.list_files(ws.main())
    assert ".MEMORY.md.memgit-4242.tmp" not in files
    assert "a live agent edit" in ws.repo.read(ws.main(), "MEMORY.md").decode()


def test_own_ref_writes_respect_git_locks_and_compare_and_swap(tmp_path):
    from memgit.errors import ConflictError

    ws = setup(tmp_path)
    (p, *_) = proposals.list_proposals(ws)
    ref = PROPOSAL_PREFIX + "deadbeef"
    lock = ws.repo.git_dir / (ref + ".lock")
    lock.write_text("held by a git process\n")
    with pytest.raises(ConflictError):
        ws.repo.update_refs([(ref, p.commit, None)])
    assert ws.repo.ref(ref) is None and lock.exists()  # someone else's lock is never taken or removed
    assert not ws.repo.pending_intent()  # a refused transaction is not finished later
    lock.unlink()
    ws.repo.update_refs([(ref, p.commit, None)])
    assert ws.repo.ref(ref) == p.commit
    with pytest.raises(ConflictError):  # expected old value wrong: nothing moves
        ws.repo.update_refs([(ref, ws.main(), None), (PROPOSAL_PREFIX + "cafe0000", p.commit, None)])
    assert ws.repo.ref(ref) == p.commit and ws.repo.ref(PROPOSAL_PREFIX + "cafe0000") is None
    fsck_clean(ws.root)
    out = subprocess.run(["git", "for-each-ref", "--format=%(refname)", "refs/heads/memgit/"], cwd=ws.root,
                         capture_output=True, text=True).stdout
    assert ref in out


@pytest.mark.parametrize("command", ["expire", "janitor"])
@pytest.mark.parametrize("point", ["snapshot:before-commit", "propose:before-refs"])
def test_kill_during_expire_and_janitor(tmp_path, command, point):
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    events = "".join(f"- [P1] 2026-0{m}: release {m}.{d} shipped (2026-0{m}-{d:02d})\n" for m in (1, 2) for d in (3, 9))
    memory = MEMORY + "\n## Events [P1]\n" + events
    (root / "MEMORY.md").write_text(memory, encoding="utf-8")
    for day in ("2026-03-02", "2026-03-05", "2026-04-07"):
        (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n- 10:00 routine work on {day}.\n")
    (root / "memgit.toml").write_text('[capacity]\n"MEMORY.md" = 100000\n')
    init(root)
    ws = Workspace(root)
    logs_before = {p.name: p.read_bytes() for p in (root / "memory").glob("*.md")}
    if point == "snapshot:before-commit":
        with open(root / "MEMORY.md", "a", encoding="utf-8") as f:
            f.write("- [P2] the agent wrote this just now (2026-06-01)\n")
    r = memgit(root, command, "--now", "2026-06-01", env={"MEMGIT_CRASH_AT": point})
    assert r.returncode == 137, r.stderr
    fsck_clean(root)
    assert proposals.list_proposals(ws) == []
    r = memgit(root, command, "--now", "2026-06-01")
    assert r.returncode == 0, r.stderr
    fsck_clean(root)
    made = proposals.list_proposals(ws)
    assert made, f"{command} proposes once it can run to the end"
    assert memgit(root, "approve", "--all").returncode == 0
    after = {p.name: p.read_bytes() for p in root.rglob("memory/**/*.md") if p.parent.name.startswith("archive-")
             or p.parent.name == "memory"}
    assert sum(map(len, logs_before.values())) == sum(len(v) for k, v in after.items() if k in logs_before)
    if point == "snapshot:before-commit":
        assert "the agent wrote this just now" in (root / "MEMORY.md").read_text(encoding="utf-8")


# -- an agent's open handle across an approval; the index after a kill -----------------------------
AGENT = "- [P2] agent line {} through its open handle (2026-05-31)\n"


def agent_lines(text: str) -> list[int]:
    return [i for i in range(100) if AGENT.format(i) in text]


def test_an_append_through_a_handle_opened_before_an_approval_is_kept(tmp_path):
    ws = setup(tmp_path)
    want = expected_after_all(ws, tmp_path)
    with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as handle:  # the agent's log handle
        handle.write(AGENT.format(0))
        handle.flush()
        assert memgit(ws.root, "approve", "--all").returncode == 0
        for i in range(1, 4):
            handle.write(AGENT.format(i))
            handle.flush()
    text = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert agent_lines(text) == [0, 1, 2, 3]
    assert "".join(line for line in text.splitlines(True) if "open handle" not in line) == want.decode()
    with ws.repo.lock():
        ws.prepare()  # what every changing command does first: snapshot the late lines
    assert agent_lines(ws.repo.read(ws.main(), "MEMORY.md").decode()) == [0, 1, 2, 3]


@pytest.mark.parametrize("point", ["sync:before-rewrite", "sync:before-truncate", "approve:after-refs"])
def test_a_kill_while_rewriting_under_an_open_handle_loses_no_line(tmp_path, point):
    ws = setup(tmp_path)
    want = expected_after_all(ws, tmp_path)
    with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as handle:
        handle.write(AGENT.format(0))
        handle.flush()
        p = memgit(ws.root, "approve", "--all", env={"MEMGIT_CRASH_AT": point})
        assert p.returncode == 137, p.stderr
        handle.write(AGENT.format(1))
        handle.flush()
        assert memgit(ws.root, "status").returncode == 0  # the next command repairs
        handle.write(AGENT.format(2))
        handle.flush()
        assert memgit(ws.root, "approve", "--all").returncode == 0
        handle.write(AGENT.format(3))
        handle.flush()
    fsck_clean(ws.root)
    consistent(ws)
    text = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert agent_lines(text) == [0, 1, 2, 3], text
    assert "".join(line for line in text.splitlines(True) if "open handle" not in line) == want.decode()


@pytest.mark.parametrize("how", [("add", "MEMORY.md"), ("commit-a",)])
def test_a_hand_commit_after_a_kill_never_reverts_an_approval(tmp_path, how):
    ws = setup(tmp_path)
    p = memgit(ws.root, "approve", "--all", env={"MEMGIT_CRASH_AT": "approve:after-refs"})
    assert p.returncode == 137
    approved = ws.repo.read(ws.main(), "MEMORY.md").decode()
    gone = set(MEMORY.splitlines()) - set(approved.splitlines())  # what the approval that landed removed
    added = set(approved.splitlines()) - set(MEMORY.splitlines())
    assert gone or added
    # the person edits by hand and commits with plain git, no memgit command in between
    with open(ws.root / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- [P2] added by hand (2026-05-31)\n")

    def git(*args):
        r = subprocess.run(["git", *args], cwd=ws.root, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r

    if how[0] == "add":
        git("add", "MEMORY.md")
        r = git("commit", "-q", "-m", "hand edit")
    else:
        r = git("commit", "-q", "-a", "-m", "hand edit")
    assert "interrupted memgit command" in r.stderr
    committed = ws.repo.read(ws.main(), "MEMORY.md").decode()
    assert "added by hand" in committed
    assert not gone & set(committed.splitlines()) and added <= set(committed.splitlines())
    assert (ws.root / "MEMORY.md").read_text(encoding="utf-8") == committed
    assert memgit(ws.root, "status").returncode == 0
    consistent(ws)
    st = subprocess.run(["git", "status", "--porcelain"], cwd=ws.root, capture_output=True, text=True).stdout
    assert "MEMORY.md" not in st

def _disk_full(*_a, **_kw):
    import errno

    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch, where):
    from memgit import repo

    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"- old\n")
    monkeypatch.setattr(repo.os, where, _disk_full)
    with pytest.raises(OSError) as info:
        repo.atomic_write(path, b"- new\n")
    assert info.value.filename == str(path) and "No space" in info.value.strerror
    assert path.read_bytes() == b"- old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]


def test_a_failed_buffered_write_removes_its_temp_file(tmp_path, monkeypatch):
    import builtins

    from memgit import repo

    real_open = builtins.open

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, _data):
            _disk_full()

    monkeypatch.setattr(builtins, "open", lambda *a, **kw: Full(real_open(*a, **kw)))
    with pytest.raises(OSError):
        repo.atomic_write(tmp_path / "MEMORY.md", b"- new\n")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_disk_full_is_one_sentence_naming_the_real_file(tmp_path, monkeypatch, capsys):
    from memgit import cli, repo

    (tmp_path / "MEMORY.md").write_text("- a fact\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.setattr(repo.os, "fsync", _disk_full)
    monkeypatch.setattr(sys, "argv", ["memgit", "-C", str(tmp_path), "init"])
    with pytest.raises(SystemExit) as info:
        cli.main()
    err = capsys.readouterr().err
    assert info.value.code == 1 and "Traceback" not in err
    assert "(file)" not in err and str(tmp_path) in err and "free some disk space" in err
    assert err.count("\n") == 1 and not list(tmp_path.glob(".*.memgit-*.tmp"))
    assert cli.os_error_message(OSError(28, "No space left on device")) == \
        "No space left on device; free some disk space and retry."
