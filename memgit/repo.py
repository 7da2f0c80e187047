"""The only module that talks to git (GitPython for objects, the git CLI for the rest).

Proposals are made by writing blobs, trees and commits straight into the
object database and moving refs with compare-and-swap transactions
(`git update-ref --stdin`), so the working tree, the index and HEAD are never
touched. A flock-based repo lock serialises memgit processes; the OS drops it
when a holder dies, so a crash never leaves it stuck.
"""
from __future__ import annotations

import contextlib
import json
import re
import errno
import fcntl
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from memgit.errors import ConflictError, LockError, MemgitError

MAIN = "refs/heads/main"
PROPOSAL_PREFIX = "refs/heads/memgit/"
CLOSED_PREFIX = "refs/memgit/closed/"
JOURNAL = "refs/memgit/journal"
ZERO = "0" * 40
TEMP_PATTERN = ".*.memgit-*.tmp"  # atomic_write's temp files
HEX40 = re.compile(r"^[0-9a-f]{40}$")
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def crashpoint(name: str) -> None:
    """Exit hard at a named point when MEMGIT_CRASH_AT names it (crash-safety tests)."""
    if os.environ.get("MEMGIT_CRASH_AT") == name:
        os._exit(137)


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    message: str
    author: str
    timestamp: int


