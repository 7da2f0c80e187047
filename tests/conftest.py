"""Shared test fixtures: a hermetic git environment and a realistic memgit workspace.

Every test runs sealed (git-revise `hermetic_seal` style): HOME and XDG_CONFIG_HOME
point into tmp dirs, the system git config is ignored, author and committer are
pinned, no editor or pager can start, colour is off and the repo lock gives up
after 2 seconds. Fixtures other test files may use (keep their behaviour stable):

- ``workspace`` → a ``memgit.workspace.Workspace`` already adopted with
  ``memgit.adopt.init``: ``workspace.root`` holds MEMORY.md and USER.md (P0/P1/P2
  sections, entries in English, Simplified and Traditional Chinese), a daily log
  ``memory/2026-11-29.md``, a session ``sessions/2026-11-29-a1.jsonl`` and a
  ``memgit.toml``. The exact texts are ``MEMORY_MD``, ``USER_MD`` … below.
- ``run_cli(root, *args, input=None, env=None)`` → ``(code, stdout, stderr)`` of the
  real CLI as a subprocess (``python -m memgit -C <root> …``); ``root`` may be a
  Path, a Workspace or None (no ``-C``; the subprocess runs in ``cwd`` if given).
- ``bench_case(name, init=False)`` → a writable copy of
  ``../shared/bench/dev/<name>`` in tmp_path (the test is skipped if absent);
  with ``init=True`` it is adopted and a Workspace is returned instead of the Path.
- ``git(root, *args, check=True)`` → stdout of ``git -C root …`` (str), raising
  on failure unless ``check=False`` (then a CompletedProcess is returned).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# ../shared beside the checkout, as in CI
SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
BENCH_DEV = SHARED / "bench" / "dev"
AUTHOR_NAME = "Test Reviewer"
AUTHOR_EMAIL = "reviewer@example.com"

MEMORY_MD = """\
# MEMORY

## Environment [P0]
- Host: Mac mini M4, macOS 15; the agent runs under launchd
- Timezone: Asia/Shanghai (+08:00)
- 部署目标：hetzner-1 (Debian 12)，ssh 别名 `h1`

## Projects [P1]
- [P1] Cockpit v1 待 push，侧栏的 UI bug 修完就上 (2026-11-02)
- [P1] Blog runs on Astro, deploys on push via GitHub Actions (2026-08-15)
- [P1] 3thing 落地頁文案初稿已完成，等 Jw 定稿 (2026-10-11)

## Tools
- Playwright MCP pinned to 0.0.41 because 0.0.42 broke screenshots (2026-10-10)
- [P2] yt-dlp 下載 podcast 用 --cookies-from-browser firefox (2026-10-03)
- Notion 通过 MCP server "notion" 同步，每小时一次 (2026-09-25)

## Notes [P2]
- [P2] Temporary: Cloudflare tunnel for the demo on 2026-11-10 (2026-11-09)
- MCP server "notion" 每次 sync 都报 502，原因待查 (2026-11-12)
- Tried Zed editor for a week, back to helix (2026-10-07)
"""

USER_MD = """\
# USER

## Identity [P0]
- Name: Ada Chen (陈艾达), prefers "Ada"
- Languages: English, 简体中文, 繁體中文

## Preferences [P1]
- Prefers short answers with the code first (2026-09-01)
- 喜欢用 uv 管理 Python 环境 (2026-10-05)
- 偏好用繁體中文寫會議紀要 (2026-10-20)

## Schedule [P2]
- Dentist appointment on 2026-12-03 at 10:00 (2026-11-20)
"""

DAILY_LOG_NAME = "memory/2026-11-29.md"
DAILY_LOG = """\
# 2026-11-29

