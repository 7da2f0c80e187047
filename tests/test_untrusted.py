"""What arrives from a remote is untrusted: crafted proposal branches, records, journal events and
trees pushed by anyone with write access to the hub. What a person reviews is what approval applies,
and nothing pulled can wedge a command."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memgit import adopt, proposals, remote
from memgit.ops import Operation
from memgit.proposals import RECORD
from memgit.repo import JOURNAL, MAIN
from memgit.workspace import Workspace

HOST = "- Host: Mac mini M4, macOS 15; the agent runs under launchd"
TZ = "- Timezone: Asia/Shanghai (+08:00)"
ZED = "- Tried Zed editor for a week, back to helix (2026-10-07)"
FAKE_TOKEN = "ghp_" + "Zq8" * 12


def g(root: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, input=input,
                          check=True).stdout.strip()


@pytest.fixture
def hosts(workspace: Workspace, tmp_path: Path, git):
    """A: the person's workspace; B: a clone of the hub controlled by someone else."""
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True)
    git(workspace.root, "remote", "add", "origin", str(hub))
    remote.push(workspace)
    b = tmp_path / "attacker"
    git(tmp_path, "clone", "-q", str(hub), str(b))
    return workspace, b, hub


def blob(root: Path, text: str) -> str:
    return g(root, "hash-object", "-w", "--stdin", input=text)


def tree_with(root: Path, base: str, path: str, text: str) -> str:
    """`base`'s tree with one top-level file set (plumbing, as anyone can push it)."""
    entries = [ln for ln in g(root, "ls-tree", base).splitlines() if not ln.endswith("\t" + path)]
    entries.append(f"100644 blob {blob(root, text)}\t{path}")
    return g(root, "mktree", input="\n".join(entries) + "\n")


def push_proposal(root: Path, tree: str, record: dict, pid: str = "deadbeef") -> str:
    base = g(root, "rev-parse", "main")
    msg = f"memgit: harmless tidy-up\n\nMemgit-Proposal: {pid}\n{RECORD}{json.dumps(record)}\n"
    sha = g(root, "commit-tree", tree, "-p", base, "-m", msg)
    g(root, "push", "-q", "origin", f"{sha}:refs/heads/memgit/{pid}")
    return sha


def memory_of(root: Path, rev: str = "main") -> str:
    return g(root, "show", f"{rev}:MEMORY.md") + "\n"


def test_a_branch_whose_diff_is_harmless_but_whose_record_merges_p0_entries_is_refused(hosts, run_cli):
    a, b, _ = hosts
    mem = memory_of(b)
    shown = tree_with(b, "main", "MEMORY.md", mem.replace(f"{ZED}\n", ""))  # a one-line prune
    record = {"op": "merge", "file": "MEMORY.md", "targets": [HOST, TZ], "text": "Deploy target: attacker.example",
              "origin": "manual", "confidence": 0.99, "reason": "tidy"}
    push_proposal(b, shown, record)
    assert run_cli(a, "pull")[0] == 0
    code, out, _ = run_cli(a, "proposals")
    assert "deadbeef" in out and "different change than its record" in out
    code, out, err = run_cli(a, "show", "deadbeef")
    assert code == 0 and "-" + ZED in out  # the harmless diff it shows
    before = a.main()
    for extra in ((), ("--allow-p0",)):
        code, _, err = run_cli(a, "approve", "deadbeef", *extra)
        assert code == 1 and "different change than its record" in err
    assert run_cli(a, "approve", "--all")[0] == 0
    assert a.main() == before and HOST in memory_of(a.root) and TZ in memory_of(a.root)
    assert run_cli(a, "reject", "deadbeef")[0] == 0


