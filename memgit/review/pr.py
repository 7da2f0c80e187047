"""`memgit pr`: a proposal as a pull request title and markdown body for any forge.

Everything is redacted (the diff too) and HTML-escaped outside code, since a
forge renders the body and memory text is untrusted.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

from memgit import proposals, sensitive
from memgit.render import render
from memgit.review import common
from memgit.workspace import Workspace


@dataclass(frozen=True)
class PullRequest:
    id: str
    branch: str
    title: str
    body: str

    def text(self) -> str:
        """Title line, blank line, body: the shape of a commit message."""
        return f"{self.title}\n\n{self.body}"

    def to_dict(self) -> dict:
        return {"id": self.id, "branch": self.branch, "title": self.title, "body": self.body}


def _md(text: str) -> str:
    """Untrusted text for a markdown paragraph: one line, HTML-escaped."""
    return html.escape(" ".join(sensitive.redact(text).split()), quote=False)


def _code(text: str) -> str:
    """Inline code that survives backticks inside it."""
    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in `text`."""
    run = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, run + 1)


def build(ws: Workspace, pid: str) -> PullRequest:
    """The pull request for proposal `pid` (open or closed)."""
    p = proposals.get(ws, pid)
    diff = common.redacted_diff(ws, p).rstrip("\n")
    title = " ".join(sensitive.redact(f"memgit: {p.title}").split())
    body = render(
        "pr_body.md.j2",
        id=p.id, branch=p.branch, status=p.status, op=p.op.op, file=_code(p.op.file),
        dest=_code(p.op.dest) if p.op.dest else "", confidence=common.confidence(p), origin=p.op.origin,
        reason=_md(p.op.reason), applies=p.applies is not False, why_not=_md(p.why_not),
        evidence=[{"source": _code(sensitive.redact(e.source)), "quote": _md(e.quote)} for e in p.op.evidence],
        diff=diff, fence=_fence(diff),
    )
    return PullRequest(p.id, p.branch, title, body)
