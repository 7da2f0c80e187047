"""Secrets in git history (issue: nothing memgit commits or pushes holds one): the clean filter, the
push scan and the pre-push hook, adoption's report of an old history, and `memgit scrub`."""
from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import MEMORY_MD

from memgit import adopt, leaks, proposals
from memgit.workspace import Workspace

TOKEN = "ghp_" + "Zq8Lm3" * 6
PASSWORD = "hunter2-Horse!9"


def g(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert not check or p.returncode == 0, p.stderr
    return p


def grep_all(root: Path, value: str) -> str:
    """Every ref's tree, every commit message: where `value` still stands (empty when nowhere)."""
    refs = g(root, "for-each-ref", "--format=%(refname)").stdout.split()
    hits = g(root, "grep", "-F", value, *refs, check=False).stdout if refs else ""
    msgs = g(root, "log", "--all", "--format=%B").stdout
    objects = g(root, "rev-list", "--all", "--objects").stdout.split("\n")
    blobs = [line.split()[0] for line in objects if line]
    out = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"], input=("\n".join(blobs) + "\n").encode(),
                         capture_output=True).stdout
    return hits + ("message" if value in msgs else "") + ("object" if value.encode() in out else "")


def test_logs_and_transcripts_go_into_git_redacted_and_stay_as_written(workspace: Workspace):
    root = workspace.root
    log = root / "memory" / "2026-11-30.md"
    log.write_text(f"# 2026-11-30\n- 10:00 set the deploy token {TOKEN}\n", encoding="utf-8")
    session = root / "sessions" / "s2.jsonl"
    session.write_text('{"role": "user", "text": "my NAS password: ' + PASSWORD + '"}\n', encoding="utf-8")
    before = {p: p.read_bytes() for p in (log, session)}
    with workspace.repo.lock():
        workspace.prepare()
    assert grep_all(root, TOKEN) == "" and grep_all(root, PASSWORD) == ""
    assert {p: p.read_bytes() for p in before} == before  # byte for byte what the agent wrote
    assert g(root, "status", "--porcelain").stdout == ""
    # a person's own `git add` goes through the same filter
    (root / "memory" / "2026-12-01.md").write_text(f"- token {TOKEN}\n", encoding="utf-8")
    g(root, "add", "memory/2026-12-01.md")
    g(root, "commit", "-q", "-m", "by hand")
    assert grep_all(root, TOKEN) == ""


def test_an_approved_secret_prune_says_rotate_and_scrub_and_push_waits_for_it(workspace: Workspace, run_cli,
                                                                              tmp_path):
    root = workspace.root
    (root / "MEMORY.md").write_text(MEMORY_MD + f"- [P2] GitHub token {TOKEN}\n", encoding="utf-8")
    code, out, err = run_cli(root, "dream", "--now", "2026-11-30")
    assert code == 0, err
    secret = [p for p in proposals.list_proposals(workspace) if p.op.op == "prune"
              and p.op.targets[0].startswith("sha256:")]
    assert len(secret) == 1
    code, _, err = run_cli(root, "approve", secret[0].id)
    assert code == 0 and "rotate" in err and "memgit scrub" in err and TOKEN not in err
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == MEMORY_MD
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True)
    g(root, "remote", "add", "origin", str(hub))
    code, _, err = run_cli(root, "push")
    assert code == 1 and "MEMORY.md" in err and TOKEN not in err  # the older commit still holds it
    assert run_cli(root, "scrub")[0] == 0
    assert run_cli(root, "push")[0] == 0
    assert grep_all(hub, TOKEN) == ""


def test_push_and_a_plain_git_push_refuse_a_commit_holding_a_secret(workspace: Workspace, tmp_path, run_cli):
    root = workspace.root
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True)
    g(root, "remote", "add", "origin", str(hub))
    assert run_cli(root, "push")[0] == 0
    # a secret committed around the filter (as an older memgit, or a hand commit with the filter off)
    g(root, "-c", "filter.memgit.process=", "-c", "filter.memgit.required=false", "add", "-f", "notes.md",
      check=False)
    (root / "notes.md").write_text(f"- {TOKEN}\n", encoding="utf-8")
    g(root, "-c", "filter.memgit.required=false", "-c", "filter.memgit.process=", "add", "notes.md")
    g(root, "commit", "-q", "--no-verify", "-m", "notes")
    code, _, err = run_cli(root, "push")
    assert code == 1 and "notes.md:1" in err and "GitHub" in err and TOKEN not in err
    p = g(root, "push", "origin", "main", check=False)
    assert p.returncode != 0 and "notes.md:1" in p.stderr and TOKEN not in p.stderr
    assert grep_all(hub, TOKEN) == ""


def test_adopting_a_history_that_holds_a_secret_names_it(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "MEMORY.md").write_text(f"# MEMORY\n- token {TOKEN}\n", encoding="utf-8")
    g(root.parent, "init", "-q", "-b", "main", str(root))
    g(root, "add", "-A")
    g(root, "commit", "-q", "-m", "agent's own")
    r = adopt.init(root)
    hits = [w for w in r.warnings if w.startswith("history:")]
    assert hits and "MEMORY.md:2" in hits[0] and "memgit scrub" in hits[0]
    assert not any(TOKEN in w for w in r.warnings)