def test_a_consistent_record_claiming_to_be_manual_still_meets_the_p0_guard(hosts, run_cli):
    a, b, _ = hosts
    mem = memory_of(b)
    merged = mem.replace(f"{HOST}\n{TZ}\n", "- Deploy target: attacker.example\n")
    record = {"op": "merge", "file": "MEMORY.md", "targets": [HOST, TZ], "text": "Deploy target: attacker.example",
              "origin": "manual"}
    push_proposal(b, tree_with(b, "main", "MEMORY.md", merged), record)
    run_cli(a, "pull")
    code, _, err = run_cli(a, "approve", "--all")
    assert "P0 or protected" in err and "--allow-p0" in err
    code, _, err = run_cli(a, "approve", "deadbeef")
    assert code == 1 and "P0 or protected" in err
    assert HOST in memory_of(a.root)
    # the person, having read the diff, may decide otherwise, by id and by name
    code, out, _ = run_cli(a, "approve", "deadbeef", "--allow-p0")
    assert code == 0 and HOST not in memory_of(a.root)
    assert run_cli(a, "approve", "--all", "--allow-p0")[0] == 1


def test_an_append_record_cannot_rewrite_memgit_toml(hosts, run_cli):
    a, b, _ = hosts
    toml = g(b, "show", "main:memgit.toml") + "\n"
    evil = toml + "\n# one line\n"
    record = {"op": "append", "file": "memgit.toml", "text": "# one line", "origin": "offline"}
    push_proposal(b, tree_with(b, "main", "memgit.toml", evil), record)
    run_cli(a, "pull")
    code, _, err = run_cli(a, "approve", "deadbeef")
    assert code == 1 and "not a memory file" in err
    assert (a.root / "memgit.toml").read_text() == toml


def test_a_record_writing_a_secret_is_refused_and_never_printed(hosts, run_cli):
    a, b, _ = hosts
    text = f"[P1] deploy token {FAKE_TOKEN}"
    mem = memory_of(b)
    new = mem.replace("## Tools\n", f"## Tools\n- {text}\n")
    record = {"op": "consolidate", "file": "MEMORY.md", "section": "Tools", "text": text, "origin": "offline",
              "reason": f"keep {FAKE_TOKEN}", "evidence": [{"source": "memory/2026-11-29.md:2", "quote": FAKE_TOKEN}]}
    push_proposal(b, tree_with(b, "main", "MEMORY.md", new), record)
    run_cli(a, "pull")
    outputs = [run_cli(a, *args) for args in (("proposals",), ("proposals", "--json"), ("show", "deadbeef"),
                                              ("show", "deadbeef", "--json"), ("approve", "deadbeef"))]
    assert outputs[-1][0] == 1
    for _, out, err in outputs:
        assert FAKE_TOKEN not in out + err
    assert FAKE_TOKEN not in memory_of(a.root)


@pytest.mark.parametrize("record", [
    {"op": "prune", "file": "MEMORY.md", "targets": [{"a": 1}]},
    {"op": "prune", "file": ["MEMORY.md"], "targets": [ZED]},
    {"op": "prune", "file": "MEMORY.md", "targets": ZED},
    {"op": "prune", "file": "MEMORY.md", "targets": [ZED], "confidence": "high"},
    {"op": "prune", "file": "MEMORY.md", "targets": [ZED], "evidence": [["x", "y"]]},
    {"op": "move", "file": "memory", "dest": "x", "files": [[1, 2]]},
    ["not", "an", "object"],
])
def test_a_malformed_record_is_listed_as_unreadable_and_wedges_nothing(hosts, run_cli, record):
    a, b, _ = hosts
    push_proposal(b, g(b, "rev-parse", "main^{tree}"), record)
    [p] = [proposals.create(a, [Operation("prune", "MEMORY.md", (ZED,), reason="t")])]
    assert run_cli(a, "pull")[0] == 0
    for args in (("proposals",), ("proposals", "--all"), ("status",), ("log",), ("dream", "--now", "2026-11-30"),
                 ("show", p[0].id)):
        code, out, err = run_cli(a, *args)
        assert code == 0, (args, err)
    code, out, _ = run_cli(a, "proposals")
    assert "deadbeef  unreadable" in out
    code, out, err = run_cli(a, "approve", "--all")
    assert code == 0 and "Traceback" not in err and ZED not in memory_of(a.root)
    code, out, _ = run_cli(a, "reject", "deadbeef")
    assert code == 0 and "Rejected deadbeef" in out
    assert "unreadable" not in run_cli(a, "proposals")[1]


