"""A memory workspace: its root, config, repo, memory files, and keeping the
working tree and main in step without ever losing an agent's write."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from memgit import journal
from memgit.config import CONFIG_NAME, Config, default_toml, load_config
from memgit.errors import MemgitError
from memgit.memory import Document, parse
from memgit.gitfilter import clean
from memgit.repo import MAIN, Repo, atomic_write, crashpoint, merge_file

# A daily log: `YYYY-MM-DD.md`, or OpenClaw's session-memory files `YYYY-MM-DD-slug.md` and
# `YYYY-MM-DD-HHMM.md` (one day may hold several).
LOG_NAME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[-_.][^/]*)?\.md$")


# what syncing one file can leave behind (None: the file is at main)
KEPT = "kept"        # the agent's version, which conflicts with main's change
LAGGING = "lagging"  # the agent's version, because it kept writing: the next command syncs it


def log_day(name: str) -> date | None:
    """The day a daily log's file name gives, or None if it is not a daily log."""
    m = LOG_NAME_RE.match(name)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


@dataclass(frozen=True)
class Capacity:
    file: str
    chars: int
    budget: int | None

    @property
    def pct(self) -> float | None:
        return 100.0 * self.chars / self.budget if self.budget else None

    def to_dict(self) -> dict:
        return {"file": self.file, "chars": self.chars, "budget": self.budget,
                "pct": round(self.pct, 1) if self.pct is not None else None}


@dataclass(frozen=True)
class Warning_:
    file: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.kind}"


def find_root(start: Path) -> Path:
    start = start.resolve()
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    raise MemgitError(f"{start} is not inside a memgit workspace; run `memgit init` in the workspace folder.")


