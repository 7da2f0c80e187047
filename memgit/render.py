"""Templates → text. The only module that imports jinja2.

Templates live in the top-level `templates/` folder (package data in a wheel).
StrictUndefined makes a missing variable an error, never a silent blank.
HTML templates (`*.html.j2`) are autoescaped, since memory text is untrusted;
prompt and markdown templates are not.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from memgit import resources


@lru_cache(maxsize=1)
def environment():
    """The one jinja2 Environment over the shipped templates."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    return Environment(loader=FileSystemLoader(resources.folder("templates")), undefined=StrictUndefined,
                       keep_trailing_newline=True,
                       autoescape=select_autoescape(enabled_extensions=("html", "html.j2", "xml"),
                                                    default_for_string=False, default=False))


def render(name: str, **context: Any) -> str:
    """Render the template `name` (e.g. "dream_system.md.j2") with `context`."""
    return environment().get_template(name).render(**context)