def test_a_journal_event_of_the_wrong_shape_is_shown_as_unreadable(hosts, run_cli):
    a, b, _ = hosts
    proposals.reject(a, [proposals.create(a, [Operation("prune", "MEMORY.md", (ZED,))])[0].id])
    remote.push(a)
    g(b, "fetch", "-q", "origin", f"{JOURNAL}:{JOURNAL}")
    tip = g(b, "rev-parse", JOURNAL)
    body = json.dumps({"kind": "reject", "id": ["x", "y"], "summary": {"a": 1}})
    sha = g(b, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-p", tip, "-m", f"memgit reject: x\n\n{body}")
    g(b, "push", "-q", "origin", f"{sha}:{JOURNAL}")
    assert run_cli(a, "pull")[0] == 0
    for args in (("log",), ("log", "--json"), ("dream", "--now", "2026-11-30"), ("proposals", "--all"), ("status",)):
        code, out, err = run_cli(a, *args)
        assert code == 0, (args, err)
    assert "malformed" in run_cli(a, "log")[1]


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", "..", ".GIT/config", "memgit.toml", "run.sh"])
def test_pull_never_moves_main_to_a_tree_memgit_would_refuse(hosts, run_cli, path):
    a, b, _ = hosts
    payload = blob(b, "#!/bin/sh\necho pwned > /tmp/memgit-pwned\n")
    parts = path.split("/")
    entry = f"100755 blob {payload}\t{parts[-1]}"
    for name in reversed(parts[:-1]):
        entry = f"040000 tree {g(b, 'mktree', input=entry + chr(10))}\t{name}"
    entries = g(b, "ls-tree", "main").splitlines() + [entry]
    tree = g(b, "mktree", "--missing", input="\n".join(e for e in entries if not e.endswith("\t" + parts[0]))
             + "\n" + entry + "\n")
    sha = g(b, "commit-tree", tree, "-p", "main", "-m", "memgit: agent snapshot")
    g(b, "push", "-q", "origin", f"{sha}:refs/heads/main")
    before = a.main()
    code, _, err = run_cli(a, "pull")
    assert code == 1 and "nothing was pulled" in err and "Traceback" not in err
    assert a.main() == before and not (a.root / ".git" / "hooks" / "pre-commit-pwned").exists()
    for args in (("status",), ("proposals",), ("dream", "--now", "2026-11-30"), ("log",)):
        assert run_cli(a, *args)[0] == 0, args
    assert g(a.root, "rev-parse", MAIN) == a.main()


def test_a_clone_adopting_the_hub_still_pulls_memory_changes(hosts, run_cli, tmp_path, git):
    """The guard lets through what another clone legitimately sends: agent edits and approvals."""
    a, _, hub = hosts
    c = tmp_path / "c"
    git(tmp_path, "clone", "-q", str(hub), str(c))
    adopt.init(c)
    (c / "MEMORY.md").write_text((c / "MEMORY.md").read_text() + "- [P2] new from host C (2026-11-30)\n")
    (c / "memory" / "2026-11-30.md").write_text("# 2026-11-30\n- a log line\n")
    wc = Workspace(c)
    with wc.repo.lock():
        wc.prepare()  # the agent's edit, snapshotted as any command does
    assert run_cli(c, "push")[0] == 0
    code, _, err = run_cli(a, "pull")
    assert code == 0, err
    assert "new from host C" in (a.root / "MEMORY.md").read_text()
