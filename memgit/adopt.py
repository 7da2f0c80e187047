"""`memgit init`: turn a workspace folder (or an existing repo or clone) into a
memgit workspace, and the pre-commit hook that keeps secrets out of memory."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from memgit import resources
from memgit.errors import MemgitError
from memgit.repo import MAIN, Repo, atomic_write

HOOK_MARK = "memgit pre-commit hook"
CHAINED = ".memgit-chained"

LAYOUTS: dict[str, dict] = {
    # product name → memory files and their character budgets: each product's own limit for the file
    # - OpenClaw injects each bootstrap file up to agents.defaults.bootstrapMaxChars (20,000) and
    #   truncates the rest;
    # - Hermes Agent caps MEMORY.md at 2,200 and USER.md at 1,375 characters;
    # - Claude Code loads CLAUDE.md in full and warns past 40,000 characters (its auto-memory index
    #   MEMORY.md is read up to 200 lines or 25 KB).
    "openclaw": {"capacity": {"MEMORY.md": 20000, "USER.md": 20000}, "sessions_dir": "sessions",
                 "limit": "OpenClaw's bootstrap limit for an injected file"},
    "hermes": {"capacity": {"MEMORY.md": 2200, "USER.md": 1375}, "sessions_dir": "sessions",
               "limit": "Hermes Agent's memory limit"},
    "claude-code": {"capacity": {"CLAUDE.md": 40000}, "files": ["CLAUDE.md"], "sessions_dir": "sessions",
                    "limit": "Claude Code's large-CLAUDE.md warning"},
}


def detect_layout(root: Path) -> str | None:
    """The product a workspace came from, by the files it holds (None: nothing tells)."""
    def text(name: str) -> str:
        try:
            return (root / name).read_text(encoding="utf-8", errors="replace")[:200_000]
        except OSError:
            return ""

    if (root / "CLAUDE.md").is_file() and not (root / "MEMORY.md").is_file():
        return "claude-code"
    mem = text("MEMORY.md") + text("USER.md")
    if "\n§\n" in mem or mem.startswith("§"):
        return "hermes"
    if any((root / f).is_file() for f in ("AGENTS.md", "SOUL.md", "IDENTITY.md", "HEARTBEAT.md")) \
            or (root / "memory").is_dir():
        return "openclaw"
    return None


@dataclass
class InitResult:
    root: Path
    created_repo: bool
    wrote_config: bool
    hooks: list[str]
    commit: str | None
    warnings: list[str] = field(default_factory=list)
    layout: str | None = None
    detected: bool = False
    sizes: list[dict] = field(default_factory=list)  # file, characters, budget: what init measured


def _config_text(layout: str | None) -> str | None:
    from memgit.config import default_toml

    if not layout:
        return None
    if layout not in LAYOUTS:
        raise MemgitError(f"unknown layout {layout!r}; use one of {', '.join(LAYOUTS)}.")
    spec = LAYOUTS[layout]
    files = tuple(spec["files"]) if "files" in spec else None
    return default_toml(spec["capacity"], files)


def init(root: Path, layout: str | None = None) -> InitResult:
    """Adopt `root`: git repo on main, default memgit.toml, hooks, and a first commit of its files."""
    from memgit.config import CONFIG_NAME, load_config
    from memgit.workspace import Workspace, write_default_config

    root = root.resolve()
    if not root.is_dir():
        raise MemgitError(f"{root} is not a folder; create it or cd into your agent's workspace.")
    created = not (root / ".git").exists()
    repo = Repo.init(root)
    head = repo.head_ref()
    has_commits = repo.ref("HEAD") is not None
    if head != MAIN:
        if repo.ref(MAIN):
            raise MemgitError(f"{root} has {head or 'a detached HEAD'} checked out; run `git checkout main` "
                              f"and `memgit init` again.")
        # adopt a repo whose branch is not called main: main starts where HEAD is, history untouched
        if has_commits:
            repo.git("branch", "main", "HEAD")
            repo.git("symbolic-ref", "HEAD", MAIN)
        elif (tracked := _remote_main(repo)) is not None:
            # a clone of a remote whose HEAD names another branch (a plain `git init --bare` names
            # master): the remote's main is this workspace's main, never a new unrelated one
            _checkout_remote_main(repo, root, tracked)
            has_commits = True
        else:
            repo.git("symbolic-ref", "HEAD", MAIN)
    detected = False
    if layout is None and not (root / CONFIG_NAME).exists():
        layout = detect_layout(root)
        detected = layout is not None
    text = _config_text(layout)
    wrote = False
    if text is not None and not (root / CONFIG_NAME).exists():
        atomic_write(root / CONFIG_NAME, text.encode())
        wrote = True
    elif text is None:
        wrote = write_default_config(root)
    cfg = load_config(root)  # a broken config is reported before anything is committed
    hooks = install_hooks(repo)
    install_filter(repo, cfg)
    ws = Workspace(root)
    commit = None
    with repo.lock():
        if not repo.ref(MAIN):
            tree = repo.stage_all_tree()
            commit = repo.commit(tree, [], "memgit: adopt workspace\n")
            repo.update_refs([(MAIN, commit, None)])
            ws.mark_synced(commit)
            ws.warn_secrets([f for f in ws.memory_files if (root / f).is_file()], commit)
        else:
            ws.sync_worktree()
            before = len(ws.warnings)
            commit = ws.snapshot("adopt workspace")
            # the snapshot warns only about files it changed; adopting warns about every memory file
            del ws.warnings[before:]
            ws.warn_secrets([f for f in ws.memory_files if (root / f).is_file()], ws.main())
    if has_commits:  # adopting a history: what it already holds is named (never the value)
        from memgit import leaks

        found = leaks.scan(ws, leaks.all_refs(ws))
        for x in found[:20]:
            ws.warnings.append(f"history: {x} (run `memgit scrub`, then rotate the credential)")
        if len(found) > 20:
            ws.warnings.append(f"history: {len(found) - 20} more finding(s); `memgit scrub --dry-run` lists them.")
    _missing_files(ws)
    sizes = _measure(ws, layout)
    return InitResult(root, created, wrote, hooks, commit, ws.warnings, layout, detected, sizes)


def _remote_main(repo: Repo) -> str | None:
    """The remote-tracking main to adopt in a clone without a local main: origin's, else the only one."""
    found = sorted(r for r in repo.refs("refs/remotes") if r.endswith("/" + MAIN.removeprefix("refs/heads/")))
    origin = f"refs/remotes/origin/{MAIN.removeprefix('refs/heads/')}"
    if origin in found:
        return origin
    return found[0] if len(found) == 1 else None


