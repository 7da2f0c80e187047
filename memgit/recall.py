"""Recall: ranked BM25 search over everything the agent can read again.

The corpus is the working tree (what the agent reads, not main): memory files
and the files under `reference/` as entries (plus any prose line outside an
entry), daily logs and archived logs as lines, the other files of
`<archive_dir>/archive-*/` (archived entries) as entries again, and imported
transcripts (`<sessions_dir>/*.jsonl`) one turn a unit, named by who said it. Every unit is
redacted before it is tokenised, so no secret reaches the cache or a hit, and
tokenised with `memgit.text.terms` (English stems, Chinese words after
Traditional→Simplified folding, versions and paths whole). Ranking is
rank_bm25's BM25Okapi as it is: Lucene's always-positive idf was tried and
found fewer LoCoMo evidence turns (benchmarks/locomo_replay.py).

Redacting and tokenising ten years of logs takes seconds, so the tokenised
units of each file are cached in `.git/memgit/recall-cache`, keyed by path,
size and mtime and by the code that made them; a file modified in the last two
seconds is not cached (its mtime could still hide a second write, git's
"racy" case).

The wake check (`wake_check`) runs after `memgit approve`: every approved
consolidation and refresh must be found again, in its file, by a recall of its
own key terms.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from memgit import sensitive
from memgit.errors import MemgitError
from memgit.memory import Document
from memgit.text import terms
from memgit.workspace import LOG_NAME_RE, Workspace

CACHE_NAME = "recall-cache"
CACHE_VERSION = 1          # with the code of redaction, parsing and tokenising: the cache's key
RACY_SECONDS = 2.0
MAX_BYTES = 32 * 1024 * 1024
DEFAULT_K = 10
WAKE_TERMS = 5
IDF_FLOOR = 1e-3
HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
CHECKED_OPS = ("consolidate", "refresh")


@dataclass(frozen=True)
class Hit:
    """One ranked result: a memory entry or a log line, as written (redacted)."""

    path: str      # workspace-relative, with forward slashes
    line: int      # 1-based first line
    text: str
    score: float

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "text": self.text, "score": self.score}


@dataclass(frozen=True)
class Unit:
    path: str
    line: int
    text: str
    terms: tuple[str, ...]


# -- which files ----------------------------------------------------------------------
def _inside(root: Path, p: Path) -> bool:
    try:
        p.resolve().relative_to(root)
        return True
    except (ValueError, OSError, RuntimeError):
        return False


def _safe(root: Path, p: Path, warnings: list[str], rel: str | None = None) -> bool:
    """False (with a warning) for a symlink leading out of the workspace."""
    if _inside(root, p):
        return True
    warnings.append(f"{rel or p.relative_to(root).as_posix()}: a symlink leading outside the workspace, "
                    f"not searched; copy it into the workspace instead.")
    return False


def _walk_md(root: Path, top: Path, warnings: list[str], suffix: str = ".md") -> list[str]:
    """Relative paths of the markdown files under `top`, sorted; links out of the workspace are not followed.

    os.scandir, not pathlib: after expire a ten-year workspace has thousands of archived logs.
    """
    if not top.is_dir() or not _safe(root, top, warnings):
        return []
    found: list[str] = []
    stack = [(str(top), top.relative_to(root).as_posix())]
    while stack:
        path, rel = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError as e:
            warnings.append(f"{rel}: cannot be listed ({e.strerror}), not searched; fix its permissions.")
            continue
        for de in entries:
            sub = f"{rel}/{de.name}"
            if de.is_dir(follow_symlinks=False):
                stack.append((de.path, sub))
            elif de.name.endswith(suffix) and de.is_file() and (
                    # the folder is inside, so only a symlink can lead out (resolving every file is slow)
                    not de.is_symlink() or _safe(root, Path(de.path), warnings, sub)):
                found.append(sub)
    return sorted(found)


def sources(ws: Workspace, warnings: list[str] | None = None) -> list[tuple[str, str]]:
    """(relative path, "entries" | "lines") of every file recall searches, in ranking tie order.

    A file or folder that is a symlink leading out of the workspace is left out with a warning.
    """
    warnings = [] if warnings is None else warnings
    root = ws.root
    mem = ws.config.memory
    out: list[tuple[str, str]] = [(Path(name).as_posix(), "entries") for name in ws.memory_files
                                  if (root / name).is_file() and _safe(root, root / name, warnings, name)]
    out += [(rel, "entries") for rel in _walk_md(root, root / mem.reference_dir, warnings)]
    logs = root / mem.logs_dir
    if logs.is_dir() and _safe(root, logs, warnings):
        prefix = logs.relative_to(root).as_posix() + "/"
        # os.scandir, not pathlib: a ten-year workspace has thousands of logs
        for de in sorted(os.scandir(logs), key=lambda de: de.name):
            if de.name.endswith(".md") and de.is_file() and (not de.is_symlink() or
                                                             _safe(root, Path(de.path), warnings)):
                out.append((prefix + de.name, "lines" if LOG_NAME_RE.match(de.name) else "entries"))
    arch = root / mem.archive_dir
    if arch.is_dir():
        for d in sorted(arch.glob("archive-*")):
            out += [(rel, "lines" if LOG_NAME_RE.match(rel.rsplit("/", 1)[-1]) else "entries")
                    for rel in _walk_md(root, d, warnings)]
    # imported transcripts: one unit a turn, who said it first
    out += [(rel, "turns") for rel in _walk_md(root, root / mem.sessions_dir, warnings, ".jsonl")]
    seen: set[str] = set()
    unique = []
    for rel, kind in out:
        if rel not in seen:
            seen.add(rel)
            unique.append((rel, kind))
    return unique


# -- units -----------------------------------------------------------------------------
def _line_units(rel: str, text: str) -> list[tuple[int, str]]:
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if line.strip() and not HEADING_RE.match(line):
            out.append((i, line))
    return out


def _entry_units(rel: str, text: str) -> list[tuple[int, str]]:
    doc = Document(rel, text.encode("utf-8"))
    skip: set[int] = {s.line for s in doc.sections}
    if doc.lines and doc.lines[0].strip() in ("---", "+++"):  # front matter is metadata, not memory
        for i in range(1, len(doc.lines)):
            if doc.lines[i].strip() == doc.lines[0].strip():
                skip.update(range(i + 1))
                break
    out = []
    for e in doc.entries:
        out.append((e.line, e.text))
        skip.update(range(e.start, e.end))
    for i, line in enumerate(doc.lines):
        line = line.rstrip("\r\n")
        if i not in skip and line.strip() and not HEADING_RE.match(line):
            out.append((i + 1, line))
    return sorted(out)


def _turn_units(rel: str, text: str) -> list[tuple[int, str]]:
    """A session file's turns as "<who>: <text>" (memgit's session lines; a bad line is left out)."""
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str) or not rec["text"].strip():
            continue
        who = rec.get("speaker") if rec.get("role") == "other" else rec.get("role")
        who = who if isinstance(who, str) and who else "someone"
        out.append((i, f"{who}: {' '.join(rec['text'].split())}"))
    return out


def _units_of(rel: str, kind: str, text: str) -> list[tuple[int, str, str]]:
    """(line, redacted text, space-joined terms) of one file's units that carry a term."""
    if kind == "turns":  # parsed first, so an escaped secret ("\u0073k-…") is redacted as it reads
        pieces = [(i, sensitive.redact(t)) for i, t in _turn_units(rel, text)]
    else:
        red = sensitive.redact(text)
        pieces = _line_units(rel, red) if kind == "lines" else _entry_units(rel, red)
    out = []
    for line, t in pieces:
        ts = terms(t)
        if ts:
            out.append((line, t, " ".join(ts)))
    return out