def test_scrub_leaves_no_object_holding_the_secret_on_any_ref(tmp_path, run_cli):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "MEMORY.md").write_text("# MEMORY\n- [P2] one fact (2026-11-01)\n", encoding="utf-8")
    g(root.parent, "init", "-q", "-b", "main", str(root))
    notes = root / "memory" / "notes.md"
    notes.parent.mkdir()
    for i in range(5):  # five commits hold it, on two branches, before memgit came
        notes.write_text(f"- {i}: token {TOKEN}\n", encoding="utf-8")
        g(root, "add", "-A")
        g(root, "commit", "-q", "-m", f"c{i} {TOKEN if i == 2 else ''}")
        if i == 2:
            g(root, "branch", "side")
    g(root, "checkout", "-q", "side")
    (root / "side.md").write_text(f"NAS password: {PASSWORD}\n", encoding="utf-8")
    g(root, "add", "-A")
    g(root, "commit", "-q", "-m", "side")
    g(root, "checkout", "-q", "main")
    adopt.init(root)
    ws = Workspace(root)
    (root / "MEMORY.md").write_text("# MEMORY\n- [P2] one fact (2026-11-01)\n- [P2] two (2026-11-02)\n")
    code, out, _ = run_cli(root, "propose", "prune", "MEMORY.md", "--entry", "two (2026")
    assert code == 0
    live = notes.read_bytes()
    assert grep_all(root, TOKEN) and grep_all(root, PASSWORD)
    code, out, err = run_cli(root, "scrub", "--dry-run")
    assert code == 0 and "commit" in out and TOKEN not in out
    code, out, err = run_cli(root, "scrub")
    assert code == 0, err
    assert "rotate" in err
    assert grep_all(root, TOKEN) == "" and grep_all(root, PASSWORD) == ""
    assert g(root, "fsck", "--no-progress").returncode == 0
    assert notes.read_bytes() == live  # the working tree is never reset
    assert [p.title for p in proposals.list_proposals(ws)]  # the open proposal survived
    assert leaks.scan(ws, leaks.all_refs(ws)) == []
    assert run_cli(root, "status")[0] == 0


def test_scrub_refuses_when_the_commits_were_already_pushed(workspace: Workspace, tmp_path, run_cli):
    root = workspace.root
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True)
    g(root, "remote", "add", "origin", str(hub))
    g(root, "commit", "-q", "--allow-empty", "--no-verify", "-m", f"token {TOKEN}")
    g(root, "push", "-q", "--no-verify", "origin", "main")
    g(root, "fetch", "-q", "origin")
    code, _, err = run_cli(root, "scrub")
    assert code == 1 and "already pushed" in err and "rotate" in err
    code, _, err = run_cli(root, "scrub", "--pushed")
    assert code == 0, err
    assert TOKEN not in g(root, "log", "--all", "--format=%B").stdout


def test_the_filter_answers_git_hello_before_git_sends_its_capabilities(tmp_path):
    """git's filter-process client reads the server's hello before it writes anything more (a reply
    left in a buffer deadlocks `git add`): drive `memgit hook filter` in exactly that order."""
    import sys

    def pkt(b: bytes) -> bytes:
        return b"%04x" % (len(b) + 4) + b

    def read_list(out) -> list[bytes]:
        items = []
        while (head := out.read(4)) != b"0000":
            items.append(out.read(int(head, 16) - 4))
        return items

    p = subprocess.Popen([sys.executable, "-m", "memgit", "hook", "filter"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, cwd=tmp_path)
    try:
        p.stdin.write(pkt(b"git-filter-client\n") + pkt(b"version=2\n") + b"0000")
        p.stdin.flush()
        assert read_list(p.stdout) == [b"git-filter-server\n", b"version=2\n"]
        p.stdin.write(pkt(b"capability=clean\n") + pkt(b"capability=smudge\n") + b"0000")
        p.stdin.flush()
        assert read_list(p.stdout) == [b"capability=clean\n", b"capability=smudge\n"]
        body = f"- 10:00 token {TOKEN}\n".encode()
        p.stdin.write(pkt(b"command=clean\n") + pkt(b"pathname=memory/x.md\n") + b"0000" + pkt(body) + b"0000")
        p.stdin.flush()
        assert read_list(p.stdout) == [b"status=success\n"]
        assert b"".join(read_list(p.stdout)) == b"- 10:00 token [REDACTED]\n"
        assert read_list(p.stdout) == []
    finally:
        p.stdin.close()
        p.wait(timeout=10)


def test_the_pre_push_hook_chains_a_foreign_hook_and_both_read_the_refs(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True)
    g(root.parent, "init", "-q", "-b", "main", str(root))
    seen = tmp_path / "foreign.txt"
    hook = root / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\ncat > '{seen}'\nexit 0\n")
    hook.chmod(0o755)
    (root / "MEMORY.md").write_text("# MEMORY\n- [P2] a fact (2026-11-01)\n", encoding="utf-8")
    adopt.init(root)
    g(root, "remote", "add", "origin", str(hub))
    assert g(root, "push", "-q", "origin", "main", check=False).returncode == 0
    assert "refs/heads/main" in seen.read_text()  # the chained hook still got git's ref lines
    with open(root / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write(f"- token {TOKEN}\n")
    g(root, "commit", "-q", "--no-verify", "-am", "x")
    p = g(root, "push", "origin", "main", check=False)
    assert p.returncode != 0 and "MEMORY.md:3" in p.stderr and TOKEN not in p.stderr