def _checkout_remote_main(repo: Repo, root: Path, tracked: str) -> None:
    remote = tracked.removeprefix("refs/remotes/").rsplit("/", 1)[0]
    branch = MAIN.removeprefix("refs/heads/")
    p = subprocess.run(["git", "-C", str(root), "checkout", "-q", "-b", branch, "--track", f"{remote}/{branch}"],
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        lines = [ln.strip() for ln in p.stderr.splitlines() if ln.strip()]
        files = [ln for ln in lines if not ln.startswith(("error:", "Please", "Aborting", "hint:"))]
        raise MemgitError(f"{root} is a clone of {remote}, whose main holds files that are also here untracked"
                          f" ({', '.join(files[:5]) or 'see git status'}); move them aside and run memgit "
                          f"init again, so neither copy is lost.")


def _missing_files(ws) -> None:
    """Say which configured memory files are not there: a typo in `files`, or a folder with no memory yet."""
    from memgit.config import CONFIG_NAME

    missing = [f for f in ws.memory_files if not (ws.root / f).is_file()]
    if not missing:
        return
    if len(missing) == len(ws.memory_files):
        ws.warnings.append(f"no memory file is here yet ({', '.join(missing)}): if the agent keeps its memory "
                           f"under other names, list them under [memory] files in {CONFIG_NAME}; otherwise "
                           f"memgit starts tracking them once the agent writes them.")
        return
    for f in missing:
        ws.warnings.append(f"{f} is listed under [memory] files in {CONFIG_NAME} but does not exist; fix the "
                           f"name there, or ignore this until the agent writes it.")


def _measure(ws, layout: str | None) -> list[dict]:
    """Each memory file's size against its budget; a file over it is reported, never cut to fit."""
    out = []
    limit = LAYOUTS.get(layout or "", {}).get("limit", "the budget in memgit.toml")
    for name in ws.memory_files:
        p = ws.root / name
        budget = ws.config.budget(name)
        if not p.is_file() or not budget:
            continue
        chars = len(p.read_text(encoding="utf-8", errors="replace").lstrip("\ufeff"))
        out.append({"file": name, "chars": chars, "budget": budget})
        if chars > budget:
            ws.warnings.append(
                f"{name} is {chars:,} characters, over its {budget:,}-character budget ({limit}); the agent "
                f"may not see all of it. The dream never deletes to fit: run `memgit janitor` to move stable "
                f"sections to reference/, and prune P2 entries over several reviews.")
    return out


def install_filter(repo: Repo, cfg) -> None:
    """The clean filter (memgit.gitfilter) in .git/config, and the paths it covers in .gitattributes:
    memory files, logs, transcripts and the folders memgit moves them to."""
    from memgit import gitfilter

    repo.git("config", f"filter.{gitfilter.NAME}.process", f'"{sys.executable}" -m memgit hook filter')
    repo.git("config", f"filter.{gitfilter.NAME}.required", "true")
    mem = cfg.memory
    # the memory files themselves are not filtered: main is exactly what the agent reads, and a secret
    # there is the dream's to prune (then `memgit scrub` cleans the history)
    paths = list(dict.fromkeys(d.strip("/") + "/" for d in (
        mem.logs_dir, mem.sessions_dir, mem.archive_dir, mem.reference_dir, "reflections") if d.strip("/")))
    path = repo.root / ".gitattributes"
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    block = gitfilter.attributes(paths, exempt=list(cfg.memory_files))
    if gitfilter.ATTR_MARK in current:
        head, _, rest = current.partition(gitfilter.ATTR_MARK)
        rest_lines = rest.split("\n")[1:]
        while rest_lines and rest_lines[0].endswith((f" filter={gitfilter.NAME}", " -filter")):
            rest_lines.pop(0)  # the block memgit wrote before
        tail = "\n".join(rest_lines)
        new = head + block + tail.lstrip("\n")
    else:
        new = current + ("\n" if current and not current.endswith("\n") else "") + block
    if new != current:
        atomic_write(path, new.encode("utf-8"))


def install_hooks(repo: Repo) -> list[str]:
    """Install memgit's hooks; an existing foreign hook is kept and chained, never clobbered."""
    hooks_dir = Path(repo.git("rev-parse", "--git-path", "hooks").strip())
    if not hooks_dir.is_absolute():
        hooks_dir = repo.root / hooks_dir
    hooks_dir.mkdir(parents=True, exist_ok=True)
    installed = []
    for name in ("pre-commit", "pre-push"):
        template = resources.read("hooks", name)
        target = hooks_dir / name
        chain = ""
        if target.exists():
            current = target.read_text(encoding="utf-8", errors="replace")
            if HOOK_MARK.replace("pre-commit", name) not in current:
                chained = hooks_dir / (name + CHAINED)
                if not chained.exists():
                    os.replace(target, chained)
            if (hooks_dir / (name + CHAINED)).exists():
                chain = _chain_line(hooks_dir / (name + CHAINED), name)
        elif (hooks_dir / (name + CHAINED)).exists():
            chain = _chain_line(hooks_dir / (name + CHAINED), name)
        body = template.replace("@PYTHON@", sys.executable).replace("# @MEMGIT_CHAIN@", chain)
        atomic_write(target, body.encode())
        target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        installed.append(name)
    return installed


def _chain_line(path: Path, name: str) -> str:
    if name == "pre-push":  # git gives the ref lines on stdin: the chained hook and memgit both read them
        return (f'MEMGIT_PUSH_REFS=$(cat); export MEMGIT_PUSH_REFS\n'
                f'printf "%s\\n" "$MEMGIT_PUSH_REFS" | "{path}" "$@" || exit $?')
    return f'"{path}" "$@" || exit $?'


def check_staged(repo: Repo, memory_files: tuple[str, ...]) -> list[str]:
    """Problems in lines a commit adds to memory files: 'file:line: kind' (never the value)."""
    from memgit import sensitive

    # quotePath off: a quoted name ("+++ \"b/\\350...\"") would hide a non-ASCII file from the check
    out = repo.git("-c", "core.quotePath=false", "diff", "--cached", "--no-color", "--unified=0",
                   "--no-renames", "--", *memory_files)
    problems = []
    path = None
    line_no = 0
    for raw in out.split("\n"):  # not splitlines(): \x0b or \u2028 inside a line must not hide its tail
        if raw.startswith("+++ "):
            path = raw[6:].rstrip("\t") if raw.startswith("+++ b/") else None
        elif raw.startswith("@@"):
            plus = raw.split("+", 1)[1].split(" ", 1)[0]
            line_no = int(plus.split(",")[0])
        elif raw.startswith("+") and path:
            for f in sensitive.scan(raw[1:]):
                problems.append(f"{path}:{line_no}: {f.kind}")
            line_no += 1
    return problems
