"""Secrets in git history: find them (what a push would send, what adoption inherits) and scrub them.

A finding names a commit, a file and line (or the commit message) and a kind — never the value.
The scan reads what each commit adds (`git log -p`), so a secret is reported once, in the commit
that brought it, and a later prune does not hide it: the older commit still holds it.

`scrub` rewrites history with git-filter-repo (the maintained tool for this job, used as a
library) in a bare mirror beside the workspace, then fetches the rewritten refs back: the
working tree, where the agent's files live, is never reset.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from memgit import sensitive
from memgit.errors import MemgitError
from memgit.repo import MAIN
from memgit.workspace import Workspace

SEP = "\x1e@memgit-commit@"


@dataclass(frozen=True)
class Leak:
    commit: str
    path: str       # "" for the commit message
    line: int
    kind: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path else "its message"
        return f"commit {self.commit[:8]} {where}: {self.kind}"


def scan(ws: Workspace, revs: list[str], exclude: list[str] = ()) -> list[Leak]:
    """Leaks in the commits reachable from `revs` and not from `exclude` (one `git log -p`)."""
    revs = [r for r in revs if r]
    if not revs:
        return []
    # a merge (an approval) is read against its first parent: what it brought into main
    args = ["log", "-p", "--no-color", "--no-renames", "--no-ext-diff", "--no-textconv", "-U0",
            "--diff-merges=first-parent", f"--format={SEP}%H%n%B{SEP}", *revs]
    if exclude:  # what the other side already has; a commit not here is skipped, not an error
        args += ["--ignore-missing", "--not", *[e for e in exclude if e]]
    p = subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=ws.root, capture_output=True,
                       env={**os.environ, "LC_ALL": "C"}, check=False)
    if p.returncode != 0:
        raise MemgitError(f"cannot read the history of {ws.root} ({p.stderr.decode('utf-8', 'replace').strip()}); "
                          f"check the repository with `git fsck`.")
    return _parse(p.stdout.decode("utf-8", "replace"))


def _parse(out: str) -> list[Leak]:
    found: list[Leak] = []
    seen: set[tuple] = set()
    chunks = out.split(SEP)
    # chunks: ["", "<sha>\n<message>", "<diff>", "<sha>\n<message>", "<diff>", ...]
    for i in range(1, len(chunks) - 1, 2):
        sha, _, message = chunks[i].partition("\n")
        sha = sha.strip()
        for f in sensitive.scan(message):
            found.append(Leak(sha, "", f.line, f.kind))
        path, line_no = None, 0
        added: list[tuple[str, int, str]] = []
        for raw in chunks[i + 1].split("\n"):
            if raw.startswith("+++ "):
                path = raw[6:] if raw.startswith("+++ b/") else None
            elif raw.startswith("@@"):
                try:
                    line_no = int(raw.split("+", 1)[1].split(" ", 1)[0].split(",")[0])
                except (IndexError, ValueError):
                    line_no = 0
            elif raw.startswith("+") and path:
                added.append((path, line_no, raw[1:]))
                line_no += 1
        # scanned per file as one text, so a multi-line block (a PEM key) is seen whole
        by_file: dict[str, list[tuple[int, str]]] = {}
        for p, n, text in added:
            by_file.setdefault(p, []).append((n, text))
        for p, lines in by_file.items():
            text = "\n".join(t for _, t in lines)
            for f in sensitive.scan(text):
                key = (sha, p, f.kind, lines[f.line - 1][1])
                if key in seen:
                    continue
                seen.add(key)
                found.append(Leak(sha, p, lines[f.line - 1][0], f.kind))
    return found


def push_leaks(ws: Workspace, local: list[str], remote_known: list[str]) -> list[Leak]:
    """What a push of `local` commits would send that the remote does not have yet."""
    return scan(ws, local, remote_known)


def all_refs(ws: Workspace) -> list[str]:
    return [r for r in ws.repo.git("for-each-ref", "--format=%(refname)").splitlines() if r]


def _remote_ref(ref: str) -> bool:
    return ref.startswith(("refs/remotes/", "refs/memgit/remotes/"))


# -- scrub ------------------------------------------------------------------------
@dataclass
class ScrubReport:
    leaks: list[Leak]
    rewritten: int = 0
    pushed: list[str] = field(default_factory=list)  # remote refs that held a leak (their copies still do)

    def to_dict(self) -> dict:
        return {"leaks": [str(x) for x in self.leaks], "rewritten_refs": self.rewritten,
                "pushed": self.pushed}


def scrub(ws: Workspace, pushed_ok: bool = False, dry_run: bool = False) -> ScrubReport:
    """Rewrite every ref's history so that no commit holds a secret the filter finds."""
    with ws.repo.lock():
        ws.prepare()
        leaks = scan(ws, all_refs(ws))
        report = ScrubReport(leaks)
        if not leaks:
            return report
        live = [name for name in ws.memory_files if (ws.root / name).is_file()
                and sensitive.has_sensitive((ws.root / name).read_text(encoding="utf-8", errors="replace"))]
        if live:
            raise MemgitError(f"{live[0]} still holds sensitive data; approve the dream's prune of it (or remove it "
                              f"by hand) first, then run `memgit scrub` again.")
        bad = {x.commit for x in leaks}
        for ref in (r for r in all_refs(ws) if _remote_ref(r)):
            if bad & set(ws.repo.git("rev-list", ref, check=False).split()):
                report.pushed.append(ref)
        if report.pushed and not pushed_ok:
            raise MemgitError(f"the commits holding the secrets were already pushed ({report.pushed[0]}); "
                              f"rewriting here does not clean the remote: rotate the credentials, then run "
                              f"`memgit scrub --pushed` and force-push every clone.")
        if dry_run:
            return report
        report.rewritten = _rewrite(ws)
        main = ws.repo.ref(MAIN)
        if main:
            ws.repo.git("read-tree", main)
            subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=ws.root, capture_output=True)
            ws.mark_synced(main)
        for name in ("states.json", "recall-cache", "index"):
            p = ws.repo.state_dir() / name
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        return report


