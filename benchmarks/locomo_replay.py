#!/usr/bin/env python3
"""Replay a LoCoMo conversation through memgit's lifecycle, then compare recall@k with plain BM25.

    python benchmarks/locomo_replay.py [--conv 0] [--sessions N] [--keep DIR] [-k 10]

One daily log per session (`memory/YYYY-MM-DD.md`, the session's date; two
sessions on one day share the log), each turn a line `- [D3:5] Speaker: text`.
After each session: `memgit dream --now <day>` and `memgit approve --all`; at
the end `memgit expire --now <last day + 60d>` and `memgit approve --all`, so
every log has moved to an archive. Then each QA item of categories 1, 2 and 4
is asked with `memgit recall --queries FILE -k 10 --json`; it is found when a
hit's text holds one of its evidence turns' `[dia_id]` tags. The baseline is
rank_bm25's BM25Okapi over the raw turns (the same `Speaker: text`, the same
`memgit.text.terms` tokenisation), top k with a positive score.

LoCoMo (../shared/eval/locomo/, CC BY-NC 4.0) is used for evaluation only:
the workspace is built in a temporary folder and nothing of it enters the repo.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo" / "locomo10.json"
CATEGORIES = (1, 2, 4)
CATEGORY_NOTE = {2: "temporal"}
DIA_RE = re.compile(r"D\d+:\d+")
MEMORY_MD = "# MEMORY\n\n## People [P1]\n\n## Events [P1]\n\n## Notes [P2]\n"
USER_MD = "# USER\n\n## Identity [P0]\n- The agent keeps the diary of a long conversation between two friends.\n"


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str

    @property
    def raw(self) -> str:
        """The turn as the baseline sees it (and as the log line holds it, after the tag)."""
        return f"{self.speaker}: {self.text}"

    @property
    def line(self) -> str:
        return f"- [{self.dia_id}] {self.raw}"


@dataclass(frozen=True)
class Session:
    number: int
    when: datetime
    turns: tuple[Turn, ...]

    @property
    def day(self) -> date:
        return self.when.date()


@dataclass
class Replay:
    root: Path
    sessions: int = 0
    approved: dict[str, int] = field(default_factory=dict)
    expire: str = ""
    wake_missing: list[str] = field(default_factory=list)
    seconds: float = 0.0


def load(path: Path = DATA) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def sessions_of(conv: dict) -> list[Session]:
    c = conv["conversation"]
    out = []
    for key, turns in c.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if not m or not isinstance(turns, list) or not turns:
            continue
        when = datetime.strptime(c[f"{key}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
        ts = []
        for t in turns:
            text = _one_line(t.get("text", ""))
            if t.get("blip_caption"):
                text += f" [shares a photo: {_one_line(t['blip_caption'])}]"
            ts.append(Turn(t["dia_id"], t["speaker"], text))
        out.append(Session(int(m.group(1)), when, tuple(ts)))
    return sorted(out, key=lambda s: s.number)


def evidence_ids(qa: dict) -> set[str]:
    return {d for e in qa.get("evidence") or () for d in DIA_RE.findall(str(e))}


def questions(conv: dict, sessions: list[Session]) -> list[dict]:
    """QA items of CATEGORIES whose evidence lies in the replayed sessions."""
    known = {t.dia_id for s in sessions for t in s.turns}
    out = []
    for qa in conv["qa"]:
        ev = evidence_ids(qa)
        if qa.get("category") in CATEGORIES and ev and ev <= known:
            out.append({"question": _one_line(qa["question"]), "category": qa["category"], "evidence": ev})
    return out


# -- driving memgit through its CLI -----------------------------------------------------
def _runner():
    from click.testing import CliRunner

    from memgit.cli import cli

    return lambda *args: CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _run(invoke, root: Path, *args) -> str:
    r = invoke("-C", root, *args)
    if r.exit_code != 0:
        raise RuntimeError(f"memgit {' '.join(map(str, args))} exited {r.exit_code}: {r.output[-500:]}")
    return r.stdout


def _approve_all(invoke, root: Path, rep: Replay) -> None:
    out = json.loads(_run(invoke, root, "approve", "--all", "--json") or "{}")
    for pid in out.get("approved", []):
        rep.approved[pid] = 1
    rep.wake_missing += out.get("wake_check_missing", [])


def replay(root: Path, conv: dict, limit: int | None = None, expire: bool = True) -> Replay:
    """Build the workspace in `root` (an empty folder) and run the lifecycle after every session."""
    from memgit.adopt import init

    invoke = _runner()
    t0 = time.perf_counter()
    sessions = sessions_of(conv)[:limit]
    root.mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (root / "USER.md").write_text(USER_MD, encoding="utf-8")
    init(root)
    rep = Replay(root)
    for s in sessions:
        log = root / "memory" / f"{s.day.isoformat()}.md"
        log.parent.mkdir(exist_ok=True)
        head = f"# {s.day.isoformat()}\n" if not log.exists() else ""
        body = f"\n## Session {s.number}, {s.when.strftime('%H:%M')}\n\n" + "".join(t.line + "\n" for t in s.turns)
        with log.open("a", encoding="utf-8") as f:
            f.write(head + body)
        _run(invoke, root, "dream", "--now", s.day.isoformat())
        _approve_all(invoke, root, rep)
        rep.sessions += 1
    if expire:
        end = sessions[-1].day + timedelta(days=60)
        _run(invoke, root, "expire", "--now", end.isoformat())
        _approve_all(invoke, root, rep)
        rep.expire = f"expire --now {end.isoformat()}"
    rep.seconds = time.perf_counter() - t0
    return rep


# -- scoring -----------------------------------------------------------------------------
def recall_hits(root: Path, qs: list[dict], k: int) -> list[list[dict]]:
    invoke = _runner()
    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
        f.write("".join(q["question"] + "\n" for q in qs))
    try:
        return json.loads(_run(invoke, root, "recall", "--queries", f.name, "-k", k, "--json"))
    finally:
        Path(f.name).unlink()


def baseline_hits(sessions: list[Session], qs: list[dict], k: int) -> list[list[str]]:
    """dia_ids of the top k turns of plain BM25 over the raw turns, for each question."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from memgit.text import terms

    turns = [t for s in sessions for t in s.turns]
    docs = [terms(t.raw) for t in turns]
    keep = [i for i, d in enumerate(docs) if d]
    bm25 = BM25Okapi([docs[i] for i in keep])
    out = []
    for q in qs:
        qt = list(dict.fromkeys(terms(q["question"])))
        if not qt:
            out.append([])
            continue
        scores = bm25.get_scores(qt)
        idx = np.flatnonzero(scores > 0)
        order = idx[np.lexsort((idx, -scores[idx]))][:k]
        out.append([turns[keep[i]].dia_id for i in order])
    return out


