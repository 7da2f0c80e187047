"""Proposals as branches: propose, list, show, approve, reject, revert.

A proposal is one commit on `refs/heads/memgit/<id>` whose parent is the main
it was made against and whose diff is exactly one operation. Its record
(the Operation as JSON) travels in the commit message, so any clone can show
and re-apply it. Closed proposals move to `refs/memgit/closed/<id>`; every
review event is a journal entry.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from memgit import journal, ops
from memgit.errors import ConflictError, MemgitError, NotFoundError, SensitiveDataError
from memgit.ops import HASHED, PHASE, Operation
from memgit.repo import CLOSED_PREFIX, JOURNAL, MAIN, PROPOSAL_PREFIX, crashpoint
from memgit.workspace import Workspace

ID_RE = re.compile(r"^[0-9a-f]{4,40}$")
RECORD = "Memgit-Record: "


@dataclass(frozen=True)
class Proposal:
    id: str
    op: Operation
    commit: str
    base: str
    status: str            # open | approved | rejected | reverted
    created: int           # unix time of the proposal commit
    applies: bool | None = None
    why_not: str = ""
    closed: dict = field(default_factory=dict)

    @property
    def branch(self) -> str:
        return f"memgit/{self.id}"

    @property
    def title(self) -> str:
        return self.op.title

    def to_dict(self) -> dict:
        d = {
            "id": self.id, "op": self.op.op, "file": self.op.file, "title": self.title,
            "status": self.status, "branch": self.branch, "commit": self.commit, "base": self.base,
            "confidence": self.op.confidence, "reason": self.op.reason,
            "sources": [e.source for e in self.op.evidence],
            "evidence": [e.to_dict() for e in self.op.evidence],
            "targets": list(self.op.targets), "text": self.op.text, "section": self.op.section,
            "dest": self.op.dest, "origin": self.op.origin, "run": self.op.run,
            "created": datetime.fromtimestamp(self.created, timezone.utc).isoformat(timespec="seconds"),
            "applies": self.applies,
        }
        if self.why_not:
            d["why_not"] = self.why_not
        if self.closed:
            d["closed"] = self.closed
        return d


# -- records ------------------------------------------------------------------
def _message(op: Operation, pid: str) -> str:
    lines = [f"memgit: {op.title}", ""]
    if op.reason:
        lines.append(f"Reason: {op.reason}")
    if op.confidence is not None:
        lines.append(f"Confidence: {op.confidence:.2f}")
    for e in op.evidence:
        lines.append(f"Evidence: {e.source} \"{' '.join(e.quote.split())}\"")
    lines += ["", f"Memgit-Proposal: {pid}", f"Memgit-Op: {op.op}", f"Memgit-File: {op.file}",
              RECORD + json.dumps(op.to_dict(), ensure_ascii=False, sort_keys=True)]
    return "\n".join(lines) + "\n"


def _record(message: str) -> Operation | None:
    return read_record(message)[0]


def read_record(message: str) -> tuple[Operation | None, str]:
    """The Operation a proposal commit carries, or (None, why it cannot be read)."""
    for line in reversed(message.splitlines()):
        if line.startswith(RECORD):
            try:
                return Operation.from_dict(json.loads(line[len(RECORD):])), ""
            except ValueError:
                return None, "its record is not valid JSON"
            except MemgitError as e:
                return None, str(e).removeprefix("the proposal ").rstrip(".").split("; reject")[0]
            except (KeyError, TypeError):
                return None, "its record lacks a field"
    return None, "it carries no record"


def check_id(pid: str) -> str:
    if not ID_RE.match(pid or ""):
        raise NotFoundError(f"{pid!r} is not a proposal id; run `memgit proposals` to list them.")
    return pid


def _check_sensitive(op: Operation) -> None:
    from memgit import sensitive

    leave = op.extra.get("leave")
    for t in (op.text, op.reason, op.section, leave if isinstance(leave, str) else None):
        if t and sensitive.has_sensitive(t):
            kinds = ", ".join(sensitive.kinds(t))
            raise SensitiveDataError(f"the proposed text for {op.file} holds sensitive data ({kinds}); "
                                     f"remove it, secrets and trading figures never enter memory.")


def _redact_op(op: Operation) -> Operation:
    """Evidence quotes and reasons are shown and committed: redact what they quote."""
    from memgit import sensitive

    ev = tuple(ops.Evidence(e.source, sensitive.redact(e.quote)) for e in op.evidence)
    return op.with_(evidence=ev, reason=sensitive.redact(op.reason))


def _shown(op: Operation) -> Operation:
    """A loaded record as it may be displayed: every word it carries redacted (a record with a secret
    in its text then no longer matches its commit, so it is also refused at approval)."""
    from memgit import sensitive

    op = _redact_op(op)
    text = sensitive.redact(op.text) if op.text else op.text
    section = sensitive.redact(op.section) if op.section else op.section
    return op if (text, section) == (op.text, op.section) else op.with_(text=text, section=section)


def _reader(ws: Workspace, commit: str):
    return lambda path: ws.repo.read(commit, path)


def _changes(ws: Workspace, op: Operation, commit: str, allow_p0: bool) -> dict[str, bytes | None]:
    out = ops.apply(op, _reader(ws, commit), ws.config.memory.protected_sections, allow_p0=allow_p0)
    return {p: d for p, d in out.items() if d != ws.repo.read(commit, p)}


def _tree_after(ws: Workspace, op: Operation, commit: str, allow_p0: bool) -> tuple[str, dict]:
    changes = _changes(ws, op, commit, allow_p0)
    blobs = {path: (ws.repo.write_blob(d) if d is not None else None) for path, d in changes.items()}
    return ws.repo.tree_with(ws.repo.tree_of(commit), blobs), changes


def check_record(ws: Workspace, p: Proposal) -> None:
    """What a person reviews is what approval applies: the proposal commit's diff (what `show`, `pr`
    and the web page display) must be exactly the change its record makes on the commit's base.

    A branch pushed by anyone with access to a remote can pair a harmless diff with another
    record; such a proposal is refused, never approved.
    """
    try:
        if not p.base:
            raise MemgitError("no base")
        tree, _ = _tree_after(ws, p.op, p.base, allow_p0=True)
    except MemgitError:
        raise MemgitError(f"proposal {p.id}'s record does not apply to the main it was made against, so "
                          f"its diff cannot be trusted; reject it.") from None
    if tree != ws.repo.tree_of(p.commit):
        raise MemgitError(f"proposal {p.id} shows a different change than its record makes (the branch "
                          f"was altered); reject it.")


def _allowed_path(ws: Workspace, path: str) -> bool:
    """A file an approval may change: memory files and the folders memgit keeps beside them."""
    from memgit.lifecycle.diary import DIARY

    mem = ws.config.memory
    if path in ws.memory_files or path == DIARY:
        return True
    if not ops.safe_path(path) or not path.endswith(".md"):
        return False
    dirs = {d.strip("/") for d in (mem.logs_dir, mem.archive_dir, mem.reference_dir, "reflections") if d}
    return any(path.startswith(d + "/") for d in dirs)


def _guard(ws: Workspace, p: Proposal, changes: dict[str, bytes | None], main: str) -> None:
    """Every guard again at approval, whatever the record says of itself."""
    from memgit import sensitive

    for path in changes:
        if not _allowed_path(ws, path):
            raise MemgitError(f"proposal {p.id} changes {path}, which is not a memory file; reject it.")
    _check_sensitive(p.op)
    for path, data in changes.items():
        if data is None:
            continue
        old = set((ws.repo.read(main, path) or b"").decode("utf-8", "replace").splitlines())
        added = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln not in old]
        if added and sensitive.has_sensitive("\n".join(added)):
            raise SensitiveDataError(f"proposal {p.id} would write sensitive data into {path}; reject it.")


# -- queries ------------------------------------------------------------------
_STATUS = {"approve": "approved", "reject": "rejected", "revert": "reverted"}


def closed_states(ws: Workspace) -> dict[str, dict]:
    """id → the last review event about it (approve / reject / revert).

    Read from the journal once and cached in .git/memgit/states.json with the journal
    tip it reflects; later calls read only the events appended since.
    """
    tip = ws.repo.ref(JOURNAL)
    if not tip:
        return {}
    cached = _read_cache(ws)
    if cached.get("tip") == tip and isinstance(cached.get("states"), dict):
        return cached["states"]
    states: dict[str, dict] = {}
    since = cached.get("tip")
    newer = journal.walk_back(ws.repo, tip, since) if since and isinstance(cached.get("states"), dict) else None
    if newer is not None:  # the usual case: a few events appended since, read in-process
        states = cached["states"]
        review = [ev for ev in newer if ev.kind in _STATUS]
        for ev in reversed(review):
            if ev.data.get("id"):
                states[ev.data["id"]] = {"status": _STATUS[ev.kind], **ev.data}
        if review or len(newer) >= 4:  # keep later walks short; other events change no state
            _write_cache(ws, tip, states)
        return states
    since = None
    for ev in reversed(journal.events(ws.repo, ("approve", "reject", "revert"), since=since)):
        pid = ev.data.get("id")
        if pid:
            states[pid] = {"status": _STATUS[ev.kind], **ev.data}
    _write_cache(ws, tip, states)
    return states


def _read_cache(ws: Workspace) -> dict:
    """The states cache, or {} when it is missing or not of the shape memgit writes (it is then
    rebuilt from the journal): {"tip": commit id, "states": {id: {"status": …, …}}}."""
    try:
        cached = json.loads((ws.repo.state_dir() / "states.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not (isinstance(cached, dict) and isinstance(cached.get("tip"), str)
            and isinstance(cached.get("states"), dict)
            and all(isinstance(k, str) and isinstance(v, dict) and v.get("status") in _STATUS.values()
                    for k, v in cached["states"].items())):
        return {}
    return cached


def _write_cache(ws: Workspace, tip: str, states: dict) -> None:
    # a cache, rebuilt from the journal whenever it is missing or stale: no fsync needed
    # (one temp file per writer: the review server's threads share a process id)
    from memgit.repo import temp_name

    path = ws.repo.state_dir() / "states.json"
    tmp = path.with_name(temp_name("states"))
    try:
        tmp.write_text(json.dumps({"tip": tip, "states": states}, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a cache not written is rebuilt next time


def _advance_cache(ws: Workspace, old_tip: str | None, new_tip: str, updates: dict[str, dict]) -> None:
    """After this process appended journal events: move the states cache along without re-reading."""
    cached = _read_cache(ws)
    if not cached or cached["tip"] != old_tip:
        return
    cached["states"].update(updates)
    _write_cache(ws, new_tip, cached["states"])


def rejected_fingerprints(ws: Workspace) -> set[str]:
    return {s["fingerprint"] for s in closed_states(ws).values()
            if s["status"] in ("rejected", "reverted") and s.get("fingerprint")}


def _load(ws: Workspace, pid: str, sha: str, status: str, main: str | None, closed: dict | None = None
          ) -> Proposal | None:
    info = ws.repo.info(sha)
    op = _record(info.message)
    if op is None:
        return None
    # what the record says of itself is shown, never trusted: its words pass the filter on the way out
    op = _shown(op)
    base = info.parents[0] if info.parents else ""
    p = Proposal(pid, op, sha, base, status, info.timestamp, None, "", closed or {})
    if status == "open" and main:
        applies, why = True, ""
        try:
            check_record(ws, p)
            applies = bool(_changes(ws, op, main, allow_p0=True))
            why = "" if applies else "already in main"
        except MemgitError as e:
            applies, why = False, str(e)
        p = replace(p, applies=applies, why_not=why)
    return p


def unreadable(ws: Workspace) -> list[tuple[str, str]]:
    """Open proposal branches whose record cannot be read (say, pulled from a remote): (id, why).
    They are listed, never approved, and `reject` closes them."""
    out = []
    for ref, sha in ws.repo.refs(PROPOSAL_PREFIX.rstrip("/")).items():
        op, why = read_record(ws.repo.commit_parents_message(sha)[1])
        if op is None:
            out.append((ref[len(PROPOSAL_PREFIX):], why))
    return out


def list_proposals(ws: Workspace, include_closed: bool = False, check: bool = True) -> list[Proposal]:
    main = ws.repo.ref(MAIN) if check else None
    result = []
    for ref, sha in ws.repo.refs(PROPOSAL_PREFIX.rstrip("/")).items():
        p = _load(ws, ref[len(PROPOSAL_PREFIX):], sha, "open", main)
        if p:
            result.append(p)
    if include_closed:
        states = closed_states(ws)
        for ref, sha in ws.repo.refs(CLOSED_PREFIX.rstrip("/")).items():
            pid = ref[len(CLOSED_PREFIX):]
            st = states.get(pid, {"status": "closed"})
            p = _load(ws, pid, sha, st["status"], None, st)
            if p:
                result.append(p)
    result.sort(key=lambda p: (p.status != "open", -p.created, p.id))
    return result


def sorted_proposals(items: list[Proposal], order: str = "time") -> list[Proposal]:
    """Open before closed; within each, newest first ("time") or most confident first ("confidence"),
    a proposal without a confidence (a person's own) after those with one; ties newest first, then by id."""
    if order == "confidence":
        return sorted(items, key=lambda p: (p.status != "open", p.op.confidence is None,
                                            -(p.op.confidence or 0.0), -p.created, p.id))
    return sorted(items, key=lambda p: (p.status != "open", -p.created, -(p.op.confidence or 0.0), p.id))


def get(ws: Workspace, pid: str, check: bool = True) -> Proposal:
    pid = check_id(pid)
    refs = ws.repo.refs(PROPOSAL_PREFIX.rstrip("/"))
    hits = [r for r in refs if r[len(PROPOSAL_PREFIX):].startswith(pid)]
    if len(hits) > 1:
        raise MemgitError(f"proposal id {pid!r} is ambiguous; give more of it.")
    if hits:
        p = _load(ws, hits[0][len(PROPOSAL_PREFIX):], refs[hits[0]], "open", ws.main() if check else None)
        if p:
            return p
    closed = ws.repo.refs(CLOSED_PREFIX.rstrip("/"))
    hits = [r for r in closed if r[len(CLOSED_PREFIX):].startswith(pid)]
    if len(hits) == 1:
        cid = hits[0][len(CLOSED_PREFIX):]
        st = closed_states(ws).get(cid, {"status": "closed"})
        p = _load(ws, cid, closed[hits[0]], st["status"], None, st)
        if p:
            return p
    raise NotFoundError(f"no proposal {pid!r}; run `memgit proposals --all` to list them.")


def diff(ws: Workspace, p: Proposal, color: bool = False) -> str:
    """What approving the proposal would change in today's main, as a unified diff (what `show`, `pr`,
    the terminal and the web review display); a pruned line that held a secret is shown redacted.

    Approval applies the operation to the current main, so an open proposal is shown against it (an
    entry pruned since is gone from the diff, a line edited since shows its new words). A closed
    proposal, or one that no longer applies, shows the change it made on its own base."""
    from memgit import sensitive

    if p.status == "open" and p.base:
        main = ws.main()
        if main and main != p.base:
            try:
                check_record(ws, p)
                tree, changes = _tree_after(ws, p.op, main, allow_p0=True)
            except MemgitError:
                changes = {}
            if changes:
                return sensitive.redact(ws.repo.diff(main, tree, color=color))
    return sensitive.redact(ws.repo.diff(p.base, p.commit, color=color))


# -- making proposals -----------------------------------------------------------
def _fresh_id(op: Operation, taken: set[str]) -> str:
    """An id for a change proposed again: its id made longer from its fingerprint, then a counter."""
    fp = op.fingerprint
    at = max(0, min(fp.find(op.id), len(fp) - 20))
    for n in (12, 16, 20):
        if fp[at:at + n] not in taken:
            return fp[at:at + n]
    k = 2
    while f"{fp[at:at + 12]}-{k}" in taken:
        k += 1
    return f"{fp[at:at + 12]}-{k}"


def create(ws: Workspace, operations: list[Operation], skip_known: bool = False,
           again: bool = False) -> list[Proposal]:
    """Make one proposal branch per operation against the current main (no working-tree change).

    With skip_known, operations already open, rejected or changing nothing are
    left out silently (a dream); otherwise they are errors (a person asked).
    With again, a person proposes a change that was rejected or reverted before:
    it gets a proposal id of its own, and the old refusal still keeps the dream from it.
    """
    main = ws.main()
    open_ids = {r[len(PROPOSAL_PREFIX):] for r in ws.repo.ref_names(PROPOSAL_PREFIX.rstrip("/"))}
    closed = closed_states(ws)
    refused = {pid for pid, s in closed.items() if s["status"] in ("rejected", "reverted")}
    closed_refs = {r[len(CLOSED_PREFIX):] for r in ws.repo.ref_names(CLOSED_PREFIX.rstrip("/"))}
    made: list[Proposal] = []
    updates = []
    jparent = ws.repo.ref(JOURNAL)
    for op in operations:
        op = _redact_op(op)
        _check_sensitive(op)
        pid = op.id
        if pid in open_ids or any(p.id == pid for p in made):
            if skip_known:
                continue
            raise ConflictError(f"the same change is already open as proposal {pid}; see `memgit show {pid}`.")
        if pid in refused and not again:
            if skip_known:
                continue
            raise ConflictError(f"the same change was {closed[pid]['status']} before (proposal {pid}); "
                                f"it is not proposed again: add --again to propose it anyway.")
        # the origin is trusted here, and only here: this process built the operation
        # (an agent's own edit may touch P0 lines: it is proposed, and only `approve ID --allow-p0` applies it)
        changes = _changes(ws, op, main, allow_p0=op.origin == "manual" or op.op == "edit")
        bad = [path for path in changes if not _allowed_path(ws, path)]
        if bad:
            raise MemgitError(f"this {op.op} would change {bad[0]}, which is not a memory file; nothing proposed.")
        if not changes:
            if skip_known:
                continue
            raise MemgitError(f"this {op.op} changes nothing in {op.file}; nothing to propose.")
        if pid in closed_refs:  # the same change was closed once and is wanted again
            pid = _fresh_id(op, closed_refs | open_ids | {p.id for p in made})
        blobs = {p: (ws.repo.write_blob(d) if d is not None else None) for p, d in changes.items()}
        tree = ws.repo.tree_with(ws.repo.tree_of(main), blobs)
        sha = ws.repo.commit(tree, [main], _message(op, pid))
        updates.append((PROPOSAL_PREFIX + pid, sha, None))
        made.append(Proposal(pid, op, sha, main, "open", _now_ts(), True))
    if made:
        jsha, _ = journal.prepare(ws.repo, "propose", {
            "summary": f"{len(made)} proposal(s): {', '.join(p.id for p in made)}",
            "ids": [p.id for p in made], "run": made[0].op.run}, jparent)
        updates.append((JOURNAL, jsha, jparent))
        crashpoint("propose:before-refs")
        ws.repo.update_refs(updates)
    return made


def _now_ts() -> int:
    return int(datetime.now(timezone.utc).timestamp())


# -- review ---------------------------------------------------------------------
@dataclass(frozen=True)
class ApproveResult:
    approved: list[Proposal]
    refused: list[tuple[str, str]]   # (id, one-line reason)
    commit: str | None


def approve(ws: Workspace, ids: list[str], min_confidence: float | None = None,
            allow_p0: bool = False) -> ApproveResult:
    """Merge proposals into main, one merge commit each, re-applying each op to the current main.

    Each proposal's commit must show exactly the change its record makes (check_record), and every
    guard runs again here whatever the record says of itself: memory files only, no sensitive data
    written, no P0 or protected entry changed unless the person names the proposal and says
    `allow_p0`.
    """
    if allow_p0 and not ids:
        raise MemgitError("--allow-p0 applies only to proposals named by id; give their ids.")
    with ws.repo.lock():
        ws.prepare()
        if ids:
            # one id given twice (or as two prefixes) is one approval
            props = list({p.id: p for p in (get(ws, i, check=False) for i in ids)}.values())
        else:
            props = list_proposals(ws, check=False)
            # prunes first (a secret's prune before anything built on the file that held it)
            props.sort(key=lambda p: (p.created, _order(p.op.op), -(p.op.confidence or 0), p.id))
            if min_confidence is not None:
                props = [p for p in props if (p.op.confidence or 0) >= min_confidence]
        approved, refused = [], []
        user = ws.repo.user()
        for p in props:
            if p.status != "open":
                refused.append((p.id, f"proposal {p.id} is {p.status}, not open"))
                continue
            main = ws.main()
            try:
                check_record(ws, p)
                changes = _changes(ws, p.op, main, allow_p0=allow_p0)
                _guard(ws, p, changes, main)
            except MemgitError as e:
                refused.append((p.id, str(e)))
                continue
            blobs = {path: (ws.repo.write_blob(d) if d is not None else None) for path, d in changes.items()}
            tree = ws.repo.tree_with(ws.repo.tree_of(main), blobs)
            when = journal.now_iso()
            msg = (f"memgit: approve {p.id}: {p.title}\n\n"
                   f"Memgit-Proposal: {p.id}\nApproved-by: {user}\nApproved-at: {when}\n")
            # the proposal's record, rebased onto this main when main moved since it was made: its
            # diff stays exactly the change, and its tree holds nothing main has shed meanwhile
            # (the original stays its second parent: the record only ever fast-forwards, so clones agree)
            record = p.commit if p.base == main else ws.repo.commit(tree, [main, p.commit],
                                                                    ws.repo.info(p.commit).message)
            merge = ws.repo.commit(tree, [main, record], msg)
            jparent = ws.repo.ref(JOURNAL)
            jsha, event = journal.prepare(ws.repo, "approve", {
                "summary": f"{p.id} {p.title}", "id": p.id, "by": user, "commit": merge,
                "fingerprint": p.op.fingerprint, "op": p.op.op, "file": p.op.file}, jparent)
            crashpoint("approve:before-refs")
            ws.repo.update_refs([
                (MAIN, merge, main),
                (PROPOSAL_PREFIX + p.id, None, p.commit),
                (CLOSED_PREFIX + p.id, record, None),
                (JOURNAL, jsha, jparent),
            ])
            crashpoint("approve:after-refs")
            # the same record a cold rebuild from the journal gives (its "at" included)
            _advance_cache(ws, jparent, jsha, {p.id: {"status": "approved", **event.data}})
            approved.append(p)
        ws.sync_worktree()
        crashpoint("approve:after-worktree")
        secret_prunes = [p.op for p in approved if any(t.startswith(HASHED) for t in p.op.targets)]
        if secret_prunes:
            _rebase_open(ws)  # open proposals made while the secret was in memory must not keep it
            _scrub_records(ws, secret_prunes)
            ws.warnings.append("the pruned entry held a secret: rotate that credential, and run `memgit scrub` "
                               "so no older commit keeps it (until then `memgit push` refuses to send it).")
        return ApproveResult(approved, refused, ws.repo.ref(MAIN) if approved else None)


def _record_on(ws: Workspace, p: Proposal, main: str) -> str:
    """A commit carrying p's record on top of `main`: its change re-applied, or (if it no longer
    applies) main's tree unchanged."""
    info = ws.repo.info(p.commit)
    try:
        changes = _changes(ws, p.op, main, allow_p0=True)
    except MemgitError:
        changes = {}
    blobs = {path: (ws.repo.write_blob(d) if d is not None else None) for path, d in changes.items()}
    # the author date stays the proposal's: its age counts from when it was proposed, not moved
    return ws.repo.commit(ws.repo.tree_with(ws.repo.tree_of(main), blobs), [main, p.commit], info.message,
                          authored=info.timestamp)


def _scrub_records(ws: Workspace, prunes: list[Operation]) -> None:
    """After a secret's prune: no proposal record (open or closed) keeps the pruned entry in its tree.

    A record whose tree still holds it gets a successor with the entry removed from both its tree
    and its base, so its diff is still exactly its own change; the old record stays its second
    parent (refs only fast-forward; git history, like main's, is not rewritten).
    """
    from memgit.memory import parse

    def scrub(tree: str) -> str:
        if tree in cleaned:
            return cleaned[tree]
        current: dict[str, bytes] = {}
        for op in prunes:
            data = current.get(op.file) or ws.repo.read_tree_file(tree, op.file)
            if data is None:
                continue
            doc = parse(op.file, data, ws.config.memory.protected_sections)
            gone = [e for e in doc.entries if ops.hash_target(e.text) in op.targets]
            if gone:
                current[op.file] = doc.remove(gone)
        blobs = {f: ws.repo.write_blob(d) for f, d in current.items()}
        cleaned[tree] = ws.repo.tree_with(tree, blobs) if blobs else tree
        return cleaned[tree]

    cleaned: dict[str, str] = {}
    refs = {**ws.repo.refs(PROPOSAL_PREFIX.rstrip("/")), **ws.repo.refs(CLOSED_PREFIX.rstrip("/"))}
    updates = []
    for ref, sha in refs.items():
        tree = ws.repo.tree_of(sha)
        clean = scrub(tree)
        if clean == tree:
            continue
        info = ws.repo.info(sha)
        base = info.parents[0] if info.parents else None
        new_base = base
        if base:
            base_tree = ws.repo.tree_of(base)
            clean_base = scrub(base_tree)
            if clean_base != base_tree:
                new_base = ws.repo.commit(clean_base, [base], "memgit: base with pruned sensitive data removed\n")
        record = ws.repo.commit(clean, [p for p in (new_base, sha) if p], info.message)
        updates.append((ref, record, sha))
    if updates:
        ws.repo.update_refs(updates)


def _rebase_open(ws: Workspace) -> None:
    main = ws.main()
    updates = []
    for p in list_proposals(ws, check=False):
        if p.base == main:
            continue
        # a proposal that no longer applies moves too (its record on main's tree, an empty diff):
        # it still shows as stale, and no branch keeps the older tree
        updates.append((PROPOSAL_PREFIX + p.id, _record_on(ws, p, main), p.commit))
    if updates:
        ws.repo.update_refs(updates)


def _order(kind: str) -> int:
    return PHASE.get(kind, len(PHASE))


def reject(ws: Workspace, ids: list[str], reason: str = "") -> list[Proposal]:
    """Close open proposals without merging. A proposal whose record cannot be read (a malformed
    branch pulled from a remote) is closed too, so it never stands in anyone's way."""
    with ws.repo.lock():
        return reject_locked(ws, ids, reason)


def reject_locked(ws: Workspace, ids: list[str], reason: str = "") -> list[Proposal]:
    """`reject`, for a caller that already holds the repo lock (a snapshot closing a superseded edit)."""
    from memgit import sensitive

    reason = sensitive.redact(reason)
    done = []
    for i in dict.fromkeys(ids):  # the same id twice is one rejection
        bad = _unreadable_ref(ws, check_id(i))
        if bad:
            _close_unreadable(ws, *bad, reason)
            continue
        p = get(ws, i, check=False)
        if p.status != "open":
            raise MemgitError(f"proposal {p.id} is {p.status}, not open; nothing to reject.")
        jparent = ws.repo.ref(JOURNAL)
        jsha, _ = journal.prepare(ws.repo, "reject", {
            "summary": f"{p.id} {p.title}" + (f" — {reason}" if reason else ""), "id": p.id,
            "reason": reason, "by": ws.repo.user(), "fingerprint": p.op.fingerprint,
            "op": p.op.op, "file": p.op.file}, jparent)
        main = ws.repo.ref(MAIN)
        record = p.commit if not main or p.base == main else _record_on(ws, p, main)
        ws.repo.update_refs([
            (PROPOSAL_PREFIX + p.id, None, p.commit),
            (CLOSED_PREFIX + p.id, record, None),
            (JOURNAL, jsha, jparent),
        ])
        done.append(p)
        if p.op.op == "edit" and p.op.text is not None and main:
            # the agent's own edit, refused: its file goes back to main's version, but only while it
            # still holds exactly the refused text (the text itself stays in git, under the closed ref)
            ws._sync_file(p.op.file, p.op.text.encode("utf-8"), ws.repo.read(main, p.op.file))
    return done


def _unreadable_ref(ws: Workspace, pid: str) -> tuple[str, str, str] | None:
    """(id, commit, why) of the one unreadable proposal `pid` names, if it names one."""
    refs = ws.repo.refs(PROPOSAL_PREFIX.rstrip("/"))
    if sum(r[len(PROPOSAL_PREFIX):].startswith(pid) for r in refs) != 1:
        return None  # none, or ambiguous: get() says which
    hits = [(i, why) for i, why in unreadable(ws) if i.startswith(pid)]
    return (hits[0][0], refs[PROPOSAL_PREFIX + hits[0][0]], hits[0][1]) if hits else None


def _close_unreadable(ws: Workspace, pid: str, sha: str, why: str, reason: str) -> None:
    jparent = ws.repo.ref(JOURNAL)
    jsha, _ = journal.prepare(ws.repo, "reject", {
        "summary": f"{pid} (unreadable: {why})" + (f" — {reason}" if reason else ""), "id": pid,
        "reason": reason or f"unreadable: {why}", "by": ws.repo.user()}, jparent)
    ws.repo.update_refs([(PROPOSAL_PREFIX + pid, None, sha), (CLOSED_PREFIX + pid, sha, None),
                         (JOURNAL, jsha, jparent)])


def find_approval(ws: Workspace, pid: str) -> str:
    out = ws.repo.git("log", "--first-parent", "--format=%H", f"--grep=^Memgit-Proposal: {pid}$", MAIN)
    shas = out.split()
    if not shas:
        raise NotFoundError(f"proposal {pid} was never approved into main; nothing to revert.")
    return shas[0]


def revert(ws: Workspace, pid: str) -> str:
    """Undo an approved proposal with a new commit on main, keeping everything after it."""
    from memgit.workspace import merge3

    pid = check_id(pid)
    with ws.repo.lock():
        ws.prepare()
        p = get(ws, pid, check=False)
        if p.status == "reverted":
            raise MemgitError(f"proposal {p.id} was already reverted.")
        merge = find_approval(ws, p.id)
        before = ws.repo.info(merge).parents[0]
        main = ws.main()
        paths = [x for x in ws.repo.git("diff", "--no-renames", "--name-only", "-z", before, merge).split("\0")
                 if x]
        blobs: dict[str, str | None] = {}
        for path in paths:
            ours = ws.repo.read(main, path)
            base = ws.repo.read(merge, path)
            theirs = ws.repo.read(before, path)
            if ours == base:
                new = theirs
            elif theirs is None or base is None:
                raise ConflictError(f"{path} changed after proposal {p.id} was approved; revert it by hand.")
            else:
                new = merge3(ours or b"", base, theirs)
                if new is None:
                    raise ConflictError(f"{path} changed after proposal {p.id} where its change was; "
                                        f"revert it by hand or edit the file.")
            blobs[path] = ws.repo.write_blob(new) if new is not None else None
        tree = ws.repo.tree_with(ws.repo.tree_of(main), blobs)
        msg = f"memgit: revert {p.id}: {p.title}\n\nMemgit-Reverts: {p.id}\nReverted-by: {ws.repo.user()}\n"
        sha = ws.repo.commit(tree, [main], msg)
        jparent = ws.repo.ref(JOURNAL)
        jsha, _ = journal.prepare(ws.repo, "revert", {"summary": f"{p.id} {p.title}", "id": p.id,
                                                      "commit": sha, "fingerprint": p.op.fingerprint,
                                                      "by": ws.repo.user()}, jparent)
        crashpoint("revert:before-refs")
        ws.repo.update_refs([(MAIN, sha, main), (JOURNAL, jsha, jparent)])
        crashpoint("revert:after-refs")
        ws.sync_worktree()
        return sha
