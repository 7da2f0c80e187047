"""`memgit push` / `memgit pull`: share main, proposals and review state through
any plain git remote (a bare repo, GitHub, GitLab, Gitea).

What travels, and how it is reconciled:

- `refs/heads/main`: pushed without force, so a push that would not
  fast-forward is refused (atomically: nothing is half-pushed). Pull
  fast-forwards, or merges the two mains with git's merge (`git merge-tree`,
  no working tree touched). Where git's line merge conflicts, a memory file is
  merged by re-applying the other side's approved operations to this side's
  version (entries are found by their text, as `approve` does); daily logs and
  sessions, which only grow, keep both sides' lines. Anything else stops the
  pull with nothing changed: the remote's main waits in
  `refs/memgit/remotes/<remote>/main` for a hand merge.
- `refs/memgit/journal`: fast-forwarded, or merged as a union (a commit with
  both histories as parents), so no event is ever lost.
- `refs/memgit/closed/<id>`: created once, never moved; an id closed on either
  side is closed on both, and its open branch `refs/heads/memgit/<id>` is
  deleted (locally by pull, on the remote by push). Approved or rejected then
  follows from the journal, as everywhere else.
- `refs/heads/memgit/<id>`: open proposals, copied both ways unless closed.

Pull runs under the repo lock after `Workspace.prepare()`, and brings the
working tree to the new main with `Workspace.sync_worktree()`, which merges
(or keeps) any live edit of the agent.
"""
from __future__ import annotations

import hashlib
import re
import subprocess
from dataclasses import dataclass, field

from memgit import journal, ops, proposals
from memgit.errors import ConflictError, MemgitError
from memgit.ops import Operation
from memgit.repo import CLOSED_PREFIX, JOURNAL, MAIN, PROPOSAL_PREFIX
from memgit.workspace import Workspace

