"""Where the shipped templates/ and hooks/ live: package data in a wheel,
the top-level folders in a checkout."""
from __future__ import annotations

from pathlib import Path


def folder(kind: str) -> Path:
    """The folder holding the shipped `templates` or `hooks`."""
    try:
        from importlib.resources import files

        p = Path(str(files(f"memgit.{kind}")))
        if p.is_dir():
            return p
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parent.parent / kind


def read(kind: str, name: str) -> str:
    return (folder(kind) / name).read_text(encoding="utf-8")
