"""The one reader of the word lists shipped as data, one file per language
(`memgit/data/lexicon/<lang>.toml`). Rules never spell words: they ask for a list by key
("pending", "as_written.slot") and get its alternatives, English first, then Chinese.

A missing or malformed file is memgit's own packaging bug; it still fails as one clear
`DataError` rather than a traceback."""
from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

from memgit.errors import DataError

LANGUAGES = ("en", "zh")
FOLDER = Path(__file__).resolve().parent / "data" / "lexicon"


@lru_cache(maxsize=None)
def data(lang: str) -> dict:
    """The parsed word file of one language."""
    path = FOLDER / f"{lang}.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise DataError(f"memgit's word list {path} is missing or malformed ({e}); reinstall memgit.") from None


def _node(lang: str, key: str) -> object:
    node: object = data(lang)
    for part in key.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def words(key: str, lang: str | None = None) -> list[str]:
    """The strings listed under `key` in one language, or in all (English first)."""
    out: list[str] = []
    for la in (lang,) if lang else LANGUAGES:
        node = _node(la, key)
        if node is None:
            continue
        if not isinstance(node, list) or not all(isinstance(w, str) and w for w in node):
            raise DataError(f"memgit's word list {la}.toml has a bad '{key}' (not a list of words); reinstall memgit.")
        out.extend(node)
    if not out and lang is None:
        # an empty alternation would match everywhere: a key no language spells is a bug
        raise DataError(f"memgit's word lists have no '{key}'; reinstall memgit.")
    return out


def table(key: str, lang: str | None = None) -> dict[str, object]:
    """The table under `key` in one language, or all languages' tables merged (English first)."""
    out: dict[str, object] = {}
    for la in (lang,) if lang else LANGUAGES:
        node = _node(la, key)
        if node is None:
            continue
        if not isinstance(node, dict):
            raise DataError(f"memgit's word list {la}.toml has a bad '{key}' (not a table); reinstall memgit.")
        out.update(node)
    return out


def alternation(key: str, lang: str | None = None) -> str:
    """The alternatives under `key` joined with `|`, to be embedded in a larger pattern."""
    return "|".join(words(key, lang))


def compiled(pattern: str, flags: int = 0, key: str = "") -> re.Pattern[str]:
    """The pattern compiled through `memgit.text.compile_words` (the same matches, found faster on a
    long alternation of words)."""
    from memgit.text import compile_words

    try:
        return compile_words(pattern, flags)
    except re.error as e:
        raise DataError(f"memgit's word list '{key}' holds a bad pattern ({e}); reinstall memgit.") from None


def pattern(key: str, flags: int = 0) -> re.Pattern[str]:
    """The alternatives under `key`, each grouped, as one compiled pattern."""
    return compiled("|".join(f"(?:{a})" for a in words(key)), flags, key)


class LazyPattern:
    """A word list's pattern compiled on its first use, as `compiled` would compile it.

    The lexicon holds about a hundred patterns and compiling them all costs a dream more than a tenth
    of a second before it reads a line, though a run uses only some of them (and on two processors,
    each compiles those its own rules use). At first use the compiled pattern's attributes (`search`,
    `sub`, `pattern`, …) are bound onto the instance, so every later call goes straight to `re`.
    `source` is the pattern as given, to build a larger one from without compiling this one. A bad
    pattern raises the same `DataError` at first use."""

    _SHARED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "pattern",
               "groups", "groupindex", "flags")

    def __init__(self, source: str, flags: int = 0, key: str = "") -> None:
        self.source, self._flags, self._key = source, flags, key

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") or name not in self._SHARED:
            raise AttributeError(name)
        c = compiled(self.source, self._flags, self._key)
        for a in self._SHARED:
            setattr(self, a, getattr(c, a))
        return getattr(c, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._key or self.source[:40]!r})"


def pattern_later(key: str, flags: int = 0) -> LazyPattern:
    """`pattern(key, flags)`, compiled on first use (the list itself is read and checked now)."""
    return LazyPattern("|".join(f"(?:{a})" for a in words(key)), flags, key)
