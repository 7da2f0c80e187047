"""The installed pre-commit hook: a hand-made commit adding a secret to a memory file is refused with
file, line and kind (never the value); --no-verify bypasses it; logs are not checked; memgit's own
snapshots are never refused."""
from __future__ import annotations

import pytest
from conftest import MEMORY_MD, USER_MD

from memgit import proposals
from memgit.adopt import check_staged
from memgit.ops import Operation

OPENAI = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
PASSWORD = "hunter2-Horse!9"
DSN_PASSWORD = "S3cretPass"
SECRETS = [
    (f"- OpenAI key for the briefing: {OPENAI}", "OpenAI API key", OPENAI),
    (f"- NAS admin password: {PASSWORD}", "password", PASSWORD),
    (f"- 行情库连接：postgres://quant:{DSN_PASSWORD}@10.0.0.5:5432/ticks", "connection string", DSN_PASSWORD),
]


def commit(git, root, *extra: str):
    return git(root, "commit", "-q", "-m", "by hand", *extra, check=False)


def unfiltered(git, root) -> None:
    """A repository where git's clean filter is not configured (a clone memgit has not adopted yet, or
    a person who removed it): the pre-commit hook is then the last guard."""
    git(root, "config", "--unset", "filter.memgit.process")
    git(root, "config", "filter.memgit.required", "false")


@pytest.mark.parametrize("line, kind, value", SECRETS)
def test_a_hand_made_commit_of_a_secret_in_a_log_stores_it_redacted(workspace, git, line, kind, value):
    """Logs and transcripts pass git's clean filter (memgit.gitfilter): stored redacted, kept as written."""
    root = workspace.root
    log = root / "memory" / "2026-11-30.md"
    text = f"# 2026-11-30\n{line}\n"
    log.write_text(text, encoding="utf-8")
    git(root, "add", "memory/2026-11-30.md")
    p = commit(git, root)
    assert p.returncode == 0, p.stderr
    stored = git(root, "show", "HEAD:memory/2026-11-30.md")
    assert value not in stored and "[REDACTED]" in stored
    assert log.read_text(encoding="utf-8") == text  # the file stays as written
    assert value not in git(root, "log", "-p", "--all")


@pytest.mark.parametrize("line, kind, value", SECRETS)
def test_a_hand_made_commit_adding_a_secret_is_refused(workspace, git, line, kind, value):
    root = workspace.root
    unfiltered(git, root)
    text = MEMORY_MD.replace("## Notes [P2]\n", "## Notes [P2]\n" + line + "\n")
    (root / "MEMORY.md").write_text(text, encoding="utf-8")
    git(root, "add", "MEMORY.md")
    head = git(root, "rev-parse", "HEAD")
    p = commit(git, root)
    assert p.returncode != 0
    lineno = text.splitlines().index(line) + 1
    assert f"MEMORY.md:{lineno}: {kind}" in p.stderr
    assert "--no-verify" in p.stderr
    assert value not in p.stderr + p.stdout
    assert git(root, "rev-parse", "HEAD") == head


def test_no_verify_bypasses_the_hook(workspace, git):
    root = workspace.root
    unfiltered(git, root)
    (root / "USER.md").write_text(USER_MD + f"- NAS admin password: {PASSWORD}\n", encoding="utf-8")
    git(root, "add", "USER.md")
    assert commit(git, root).returncode != 0
    p = commit(git, root, "--no-verify")
    assert p.returncode == 0, p.stderr
    assert PASSWORD in git(root, "show", "HEAD:USER.md")


def test_only_memory_files_are_checked(workspace, git):
    root = workspace.root
    log = root / "memory" / "2026-11-30.md"
    log.write_text(f"- 10:00 rotated the NAS password: {PASSWORD}\n", encoding="utf-8")
    (root / "notes.txt").write_text(f"key {OPENAI}\n", encoding="utf-8")
    git(root, "add", "memory/2026-11-30.md", "notes.txt")
    p = commit(git, root)
    assert p.returncode == 0, p.stderr


def test_a_clean_memory_commit_passes(workspace, git):
    root = workspace.root
    (root / "MEMORY.md").write_text(MEMORY_MD + "- [P2] Zed 1.0 looks good (2026-11-30)\n", encoding="utf-8")
    git(root, "add", "MEMORY.md")
    assert commit(git, root).returncode == 0


def test_a_secret_already_in_memory_does_not_block_unrelated_commits(workspace, git):
    """Only the lines a commit adds are checked: a secret adopted earlier does not lock the user out."""
    root = workspace.root
    (root / "MEMORY.md").write_text(MEMORY_MD + f"- NAS admin password: {PASSWORD}\n", encoding="utf-8")
    git(root, "add", "MEMORY.md")
    assert commit(git, root, "--no-verify").returncode == 0
    (root / "MEMORY.md").write_text(MEMORY_MD.replace("- Tried Zed", "- Tried the Zed") +
                                    f"- NAS admin password: {PASSWORD}\n", encoding="utf-8")
    git(root, "add", "MEMORY.md")
    assert commit(git, root).returncode == 0


def test_check_staged_reports_file_line_kind(workspace, git):
    root = workspace.root
    unfiltered(git, root)
    (root / "USER.md").write_text(USER_MD + "\n" + SECRETS[0][0] + "\n", encoding="utf-8")
    git(root, "add", "USER.md")
    problems = check_staged(workspace.repo, workspace.memory_files)
    assert problems == [f"USER.md:{len(USER_MD.splitlines()) + 2}: OpenAI API key"]


def test_memgits_own_snapshot_of_a_secret_warns_instead(workspace, git, run_cli):
    root = workspace.root
    [p] = proposals.create(workspace, [Operation(
        "prune", "MEMORY.md", ("- Tried Zed editor for a week, back to helix (2026-10-07)",))])
    (root / "MEMORY.md").write_text(MEMORY_MD + f"- NAS admin password: {PASSWORD}\n", encoding="utf-8")
    code, out, err = run_cli(workspace, "approve", p.id)
    assert code == 0, err
    lineno = len(MEMORY_MD.splitlines()) + 1
    assert f"MEMORY.md:{lineno}: password" in err
    assert PASSWORD not in out + err
    assert PASSWORD in git(root, "show", "main:MEMORY.md")  # the agent's write was not lost
    assert "live edits (the agent's or by hand)" in git(root, "log", "--format=%s", "main")


@pytest.mark.parametrize("name", ["记忆.md", "my notes.md"])
def test_memory_files_with_chinese_or_spaced_names_are_checked(tmp_path, git, name):
    (tmp_path / "memgit.toml").write_text(f'[memory]\nfiles = ["{name}"]\n', encoding="utf-8")
    (tmp_path / name).write_text("- 偏好简短回答\n", encoding="utf-8")
    from memgit.adopt import init

    init(tmp_path)
    unfiltered(git, tmp_path)
    (tmp_path / name).write_text(f"- 偏好简短回答\n- NAS 的 password: {PASSWORD}\n", encoding="utf-8")
    git(tmp_path, "add", "-A")
    p = commit(git, tmp_path)
    assert p.returncode != 0
    assert f"{name}:2: password" in p.stderr and PASSWORD not in p.stderr


def test_a_secret_after_a_vertical_tab_is_still_found(workspace, git):
    root = workspace.root
    unfiltered(git, root)
    (root / "MEMORY.md").write_text(MEMORY_MD + f"- note\x0bpassword: {PASSWORD}\n", encoding="utf-8")
    git(root, "add", "MEMORY.md")
    assert commit(git, root).returncode != 0
