"""memgit.adopt and memgit.workspace: adopting folders and repos, hooks chained, agent snapshots,
keeping the working tree and main in step without losing an agent's write."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from conftest import MEMORY_MD, USER_MD, WORKSPACE_FILES, write_files

from memgit import journal, proposals
from memgit.adopt import CHAINED, HOOK_MARK, init
from memgit.errors import MemgitError
from memgit.ops import Operation
from memgit.workspace import Workspace, find_root

CONNECTION = "postgres://admin:S3cretPass@db.example.com:5432/prod"


def head(git, root: Path, ref: str = "refs/heads/main") -> str:
    return git(root, "rev-parse", ref).strip()


# -- init -----------------------------------------------------------------------------------------
def test_init_a_new_folder(tmp_path, git):
    write_files(tmp_path, WORKSPACE_FILES)
    (tmp_path / "memgit.toml").unlink()
    r = init(tmp_path)
    assert r.created_repo and r.wrote_config and r.hooks == ["pre-commit", "pre-push"] and r.commit
    assert r.warnings == []
    assert git(tmp_path, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert head(git, tmp_path) == r.commit
    tracked = set(git(tmp_path, "ls-files").split())
    assert tracked == {"MEMORY.md", "USER.md", "memgit.toml", "memory/2026-11-29.md",
                       "sessions/2026-11-29-a1.jsonl", ".gitattributes"}
    assert git(tmp_path, "status", "--porcelain") == ""
    assert (tmp_path / "memgit.toml").read_text().startswith("# memgit configuration")
    hook = tmp_path / ".git" / "hooks" / "pre-commit"
    assert HOOK_MARK in hook.read_text() and hook.stat().st_mode & stat.S_IXUSR


def test_init_keeps_an_existing_config_and_is_idempotent(workspace, git):
    before = head(git, workspace.root)
    r = init(workspace.root)
    assert not r.created_repo and not r.wrote_config and r.commit is None
    assert head(git, workspace.root) == before
    assert (workspace.root / "memgit.toml").read_text() == WORKSPACE_FILES["memgit.toml"]
    # the hook is not chained to itself on a second init
    hooks = workspace.root / ".git" / "hooks"
    assert not (hooks / ("pre-commit" + CHAINED)).exists()


def test_init_with_a_layout(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("# Project\n\n- uses uv\n", encoding="utf-8")
    init(tmp_path, layout="claude-code")
    ws = Workspace(tmp_path)
    assert ws.memory_files == ("CLAUDE.md",) and ws.config.budget("CLAUDE.md") == 40000
    with pytest.raises(MemgitError, match="unknown layout"):
        init(tmp_path, layout="nope")


def test_init_adopts_a_repo_with_history_on_another_branch(tmp_path, git):
    git(tmp_path, "init", "-q", "-b", "master")
    write_files(tmp_path, {"MEMORY.md": MEMORY_MD})
    git(tmp_path, "add", "MEMORY.md")
    git(tmp_path, "commit", "-q", "-m", "the agent's own first commit")
    first = head(git, tmp_path, "HEAD")
    write_files(tmp_path, {"USER.md": USER_MD})  # an untracked live file
    r = init(tmp_path)
    assert not r.created_repo and r.wrote_config
    assert git(tmp_path, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert head(git, tmp_path, "refs/heads/master") == first  # the old branch is untouched
    log = git(tmp_path, "log", "--format=%H %s", "main").splitlines()
    assert log[-1] == f"{first} the agent's own first commit"  # history kept, main grows from it
    assert set(git(tmp_path, "ls-files").split()) == {"MEMORY.md", "USER.md", "memgit.toml", ".gitattributes"}
    assert git(tmp_path, "status", "--porcelain") == ""


def test_init_refuses_when_another_branch_is_checked_out_and_main_exists(workspace, git):
    git(workspace.root, "checkout", "-q", "-b", "experiment")
    with pytest.raises(MemgitError, match="git checkout main"):
        init(workspace.root)


def test_init_chains_a_foreign_pre_commit_hook(tmp_path, git):
    git(tmp_path, "init", "-q", "-b", "main")
    hooks = tmp_path / ".git" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    foreign = '#!/bin/sh\necho "foreign hook ran" >> "$(git rev-parse --git-dir)/foreign.log"\n'
    (hooks / "pre-commit").write_text(foreign)
    (hooks / "pre-commit").chmod(0o755)
    write_files(tmp_path, {"MEMORY.md": MEMORY_MD})
    init(tmp_path)
    assert (hooks / ("pre-commit" + CHAINED)).read_text() == foreign  # kept byte for byte
    ours = (hooks / "pre-commit").read_text()
    assert HOOK_MARK in ours and "pre-commit" + CHAINED in ours
    init(tmp_path)  # a second init neither loses the foreign hook nor chains ours to itself
    assert (hooks / ("pre-commit" + CHAINED)).read_text() == foreign
    assert (hooks / "pre-commit").read_text() == ours
    (tmp_path / "MEMORY.md").write_text(MEMORY_MD + "- a harmless line\n", encoding="utf-8")
    git(tmp_path, "commit", "-q", "-am", "by hand")
    assert (tmp_path / ".git" / "foreign.log").read_text() == "foreign hook ran\n"


def test_a_failing_foreign_hook_still_blocks_the_commit(tmp_path, git):
    git(tmp_path, "init", "-q", "-b", "main")
    hooks = tmp_path / ".git" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\necho 'lint failed' >&2\nexit 7\n")
    (hooks / "pre-commit").chmod(0o755)
    write_files(tmp_path, {"MEMORY.md": MEMORY_MD})
    init(tmp_path)
    (tmp_path / "MEMORY.md").write_text(MEMORY_MD + "- harmless\n", encoding="utf-8")
    p = git(tmp_path, "commit", "-q", "-am", "by hand", check=False)
    assert p.returncode != 0 and "lint failed" in p.stderr


@pytest.mark.parametrize("existing_repo", [False, True])
def test_adopting_a_secret_warns_with_file_line_kind_never_the_value(tmp_path, git, existing_repo):
    memory = MEMORY_MD + f"- prod db: {CONNECTION}\n"
    write_files(tmp_path, {"MEMORY.md": memory, "USER.md": USER_MD})
    if existing_repo:
        git(tmp_path, "init", "-q", "-b", "trunk")
        git(tmp_path, "add", "-A")
        git(tmp_path, "commit", "-q", "-m", "before memgit")
    r = init(tmp_path)
    line = memory.splitlines().index(f"- prod db: {CONNECTION}") + 1
    assert any(w.startswith(f"MEMORY.md:{line}: connection string") for w in r.warnings), r.warnings
    assert len([w for w in r.warnings if w.startswith("MEMORY.md:")]) == 1
    assert not any("S3cretPass" in w for w in r.warnings)
    # adopted as it is: the user's bytes are committed, not refused
    assert Workspace(tmp_path).repo.read(head(git, tmp_path), "MEMORY.md") == memory.encode()


def test_init_cli_prints_the_warning_without_the_value(tmp_path, run_cli):
    write_files(tmp_path, {"MEMORY.md": f"# M\n\n- db {CONNECTION}\n"})
    code, out, err = run_cli(tmp_path, "init")
    assert code == 0, err
    assert "Initialised memgit workspace" in out
    assert "MEMORY.md:3: connection string" in err
    assert "S3cretPass" not in out + err


def test_init_of_a_missing_folder_is_a_clean_error(tmp_path):
    with pytest.raises(MemgitError, match="not a folder"):
        init(tmp_path / "nope")


# -- workspace basics -----------------------------------------------------------------------------
def test_open_finds_the_root_from_a_subfolder(workspace):
    assert Workspace.open(workspace.root / "memory").root == workspace.root
    assert find_root(workspace.root / "memory") == workspace.root


def test_open_outside_a_workspace_is_a_clean_error(tmp_path):
    with pytest.raises(MemgitError, match="memgit init"):
        Workspace.open(tmp_path)


def test_documents_and_capacity(workspace):
    docs = workspace.documents()
    assert set(docs) == {"MEMORY.md", "USER.md"}
    assert workspace.document("MEMORY.md").to_bytes() == MEMORY_MD.encode()
    caps = {c.file: c for c in workspace.capacity()}
    assert caps["MEMORY.md"].chars == len(MEMORY_MD) and caps["MEMORY.md"].budget == 4000
    assert caps["MEMORY.md"].to_dict()["pct"] == round(100 * len(MEMORY_MD) / 4000, 1)
    (workspace.root / "MEMORY.md").write_text(MEMORY_MD + "- live\n", encoding="utf-8")
    live = {c.file: c.chars for c in workspace.capacity(live=True)}
    assert live["MEMORY.md"] == len(MEMORY_MD) + len("- live\n")


def test_check_memory_file_refuses_other_paths(workspace):
    assert workspace.check_memory_file("USER.md") == "USER.md"
    for bad in ("../x", "memory/2026-11-29.md", "/etc/passwd", "NOPE.md"):
        with pytest.raises(MemgitError, match="not a memory file"):
            workspace.check_memory_file(bad)


def test_a_broken_memory_file_is_a_warning_not_a_crash(workspace, git):
    (workspace.root / "USER.md").write_bytes(b"\xff\xfe broken")
    with workspace.repo.lock():
        workspace.prepare()
    docs = workspace.documents()
    assert set(docs) == {"MEMORY.md"}
    assert any("USER.md" in w and "UTF-8" in w for w in workspace.warnings)


# -- snapshots and sync ---------------------------------------------------------------------------
def test_prepare_snapshots_live_edits_and_nothing_else(workspace, git):
    root = workspace.root
    before = head(git, root)
    with workspace.repo.lock():
        workspace.prepare()
    assert head(git, root) == before  # no change, no commit
    (root / "MEMORY.md").write_text(MEMORY_MD + "- [P2] live agent note (2026-11-30)\n", encoding="utf-8")
    (root / "memory" / "2026-11-30.md").write_text("# 2026-11-30\n- new log\n", encoding="utf-8")
    with workspace.repo.lock():
        workspace.prepare()
    after = head(git, root)
    assert after != before
    assert git(root, "rev-parse", f"{after}^").strip() == before
    assert "Memgit-Snapshot: 2 file(s)" in git(root, "log", "-1", "--format=%B", after)
    assert git(root, "status", "--porcelain") == ""
    kinds = [e.kind for e in journal.events(workspace.repo)]
    assert kinds[0] == "snapshot"


def test_a_snapshot_of_a_secret_warns_and_is_never_refused(workspace, git):
    root = workspace.root
    (root / "MEMORY.md").write_text(MEMORY_MD + f"- db: {CONNECTION}\n", encoding="utf-8")
    with workspace.repo.lock():
        sha = workspace.snapshot()
    assert sha and workspace.repo.read(sha, "MEMORY.md").decode().endswith(CONNECTION + "\n")
    line = len(MEMORY_MD.splitlines()) + 1
    assert [w for w in workspace.warnings if w.startswith("MEMORY.md:")] == [
        (f"MEMORY.md:{line}: connection string with credentials: sensitive data in memory; "
        f"the next dream proposes removing it.")]


def test_prepare_refuses_another_branch_checked_out(workspace, git):
    git(workspace.root, "checkout", "-q", "-b", "elsewhere")
    with pytest.raises(MemgitError, match="git checkout main"), workspace.repo.lock():
        workspace.prepare()


def test_sync_worktree_keeps_the_agent_write_on_a_conflict(workspace, git):
    root = workspace.root
    cockpit = "- [P1] Cockpit v1 待 push，侧栏的 UI bug 修完就上 (2026-11-02)"
    [p] = proposals.create(workspace, [Operation("refresh", "MEMORY.md", (cockpit,), text="[P1] Cockpit v1 shipped")])
    old_main = head(git, root)
    # main moves without the working tree (as if a crash happened between the ref and the file)
    from memgit.repo import MAIN

    workspace.repo.update_refs([(MAIN, p.commit, old_main)])
    agent = MEMORY_MD.replace(cockpit, "- [P1] Cockpit v1 is blocked on review (2026-11-29)")
    (root / "MEMORY.md").write_text(agent, encoding="utf-8")
    workspace.sync_worktree()
    data = (root / "MEMORY.md").read_text(encoding="utf-8")
    # the agent's write survives (kept as it is, or beside the approved change); the user is told
    assert "- [P1] Cockpit v1 is blocked on review (2026-11-29)" in data
    assert all(ln in data.splitlines() for ln in agent.splitlines() if ln)
    assert any(w.startswith("MEMORY.md: the agent") for w in workspace.warnings), workspace.warnings


def test_sync_worktree_applies_a_missed_update(workspace, git):
    root = workspace.root
    tunnel = "- [P2] Temporary: Cloudflare tunnel for the demo on 2026-11-10 (2026-11-09)"
    [p] = proposals.create(workspace, [Operation("prune", "MEMORY.md", (tunnel,))])
    from memgit.repo import MAIN

    workspace.repo.update_refs([(MAIN, p.commit, head(git, root))])
    # the agent appended to the other end of the file meanwhile: a clean three-way merge
    (root / "MEMORY.md").write_text(MEMORY_MD + "- agent line\n", encoding="utf-8")
    assert workspace.sync_worktree() == []
    data = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert tunnel not in data and data.endswith("- agent line\n")
    assert workspace.synced() == p.commit


def test_atomic_write_keeps_the_file_mode(tmp_path):
    from memgit.repo import atomic_write

    f = tmp_path / "MEMORY.md"
    f.write_text("old")
    os.chmod(f, 0o600)
    atomic_write(f, b"new")
    assert f.read_bytes() == b"new" and stat.S_IMODE(f.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


BENCH_CASES = sorted(p.name for p in (Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "dev").glob("*") if p.is_dir()) or ["absent"]


@pytest.mark.parametrize("name", BENCH_CASES)
def test_bench_workspaces_adopt_round_trip_and_take_a_manual_prune(bench_case, git, name):
    """Every bench workspace: adopted cleanly, each memory file parses and writes back byte for byte,
    and a person's prune of its last entry goes through proposal and approval touching only that entry."""
    ws = bench_case(name, init=True)
    assert git(ws.root, "status", "--porcelain") == ""
    docs = ws.documents()
    assert "MEMORY.md" in docs and ws.warnings == []
    for doc_name, doc in docs.items():
        assert doc.to_bytes() == (ws.root / doc_name).read_bytes()
    doc = docs["MEMORY.md"]
    last = doc.entries[-1]
    [p] = proposals.create(ws, [Operation("prune", "MEMORY.md", (last.text,))])
    assert proposals.approve(ws, [p.id], allow_p0=True).approved  # a person's own prune, approved by id
    before = doc.to_bytes().decode("utf-8").splitlines(keepends=True)
    after = (ws.root / "MEMORY.md").read_bytes().decode("utf-8").splitlines(keepends=True)
    assert after == before[:last.start] + before[last.end:]


def test_uncommitted_lists_changed_untracked_and_renamed_paths_as_they_are(workspace, git):
    assert workspace.repo.uncommitted() == []
    (workspace.root / "memory" / "周报 2026-11.md").write_text("- 本周\n", encoding="utf-8")
    (workspace.root / "MEMORY.md").write_text(MEMORY_MD + "- live\n", encoding="utf-8")
    git(workspace.root, "mv", "USER.md", "USER 2.md")
    assert sorted(workspace.repo.uncommitted()) == ["MEMORY.md", "USER 2.md", "memory/周报 2026-11.md"]