class Repo:
    """A memory workspace's git repository."""

    def __init__(self, root: Path):
        self.root = Path(root)
        git_dir = self.root / ".git"
        if not git_dir.exists():
            raise MemgitError(f"{self.root} is not a memgit workspace; run `memgit init` there first.")
        self.git_dir = git_dir if git_dir.is_dir() else Path(self._git("rev-parse", "--git-dir").strip())
        self._repo = None
        self._ident: tuple[str, str] | None = None
        # tree id → {name: (sha, mode)}: trees are immutable, so a parsed tree never goes stale;
        # reading many files of one large folder (years of daily logs) parses it once.
        self._trees: dict[str, dict[str, tuple[bytes, int]]] = {}
        self._commit_trees: dict[str, str] = {}

    # -- plumbing ----------------------------------------------------------
    def _git(self, *args: str, input: bytes | None = None, check: bool = True,
             env: dict[str, str] | None = None) -> str:
        p = subprocess.run(["git", *args], cwd=self.root, input=input, capture_output=True,
                           env={**_git_env(), **(env or {})})
        if check and p.returncode != 0:
            msg = p.stderr.decode("utf-8", "replace").strip().splitlines()
            raise MemgitError(f"git {args[0]} failed in {self.root}: {msg[-1] if msg else p.returncode}.")
        return p.stdout.decode("utf-8", "replace")

    def run(self, *args: str) -> subprocess.CompletedProcess:
        """A git command whose exit code and stderr the caller reads itself (push, fetch, merge-tree)."""
        return subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, env=_git_env(),
                              check=False)

    def git(self, *args: str, check: bool = True) -> str:
        return self._git(*args, check=check)

    def uncommitted(self) -> list[str]:
        """The paths with changes not committed (staged, unstaged or untracked), as git status lists them."""
        # -z: names as they are (no quoting of spaces or Chinese); a rename's second field is its old name
        items = iter(self.git("status", "--porcelain", "-z", "--untracked-files=all").split("\0"))
        paths = []
        for item in items:
            if item:
                paths.append(item[3:])
                if item[0] in "RC":
                    next(items, None)
        return paths

    @property
    def gp(self):
        if self._repo is None:
            import git  # GitPython: only here

            self._repo = git.Repo(self.root)
        return self._repo

    @staticmethod
    def init(root: Path) -> Repo:
        root.mkdir(parents=True, exist_ok=True)
        if not (root / ".git").exists():
            p = subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, capture_output=True,
                               env=_git_env())
            if p.returncode != 0:
                raise MemgitError(f"git init failed in {root}: {p.stderr.decode().strip()}.")
        return Repo(root)

    # -- refs --------------------------------------------------------------
    def ref(self, name: str) -> str | None:
        """The commit a ref (or any revision) names, or None."""
        if name.startswith("refs/") and not (self.git_dir / "commondir").exists():
            # read straight from the ref store: no fork for the refs memgit reads most
            try:
                data = (self.git_dir / name).read_text().strip()
                if HEX40.match(data):
                    return data
            except (FileNotFoundError, NotADirectoryError):
                return self._packed().get(name)
            except OSError:
                pass
        out = self._git("rev-parse", "-q", "--verify", name + "^{commit}", check=False).strip()
        return out or None

    def _packed(self) -> dict[str, str]:
        p = self.git_dir / "packed-refs"
        try:
            st = p.stat()
        except FileNotFoundError:
            return {}
        key = (st.st_mtime_ns, st.st_size)
        if getattr(self, "_packed_key", None) != key:
            refs = {}
            for line in p.read_text().splitlines():
                if line and line[0] not in "#^":
                    sha, _, name = line.partition(" ")
                    refs[name] = sha
            self._packed_refs, self._packed_key = refs, key
        return self._packed_refs

    def ref_names(self, prefix: str) -> set[str]:
        """The names of the refs under `prefix`, without reading what they point to."""
        if (self.git_dir / "commondir").exists():
            return set(self.refs(prefix))
        prefix = prefix.rstrip("/")
        names = {n for n in self._packed() if n.startswith(prefix + "/")}
        base = self.git_dir / prefix
        if base.is_dir():
            for dirpath, _, files in os.walk(base):
                rel = os.path.relpath(dirpath, self.git_dir).replace(os.sep, "/")
                names.update(f"{rel}/{f}" for f in files if not f.endswith(".lock"))
        return names

    def refs(self, prefix: str) -> dict[str, str]:
        """Every ref under `prefix` (a path prefix such as refs/heads/memgit) → its commit."""
        if (self.git_dir / "commondir").exists():
            out = self._git("for-each-ref", "--format=%(objectname) %(refname)", prefix)
            return dict(reversed(line.split(" ", 1)) for line in out.splitlines())
        prefix = prefix.rstrip("/")
        result = {n: sha for n, sha in self._packed().items() if n.startswith(prefix + "/")}
        base = self.git_dir / prefix
        if base.is_dir():
            for dirpath, _, names in os.walk(base):
                for fname in names:
                    full = os.path.join(dirpath, fname)
                    name = os.path.relpath(full, self.git_dir).replace(os.sep, "/")
                    if name.endswith(".lock"):
                        continue
                    try:
                        with open(full) as fh:
                            data = fh.read().strip()
                    except OSError:
                        continue
                    if HEX40.match(data):
                        result[name] = data
        return dict(sorted(result.items()))

    def head_ref(self) -> str | None:
        out = self._git("symbolic-ref", "-q", "HEAD", check=False).strip()
        return out or None

    def update_refs(self, updates: list[tuple[str, str | None, str | None]]) -> None:
        """Atomically move refs: (ref, new or None to delete, expected old or None for 'must not exist').

        Every update is a compare-and-swap; if any ref moved under us nothing changes.
        """
        lines = ["start"]
        for ref, new, old in updates:
            if new is None:
                lines.append(f"delete {ref} {old or ''}".rstrip())
            else:
                lines.append(f"update {ref} {new} {old or ZERO}")
        lines += ["prepare", "commit"]
        # git's files backend renames each ref's lock into place one at a time: a kill in the
        # middle of "commit" leaves some refs moved and others not. The intent, written first and
        # removed after, lets the next memgit command finish the transaction (recover_refs).
        # memgit's own refs (new proposals, the journal) are written in-process; a kill between
        # their renames leaves a proposal without its journal line at worst (renamed last), so
        # they need no intent
        if self._write_own_refs(updates):
            return
        intent = self.state_dir() / "refs-intent.json"
        intent_tmp = intent.with_name(f"refs-intent.{os.getpid()}.tmp")
        intent_tmp.write_text(json.dumps(updates))
        os.replace(intent_tmp, intent)
        for attempt in range(2):
            p = subprocess.run(["git", "update-ref", "--stdin"], cwd=self.root, capture_output=True,
                               input=("\n".join(lines) + "\n").encode(), env=_git_env())
            if p.returncode == 0 or attempt or not self._clear_stale_ref_locks([u[0] for u in updates]):
                break
        intent.unlink(missing_ok=True)
        if p.returncode != 0:
            err = p.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ConflictError(f"a memgit ref moved while this command ran ({err[-1] if err else ''}); "
                                f"run the command again.")

    def _write_own_refs(self, updates: list[tuple[str, str | None, str | None]]) -> bool:
        """Create or move memgit's own loose refs in-process, with git's own lock-file protocol.

        Used for what a dream does most (new proposal branches, the journal): no fork of
        `git update-ref`. Every ref is locked (O_EXCL `<ref>.lock`, as git does) and its
        current value checked before any is renamed into place. Returns False, doing nothing,
        when git must do it: main, deletions, packed or symbolic refs, a linked worktree.
        """
        if (self.git_dir / "commondir").exists():
            return False
        packed = self._packed()
        for ref, new, _old in updates:
            if (new is None or not HEX40.match(new) or ref in packed
                    or not ref.startswith((PROPOSAL_PREFIX, "refs/memgit/"))):
                return False
        held: list[tuple[Path, int]] = []
        try:
            for ref, new, old in updates:
                path = self.git_dir / ref
                path.parent.mkdir(parents=True, exist_ok=True)
                lock = path.with_name(path.name + ".lock")
                try:
                    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                except FileExistsError:
                    raise ConflictError(f"{ref} is locked by another git process; run the command again.") from None
                held.append((lock, fd))
                if self.ref(ref) != old:
                    raise ConflictError(f"{ref} moved while this command ran; run the command again.")
                os.write(fd, (new + "\n").encode())
            for _lock, fd in held:
                os.close(fd)
            for (ref, _new, _old), (lock, _fd) in zip(updates, held):
                os.replace(lock, self.git_dir / ref)
            held = []
            return True
        finally:
            for lock, fd in held:
                with contextlib.suppress(OSError):
                    os.close(fd)
                lock.unlink(missing_ok=True)

    def pending_intent(self) -> bool:
        return (self.git_dir / "memgit" / "refs-intent.json").exists()

    def recover_refs(self) -> list[str]:
        """Finish a ref transaction a killed memgit left half done. Call under the repo lock.

        Each recorded update is done if its ref still holds the expected old value, skipped if it
        already holds the new one; anything else is reported, never overwritten.
        """
        intent = self.git_dir / "memgit" / "refs-intent.json"
        try:
            updates = _intent_updates(json.loads(intent.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return []
        except (ValueError, UnicodeDecodeError):
            # not a record memgit wrote: keep it for a person to look at, and go on without it
            aside = intent.with_name(f"refs-intent.malformed-{int(time.time())}.json")
            os.replace(intent, aside)
            return [f"{intent} was not a list of ref updates; it was set aside as {aside.name} and no ref was "
                    f"changed from it: check the proposal branches with `memgit list`."]
        self._clear_stale_ref_locks([u[0] for u in updates])
        notes = []
        todo = []
        for ref, new, old in updates:
            cur = self.ref(ref)
            if cur == new:
                continue
            if cur == old:
                todo.append((ref, new, old))
            else:
                notes.append(f"{ref} moved since an interrupted memgit command; left as it is")
        if todo:
            intent.unlink(missing_ok=True)
            self.update_refs(todo)
            notes.append(f"finished an interrupted memgit command ({len(todo)} ref(s))")
        intent.unlink(missing_ok=True)
        return notes

    def _clear_stale_ref_locks(self, refs: list[str]) -> bool:
        """Remove ref lock files a killed git process left behind; True if any was removed.

        Called under memgit's repo lock; a lock that is still there after a second is not
        a live git command's (those hold a ref lock for milliseconds).
        """
        locks = [self.git_dir / f"{r}.lock" for r in refs] + [self.git_dir / "packed-refs.lock",
                                                              self.git_dir / "HEAD.lock"]
        present = [p for p in locks if p.exists()]
        if not present:
            return False
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and any(p.exists() for p in present):
            time.sleep(0.05)
        removed = False
        for p in present:
            if p.exists():
                p.unlink(missing_ok=True)
                removed = True
        return removed or not any(p.exists() for p in present)

    # -- objects -----------------------------------------------------------
    def _store(self, kind: bytes, data: bytes) -> str:
        # Written in-process as a loose object (GitCmdObjectDB.store would fork `git hash-object`
        # per object), and not at all when it is already there: a month of renamed logs re-stores
        # thirty existing blobs.
        import hashlib

        from gitdb import IStream
        from gitdb.db.loose import LooseObjectDB

        sha = hashlib.sha1(b"%s %d\0" % (kind, len(data)) + data).hexdigest()
        odb = self.gp.odb
        if not os.path.isfile(odb.db_path(odb.object_path(sha))):
            LooseObjectDB.store(odb, IStream(kind, len(data), BytesIO(data)))
        return sha

    def write_blob(self, data: bytes) -> str:
        return self._store(b"blob", data)

    def _tree_index(self, tree: str | None) -> dict[str, tuple[bytes, int]]:
        if not tree or tree == EMPTY_TREE:
            return {}
        hit = self._trees.get(tree)
        if hit is None:
            from git.objects.fun import tree_entries_from_data

            data = self.gp.odb.stream(bytes.fromhex(tree)).read()
            hit = {name: (sha, mode) for sha, mode, name in tree_entries_from_data(data)}
            if len(self._trees) >= 256:
                self._trees.pop(next(iter(self._trees)))
            self._trees[tree] = hit
        return hit

    def _tree_entries(self, tree: str | None) -> list[tuple[bytes, int, str]]:
        return [(sha, mode, name) for name, (sha, mode) in self._tree_index(tree).items()]

    def tree_of(self, commit: str) -> str:
        tree = self._commit_trees.get(commit)
        if tree is None:
            info = self.gp.odb.stream(bytes.fromhex(commit)).read()
            tree = self._commit_trees[commit] = info.split(b"\n", 1)[0].split(b" ")[1].decode()
        return tree

    def tree_with(self, tree: str | None, changes: dict[str, str | None]) -> str:
        """A new tree: `tree` with each path set to a blob id (or removed, for None)."""
        entries = dict(self._tree_index(tree))
        here: dict[str, str | None] = {}
        below: dict[str, dict[str, str | None]] = {}
        for path, blob in changes.items():
            head, _, rest = path.partition("/")
            if rest:
                below.setdefault(head, {})[rest] = blob
            else:
                here[head] = blob
        for name, blob in here.items():
            if blob is None:
                entries.pop(name, None)
            else:
                entries[name] = (bytes.fromhex(blob), 0o100644)
        for name, sub in below.items():
            old = entries.get(name)
            old_tree = old[0].hex() if old and old[1] == 0o040000 else None
            new_tree = self.tree_with(old_tree, sub)
            if new_tree == EMPTY_TREE:
                entries.pop(name, None)
            else:
                entries[name] = (bytes.fromhex(new_tree), 0o040000)
        ordered = sorted(((sha, mode, name) for name, (sha, mode) in entries.items()),
                         key=lambda e: e[2] + "/" if e[1] == 0o040000 else e[2])
        if not ordered:
            self._store(b"tree", b"")  # stored, so fsck finds every tree a commit names
            return EMPTY_TREE
        # the tree format itself (as tree_to_stream writes it, without re-validating every
        # unchanged name: a folder of years of logs has thousands)
        data = b"".join(b"%o %s\0%s" % (mode, name.encode("utf-8", "surrogateescape"), sha)
                        for sha, mode, name in ordered)
        return self._store(b"tree", data)

    def _identity(self) -> tuple[str, str]:
        if self._ident is None:
            name = os.environ.get("GIT_AUTHOR_NAME")
            email = os.environ.get("GIT_AUTHOR_EMAIL")
            if not (name and email):
                r = self.gp.config_reader()
                name = name or r.get_value("user", "name", "") or "memgit"
                email = email or r.get_value("user", "email", "") or "memgit@localhost"
            self._ident = (str(name), str(email))
        return self._ident

    def user(self) -> str:
        name, email = self._identity()
        return f"{name} <{email}>"

    def commit(self, tree: str, parents: list[str], message: str, authored: int | None = None) -> str:
        """A commit object; `authored` (Unix time) keeps an earlier author date, as a rebase does."""
        if tree == EMPTY_TREE:  # git knows the empty tree without storing it; fsck wants it stored
            self._store(b"tree", b"")
        name, email = self._identity()
        stamp = _now_stamp()
        author = f"{authored} +0000" if authored is not None else stamp
        lines = [f"tree {tree}", *[f"parent {p}" for p in parents],
                 f"author {name} <{email}> {author}", f"committer {name} <{email}> {stamp}", "",
                 message if message.endswith("\n") else message + "\n"]
        return self._store(b"commit", "\n".join(lines).encode("utf-8"))

    def commit_parents_message(self, sha: str) -> tuple[list[str], str]:
        """A commit's parents and message, read in-process."""
        raw = self.gp.odb.stream(bytes.fromhex(sha)).read().decode("utf-8", "replace")
        head, _, message = raw.partition("\n\n")
        parents = [ln[7:] for ln in head.splitlines() if ln.startswith("parent ")]
        return parents, message

    def read(self, commit: str | None, path: str) -> bytes | None:
        """A file's bytes at `commit`, or None."""
        if not commit:
            return None
        return self.read_tree_file(self.tree_of(commit), path)

    def read_tree_file(self, tree: str, path: str) -> bytes | None:
        """A file's bytes in `tree`, or None."""
        parts = path.split("/")
        for i, part in enumerate(parts):
            hit = self._tree_index(tree).get(part)
            if hit is None:
                return None
            found = (hit[0].hex(), hit[1])
            if i == len(parts) - 1:
                if found[1] == 0o040000:
                    return None
                return self.gp.odb.stream(bytes.fromhex(found[0])).read()
            if found[1] != 0o040000:
                return None
            tree = found[0]
        return None

    def list_files(self, commit: str | None, under: str = "") -> list[str]:
        if not commit:
            return []
        args = ["ls-tree", "-r", "--name-only", "-z", commit]
        if under:
            args += ["--", under]
        return [p for p in self._git(*args).split("\0") if p]

    def info(self, rev: str) -> CommitInfo:
        out = self._git("log", "-1", "--format=%H%x00%P%x00%an <%ae>%x00%at%x00%B", rev)
        sha, parents, author, ts, msg = out.split("\0", 4)
        return CommitInfo(sha, tuple(parents.split()), msg.rstrip("\n"), author, int(ts))

    def log(self, rev: str, max_count: int | None = None, first_parent: bool = False,
            paths: tuple[str, ...] = ()) -> list[CommitInfo]:
        args = ["log", "--format=%H%x00%P%x00%an <%ae>%x00%at%x00%B%x1e"]
        if max_count:
            args.append(f"-n{max_count}")
        if first_parent:
            args.append("--first-parent")
        args.append(rev)
        if paths:
            args += ["--", *paths]
        out = self._git(*args, check=False)
        result = []
        for rec in out.split("\x1e"):
            rec = rec.strip("\n")
            if not rec:
                continue
            sha, parents, author, ts, msg = rec.split("\0", 4)
            result.append(CommitInfo(sha, tuple(parents.split()), msg.rstrip("\n"), author, int(ts)))
        return result

    def diff(self, a: str, b: str, paths: tuple[str, ...] = (), color: bool = False) -> str:
        args = ["diff", "--no-ext-diff", "-M", "--color=always" if color else "--no-color", a, b]
        if paths:
            args += ["--", *paths]
        return self._git(*args)

    def is_ancestor(self, a: str, b: str) -> bool:
        return subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=self.root,
                              capture_output=True, env=_git_env()).returncode == 0

    # -- working tree ----------------------------------------------------------
    # memgit stages into its own index (.git/memgit/index), used only under the repo lock, so a
    # process killed mid-`git add` never leaves the user's .git/index.lock behind; the real index
    # is then replaced by a copy when nobody else holds it.
    def _private_index(self) -> dict[str, str]:
        path = self.state_dir() / "index"
        stale = path.with_name("index.lock")
        if stale.exists():  # only memgit writes this index, and only under the lock: a leftover of a crash
            stale.unlink(missing_ok=True)
        if not path.exists() and (self.git_dir / "index").exists():
            import shutil

            shutil.copyfile(self.git_dir / "index", path)
        return {"GIT_INDEX_FILE": str(path)}

    def _publish_index(self) -> None:
        real, private = self.git_dir / "index", self.state_dir() / "index"
        if (self.git_dir / "index.lock").exists() or not private.exists():
            return
        import shutil

        tmp = self.state_dir() / "index.publish"
        shutil.copyfile(private, tmp)
        os.replace(tmp, real)

    def _exclude_temp_files(self) -> None:
        """A temp file a crash left beside a memory file is never committed as an agent edit."""
        path = self.git_dir / "info" / "exclude"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        if TEMP_PATTERN not in text.splitlines():
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as f:
                f.write(("" if not text or text.endswith("\n") else "\n") + TEMP_PATTERN + "\n")

    def stage_all_tree(self) -> str:
        """Stage the whole working tree (as `git add -A`) and return its tree id."""
        self._exclude_temp_files()
        env = self._private_index()
        self._git("add", "-A", env=env)
        tree = self._git("write-tree", env=env).strip()
        self._publish_index()
        return tree

    def refresh_index(self, paths: list[str]) -> None:
        if paths:
            self._git("add", "-A", "--", *paths, check=False, env=self._private_index())
            self._publish_index()

    def reset_index(self, commit: str) -> None:
        self._git("read-tree", commit)

    # -- lock ---------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the repo lock; wait up to `timeout` seconds (MEMGIT_LOCK_TIMEOUT, default 30)."""
        if timeout is None:
            timeout = float(os.environ.get("MEMGIT_LOCK_TIMEOUT", "30"))
        path = self.git_dir / "memgit.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as e:
                    if e.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() >= deadline:
                        holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
                        raise LockError(f"another memgit process holds the lock on {self.root} "
                                        f"({holder or 'unknown holder'}); wait for it to finish and retry."
                                        ) from None
                    time.sleep(0.05)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} since {time.strftime('%H:%M:%S')}".encode(), 0)
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def state_dir(self) -> Path:
        d = self.git_dir / "memgit"
        d.mkdir(exist_ok=True)
        return d