class Workspace:
    def __init__(self, root: Path, config: Config | None = None):
        self.root = Path(root).resolve()
        self.repo = Repo(self.root)
        self.config = config or load_config(self.root)
        self.warnings: list[str] = []

    @classmethod
    def open(cls, path: Path | None = None) -> Workspace:
        ws = cls(find_root(path or Path.cwd()))
        # any git repo is not a workspace: memgit would snapshot someone's unrelated work onto their main
        if not (ws.root / CONFIG_NAME).is_file() and not (ws.repo.git_dir / "memgit").is_dir():
            raise MemgitError(f"{ws.root} is a git repository but not a memgit workspace; "
                              f"run `memgit init` there first.")
        return ws

    # -- main ------------------------------------------------------------
    def main(self) -> str:
        sha = self.repo.ref(MAIN)
        if not sha:
            raise MemgitError(f"{self.root} has no main branch yet; run `memgit init` first.")
        return sha

    @property
    def memory_files(self) -> tuple[str, ...]:
        return self.config.memory_files

    def document(self, name: str, commit: str | None = None) -> Document:
        data = self.repo.read(commit or self.main(), name)
        if data is None:
            raise MemgitError(f"{name} is not in main; create it (or fix [memory] files in memgit.toml).")
        return parse(name, data, self.config.memory.protected_sections)

    def documents(self, commit: str | None = None) -> dict[str, Document]:
        commit = commit or self.main()
        docs = {}
        for name in self.memory_files:
            data = self.repo.read(commit, name)
            if data is None:
                continue
            try:
                docs[name] = parse(name, data, self.config.memory.protected_sections)
            except MemgitError as e:
                self.warnings.append(str(e))
        return docs

    def check_memory_file(self, name: str) -> str:
        """A memory file name given on the command line, checked: no paths outside the workspace."""
        if name not in self.memory_files:
            raise MemgitError(f"{name!r} is not a memory file of this workspace "
                              f"({', '.join(self.memory_files)}); add it to [memory] files in memgit.toml.")
        return name

    def capacity(self, commit: str | None = None, live: bool = False) -> list[Capacity]:
        result = []
        for name in self.memory_files:
            if live:
                p = self.root / name
                data = p.read_bytes() if p.is_file() else None
            else:
                data = self.repo.read(commit or self.main(), name)
            if data is None:
                continue
            chars = len(data.decode("utf-8", "replace").lstrip("\ufeff"))
            result.append(Capacity(name, chars, self.config.budget(name)))
        return result

    # -- working tree ⇄ main ----------------------------------------------
    @property
    def _marker(self) -> Path:
        return self.repo.state_dir() / "synced"

    def synced(self) -> str | None:
        try:
            return self._marker.read_text().strip() or None
        except OSError:
            return None

    def mark_synced(self, sha: str) -> None:
        atomic_write(self._marker, sha.encode())

    def check_head(self) -> None:
        head = self.repo.head_ref()
        if head != MAIN:
            raise MemgitError(f"{self.root} has {head or 'a detached HEAD'} checked out; "
                              f"run `git checkout main` there first.")

    def sync_worktree(self) -> list[str]:
        """Bring files the working tree holds at an older main up to main.

        A file the agent changed meanwhile is merged three ways (git merge-file);
        if that conflicts, the agent's bytes are kept as they are.
        """
        main = self.main()
        synced = self.synced()
        if synced is None or synced == main:
            if synced is None:
                self.mark_synced(main)
            return []
        if not self.repo.ref(synced) or not self.repo.is_ancestor(synced, main):
            self.mark_synced(main)
            return []
        out = self.repo.git("diff", "--no-renames", "--name-only", "-z", synced, main)
        from memgit.ops import safe_path

        changed = [p for p in out.split("\0") if p]
        for p in [p for p in changed if not safe_path(p)]:  # never written: outside the workspace or in .git
            changed.remove(p)
            self.warnings.append(f"main holds the path {p!r}, outside the workspace or inside .git; not written.")
        olds = {p: self.repo.read(synced, p) for p in changed}
        news = {p: self.repo.read(main, p) for p in changed}
        # a file moved as is (expire's archive renames): rename it instead of rewriting it
        gone = {olds[p]: p for p in changed if news[p] is None and olds[p] is not None}
        for path in changed:
            src = gone.get(news[path]) if olds[path] is None and news[path] is not None else None
            f = self.root / path
            if src and not f.exists() and (self.root / src).is_file() \
                    and clean((self.root / src).read_bytes()) == olds[src]:
                f.parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.root / src, f)
                self._prune_dirs((self.root / src).parent)
        outcomes = {path: self._sync_file(path, olds[path], news[path]) for path in changed}
        kept = [path for path, outcome in outcomes.items() if outcome]
        self.repo.refresh_index(changed)
        if LAGGING not in outcomes.values():  # else the marker stays behind: the next command finishes the sync
            self.mark_synced(main)
        return kept

    def _sync_file(self, path: str, old: bytes | None, new: bytes | None) -> str | None:
        """Bring one file from `old` to `new` without losing what the agent writes meanwhile.

        None when the file is at `new`; KEPT or LAGGING when the agent's version had to stay as it is.
        """
        f = self.root / path
        for _ in range(5):
            try:
                fd = os.open(f, os.O_RDONLY)
            except FileNotFoundError:
                fd = None
            try:
                cur = _read_fd(fd) if fd is not None else None
                if cur == new:
                    return None
                # git holds the file redacted (memgit.gitfilter): the live bytes differ from main's
                # only by secret values, when the agent has not written since
                unchanged = cur == old or (cur is not None and old is not None and clean(cur) == old)
                if unchanged and new is None:
                    f.unlink(missing_ok=True)
                    self._prune_dirs(f.parent)
                    return None
                if unchanged and cur != old and new is not None:
                    merged = _unredact(cur, old, new)
                elif cur == old:
                    if new is None:
                        f.unlink(missing_ok=True)
                        self._prune_dirs(f.parent)
                        return None
                    merged = new
                else:
                    merged = merge3(cur or b"", old or b"", new or b"")
                    if merged is None and cur is not None and new is not None:
                        # both wrote the same place (say, both appended): keep both sides' lines, so
                        # neither the agent's write nor the approved change is lost
                        merged = merge3(cur, old or b"", new, union=True)
                        self.warnings.append(f"{path}: the agent wrote where an approved change went; both "
                                             f"were kept, check the file for a near-duplicate line.")
                    if merged is None:
                        self.warnings.append(f"{path}: the agent changed it while memgit updated it; the "
                                             f"agent's version was kept, review it with `git diff main -- {path}`.")
                        return KEPT
                if fd is None:
                    atomic_write(f, merged)
                elif _replaced(f, fd) or not self._write_in_place(path, cur or b"", merged):
                    continue  # the agent rewrote the file while we merged: start again from its bytes
                return None
            finally:
                if fd is not None:
                    os.close(fd)
        self.warnings.append(f"{path}: the agent kept writing; left as it is, the next command syncs it.")
        return LAGGING

    def _write_in_place(self, path: str, cur: bytes, new: bytes) -> bool:
        """Rewrite the agent's file in its own inode, so a handle the agent opened before (an append
        handle above all) keeps writing into the file it reads; False if it changed meanwhile.

        The agent's bytes are stored in git first and named in an intent file, so a kill in the middle
        loses nothing: the next command's repair() finishes or restores the rewrite.
        """
        f = self.root / path
        try:
            fd = os.open(f, os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            return False
        intent = self.repo.state_dir() / "sync-intent.json"
        try:
            now = _read_fd(fd)
            if now != cur:
                if not now.startswith(cur):
                    return False
                new += now[len(cur):]  # appended since we read it: kept after the new text
                cur = now
            import json

            atomic_write(intent, json.dumps({"path": path, "cur": self.repo.write_blob(cur),
                                             "new": self.repo.write_blob(new)}).encode())
            crashpoint("sync:before-rewrite")
            _pwrite_all(fd, new, 0)
            # an append that landed while we wrote sits beyond both versions: keep it after the new text
            end = os.fstat(fd).st_size
            top = max(len(cur), len(new))
            late = _read_fd(fd, top) if end > top else b""
            crashpoint("sync:before-truncate")
            os.ftruncate(fd, len(new))
            if late:
                _pwrite_all(fd, late, len(new))
            os.fsync(fd)
            intent.unlink(missing_ok=True)
            return True
        finally:
            os.close(fd)

    def finish_rewrite(self) -> None:
        """After a kill in the middle of an in-place rewrite: the file holds the new text followed by
        the end of the old one (and maybe the agent's later appends); cut the leftover, keep the rest."""
        import json

        intent = self.repo.state_dir() / "sync-intent.json"
        try:
            d = json.loads(intent.read_text(encoding="utf-8"))
            path, cur, new = d["path"], d["cur"], d["new"]
            cur_b = self.repo.gp.odb.stream(bytes.fromhex(cur)).read()
            new_b = self.repo.gp.odb.stream(bytes.fromhex(new)).read()
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError):
            intent.rename(intent.with_suffix(".bad"))
            self.warnings.append(f"{intent} was unreadable and was set aside.")
            return
        from memgit.ops import safe_path

        f = self.root / path
        if safe_path(path) and f.is_file():
            data = f.read_bytes()
            torn = new_b + cur_b[len(new_b):]
            if len(cur_b) > len(new_b) and data.startswith(torn):
                # in place again: the agent's handle still points at this inode
                intent.unlink(missing_ok=True)
                if not self._write_in_place(path, data, new_b + data[len(torn):]):
                    self.warnings.append(f"{path}: the agent wrote while memgit finished an interrupted update; "
                                         f"check the file for a leftover line.")
        intent.unlink(missing_ok=True)

    def _prune_dirs(self, d: Path) -> None:
        """Remove folders a move or revert left empty (never the workspace root)."""
        while d != self.root and self.root in d.parents:
            try:
                d.rmdir()
            except OSError:
                return
            d = d.parent

    def snapshot(self, note: str = "live edits (the agent's or by hand)") -> str | None:
        """Commit the live edits (everything in the working tree: the agent's, or a person's by hand) onto main.

        Never while the working tree still lags main (a sync the agent's writing kept from finishing):
        its files would carry main back to before an approval."""
        main = self.main()
        if self.synced() not in (None, main):
            self.sync_worktree()
            if self.synced() != main:
                self.warnings.append("the working tree is not yet up to date with main; agent edits are "
                                     "committed by the next command.")
                return None
        tree = self.repo.stage_all_tree()
        if tree == self.repo.tree_of(main):
            self.mark_synced(main)
            return None
        changed = [p for p in self.repo.git("diff", "--cached", "--name-only", "-z", main).split("\0") if p]
        if not self.config.agent.direct_writes:
            held = [p for p in changed if p in self.memory_files]
            if held:
                # direct writes are off: main keeps its version of each memory file the agent edited, and
                # the edit waits as a proposal; the agent's live file is left exactly as it wrote it
                main_blobs = {p: (self.repo.write_blob(d) if (d := self.repo.read(main, p)) is not None else None)
                              for p in held}
                tree = self.repo.tree_with(tree, main_blobs)
                changed = [p for p in changed if p not in held]
                self._propose_edits(main, held)
                if tree == self.repo.tree_of(main):
                    self.mark_synced(main)
                    return None
        crashpoint("snapshot:before-commit")
        sha = self.repo.commit(tree, [main], f"memgit: {note}\n\nMemgit-Snapshot: {len(changed)} file(s)\n")
        jsha, _ = journal.prepare(self.repo, "snapshot", {"summary": f"{note}: {', '.join(changed[:5])}",
                                                          "files": changed, "commit": sha},
                                  self.repo.ref(journal.JOURNAL))
        self.repo.update_refs([(MAIN, sha, main), (journal.JOURNAL, jsha, self.repo.ref(journal.JOURNAL))])
        self.mark_synced(sha)
        self.warn_secrets([p for p in changed if p in self.memory_files], sha)
        return sha

    def _propose_edits(self, main: str, held: list[str]) -> None:
        """One `edit` proposal per memory file the agent changed, against main's version of it; an older
        open edit of the same file is closed as superseded (its text stays in git)."""
        from memgit import proposals
        from memgit.errors import MemgitError
        from memgit.ops import Operation, content_hash

        for path in held:
            live = self.root / path
            try:
                text = live.read_text(encoding="utf-8") if live.is_file() else None
            except (OSError, UnicodeDecodeError) as e:
                self.warnings.append(f"{path}: the agent's edit cannot be read ({e}); not proposed.")
                continue
            if text is None:
                self.warnings.append(f"{path} was deleted by the agent; direct writes are off, so main keeps it "
                                     f"(restore the file, or remove it from [memory] files).")
                continue
            op = Operation("edit", path, text=text, origin="agent",
                           reason=f"the agent edited {path} itself; direct writes are off, so the edit waits "
                                  f"for review", extra={"base": content_hash(self.repo.read(main, path))})
            older = [p for p in proposals.list_proposals(self, check=False)
                     if p.op.op == "edit" and p.op.file == path and p.op.fingerprint != op.fingerprint]
            try:
                made = proposals.create(self, [op], skip_known=True)
            except MemgitError as e:
                self.warnings.append(f"the agent's edit of {path} was not proposed: {e}")
                continue
            if made and older:
                proposals.reject_locked(self, [p.id for p in older],
                                        f"superseded by the agent's later edit {made[0].id}")

    def repair(self) -> None:
        """Cheap check at the start of every command: bring a working tree that a crash left behind
        main up to date (never discarding an agent's write). Skipped while another process holds
        the lock: that process syncs the tree itself."""
        synced = self.synced()
        main = self.repo.ref(MAIN)
        stale_tree = not (synced is None or main is None or synced == main or self.repo.head_ref() != MAIN)
        if not stale_tree and not self._interrupted():
            return
        from memgit.errors import LockError

        try:
            with self.repo.lock(timeout=0):
                self.warnings += self.repo.recover_refs()
                self.finish_rewrite()
                if self.repo.head_ref() == MAIN and self.repo.ref(MAIN):
                    self.sync_worktree()
        except LockError:
            pass

    def _interrupted(self) -> bool:
        """A killed memgit command left a ref transaction or an in-place rewrite to finish."""
        return self.repo.pending_intent() or (self.repo.git_dir / "memgit" / "sync-intent.json").exists()

    def catch_up_index(self) -> list[str]:
        """In a hand `git commit` (the pre-commit hook): if a killed memgit command moved main but
        left the working tree and index at the older main, finish that first and stage what it
        changed into the index git is committing, so the commit can never undo an approval."""
        synced, main = self.synced(), self.repo.ref(MAIN)
        if not main or self.repo.head_ref() != MAIN or not (self._interrupted() or (synced and synced != main)):
            return []
        from memgit.errors import LockError

        try:
            with self.repo.lock(timeout=5):
                notes = self.repo.recover_refs()
                self.finish_rewrite()
                synced, main = self.synced(), self.repo.ref(MAIN)
                changed = []
                if synced and main and synced != main and self.repo.ref(synced) \
                        and self.repo.is_ancestor(synced, main):
                    out = self.repo.git("diff", "--no-renames", "--name-only", "-z", synced, main)
                    changed = [p for p in out.split("\0") if p]
                self.sync_worktree()
        except LockError:
            return ["another memgit command is running; commit again when it is done."]
        if changed:
            # git gives the hook the index it commits (GIT_INDEX_FILE); stage into that one
            import subprocess

            subprocess.run(["git", "add", "-A", "--", *changed], cwd=self.root, capture_output=True, check=False)
            notes.append(f"finished an interrupted memgit command first; its change to {', '.join(changed[:3])} "
                         f"is in this commit.")
        return notes + self.warnings

    def prepare(self) -> None:
        """Under the lock, before any change: repair the working tree, then snapshot live edits."""
        self.check_head()
        self.warnings += self.repo.recover_refs()
        self.finish_rewrite()
        self.sync_worktree()
        self.snapshot()

    def warn_secrets(self, files: list[str], commit: str) -> list[Warning_]:
        from memgit import sensitive

        found = []
        for name in files:
            # the live file: git stores memory redacted (memgit.gitfilter), the agent's file is as written
            live = self.root / name
            data = live.read_bytes() if live.is_file() else self.repo.read(commit, name)
            if data is None:
                continue
            for f in sensitive.scan(data.decode("utf-8", "replace")):
                w = Warning_(name, f.line, f.kind)
                found.append(w)
                self.warnings.append(f"{w}: sensitive data in memory; the next dream proposes removing it.")
        return found