STAGE_PREFIX = "refs/memgit/remotes/"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_APPROVAL = re.compile(r"^Memgit-Proposal: (\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class RemoteState:
    """The memgit refs of a remote (from ls-remote) or of its staged copy (after fetch)."""

    main: str | None = None
    journal: str | None = None
    open: dict[str, str] = field(default_factory=dict)
    closed: dict[str, str] = field(default_factory=dict)


@dataclass
class PushReport:
    remote: str
    main: tuple[str | None, str] | None = None       # (remote's old, new)
    journal: bool = False
    opened: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    behind: list[str] = field(default_factory=list)  # refs the remote has newer: pull them

    @property
    def up_to_date(self) -> bool:
        return not (self.main or self.journal or self.opened or self.closed or self.removed)

    def lines(self) -> list[str]:
        out = []
        if self.main:
            old, new = self.main
            out.append(f"main: {old[:8] + '..' if old else 'new '}{new[:8]}")
        if self.journal:
            out.append("journal: sent")
        if self.opened:
            out.append(f"open proposals sent: {', '.join(self.opened)}")
        if self.closed:
            out.append(f"closed proposals sent: {', '.join(self.closed)}")
        if self.removed:
            out.append(f"closed, so removed from {self.remote}'s open list: {', '.join(self.removed)}")
        if self.up_to_date:
            out.append(f"Everything up to date with {self.remote}.")
        if self.behind:
            out.append(f"{self.remote} has newer {' and '.join(self.behind)}; run `memgit pull {self.remote}`.")
        return out

    def to_dict(self) -> dict:
        return {"remote": self.remote, "main": list(self.main) if self.main else None, "journal": self.journal,
                "opened": self.opened, "closed": self.closed, "removed": self.removed,
                "behind": self.behind, "up_to_date": self.up_to_date}


@dataclass
class PullReport:
    remote: str
    main_before: str = ""
    main_after: str = ""
    main: str = "up to date"          # up to date | ahead | fast-forward | merged | none
    theirs: int = 0                   # commits on the remote's main this clone lacked
    ours: int = 0                     # commits on this main the remote lacked
    replayed: list[str] = field(default_factory=list)   # "file: id" approvals re-applied in a merge
    unioned: list[str] = field(default_factory=list)    # logs/sessions merged keeping both sides
    journal: str = "up to date"       # up to date | ahead | fast-forward | merged | none
    new_open: list[str] = field(default_factory=list)
    closed: dict[str, str] = field(default_factory=dict)   # id → status, arrived from the remote
    removed: list[str] = field(default_factory=list)       # local open branches closed by the remote
    files: list[str] = field(default_factory=list)         # working-tree files brought to the new main
    kept: list[str] = field(default_factory=list)          # files where the agent's live edit was kept

    @property
    def ahead(self) -> bool:
        return self.main in ("ahead", "merged") or self.journal in ("ahead", "merged")

    def lines(self) -> list[str]:
        r = self.remote
        out = []
        if self.main == "fast-forward":
            out.append(f"main: fast-forwarded {self.main_before[:8]}..{self.main_after[:8]} "
                       f"({self.theirs} commit(s) from {r})")
        elif self.main == "merged":
            out.append(f"main: both sides had changed ({r}: {self.theirs} commit(s), this clone: {self.ours}); "
                       f"merged into {self.main_after[:8]}, nothing lost")
            for x in self.replayed:
                out.append(f"  re-applied {r}'s approval {x} on top of this clone's changes")
            for x in self.unioned:
                out.append(f"  {x}: kept the lines both sides added")
        elif self.main == "ahead":
            out.append(f"main: this clone is ahead of {r}")
        elif self.main == "none":
            out.append(f"main: {r} has no main yet")
        else:
            out.append("main: up to date")
        journal_text = {"fast-forward": "fast-forwarded", "merged": "both sides had new events; merged (union)",
                        "ahead": f"this clone has events {r} lacks", "none": f"{r} has none yet"}
        out.append(f"journal: {journal_text.get(self.journal, 'up to date')}")
        if self.new_open:
            out.append(f"new open proposals from {r}: {', '.join(self.new_open)}")
        if self.closed:
            out.append(f"closed on {r}: " + ", ".join(f"{i} ({s})" for i, s in sorted(self.closed.items())))
        if self.removed:
            out.append(f"no longer open here: {', '.join(self.removed)}")
        if self.files:
            out.append(f"working tree: updated {', '.join(self.files)}")
        if self.ahead:
            out.append(f"Run `memgit push {r}` to share this clone's side.")
        return out

    def to_dict(self) -> dict:
        return {"remote": self.remote, "main": self.main, "main_before": self.main_before,
                "main_after": self.main_after, "theirs": self.theirs, "ours": self.ours,
                "replayed": self.replayed, "unioned": self.unioned, "journal": self.journal,
                "new_open": self.new_open, "closed": self.closed, "removed": self.removed,
                "files": self.files, "kept": self.kept}


# -- git plumbing that needs exit codes (network, merge-tree) ---------------------
def _run(ws: Workspace, *args: str) -> subprocess.CompletedProcess:
    # push, fetch and merge-tree need the exit code and stderr
    return ws.repo.run(*args)


def _last_line(p: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in (p.stderr or p.stdout).strip().splitlines() if ln.strip()]
    return lines[-1].removeprefix("fatal: ").removeprefix("error: ").rstrip(".") if lines else f"exit {p.returncode}"


def stage_name(ws: Workspace, remote: str) -> str:
    """The remote, checked: a configured remote's name, or a URL/path (staged under a hash of it)."""
    names = ws.repo.git("remote").split()
    if remote in names and _NAME.fullmatch(remote):
        return remote
    if remote in names or "/" in remote or ":" in remote or remote.startswith("."):
        return "url-" + hashlib.sha1(remote.encode()).hexdigest()[:10]
    raise MemgitError(f"{ws.root} has no git remote named {remote!r}; add one with "
                      f"`git remote add {remote} URL` or give a URL.")


def ls_remote(ws: Workspace, remote: str) -> RemoteState:
    stage_name(ws, remote)
    p = _run(ws, "ls-remote", remote)
    if p.returncode != 0:
        raise MemgitError(f"cannot reach remote {remote!r} from {ws.root} ({_last_line(p)}); check the URL "
                          f"and your access.")
    refs = {}
    for line in p.stdout.splitlines():
        sha, _, name = line.partition("\t")
        refs[name] = sha
    return _state(refs)


def _state(refs: dict[str, str], main: str = MAIN, jref: str = JOURNAL, open_prefix: str = PROPOSAL_PREFIX,
           closed_prefix: str = CLOSED_PREFIX) -> RemoteState:
    def ids(prefix: str) -> dict[str, str]:
        return {n[len(prefix):]: s for n, s in refs.items()
                if n.startswith(prefix) and proposals.ID_RE.match(n[len(prefix):])}
    return RemoteState(refs.get(main), refs.get(jref), ids(open_prefix), ids(closed_prefix))


def _local(ws: Workspace) -> RemoteState:
    refs = {**ws.repo.refs(PROPOSAL_PREFIX.rstrip("/")), **ws.repo.refs(CLOSED_PREFIX.rstrip("/"))}
    for ref in (MAIN, JOURNAL):
        sha = ws.repo.ref(ref)
        if sha:
            refs[ref] = sha
    return _state(refs)


def _known_ancestor(ws: Workspace, a: str, b: str) -> bool:
    """a is an ancestor of b, b being an object this clone has."""
    return bool(ws.repo.ref(b)) and ws.repo.is_ancestor(a, b)


# -- push -----------------------------------------------------------------------
def push(ws: Workspace, remote: str = "origin") -> PushReport:
    """Send main, the journal, open and closed proposals; refuse (atomically) what would not fast-forward."""
    there = ls_remote(ws, remote)
    here = _local(ws)
    report = PushReport(remote)
    specs: list[str] = []
    leases: list[str] = []
    for name, ref, mine, theirs in (("main", MAIN, here.main, there.main),
                                    ("journal", JOURNAL, here.journal, there.journal)):
        if not mine or mine == theirs:
            continue
        if theirs and _known_ancestor(ws, mine, theirs):
            report.behind.append(name)  # the remote is ahead: nothing of ours to send
            continue
        specs.append(f"{mine}:{ref}")
        if name == "main":
            report.main = (theirs, mine)
        else:
            report.journal = True
    for pid, sha in sorted(here.closed.items()):
        if pid not in there.closed:
            specs.append(f"{sha}:{CLOSED_PREFIX}{pid}")
            report.closed.append(pid)
    for pid, sha in sorted(here.open.items()):
        if pid not in there.open and pid not in there.closed and pid not in here.closed:
            specs.append(f"{sha}:{PROPOSAL_PREFIX}{pid}")
            report.opened.append(pid)
    for pid, sha in sorted(there.open.items()):
        if pid in here.closed or pid in there.closed:
            specs.append(f":{PROPOSAL_PREFIX}{pid}")
            leases.append(f"--force-with-lease={PROPOSAL_PREFIX}{pid}:{sha}")
            report.removed.append(pid)
    if not specs:
        return report
    _refuse_leaks(ws, remote, [s.split(":", 1)[0] for s in specs if not s.startswith(":")],
                  [x for x in (there.main, there.journal, *there.open.values(), *there.closed.values()) if x])
    p = _run(ws, "push", "--atomic", "--porcelain", *leases, remote, *specs)
    rejected = []
    for line in p.stdout.splitlines():
        flag, _, rest = line.partition("\t")
        if flag == "!":
            ref = rest.split("\t", 1)[0].rpartition(":")[2]
            why = rest.split("\t", 1)[1] if "\t" in rest else ""
            if "atomic push failed" not in why:
                rejected.append(_short_ref(ref))
    if rejected:
        raise ConflictError(f"{remote} has changes this clone lacks ({', '.join(dict.fromkeys(rejected))}), so "
                            f"nothing was pushed; run `memgit pull {remote}` to merge them, then "
                            f"`memgit push {remote}` again.")
    if p.returncode != 0:
        raise MemgitError(f"git push to {remote!r} failed ({_last_line(p)}); nothing was pushed.")
    return report


def _refuse_leaks(ws: Workspace, remote: str, local: list[str], theirs: list[str]) -> None:
    """Nothing memgit pushes holds a secret: scan every commit the remote lacks, name what was found."""
    found = unpushed_leaks(ws, remote, local, theirs)
    if found:
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        raise MemgitError(f"nothing was pushed to {remote}: {found[0]}{more} holds sensitive data; remove it "
                          f"(approve the dream's prune), run `memgit scrub` to clean the history, and rotate "
                          f"the credential.")


def unpushed_leaks(ws: Workspace, remote: str, local: list[str], theirs: list[str]):
    """Leaks in the `local` commits that neither `theirs` (the remote's tips) nor this clone's copies of
    the remote's refs already hold (memgit push, and the pre-push hook for a plain git push)."""
    from memgit import leaks

    try:
        stage = STAGE_PREFIX + stage_name(ws, remote) + "/"
    except MemgitError:  # a URL git was given directly: no copies of its refs here
        stage = None
    mine = [r for r in leaks.all_refs(ws) if r.startswith(f"refs/remotes/{remote}/")
            or (stage and r.startswith(stage))]
    return leaks.push_leaks(ws, local, theirs + mine)


def _short_ref(ref: str) -> str:
    if ref == MAIN:
        return "main"
    if ref == JOURNAL:
        return "journal"
    if ref.startswith(CLOSED_PREFIX):
        return f"closed proposal {ref[len(CLOSED_PREFIX):]}"
    if ref.startswith(PROPOSAL_PREFIX):
        return f"proposal {ref[len(PROPOSAL_PREFIX):]}"
    return ref


# -- pull -----------------------------------------------------------------------
def fetch(ws: Workspace, remote: str = "origin") -> RemoteState:
    """Copy the remote's memgit refs into refs/memgit/remotes/<remote>/ (nothing else changes)."""
    stage = STAGE_PREFIX + stage_name(ws, remote) + "/"
    there = ls_remote(ws, remote)
    specs = [f"+{PROPOSAL_PREFIX}*:{stage}open/*", f"+{CLOSED_PREFIX}*:{stage}closed/*"]
    if there.main:
        specs.append(f"+{MAIN}:{stage}main")
    if there.journal:
        specs.append(f"+{JOURNAL}:{stage}journal")
    p = _run(ws, "fetch", "--no-tags", "--prune", "--quiet", "--no-write-fetch-head", remote, *specs)
    if p.returncode != 0:
        raise MemgitError(f"cannot fetch from {remote!r} into {ws.root} ({_last_line(p)}); check the URL "
                          f"and your access.")
    staged = ws.repo.refs(stage.rstrip("/"))
    stale = [(ref, None, sha) for ref, sha in staged.items()
             if (ref == stage + "main" and not there.main) or (ref == stage + "journal" and not there.journal)]
    if stale:
        ws.repo.update_refs(stale)
        staged = {r: s for r, s in staged.items() if r not in {x[0] for x in stale}}
    return _state(staged, stage + "main", stage + "journal", stage + "open/", stage + "closed/")


def pull(ws: Workspace, remote: str = "origin") -> PullReport:
    """Bring the remote's main, journal and proposals here, merging where both sides moved."""
    report = PullReport(remote)
    with ws.repo.lock():
        ws.prepare()
        there = fetch(ws, remote)
        here = _local(ws)
        updates: list[tuple[str, str | None, str | None]] = []
        main = ws.main()
        report.main_before = report.main_after = main
        if there.main and there.main != main:
            _check_related(ws, main, there.main, remote)
            _check_incoming(ws, main, there.main, remote)
        if not there.main:
            report.main = "none"
        elif there.main == main:
            pass
        elif ws.repo.is_ancestor(there.main, main):
            report.main = "ahead"
        elif ws.repo.is_ancestor(main, there.main):
            report.main, report.main_after = "fast-forward", there.main
            report.theirs = _count(ws, main, there.main)
        else:
            report.main = "merged"
            report.theirs, report.ours = _count(ws, main, there.main), _count(ws, there.main, main)
            report.main_after = _merge_main(ws, main, there.main, remote, report)
        if report.main_after != main:
            updates.append((MAIN, report.main_after, main))

        closed_now = set(here.closed) | set(there.closed)
        for pid, sha in sorted(there.closed.items()):
            if pid not in here.closed:
                updates.append((CLOSED_PREFIX + pid, sha, None))
                report.closed[pid] = "closed"
        for pid, sha in sorted(here.open.items()):
            if pid in closed_now:
                updates.append((PROPOSAL_PREFIX + pid, None, sha))
                report.removed.append(pid)
        for pid, sha in sorted(there.open.items()):
            if pid not in here.open and pid not in closed_now:
                updates.append((PROPOSAL_PREFIX + pid, sha, None))
                report.new_open.append(pid)

        mine = here.journal
        if not there.journal:
            report.journal = "none" if not mine else "ahead"
        elif there.journal == mine:
            pass
        elif mine and ws.repo.is_ancestor(there.journal, mine):
            report.journal = "ahead"
        elif not mine or ws.repo.is_ancestor(mine, there.journal):
            report.journal = "fast-forward"
            updates.append((JOURNAL, there.journal, mine))
        else:
            report.journal = "merged"
            updates.append((JOURNAL, _journal_merge(ws, mine, there.journal, remote, report), mine))

        if updates:
            ws.repo.update_refs(updates)
        if report.closed:
            states = proposals.closed_states(ws)
            report.closed = {pid: states.get(pid, {}).get("status", "closed") for pid in report.closed}
        if report.main_after != main:
            changed = ws.repo.git("diff", "--no-renames", "--name-only", "-z", main, report.main_after)
            report.files = [f for f in changed.split("\0") if f]
            report.kept = ws.sync_worktree()
    return report


def _check_related(ws: Workspace, ours: str, theirs: str, remote: str) -> None:
    """Both mains must share history: a main made by `memgit init` in a clone is no version of theirs."""
    if not ws.repo.git("merge-base", ours, theirs, check=False).strip():
        stage = STAGE_PREFIX + stage_name(ws, remote) + "/main"
        raise MemgitError(f"main here and {remote}'s main share no history (was this workspace adopted with "
                          f"`memgit init` before it was cloned from {remote}?), so nothing was pulled: keep "
                          f"one of them, e.g. move this folder aside, `git clone` {remote} afresh and run "
                          f"`memgit init` there; {remote}'s main is at {stage}.")


def _check_incoming(ws: Workspace, main: str, theirs: str, remote: str) -> None:
    """What the remote's main changes, checked before main moves: only memory files and the folders
    memgit keeps beside them, and no path leaving the workspace or into .git. Anything else (a
    hook, memgit.toml, a stray file) was never reviewed here, so nothing is pulled."""
    base = ws.repo.git("merge-base", main, theirs, check=False).strip() or main
    out = ws.repo.git("diff", "--no-renames", "--name-only", "-z", base, theirs)
    mem = ws.config.memory
    dirs = {d.strip("/") for d in (mem.logs_dir, mem.sessions_dir, mem.archive_dir, mem.reference_dir,
                                   "reflections") if d}
    from memgit.lifecycle.diary import DIARY

    for path in (p for p in out.split("\0") if p):
        if not ops.safe_path(path):
            raise MemgitError(f"{remote}'s main holds the path {path!r}, outside the workspace or inside .git; "
                              f"nothing was pulled: fix the remote's main by hand.")
        if path in ws.memory_files or path == DIARY or any(path.startswith(d + "/") for d in dirs):
            continue
        stage = STAGE_PREFIX + stage_name(ws, remote) + "/main"
        raise MemgitError(f"{remote}'s main changes {path}, which is not memory and no proposal approved; "
                          f"nothing was pulled: inspect it with `git diff main {stage}` and merge it by hand "
                          f"if you trust it.")


def _count(ws: Workspace, a: str, b: str) -> int:
    return int(ws.repo.git("rev-list", "--first-parent", "--count", f"{a}..{b}").strip() or 0)


def _journal_merge(ws: Workspace, mine: str, theirs: str, remote: str, report: PullReport) -> str:
    """A journal commit with both histories as parents; it is also the event recording this pull."""
    main = f"; main {report.main}" if report.main != "up to date" else ""
    sha, _ = journal.prepare(ws.repo, "pull", {"remote": remote, "main": report.main,
                                               "summary": f"merged {remote}'s history{main}"}, mine, theirs)
    return sha


def _merge_main(ws: Workspace, ours: str, theirs: str, remote: str, report: PullReport) -> str:
    """A merge commit of both mains (parents: ours, theirs), or ConflictError with nothing changed."""
    p = _run(ws, "merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs)
    if p.returncode not in (0, 1):
        raise MemgitError(f"git merge-tree failed in {ws.root} ({_last_line(p)}); is git 2.38 or newer installed?")
    lines = p.stdout.split("\n")
    tree = lines[0].strip()
    if p.returncode == 1:
        conflicted = [ln for ln in lines[1:] if ln.strip()]
        base = ws.repo.git("merge-base", ours, theirs).strip()
        resolved: dict[str, str | None] = {}
        unresolved = []
        for path in conflicted:
            data = _resolve(ws, path, base, ours, theirs, report)
            if data is None:
                unresolved.append(path)
            else:
                resolved[path] = ws.repo.write_blob(data)
        if unresolved:
            stage = STAGE_PREFIX + stage_name(ws, remote) + "/main"
            raise ConflictError(f"main changed in the same place here and on {remote} "
                                f"({', '.join(unresolved)}), so nothing was changed; merge by hand with "
                                f"`git merge {stage}` in {ws.root}, then run `memgit pull {remote}` and "
                                f"`memgit push {remote}`.")
        tree = ws.repo.tree_with(tree, resolved)
    msg = f"memgit: merge main from {remote}\n\nMemgit-Merge: {remote}\n"
    if report.replayed:
        msg += f"Memgit-Replayed: {', '.join(report.replayed)}\n"
    return ws.repo.commit(tree, [ours, theirs], msg)


def _resolve(ws: Workspace, path: str, base: str, ours: str, theirs: str, report: PullReport) -> bytes | None:
    """One file git could not merge line by line: merged bytes, or None to stop."""
    b, o, t = (ws.repo.read(c, path) for c in (base, ours, theirs))
    if o is None or t is None:
        return None
    mem = ws.config.memory
    if any(path.startswith(d.rstrip("/") + "/") for d in (mem.logs_dir, mem.sessions_dir) if d) \
            and path not in ws.memory_files:
        merged = _union(o, b or b"", t)
        if merged is not None:
            report.unioned.append(path)
        return merged
    if path not in ws.memory_files:
        return None
    # theirs' approvals onto our version first; else ours onto theirs (when their side was not only approvals)
    for onto, tip, whose in ((o, theirs, ""), (t, ours, f" (this clone's, onto {report.remote}'s file)")):
        done: list[str] = []
        data = _replay(ws, path, onto, base, tip, done)
        if data is not None:
            report.replayed += [f"{path}: {pid}{whose}" for pid in done]
            return data
    return None


def _replay(ws: Workspace, path: str, data: bytes, base: str, tip: str, done: list[str]) -> bytes | None:
    """`data` with every approval that changed `path` on base..tip re-applied; None if one is not an approval."""
    commits = ws.repo.log(f"{base}..{tip}", first_parent=True, paths=(path,))
    for c in reversed(commits):
        approval = _APPROVAL.search(c.message)
        if len(c.parents) != 2 or not approval:
            return None  # an agent snapshot, a revert or a merge: only git's line merge can judge it
        op = _operation(ws, c.parents[1])
        if op is None or op.file != path or op.op == "move":
            return None
        try:
            out = ops.apply(op, lambda p, d=data: d if p == path else None, ws.config.memory.protected_sections)
        except MemgitError:
            return None
        if set(out) != {path} or out[path] is None:
            return None
        data = out[path]
        done.append(approval.group(1))
    return data


def _operation(ws: Workspace, commit: str) -> Operation | None:
    return proposals.read_record(ws.repo.commit_parents_message(commit)[1])[0]


def _union(ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """Three-way merge keeping both sides' lines where they clash (append-only logs)."""
    from memgit.workspace import merge3

    return merge3(ours, base, theirs, union=True)

