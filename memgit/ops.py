"""Operation records and applying them to a set of files.

An Operation is the decision a person reviews: prune, refresh, consolidate,
merge or move. It names its target entries by their exact text, so it can be
re-applied to a newer main; if a target changed or vanished it no longer
applies and says why.

Two optional fields of `move` travel in `extra` (so older records still load):
- `files`: [[src, dst], …] renames several whole files in one operation (one
  commit, one tree), e.g. a month of daily logs into its archive folder; the
  bytes are kept, so git shows 100% renames. `file`/`dest` then name the
  folders, for display.
- `leave`: with targets, the entry written in place of the first moved entry
  (an index line pointing to where the details went, or a fold of them).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Callable

from memgit.errors import ConflictError, MemgitError
from memgit.memory import Document, Entry, entry_body, parse

HASHED = "sha256:"
# every kind, in the order a batch applies them: what frees room goes before what takes it (an agent's
# own edit, a whole file, last)
KINDS = ("prune", "refresh", "merge", "move", "consolidate", "append", "edit")
PHASE = {kind: i for i, kind in enumerate(KINDS)}
ORIGINS = ("manual", "offline", "anthropic", "agent")


@dataclass(frozen=True)
class Evidence:
    source: str   # path:line
    quote: str

    def to_dict(self) -> dict:
        return {"source": self.source, "quote": self.quote}


@dataclass(frozen=True)
class Operation:
    op: str
    file: str
    targets: tuple[str, ...] = ()
    text: str | None = None
    section: str | None = None
    dest: str | None = None          # move: destination file (entries) or path (a whole file)
    confidence: float | None = None
    reason: str = ""
    evidence: tuple[Evidence, ...] = ()
    origin: str = "manual"
    run: str | None = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.op not in KINDS:
            raise MemgitError(f"unknown operation {self.op!r}; use one of {', '.join(KINDS)}.")
        # A target holding a secret is named by its hash, so the record that travels in commit
        # messages, the journal and output never repeats the secret it is about to remove.
        if any(t and not t.startswith(HASHED) for t in self.targets):
            from memgit import sensitive

            # an entry git stores as "[REDACTED]" (memgit.gitfilter) is named by its hash too
            def secret(t: str) -> bool:
                return sensitive.REDACTED in t or sensitive.has_sensitive(t)

            if any(secret(t) for t in self.targets):
                object.__setattr__(self, "targets", tuple(hash_target(t) if secret(t) else t for t in self.targets))

    @property
    def fingerprint(self) -> str:
        """Identity of the change itself: same op, file, targets and text → same fingerprint."""
        parts = [self.op, self.file, list(self.targets), _norm(self.text), self.section or "", self.dest or ""]
        parts += [[k, self.extra[k]] for k in ("files", "leave", "base") if self.extra.get(k)]  # only when used
        key = json.dumps(parts, ensure_ascii=False)
        return hashlib.sha256(key.encode("utf-8")).hexdigest()

    @property
    def id(self) -> str:
        """Eight hex digits of the fingerprint: the first eight with no three decimal digits in a row, so that no
        PIN, price or code a secret check looks for can be read into an id by chance (as a run's id, dream._run_id)."""
        fp = self.fingerprint
        return next((fp[k:k + 8] for k in range(len(fp) - 7) if not re.search(r"\d{3}", fp[k:k + 8])), fp[:8])

    @property
    def title(self) -> str:
        def short(t: str) -> str:
            t = " ".join(t.split())
            return t if len(t) <= 60 else t[:57] + "…"
        if self.op == "prune":
            if len(self.targets) > 1:
                return f"prune {len(self.targets)} entries: {short(_show(self.targets[0]))} …"
            return f"prune {short(_show(self.targets[0]))}" if self.targets else "prune"
        if self.op == "refresh":
            return f"refresh → {short(self.text or '')}"
        if self.op == "consolidate":
            return f"consolidate into {self.section or self.file}: {short(self.text or '')}"
        if self.op == "append":
            return f"append to {self.file}: {short(self.text or '')}"
        if self.op == "edit":
            return f"the agent's own edit of {self.file}"
        if self.op == "merge":
            return f"merge {len(self.targets)} entries → {short(self.text or '')}"
        if self.extra.get("files"):
            return f"move {len(self.extra['files'])} files {self.file}/ → {self.dest}/"
        if len(self.targets) > 1:
            return f"move {len(self.targets)} entries of {self.file} → {self.dest}"
        what = short(_show(self.targets[0])) if self.targets else self.file
        return f"move {what} → {self.dest}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["targets"] = list(self.targets)
        d["evidence"] = [e.to_dict() for e in self.evidence]
        d.pop("extra")
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Operation:
        """An operation from its JSON record, checked field by field: records arrive from remotes, so
        a field of the wrong type or shape is a MemgitError, never a crash later."""
        _check_record(d)
        known = {"op", "file", "targets", "text", "section", "dest", "confidence", "reason", "evidence",
                 "origin", "run"}
        return cls(
            op=d["op"], file=d["file"], targets=tuple(d.get("targets") or ()), text=d.get("text"),
            section=d.get("section"), dest=d.get("dest"), confidence=d.get("confidence"),
            reason=d.get("reason") or "", origin=d.get("origin") or "manual", run=d.get("run"),
            evidence=tuple(Evidence(e["source"], e["quote"]) for e in d.get("evidence") or ()),
            extra={k: v for k, v in d.items() if k not in known},
        )

    def with_(self, **kw) -> Operation:
        return replace(self, **kw)


def _check_record(d: object) -> None:
    def bad(what: str) -> MemgitError:
        return MemgitError(f"the proposal record's {what}; reject the proposal.")

    if not isinstance(d, dict):
        raise bad("body is not an object")
    if not isinstance(d.get("op"), str) or not isinstance(d.get("file"), str):
        raise bad("'op' and 'file' must be strings")
    for key in ("text", "section", "dest", "reason", "origin", "run", "leave", "base"):
        if d.get(key) is not None and not isinstance(d[key], str):
            raise bad(f"'{key}' must be a string")
    if d.get("origin") not in (None, "", *ORIGINS):
        raise bad("'origin' is not one memgit writes")
    targets = d.get("targets")
    if targets is not None and not (isinstance(targets, list) and all(isinstance(t, str) for t in targets)):
        raise bad("'targets' must be a list of strings")
    conf = d.get("confidence")
    if conf is not None and (isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1):
        raise bad("'confidence' must be a number from 0 to 1")
    evidence = d.get("evidence")
    if evidence is not None and not (isinstance(evidence, list) and all(
            isinstance(e, dict) and isinstance(e.get("source"), str) and isinstance(e.get("quote"), str)
            for e in evidence)):
        raise bad("'evidence' must be a list of {source, quote} strings")
    files = d.get("files")
    if files is not None and not (isinstance(files, list) and all(
            isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in files)):
        raise bad("'files' must be a list of [from, to] paths")


def content_hash(data: bytes | None) -> str:
    """What an agent's edit was made against: the file's bytes as main had them (none: absent)."""
    return hashlib.sha256(data if data is not None else b"\0absent").hexdigest()


def _edit(op: Operation, read: Callable[[str], bytes | None], protected: tuple[str, ...],
          allow_p0: bool) -> dict[str, bytes | None]:
    """The agent's own edit of a memory file, made while direct writes are off: the file as the agent
    wrote it, applied only to the version it was made against (a later main gets a new proposal from
    the next snapshot, never a guessed merge), and touching P0 or protected entries only by a person's
    `approve ID --allow-p0`."""
    if op.text is None or not isinstance(op.extra.get("base"), str):
        raise MemgitError("an edit needs the new text and the version it was made against.")
    data = read(op.file)
    if content_hash(data) != op.extra["base"]:
        raise ConflictError(f"{op.file} changed in main since the agent's edit; the next snapshot proposes "
                            f"the agent's file again against today's main: reject this one.")
    new = op.text.encode("utf-8")
    if not allow_p0 and data is not None:
        kept = {e.text for e in parse(op.file, new, protected).entries}
        for e in parse(op.file, data, protected).entries:
            if e.frozen and e.text not in kept:
                raise ConflictError(f"the agent's edit changes {op.file} line {e.line}, which is P0 or protected: "
                                    f"it changes only when a person approves that by id with "
                                    f"`memgit approve ID --allow-p0`.")
    return {op.file: new}


def hash_target(text: str) -> str:
    return HASHED + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _show(target: str) -> str:
    return "(an entry holding sensitive data)" if target.startswith(HASHED) else target


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def _target(doc: Document, text: str, op: Operation) -> Entry:
    if text.startswith(HASHED):
        hits = doc.by_sha256(text[len(HASHED):])
    else:
        hits = doc.exact(text)
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ConflictError(f"the entry {_short(_show(text))!r} in {op.file} changed or vanished since the proposal; "
                            f"reject it or propose again.")
    raise ConflictError(f"the entry {_short(_show(text))!r} now appears {len(hits)} times in {op.file}; "
                        f"resolve the duplicate by hand first.")


def _short(t: str) -> str:
    t = " ".join(t.split())
    return t if len(t) <= 50 else t[:47] + "..."


def apply(op: Operation, read: Callable[[str], bytes | None],
          protected: tuple[str, ...] = (), allow_p0: bool = False) -> dict[str, bytes | None]:
    """Apply `op` to files read through `read(path)`; return {path: new bytes, or None to delete}.

    Raises ConflictError when a target no longer matches exactly one entry, and when the
    operation would touch a P0 or protected entry unless `allow_p0` (the caller's decision: a
    person who asked for it; never a field of the record, which may come from anyone).
    """
    plan = _plan(op, read, protected, allow_p0)
    if isinstance(plan, dict):
        return plan
    doc, data, edits, extra = plan
    return {op.file: doc.splice(edits) if edits else data, **extra}


def size_change(op: Operation, read: Callable[[str], bytes | None],
                protected: tuple[str, ...] = ()) -> dict[str, int] | None:
    """Characters `op` adds to (negative: removes from) each file it changes; None if it changes nothing.

    Raises exactly what `apply` raises, but an edit of one memory file costs the size of the edit,
    not of the file: nothing is rebuilt.
    """
    plan = _plan(op, read, protected, False)
    if isinstance(plan, dict):
        out = {p: _chars(d) - _chars(read(p)) for p, d in plan.items() if d != read(p)}
        return out or None
    doc, _data, edits, extra = plan
    out = {}
    d = doc.size_change(edits) if edits else None
    if d is not None:
        out[op.file] = d
    for p, data in extra.items():
        out[p] = _chars(data) - _chars(read(p))
    return out or None


def _chars(data: bytes | None) -> int:
    return len(data.decode("utf-8", "replace").lstrip("\ufeff")) if data else 0


Plan = tuple[Document, bytes, list, dict]


def _plan(op: Operation, read: Callable[[str], bytes | None], protected: tuple[str, ...],
          allow_p0: bool) -> dict[str, bytes | None] | Plan:
    """What `op` does: whole-file changes, or (document, its bytes, line edits, other files' new bytes)."""
    # a record may come from a pulled proposal: a path leaving the workspace (or into .git) would
    # put '..' in main's tree and wedge every later command
    for path in () if op.extra.get("files") else (op.file, op.dest):
        if path is not None and not safe_path(path):
            raise MemgitError(f"the operation names the path {path!r} outside the workspace; reject it.")
    if op.op == "append":
        # a file memgit keeps beside memory (reflections, the dream diary): add text at its end
        if not op.text:
            raise MemgitError("append needs the text to add.")
        old = read(op.file) or b""
        sep = b"" if not old or old.endswith(b"\n") else b"\n"
        gap = b"\n" if old.strip() else b""
        return {op.file: old + sep + gap + op.text.rstrip("\n").encode("utf-8") + b"\n"}
    if op.op == "edit":
        return _edit(op, read, protected, allow_p0)
    if op.op == "move" and not op.targets and op.extra.get("files"):
        return _move_files(op.extra["files"], read)
    if op.op == "move" and not op.targets:
        data = read(op.file)
        if data is None:
            raise ConflictError(f"{op.file} no longer exists; reject this proposal.")
        if not op.dest:
            raise MemgitError("a move needs a destination.")
        if read(op.dest) is not None:
            raise ConflictError(f"{op.dest} already exists; move it away or reject this proposal.")
        return {op.file: None, op.dest: data}
    data = read(op.file)
    if data is None:
        if op.op == "consolidate":
            data = b""
        else:
            raise ConflictError(f"{op.file} no longer exists; reject this proposal.")
    doc = parse(op.file, data, protected)
    targets = [_target(doc, t, op) for t in op.targets]
    if not allow_p0:
        for t in targets:
            if t.frozen:
                raise ConflictError(f"{op.file} line {t.line} is P0 or protected: it changes only when a "
                                    f"person approves that by id with `memgit approve ID --allow-p0`.")
    if op.op == "prune":
        if not targets:
            raise MemgitError("prune needs at least one target entry.")
        return doc, data, doc.remove_edits(targets), {}
    if op.op == "refresh":
        if len(targets) != 1 or not op.text:
            raise MemgitError("refresh needs one target entry and the new text.")
        return doc, data, doc.replace_edits(targets[0], op.text), {}
    if op.op == "merge":
        if len(targets) < 2 or not op.text:
            raise MemgitError("merge needs two or more target entries and the merged text.")
        return doc, data, doc.merge_edits(targets, op.text), {}
    if op.op == "consolidate":
        if not op.text:
            raise MemgitError("consolidate needs the new entry's text.")
        section = None
        if op.section:
            hits = [s for s in doc.sections if s.title.casefold() == op.section.casefold()]
            section = hits[0] if hits else None
            if section is not None and section.protected and not allow_p0:
                raise ConflictError(f"section {op.section!r} of {op.file} is protected: it changes only when a "
                                    f"person approves that by id with `memgit approve ID --allow-p0`.")
        # the entry is already there (say, the agent wrote it meanwhile): no change, not a duplicate
        if _norm(entry_body(op.text)) in doc.normalized_bodies:
            return doc, data, [], {}
        return doc, data, doc.insert_edits(section, op.text, create_title=op.section), {}
    # move entries to another file: append them there, remove them here
    if not op.dest or not targets:
        raise MemgitError("a move of entries needs target entries and a destination file.")
    dest_data = read(op.dest) or b""
    moved = "\n".join(t.text for t in targets)
    if op.text:  # an archive header (date, origin) chosen by the proposer
        moved = op.text
    nl = doc.newline
    prefix = b"" if not dest_data or dest_data.endswith(b"\n") else nl.encode()
    dest_new = dest_data + prefix + (moved.replace("\n", nl) + nl).encode("utf-8")
    leave = op.extra.get("leave")
    return doc, data, doc.merge_edits(targets, leave) if leave else doc.remove_edits(targets), {op.dest: dest_new}


def _move_files(files: list, read: Callable[[str], bytes | None]) -> dict[str, bytes | None]:
    """Rename whole files, bytes unchanged; refuse if a source vanished or a destination exists."""
    pairs = []
    for pair in files:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(safe_path(x) for x in pair)):
            raise MemgitError(f"the move record holds a bad file pair {pair!r}; reject this proposal.")
        pairs.append((pair[0], pair[1]))
    paths = [p for pair in pairs for p in pair]
    if len(set(paths)) != len(paths):
        raise MemgitError("the move record names a file twice; reject this proposal.")
    out: dict[str, bytes | None] = {}
    for src, dst in pairs:
        data = read(src)
        if data is None:
            raise ConflictError(f"{src} no longer exists; reject this proposal.")
        if read(dst) is not None:
            raise ConflictError(f"{dst} already exists; move it away or reject this proposal.")
        out[src] = None
        out[dst] = data
    return out


def safe_path(p: object) -> bool:
    """A relative path inside the workspace that names no .git (in any case, as case-insensitive file
    systems read it) and no '..'."""
    return (isinstance(p, str) and bool(p) and not p.startswith(("/", "\\")) and "\\" not in p and "\0" not in p
            and all(part not in ("", ".", "..") and part.casefold().rstrip(" .") != ".git"
                    for part in p.split("/")))
