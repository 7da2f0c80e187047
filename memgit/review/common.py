"""What the terminal review, the web review and the PR export share: a proposal's
diff as structured lines with word-level changes, ages, and edit-then-approve.

Every text that leaves here for a screen has been through `memgit.sensitive.redact`.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from memgit import proposals, sensitive
from memgit.errors import ConflictError, MemgitError, SensitiveDataError
from memgit.proposals import ApproveResult, Proposal
from memgit.workspace import Workspace

# ASCII words stay whole; every other character (each Han character, each
# punctuation mark) is its own token, so a change inside Chinese text is as
# narrow as the characters that changed.
_TOKEN = re.compile(r"[A-Za-z0-9_]+|\s+|.", re.DOTALL)
# A -/+ pair this different is a rewrite, not an edit: highlighting words would be noise.
_PAIR_MIN_RATIO = 0.3
EDITABLE = ("refresh", "merge", "consolidate", "append")


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool = False


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff; `segments` mark the words that changed in a paired -/+ line."""

    kind: str                  # file | hunk | context | del | add | note
    text: str                  # without the leading ' ', '-' or '+'
    old: int | None = None
    new: int | None = None
    segments: tuple[Segment, ...] = ()

    @property
    def paired(self) -> bool:
        return any(s.changed for s in self.segments)

    @property
    def prefix(self) -> str:
        return {"del": "-", "add": "+", "context": " "}.get(self.kind, "")


def redacted_diff(ws: Workspace, p: Proposal) -> str:
    """The proposal's unified diff with every sensitive value replaced."""
    return sensitive.redact(proposals.diff(ws, p))


def word_diff(a: str, b: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """Segments of `a` and `b` with the tokens that differ marked changed."""
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    sa: list[Segment] = []
    sb: list[Segment] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if i2 > i1:
            sa.append(Segment("".join(ta[i1:i2]), tag != "equal"))
        if j2 > j1:
            sb.append(Segment("".join(tb[j1:j2]), tag != "equal"))
    return _joined(sa), _joined(sb)


def _joined(segs: list[Segment]) -> tuple[Segment, ...]:
    # a blank between two changed words belongs to the change: "GitHub Actions" reads as one edit
    segs = [Segment(s.text, True) if (not s.changed and not s.text.strip() and 0 < i < len(segs) - 1
                                      and segs[i - 1].changed and segs[i + 1].changed) else s
            for i, s in enumerate(segs)]
    out: list[Segment] = []
    for s in segs:
        if out and out[-1].changed == s.changed:
            out[-1] = Segment(out[-1].text + s.text, s.changed)
        else:
            out.append(s)
    return tuple(out)


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, _TOKEN.findall(a), _TOKEN.findall(b), autojunk=False).ratio()


def parse_diff(text: str) -> list[DiffLine]:
    """A git unified diff → lines with numbers, and word-level segments on paired -/+ lines.

    unidiff (a maintained parser of unified diffs; this module is its one user) reads the files, hunks and
    line numbers; memgit adds the pairing of - and + lines and their changed words.
    """
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    try:
        patch = PatchSet(text)
    except UnidiffParseError:
        return [DiffLine("note", ln, segments=(Segment(ln),)) for ln in text.splitlines()]
    out: list[DiffLine] = []
    block: list[DiffLine] = []   # the current run of - and + lines

    def flush() -> None:
        out.extend(_pair(block))
        block.clear()

    for pf in patch:
        flush()
        header = next((str(x).rstrip("\n") for x in pf.patch_info if str(x).startswith("diff --git ")), None)
        out.append(DiffLine("file", header[len("diff --git "):] if header else f"{pf.source_file} {pf.target_file}"))
        for hunk in pf:
            flush()
            out.append(DiffLine("hunk", str(hunk).split("\n", 1)[0]))
            for ln in hunk:
                value = ln.value[:-1] if ln.value.endswith("\n") else ln.value
                if ln.is_removed:
                    block.append(DiffLine("del", value, old=ln.source_line_no))
                elif ln.is_added:
                    block.append(DiffLine("add", value, new=ln.target_line_no))
                elif ln.line_type == "\\":
                    flush()
                    out.append(DiffLine("note", "\\" + value))
                else:
                    flush()
                    out.append(DiffLine("context", value, old=ln.source_line_no, new=ln.target_line_no))
    flush()
    return [ln if ln.segments else DiffLine(ln.kind, ln.text, ln.old, ln.new, (Segment(ln.text),))
            for ln in out]


