"""`memgit review`: walk the open proposals one by one in a plain terminal.

The loop talks to the person only through a `Terminal` (write, one key, one
line, an editor), so the click layer decides how keys are read and the loop
itself never prints. Every action goes through `memgit.proposals`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import click

from memgit import proposals, sensitive
from memgit.errors import MemgitError, NotFoundError
from memgit.proposals import Proposal
from memgit.review import common
from memgit.review.common import DiffLine
from memgit.workspace import Workspace

PROMPT = "[a]pprove  [r]eject  [e]dit  [s]kip  [q]uit > "
HELP = ("a: approve into main   r: reject (asks a reason)   e: edit the proposed text in $EDITOR, then approve   "
        "s: skip for now   q: quit")


class Terminal(Protocol):
    def write(self, text: str) -> None: ...

    def key(self, prompt: str) -> str:
        """One key pressed (lower case); "" at end of input."""

    def ask(self, prompt: str) -> str:
        """One line typed."""

    def edit(self, text: str) -> str | None:
        """The text after the person edited it; None if the editor was left without saving."""


@dataclass
class Summary:
    total: int = 0
    approved: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    edited: list[tuple[str, str]] = field(default_factory=list)   # (original id, approved edited id)
    skipped: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (id, why approval was refused)
    quit: bool = False

    @property
    def seen(self) -> int:
        return len(self.approved) + len(self.rejected) + len(self.edited) + len(self.skipped) + len(self.refused)

    def line(self) -> str:
        if not self.total:
            return "No open proposals."
        parts = [f"{len(self.approved)} approved", f"{len(self.edited)} edited and approved",
                 f"{len(self.rejected)} rejected", f"{len(self.skipped)} skipped"]
        if self.refused:
            parts.append(f"{len(self.refused)} refused (still open)")
        left = self.total - self.seen
        tail = f"; {left} not reviewed (quit)" if left and self.quit else ""
        return f"Reviewed {self.seen} of {self.total}: " + ", ".join(parts) + tail + "."

    def to_dict(self) -> dict:
        return {"total": self.total, "approved": self.approved, "rejected": self.rejected,
                "edited": [{"original": a, "approved": b} for a, b in self.edited],
                "skipped": self.skipped, "refused": [{"id": i, "reason": w} for i, w in self.refused]}


def _style(color: bool):
    return (lambda text, **kw: click.style(text, **kw)) if color else (lambda text, **kw: text)


def render_line(ln: DiffLine, color: bool) -> str:
    """One diff line; changed words in reverse video, or as [-old-] / {+new+} without colour."""
    st = _style(color)
    if ln.kind == "file":
        return st("diff --git " + ln.text, bold=True)
    if ln.kind == "hunk":
        return st(ln.text, fg="cyan")
    if ln.kind in ("context", "note"):
        return ln.prefix + ln.text
    fg = "red" if ln.kind == "del" else "green"
    if not ln.paired:
        return st(ln.prefix + ln.text, fg=fg)
    out = [st(ln.prefix, fg=fg)]
    for s in ln.segments:
        if not s.changed:
            out.append(st(s.text, fg=fg))
        elif color:
            out.append(st(s.text, fg=fg, bold=True, reverse=True))
        else:
            out.append(f"[-{s.text}-]" if ln.kind == "del" else f"{{+{s.text}+}}")
    return "".join(out)


def details(p: Proposal, color: bool, status: bool = False) -> list[str]:
    """What a proposal is, below its title: op, file, confidence, age, origin (and status), its destination,
    why it no longer applies, its reason and its evidence; every word from the record is redacted."""
    st = _style(color)
    red = sensitive.redact
    state = f"   status: {p.status}" if status else ""
    lines = [f"op: {st(p.op.op, bold=True)}   file: {p.op.file}   confidence: {common.confidence(p)}{state}   "
             f"age: {common.age(p.created)}   origin: {p.op.origin}"]
    if p.op.dest:
        lines.append(f"to: {p.op.dest}")
    if p.applies is False:
        lines.append(st(f"does not apply to main: {red(p.why_not)}", fg="red"))
    lines.append(f"reason: {red(p.op.reason) if p.op.reason else '(none given)'}")
    if p.op.evidence:
        lines.append("evidence:")
        for e in p.op.evidence:
            lines.append(f"  {st(e.source, fg='cyan')}  \"{red(' '.join(e.quote.split()))}\"")
    return lines


def render(p: Proposal, diff: str, color: bool, index: int = 1, total: int = 1) -> str:
    """The review screen for one proposal: header, reason, evidence, diff with word highlights."""
    st = _style(color)
    lines = ["", st(f"── [{index}/{total}] ", dim=True) + st(p.id, fg="yellow") + "  "
             + st(sensitive.redact(p.title), bold=True), *details(p, color), ""]
    lines += [render_line(ln, color) for ln in common.parse_diff(diff)]
    return "\n".join(lines) + "\n"


def render_show(p: Proposal, diff: str, color: bool) -> str:
    """`memgit show`: the title and branch, the review screen's details with the status, then the diff
    as git prints it (removals red, additions green, hunks cyan), so it reads like `git show`."""
    st = _style(color)
    lines = [st(sensitive.redact(p.title), bold=True) + f"  ({p.branch})", *details(p, color, status=True), ""]
    return "\n".join(lines) + "\n" + colour_diff(diff, color)


def colour_diff(text: str, color: bool) -> str:
    """A unified diff coloured line by line as git colours it; unchanged without colour."""
    if not color:
        return text
    st = _style(color)
    out = []
    for line in text.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            out.append(st(line, fg="green"))
        elif line.startswith("-") and not line.startswith("---"):
            out.append(st(line, fg="red"))
        elif line.startswith("@@"):
            out.append(st(line, fg="cyan"))
        else:
            out.append(line)
    return "\n".join(out)


def review(ws: Workspace, term: Terminal, color: bool, ids: list[str] | None = None) -> Summary:
    """Walk open proposals (all, or those named) and act on each key; returns what was done."""
    items = proposals.list_proposals(ws, check=False)
    if ids:
        wanted = [proposals.check_id(i) for i in ids]
        items = [p for p in items if any(p.id.startswith(w) for w in wanted)]
    items.sort(key=lambda p: (p.created, p.id))
    summary = Summary(total=len(items))
    try:
        _walk(ws, term, color, items, summary)
    except KeyboardInterrupt:  # Ctrl-C: stop here; what was done stays done, the rest stays open
        term.write("\n")
        summary.quit = True
    return summary


def _walk(ws: Workspace, term: Terminal, color: bool, items: list[Proposal], summary: Summary) -> None:
    st = _style(color)
    for n, listed in enumerate(items, 1):
        try:
            p = proposals.get(ws, listed.id)   # fresh: earlier approvals may have made it stale
        except NotFoundError:
            continue
        if p.status != "open":
            term.write(f"{p.id} was {p.status} meanwhile; next.\n")
            summary.total -= 1
            continue
        term.write(render(p, common.redacted_diff(ws, p), color, n, len(items)))
        while True:
            k = term.key(PROMPT)
            if k in ("q", ""):
                summary.quit = True
                return
            if k == "s":
                summary.skipped.append(p.id)
                break
            if k == "a":
                _approve(ws, p, term, summary, st)
                break
            if k == "r":
                reason = term.ask("Reason (optional, remembered): ").strip()
                proposals.reject(ws, [p.id], reason)
                summary.rejected.append(p.id)
                term.write(st("Rejected ", fg="red") + p.id + "\n")
                break
            if k == "e":
                if _edit(ws, p, term, summary, st):
                    break
                continue
            term.write(HELP + "\n")


def _approve(ws: Workspace, p: Proposal, term: Terminal, summary: Summary, st) -> None:
    try:
        r = proposals.approve(ws, [p.id])
    except MemgitError as e:
        summary.refused.append((p.id, str(e)))
        term.write(st("Refused ", fg="red") + f"{p.id}: {e}\n")
        return
    _warnings(ws, term)
    if r.approved:
        summary.approved.append(p.id)
        term.write(st("Approved ", fg="green") + f"{p.id}; main is now {(r.commit or '')[:8]}\n")
    for pid, why in r.refused:
        summary.refused.append((pid, why))
        term.write(st("Refused ", fg="red") + f"{pid}: {why}\n")


def _edit(ws: Workspace, p: Proposal, term: Terminal, summary: Summary, st) -> bool:
    """Edit, then approve; False (nothing done) sends the person back to the prompt."""
    if not common.editable(p):
        term.write(f"A {p.op.op} has no text to edit; approve, reject or skip it.\n")
        return False
    term.write("Opening the proposed text in your editor; save and close it to approve "
               "(empty or unchanged text cancels).\n")
    text = term.edit((p.op.text or "") + "\n")
    if text is None:
        term.write("Edit cancelled: the editor was closed without saving; nothing changed.\n")
        return False
    try:
        res = common.edit_and_approve(ws, p.id, text)
    except MemgitError as e:
        term.write(st("Not done: ", fg="red") + f"{e}\n")
        return False
    _warnings(ws, term)
    summary.edited.append((p.id, res.edited.id))
    term.write(st("Approved ", fg="green") + f"edited proposal {res.edited.id} (replaces {p.id}); "
               f"main is now {(res.approval.commit or '')[:8]}\n")
    return True


def _warnings(ws: Workspace, term: Terminal) -> None:
    for w in ws.warnings:
        term.write(f"Warning: {w}\n")
    ws.warnings.clear()
