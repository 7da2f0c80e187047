"""The one exception root: every expected failure is a MemgitError whose message
is one sentence telling the user what to do."""
from __future__ import annotations


class MemgitError(Exception):
    """An expected failure: printed as `Error: …`, exit 1, no traceback."""


class ConfigError(MemgitError):
    """memgit.toml is unreadable or holds a wrong key or type."""


class NotFoundError(MemgitError):
    """An unknown proposal id, entry, section or file."""


class AmbiguousError(MemgitError):
    """A selector matched more than one entry or section."""


class ConflictError(MemgitError):
    """A proposal no longer applies, or a ref moved under us."""


class LockError(MemgitError):
    """Another memgit process holds the repository lock."""


class SensitiveDataError(MemgitError):
    """Text that would enter memory holds a secret or a trading figure."""


class DataError(MemgitError):
    """A data file shipped with memgit (a word list) is missing or malformed: a packaging bug."""