def _intent_updates(raw: object) -> list[tuple[str, str | None, str | None]]:
    """The (ref, new id, old id) triples of a refs-intent record; ValueError if it is not one."""
    if not isinstance(raw, list):
        raise ValueError("not a list")
    out = []
    for u in raw:
        if not (isinstance(u, list) and len(u) == 3 and isinstance(u[0], str)
                and u[0].startswith("refs/") and ".." not in u[0]
                and all(x is None or (isinstance(x, str) and HEX40.match(x)) for x in u[1:])):
            raise ValueError(f"not a ref update: {u!r}")
        out.append((u[0], u[1], u[2]))
    return out


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    env["LC_ALL"] = "C"
    return env


def _now_stamp() -> str:
    raw = os.environ.get("GIT_COMMITTER_DATE") or os.environ.get("GIT_AUTHOR_DATE")
    if raw:
        from git.objects.util import parse_date

        ts, off = parse_date(raw)
        sign = "-" if off > 0 else "+"
        off = abs(off)
        return f"{ts} {sign}{off // 3600:02d}{(off % 3600) // 60:02d}"
    ts = int(time.time())
    off = -time.localtime(ts).tm_gmtoff
    sign = "-" if off > 0 else "+"
    off = abs(off)
    return f"{ts} {sign}{off // 3600:02d}{(off % 3600) // 60:02d}"


def temp_name(stem: str) -> str:
    """A temp file name no other writer uses: not another process, nor another thread of this one."""
    import secrets
    import threading

    return f".{stem}.memgit-{os.getpid()}-{threading.get_ident()}-{secrets.token_hex(4)}.tmp"


def atomic_write(path: Path, data: bytes) -> None:
    """Write a file through a temp file and rename: readers see the old or the new bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(temp_name(path.name))
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as e:
        # a failed write (a full disk) leaves the old file as it was and no temp file beside it;
        # the error names the file being written, which a failing write() or fsync() does not
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise OSError(e.errno, e.strerror or str(e), str(path)) from e


def merge_file(ours: bytes, base: bytes, theirs: bytes, union: bool = False) -> bytes | None:
    """`git merge-file` of three versions; None on conflict (never with union: both sides' lines kept)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memgit-merge-") as d:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(d, name)
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
        p = subprocess.run(["git", "merge-file", "-p", *(["--union"] if union else []), *paths],
                           capture_output=True, env=_git_env(), check=False)
        return p.stdout if p.returncode == 0 else None