def evaluate(root: Path, conv: dict, sessions: list[Session], k: int = 10) -> dict[int, dict]:
    """Per category: questions, recall@k of memgit recall, recall@k of the baseline."""
    qs = questions(conv, sessions)
    ours = recall_hits(root, qs, k) if qs else []
    base = baseline_hits(sessions, qs, k) if qs else []
    table: dict[int, dict] = {c: {"n": 0, "recall": 0, "baseline": 0} for c in CATEGORIES}
    for q, hits, ids in zip(qs, ours, base):
        row = table[q["category"]]
        row["n"] += 1
        row["recall"] += any(f"[{d}]" in h["text"] for h in hits for d in q["evidence"])
        row["baseline"] += bool(q["evidence"] & set(ids))
    for row in table.values():
        n = row["n"] or 1
        row["recall_at_k"] = round(row["recall"] / n, 3)
        row["baseline_at_k"] = round(row["baseline"] / n, 3)
    return table


def format_table(table: dict[int, dict], k: int = 10) -> str:
    lines = [f"category      n   memgit recall@{k}   plain BM25@{k}"]
    for c, row in table.items():
        name = f"{c}" + (f" ({CATEGORY_NOTE[c]})" if c in CATEGORY_NOTE else "")
        lines.append(f"{name:<12} {row['n']:>3}   {row['recall_at_k']:>14.3f}   {row['baseline_at_k']:>13.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="locomo10.json")
    ap.add_argument("--conv", type=int, default=0, help="which conversation (0-9)")
    ap.add_argument("--sessions", type=int, default=None, help="replay only the first N sessions")
    ap.add_argument("--keep", type=Path, default=None, help="build the workspace here and keep it")
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args(argv)
    if not args.data.is_file():
        print(f"LoCoMo data not found at {args.data}; nothing to replay.", file=sys.stderr)
        return 2
    conv = load(args.data)[args.conv]
    with tempfile.TemporaryDirectory(prefix="memgit-locomo-") as tmp:
        root = args.keep or Path(tmp) / "ws"
        rep = replay(root, conv, args.sessions)
        sessions = sessions_of(conv)[:args.sessions]
        t = time.perf_counter()
        table = evaluate(root, conv, sessions, args.k)
        ask = time.perf_counter() - t
    print(f"LoCoMo conversation {conv.get('sample_id', args.conv)}: {rep.sessions} sessions replayed "
          f"(dream + approve each), {len(rep.approved)} proposals approved, {rep.expire}; "
          f"{rep.seconds:.1f} s; recall of {sum(r['n'] for r in table.values())} questions {ask:.1f} s")
    if rep.wake_missing:
        print(f"wake check missed: {', '.join(rep.wake_missing)}")
    print(format_table(table, args.k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