def _rewrite(ws: Workspace) -> int:
    import git_filter_repo as fr

    def clean(data: bytes) -> bytes:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        return sensitive.redact(text).encode("utf-8") if sensitive.has_sensitive(text) else data

    def blob_cb(blob, _meta) -> None:
        blob.data = clean(blob.data)

    with tempfile.TemporaryDirectory(prefix="memgit-scrub-", dir=ws.repo.state_dir()) as tmp:
        mirror = os.path.join(tmp, "mirror.git")
        subprocess.run(["git", "clone", "-q", "--mirror", "--no-local", str(ws.root), mirror], check=True,
                       capture_output=True)
        before = dict(line.split(" ", 1)[::-1] for line in _refs(mirror))
        args = fr.FilteringOptions.parse_args(["--force", "--partial", "--quiet"])
        cwd = os.getcwd()
        try:
            os.chdir(mirror)
            fr.RepoFilter(args, blob_callback=blob_cb, message_callback=clean).run()
        finally:
            os.chdir(cwd)
        after = dict(line.split(" ", 1)[::-1] for line in _refs(mirror))
        subprocess.run(["git", "fetch", "-q", "--update-head-ok", "--force", "--prune", "--no-tags", mirror,
                        "+refs/*:refs/*"], cwd=ws.root, check=True, capture_output=True)
    for cmd in (["reflog", "expire", "--expire=now", "--all"], ["gc", "-q", "--prune=now"]):
        subprocess.run(["git", *cmd], cwd=ws.root, check=True, capture_output=True)
    return sum(1 for r, s in after.items() if before.get(r) != s)


def _refs(git_dir: str) -> list[str]:
    out = subprocess.run(["git", "--git-dir", git_dir, "for-each-ref", "--format=%(objectname) %(refname)"],
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line]