def _read_fd(fd: int, offset: int = 0) -> bytes:
    chunks = []
    while True:
        b = os.pread(fd, 1 << 20, offset)
        if not b:
            return b"".join(chunks)
        chunks.append(b)
        offset += len(b)


def _unredact(cur: bytes, old: bytes, new: bytes) -> bytes:
    """`new` with each line git holds redacted given back its live value: `cur` is the agent's file,
    `old` its redacted form (line for line, as memgit.gitfilter redacts within lines), `new` main's
    next version. A line the change removed (a secret's prune) stays removed."""
    live = dict(zip(old.splitlines(keepends=True), cur.splitlines(keepends=True)))
    return b"".join(live.get(line, line) for line in new.splitlines(keepends=True))


def _pwrite_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _replaced(path: Path, fd: int) -> bool:
    """The name now points to another file than the one we read (the agent replaced it)."""
    try:
        return os.stat(path).st_ino != os.fstat(fd).st_ino
    except FileNotFoundError:
        return True


def merge3(ours: bytes, base: bytes, theirs: bytes, union: bool = False) -> bytes | None:
    """Three-way merge of a file's versions (repo.merge_file, git's own merge)."""
    return merge_file(ours, base, theirs, union)


def write_default_config(root: Path, capacity: dict[str, int] | None = None) -> bool:
    path = root / CONFIG_NAME
    if path.exists():
        return False
    atomic_write(path, default_toml(capacity).encode())
    return True