- 09:10 Cockpit v1 pushed to GitHub; 侧栏 bug 已修复
- 11:30 Ada asked to switch the weekly review to Saturday
- 15:45 notion sync 502 again, 还是没查到原因
"""

SESSION_NAME = "sessions/2026-11-29-a1.jsonl"
SESSION = (
    '{"ts": "2026-11-29T09:05:00+08:00", "session": "a1", "role": "user", '
    '"text": "Cockpit v1 可以 push 了"}\n'
    '{"ts": "2026-11-29T09:06:00+08:00", "session": "a1", "role": "assistant", '
    '"text": "Pushed Cockpit v1 to GitHub."}\n'
)

MEMGIT_TOML = """\
[memory]
files = ["MEMORY.md", "USER.md"]

[capacity]
"MEMORY.md" = 4000
"USER.md" = 2000

[dream]
window_days = 7
threshold = 0.7
max_ops = 10
forced_prune_pct = 90
"""

WORKSPACE_FILES = {
    "MEMORY.md": MEMORY_MD,
    "USER.md": USER_MD,
    DAILY_LOG_NAME: DAILY_LOG,
    SESSION_NAME: SESSION,
    "memgit.toml": MEMGIT_TOML,
}


@pytest.fixture(autouse=True)
def hermetic_seal(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the real home, the system git config, an editor or the network."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    # one cache for the session (the glossary's index is built once, not once a test), still not the real one
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", AUTHOR_NAME)
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL)
    monkeypatch.setenv("GIT_COMMITTER_NAME", AUTHOR_NAME)
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL)
    monkeypatch.setenv("GIT_EDITOR", "false")
    monkeypatch.setenv("GIT_PAGER", "cat")
    monkeypatch.setenv("PAGER", "cat")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("MEMGIT_LOCK_TIMEOUT", "2")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG_GLOBAL", "GIT_CONFIG",
                "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "MEMGIT_CRASH_AT", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def _git(root: Path | str, *args: str, check: bool = True):
    p = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    if check:
        if p.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed ({p.returncode}): {p.stderr}")
        return p.stdout
    return p


@pytest.fixture
def git() -> Callable:
    """`git(root, *args)` → stdout; `check=False` returns the CompletedProcess instead."""
    return _git


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


@pytest.fixture
def workspace(tmp_path: Path):
    """A realistic workspace adopted by `memgit.adopt.init`: returns its Workspace."""
    from memgit.adopt import init
    from memgit.workspace import Workspace

    root = tmp_path / "ws"
    root.mkdir()
    write_files(root, WORKSPACE_FILES)
    init(root)
    return Workspace(root)


@pytest.fixture
def run_cli() -> Callable[..., tuple[int, str, str]]:
    """Run the real CLI in a subprocess: `run_cli(root, *args)` → (exit code, stdout, stderr)."""

    def run(root, *args: str, input: str | None = None, env: dict[str, str] | None = None,
            cwd: Path | str | None = None) -> tuple[int, str, str]:
        from memgit.workspace import Workspace

        cmd = [sys.executable, "-m", "memgit"]
        if root is not None:
            # a Workspace gives its folder; never Path.root, which is "/"
            path = Path(root.root if isinstance(root, Workspace) else root).resolve()
            assert path != Path(path.anchor), "run_cli must not run memgit on the filesystem root"
            cmd += ["-C", str(path)]
        full_env = {**os.environ, **(env or {})}
        p = subprocess.run([*cmd, *args], capture_output=True, text=True, input=input, env=full_env,
                           cwd=str(cwd) if cwd else None, timeout=120, check=False)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture
def bench_case(tmp_path: Path) -> Callable:
    """`bench_case(name)` → a writable copy of ../shared/bench/dev/<name> (skips if absent)."""

    def copy(name: str, init: bool = False):
        src = BENCH_DEV / name
        if not src.is_dir():
            pytest.skip(f"bench case {name} is not available at {src}")
        dst = tmp_path / "bench" / name
        shutil.copytree(src, dst, copy_function=shutil.copyfile)
        for d, _dirs, files in os.walk(dst):  # the bench is read-only; the copy must not be
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        if not init:
            return dst
        from memgit.adopt import init as do_init
        from memgit.workspace import Workspace

        do_init(dst)
        return Workspace(dst)

    return copy