def _read(root: Path, rel: str, warnings: list[str]) -> tuple[str, os.stat_result] | None:
    p = root / rel
    try:
        st = p.stat()
        if st.st_size > MAX_BYTES:
            warnings.append(f"{rel}: {st.st_size // (1024 * 1024)} MB is over recall's "
                            f"{MAX_BYTES // (1024 * 1024)} MB limit, not searched; split it.")
            return None
        data = p.read_bytes()
    except OSError as e:
        warnings.append(f"{rel}: cannot be read ({e.strerror or e.__class__.__name__}), not searched; "
                        f"fix its permissions.")
        return None
    if b"\x00" in data[:8192]:
        warnings.append(f"{rel}: binary data, not searched; restore it as markdown text.")
        return None
    try:
        return data.decode("utf-8-sig"), st
    except UnicodeDecodeError:
        warnings.append(f"{rel}: not valid UTF-8, not searched; save it as UTF-8.")
        return None


# -- the cache ---------------------------------------------------------------------------
def _cache_path(ws: Workspace) -> Path:
    return ws.root / ws.repo.git_dir / "memgit" / CACHE_NAME  # git_dir may be relative to the root


@lru_cache(maxsize=1)
def _code_version() -> str:
    """Cached units are only as good as the code that made them: redaction, parsing, tokenising."""
    from memgit import memory, text

    h = hashlib.sha256(str(CACHE_VERSION).encode())
    for mod in (sensitive, memory, text):
        try:
            h.update(Path(mod.__file__ or "").read_bytes())
        except OSError:
            h.update(str(time.time()).encode())  # unknown code: never trust the cache
    h.update(text.tokeniser_id().encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]


def _load_cache(path: Path) -> dict:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict) or raw.get("version") != _code_version() or not isinstance(raw.get("files"), dict):
        return {}
    return raw["files"]


def _save_cache(path: Path, files: dict) -> None:
    from memgit.repo import atomic_write

    data = json.dumps({"version": _code_version(), "files": files}, ensure_ascii=False, separators=(",", ":"))
    try:
        atomic_write(path, data.encode("utf-8"))
    except OSError:
        pass  # the cache only saves time; a read-only .git still gets its answers