def _pair(block: list[DiffLine]) -> list[DiffLine]:
    """Give each + line the most similar unpaired - line of its run, and mark their changed words."""
    dels = [ln for ln in block if ln.kind == "del"]
    adds = [ln for ln in block if ln.kind == "add"]
    segs: dict[int, tuple[Segment, ...]] = {}
    used: set[int] = set()
    for a in adds:
        best, best_ratio = None, _PAIR_MIN_RATIO
        for d in dels:
            if id(d) in used:
                continue
            r = _ratio(d.text, a.text)
            if r > best_ratio:
                best, best_ratio = d, r
        if best is not None and best.text != a.text:
            used.add(id(best))
            segs[id(best)], segs[id(a)] = word_diff(best.text, a.text)
    return [DiffLine(ln.kind, ln.text, ln.old, ln.new, segs.get(id(ln), ())) for ln in block]


def side_by_side(lines: list[DiffLine]) -> list[tuple[DiffLine | None, DiffLine | None]]:
    """Rows (left, right) for a two-column view: context on both sides, - left, + right.

    A file or hunk line is returned as (line, None) and spans both columns.
    """
    rows: list[tuple[DiffLine | None, DiffLine | None]] = []
    dels: list[DiffLine] = []
    adds: list[DiffLine] = []

    def flush() -> None:
        for i in range(max(len(dels), len(adds))):
            rows.append((dels[i] if i < len(dels) else None, adds[i] if i < len(adds) else None))
        dels.clear()
        adds.clear()

    for ln in lines:
        if ln.kind == "del":
            if adds:
                flush()
            dels.append(ln)
        elif ln.kind == "add":
            adds.append(ln)
        else:
            flush()
            rows.append((ln, ln) if ln.kind == "context" else (ln, None))
    flush()
    return rows


def age(ts: int, now: float | None = None) -> str:
    """'3d', '5h', '12m' or '40s' since a unix time."""
    secs = max(0, int((now if now is not None else datetime.now(UTC).timestamp()) - ts))
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= n:
            return f"{secs // n}{unit}"
    return f"{secs}s"


def confidence(p: Proposal) -> str:
    return f"{p.op.confidence:.2f}" if p.op.confidence is not None else "manual"


def editable(p: Proposal) -> bool:
    """Whether a person can rewrite the proposed text (prune and move carry none)."""
    return p.status == "open" and p.op.op in EDITABLE and bool(p.op.text)


@dataclass(frozen=True)
class EditResult:
    original: Proposal
    edited: Proposal
    approval: ApproveResult


def clean_edit(text: str) -> str:
    """An editor's text as an entry: LF newlines, no trailing blanks or blank lines."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def edit_and_approve(ws: Workspace, pid: str, text: str) -> EditResult:
    """Approve a rewritten version of proposal `pid`.

    The edited operation becomes a new proposal (same op, targets, reason and
    evidence, `edited_from` = the old id), which is approved at once; the
    original is then rejected with a reason naming its replacement, so a later
    dream does not offer the unedited text again. Empty or unchanged text, or
    text holding sensitive data, changes nothing.
    """
    p = proposals.get(ws, pid, check=False)
    if p.status != "open":
        raise MemgitError(f"proposal {p.id} is {p.status}, not open; there is nothing to edit.")
    if not editable(p):
        raise MemgitError(f"a {p.op.op} proposal has no text to edit; approve or reject proposal {p.id}.")
    new_text = clean_edit(text)
    if not new_text.strip():
        raise MemgitError(f"the edited text for proposal {p.id} is empty; nothing changed.")
    if new_text == clean_edit(p.op.text or ""):
        raise MemgitError(f"the text of proposal {p.id} is unchanged; approve it as it is or edit it again.")
    if sensitive.has_sensitive(new_text):
        kinds = ", ".join(sensitive.kinds(new_text))
        raise SensitiveDataError(f"the edited text for {p.op.file} holds sensitive data ({kinds}); nothing "
                                 f"changed, remove it and edit again.")
    op = p.op.with_(text=new_text, extra={**p.op.extra, "edited_from": p.id})
    with ws.repo.lock():
        ws.prepare()
        made = proposals.create(ws, [op])
    edited = made[0]
    result = proposals.approve(ws, [edited.id])
    if result.refused:
        why = result.refused[0][1].rstrip(".")
        raise ConflictError(f"the edited proposal {edited.id} could not be approved ({why}); it and "
                            f"proposal {p.id} stay open.")
    proposals.reject(ws, [p.id], reason=f"edited before approval; approved as {edited.id}")
    return EditResult(p, edited, result)