def load_units(ws: Workspace, warnings: list[str] | None = None, cache: bool = True) -> list[Unit]:
    """Every searchable unit of the working tree, tokenised (through the cache)."""
    warnings = [] if warnings is None else warnings
    root = ws.root
    cpath = _cache_path(ws)
    old = _load_cache(cpath) if cache else {}
    new: dict[str, list] = {}
    units: list[Unit] = []
    now = time.time()
    changed = False
    base = str(root)
    for rel, kind in sources(ws, warnings):
        try:
            st = os.stat(os.path.join(base, rel))
        except OSError:
            st = None
        rec = old.get(rel)
        got_units = None
        if (st is not None and isinstance(rec, list) and len(rec) == 4 and rec[0] == st.st_size
                and rec[1] == st.st_mtime_ns and rec[2] == kind):
            try:
                got_units = [Unit(rel, int(line), str(text), tuple(ts.split(" "))) for line, text, ts in rec[3]]
                new[rel] = rec
            except (TypeError, ValueError, AttributeError):
                got_units = None  # a damaged record: read the file again
        if got_units is None:
            got = _read(root, rel, warnings)
            if got is None:
                continue
            text, st = got
            try:
                rows = _units_of(rel, kind, text)
            except MemgitError as e:
                warnings.append(str(e))
                continue
            if now - st.st_mtime > RACY_SECONDS:
                new[rel] = [st.st_size, st.st_mtime_ns, kind, rows]
            changed = True
            got_units = [Unit(rel, line, t, tuple(ts.split(" "))) for line, t, ts in rows]
        units += got_units
    if cache and (changed or set(new) != set(old)):
        _save_cache(cpath, new)
    return units


# -- ranking ------------------------------------------------------------------------------
class Index:
    """A BM25Okapi index over units; `search` ranks them for a query."""

    def __init__(self, units: Sequence[Unit]):
        self.units = list(units)
        self._bm25 = None
        if self.units:
            from rank_bm25 import BM25Okapi  # numpy: imported only when there is something to rank

            self._bm25 = BM25Okapi([u.terms for u in self.units])
            # BM25Okapi floors a negative idf (a term in over half the units) at 0.25 x the average
            # idf, which is itself <= 0 in a corpus of one or two units: keep every term positive.
            for t, v in self._bm25.idf.items():
                if v <= 0:
                    self._bm25.idf[t] = IDF_FLOOR

    def idf(self, term: str) -> float | None:
        return self._bm25.idf.get(term) if self._bm25 else None

    def key_terms(self, text: str, n: int = WAKE_TERMS) -> list[str]:
        """The `n` rarest distinct terms of `text` (a term unknown to the index counts as rarest)."""
        distinct = list(dict.fromkeys(terms(text)))
        order = sorted(range(len(distinct)),
                       key=lambda i: (-(self.idf(distinct[i]) if self.idf(distinct[i]) is not None
                                        else float("inf")), i))
        return [distinct[i] for i in order[:n]]

    def search_terms(self, query_terms: Iterable[str], k: int = DEFAULT_K) -> list[Hit]:
        q = list(dict.fromkeys(query_terms))
        if not q or self._bm25 is None or k <= 0:
            return []
        import numpy as np

        scores = self._bm25.get_scores(q)
        idx = np.flatnonzero(scores > 0)
        order = idx[np.lexsort((idx, -scores[idx]))][:k]
        return [Hit(self.units[i].path, self.units[i].line, self.units[i].text, round(float(scores[i]), 4))
                for i in order]

    def search(self, query: str, k: int = DEFAULT_K) -> list[Hit]:
        return self.search_terms(terms(query), k)


def build_index(ws: Workspace, warnings: list[str] | None = None, cache: bool = True) -> Index:
    return Index(load_units(ws, warnings, cache))


def recall(ws: Workspace, queries: Sequence[str], k: int = DEFAULT_K, warnings: list[str] | None = None
           ) -> list[list[Hit]]:
    """The top `k` hits of each query, in the order of the queries."""
    if k < 1:
        raise MemgitError(f"-k {k} asks for no hits; give -k 1 or more.")
    index = build_index(ws, warnings)
    return [index.search(q, k) for q in queries]


# -- the wake check ------------------------------------------------------------------------
def _flat(text: str) -> str:
    return " ".join(text.split())


def found_again(index: Index, file: str, text: str, k: int = DEFAULT_K, n: int = WAKE_TERMS) -> bool:
    """True if a recall of `text`'s `n` key terms finds, in its top `k`, the entry of `file` holding it."""
    want = _flat(sensitive.redact(text))
    hits = index.search_terms(index.key_terms(text, n), k)
    file = Path(file).as_posix()
    return any(h.path == file and want in _flat(h.text) for h in hits)


def wake_check(ws: Workspace, approved: Sequence, k: int = DEFAULT_K, n: int = WAKE_TERMS) -> list[str]:
    """Ids of approved consolidations and refreshes that a recall of their own key terms does not find."""
    checks = [p for p in approved if p.op.op in CHECKED_OPS and p.op.text]
    if not checks:
        return []
    warnings: list[str] = []
    index = build_index(ws, warnings)
    ws.warnings.extend(w for w in warnings if w not in ws.warnings)
    return [p.id for p in checks if not found_again(index, p.op.file, p.op.text, k, n)]
