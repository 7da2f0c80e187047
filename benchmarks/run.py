#!/usr/bin/env python3
"""memgit's speed and scale figures, measured side by side on this machine.

    python benchmarks/run.py            # everything (a few minutes: builds 1y and 10y workspaces)
    python benchmarks/run.py --quick    # skip the 10-year workspace

Prints medians and ratios with their targets:
  proposal creation, object writes vs checkout-and-commit (50 KB MEMORY.md)  ≥3× faster, ≤ 8 ms
  approve of 1 and of 100 proposals                                            100 ≤ 5 s
  dream on 1-year and 10-year workspaces, and their ratio                      1y ≤ 2.5 s, 10y/1y ≤ 1.5
  expire / janitor on 10 years                                                 seconds, not minutes
  status start-up on the sample                                                ≤ 0.3 s
  recall over 10 years of logs
  tokens a model-backed dream sends vs all logs of the window verbatim         ≤ 15 %
  dream forcing a prune of 500 / 2,000 / 10,000 entries, and a 1,600-deep list   2k ≤ 5 s, deep ≤ 10 s
  sensitive scan of 2,000 log lines, and of one 100,000-character line           ≤ 0.2 s, ≤ 1 s
  peak memory of the largest run                                               ≤ 300 MB
Every command is run as a user would (a subprocess of the installed CLI), except
proposal creation, which times the library call against the git commands it replaces.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
GEN = SHARED / "bench" / "gen_workspace.py"
ENV = dict(os.environ, NO_COLOR="1", GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
           GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
ENV.pop("ANTHROPIC_API_KEY", None)
MEMGIT = [sys.executable, "-m", "memgit"]
PEAK = {"kb": 0, "what": ""}
ROWS: list[tuple[str, str, str]] = []


def row(name: str, value: str, target: str = "") -> None:
    ROWS.append((name, value, target))
    print(f"  {name:<48} {value:>14}   {target}", flush=True)


def timed(cmd: list[str], cwd: Path | None = None, check: bool = True) -> float:
    """Wall time of one subprocess; records its peak RSS."""
    wrapper = [sys.executable, "-c",
               "import resource,subprocess,sys;r=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss);sys.exit(r.returncode)", *cmd]
    t = time.perf_counter()
    p = subprocess.run(wrapper, cwd=cwd, env=ENV, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if check and p.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{p.stderr[-500:]}")
    try:
        kb = int(p.stdout.strip().splitlines()[-1])
        if kb > PEAK["kb"]:
            PEAK.update(kb=kb, what=" ".join(cmd[2:5]))
    except (ValueError, IndexError):
        pass
    return dt


def median(cmd: list[str], n: int = 3, cwd: Path | None = None) -> float:
    return statistics.median(timed(cmd, cwd) for _ in range(n))


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, env=ENV, capture_output=True, text=True, check=True).stdout


def make_ws(root: Path, name: str, memory: str) -> Path:
    ws = root / name
    ws.mkdir()
    (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
    (ws / "memgit.toml").write_text('[capacity]\n"MEMORY.md" = 200000\n', encoding="utf-8")
    subprocess.run([*MEMGIT, "-C", str(ws), "init"], env=ENV, check=True, capture_output=True)
    return ws


def big_memory(kb: int = 50) -> str:
    lines = ["# MEMORY", "", "## Environment [P0]", "- Host: bench machine", "", "## Notes [P1]"]
    i = 0
    while sum(len(x) + 1 for x in lines) < kb * 1024:
        lines.append(f"- [P1] Note {i}: the indexer for project {i % 17} runs with setting {i * 7 % 101} "
                     f"(2026-0{1 + i % 9}-{1 + i % 27:02d})")
        i += 1
    return "\n".join(lines) + "\n"


def bench_proposals(root: Path, n: int = 30, rounds: int = 3) -> None:
    """Medians over rounds, measured side by side in the same repository and process."""
    from memgit import proposals
    from memgit.ops import Operation
    from memgit.workspace import Workspace

    print("proposal creation (50 KB MEMORY.md)")
    ws = Workspace(make_ws(root, "props", big_memory()))
    wsp = ws.root
    # warm-up: the first call pays one-off imports (the secret detector's plugins)
    proposals.create(ws, [Operation("consolidate", "MEMORY.md", text="[P1] warm-up (2026-06-01)", section="Notes")])
    single, batch, co = [], [], []
    for r in range(rounds):
        t = time.perf_counter()
        for i in range(n):
            proposals.create(ws, [Operation("consolidate", "MEMORY.md", text=f"[P1] fact {r}.{i} (2026-06-01)",
                                            section="Notes")])
        single.append((time.perf_counter() - t) / n * 1000)
        # a dream makes its proposals in one call: one ref transaction for all of them
        t = time.perf_counter()
        proposals.create(ws, [Operation("consolidate", "MEMORY.md", text=f"[P1] batch {r}.{i} (2026-06-01)",
                                        section="Notes") for i in range(n)])
        batch.append((time.perf_counter() - t) / n * 1000)
        # the path it replaces: a branch checked out, the file written, committed, main checked out again
        t = time.perf_counter()
        for i in range(n):
            git(wsp, "checkout", "-q", "-b", f"co/{r}.{i}")
            with open(wsp / "MEMORY.md", "a", encoding="utf-8") as f:
                f.write(f"- [P1] checkout fact {r}.{i} (2026-06-01)\n")
            git(wsp, "commit", "-q", "--no-verify", "-am", f"fact {r}.{i}")
            git(wsp, "checkout", "-q", "main")
        co.append((time.perf_counter() - t) / n * 1000)
    obj, bat, chk = (statistics.median(x) for x in (single, batch, co))
    row("object writes, ms per proposal (one per call)", f"{obj:.1f} ms", "target ≤ 8 ms")
    row("object writes, ms per proposal (a dream's batch)", f"{bat:.1f} ms", "target ≤ 8 ms")
    row("checkout-and-commit, ms per proposal", f"{chk:.1f} ms")
    row("speed-up (one per call / batch)", f"{chk / obj:.1f}× / {chk / bat:.1f}×", "target ≥ 3×")


def bench_approve(root: Path) -> None:
    from memgit import proposals
    from memgit.ops import Operation
    from memgit.workspace import Workspace

    print("approve")
    ws = Workspace(make_ws(root, "approve", big_memory(10)))
    made = proposals.create(ws, [Operation("consolidate", "MEMORY.md", text=f"[P1] approve fact {i} (2026-06-01)",
                                           section="Notes") for i in range(101)])
    one = timed([*MEMGIT, "-C", str(ws.root), "approve", made[0].id])
    hundred = timed([*MEMGIT, "-C", str(ws.root), "approve", "--all"])
    left = len(proposals.list_proposals(ws))
    row("approve 1 proposal (CLI)", f"{one:.2f} s")
    row("approve --all, 100 proposals (CLI)", f"{hundred:.2f} s", f"target ≤ 5 s ({left} left open)")


def gen(root: Path, days: int) -> Path:
    ws = root / f"gen{days}"
    subprocess.run([sys.executable, str(GEN), str(ws), "--days", str(days)], check=True, capture_output=True)
    subprocess.run([*MEMGIT, "-C", str(ws), "init"], env=ENV, check=True, capture_output=True)
    return ws


def bench_scale(root: Path, quick: bool) -> None:
    if not GEN.exists():
        row("dream / expire / janitor / recall", "skipped", f"{GEN} not found")
        return
    print("dream, lifecycle and recall at scale (gen_workspace.py, window_days 3)")
    y1 = gen(root, 365)
    d1 = median([*MEMGIT, "-C", str(y1), "dream", "--now", "2026-06-01"])
    row("dream, 1-year workspace (median of 3)", f"{d1:.2f} s", "target ≤ 2.5 s")
    if quick:
        return
    y10 = gen(root, 3650)
    d10 = median([*MEMGIT, "-C", str(y10), "dream", "--now", "2026-06-01"])
    row("dream, 10-year workspace (median of 3)", f"{d10:.2f} s")
    row("dream 10y / 1y", f"{d10 / d1:.2f}", "target ≤ 1.5")
    for cmd in ("expire", "janitor"):
        if _has(cmd):
            t = timed([*MEMGIT, "-C", str(y10), cmd, "--now", "2026-06-01"])
            row(f"{cmd}, 10-year workspace", f"{t:.2f} s", "seconds, not minutes")
    if _has("recall"):
        t = median([*MEMGIT, "-C", str(y10), "recall", "gateway upgrade v0.17", "-k", "10"])
        row("recall over 10 years of logs (median of 3)", f"{t:.2f} s")
    tokens(y1)


def _set_window(ws: Path, days: int) -> None:
    cfg = ws / "memgit.toml"
    text = cfg.read_text(encoding="utf-8")
    import re as _re

    text = _re.sub(r"(?m)^window_days\s*=.*$", f"window_days = {days}", text)
    if f"window_days = {days}" not in text:
        text = text.replace("[dream]", f"[dream]\nwindow_days = {days}", 1)
    cfg.write_text(text, encoding="utf-8")


def bench_window(root: Path) -> None:
    """Dream cost grows with the window it reads, not with the history behind it."""
    if not GEN.exists():
        return
    print("dream cost against its window (1-year workspace, dry runs)")
    ws = gen(root, 365)
    times = {}
    for days in (3, 7, 14, 28):
        _set_window(ws, days)
        times[days] = t = median([*MEMGIT, "-C", str(ws), "dream", "--now", "2026-06-01", "--dry-run"])
        row(f"dream, window {days} days (median of 3)", f"{t:.2f} s")
    # 4x the window's days is 4x its lines: a cost linear in them stays under 4x (start-up is fixed),
    # one growing with pairs of lines would be 16x
    row("dream window 28 d / 7 d", f"{times[28] / times[7]:.2f}", "target ≤ 4 (linear in the window)")


def bench_real(root: Path) -> None:
    """The largest shared real workspace, if the evaluation data is beside the checkout."""
    import json
    import shutil

    real = Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "real-workspaces"
    if not real.is_dir():
        row("dream on the largest real workspace", "skipped", "../shared/eval absent")
        return
    cases = sorted((d for d in real.iterdir() if (d / "gold.json").exists()),
                   key=lambda d: sum(f.stat().st_size for f in d.rglob("*") if f.is_file()))
    big = cases[-1]
    gold = json.loads((big / "gold.json").read_text(encoding="utf-8"))
    ws = root / "real"
    shutil.copytree(big, ws, ignore=shutil.ignore_patterns("gold.json"))
    subprocess.run([*MEMGIT, "-C", str(ws), "init", *gold.get("init", [])], env=ENV, check=True,
                   capture_output=True)
    t = median([*MEMGIT, "-C", str(ws), "dream", "--now", gold["now"], "--dry-run"], n=5)
    size = sum(f.stat().st_size for f in big.rglob("*.md")) // 1024
    row(f"dream on the largest real workspace ({size} KB of markdown, median of 5)", f"{t:.2f} s", "target < 2 s")


def _has(cmd: str) -> bool:
    p = subprocess.run([*MEMGIT, cmd, "--help"], env=ENV, capture_output=True)
    return p.returncode == 0


def tokens(ws: Path) -> None:
    try:
        from memgit.dream.anthropic_backend import estimate_tokens
    except ImportError:
        row("model-backed dream: tokens sent", "n/a", "anthropic backend not installed")
        return
    from datetime import date

    from memgit.workspace import Workspace

    for days in (None, 7):
        est = estimate_tokens(Workspace(ws), date(2026, 6, 1), window_days=days)
        label = f"window {days or 'from memgit.toml (3)'} d"
        row(f"model dream, evidence tokens ({label})", f"{est['evidence']}",
            f"vs {est['verbatim']} for the window's logs verbatim")
        row("  evidence share of verbatim", f"{est['evidence_pct']} %", "target ≤ 15 %")
        row("  whole request vs naive request", f"{est['request_pct']} %",
            f"{est['request']} vs {est['naive_request']} tokens (memory sent in full both ways)")


def bench_status(root: Path) -> None:
    print("status start-up")
    ws = root / "sample"
    shutil.copytree(REPO / "sample_memory", ws)
    subprocess.run([*MEMGIT, "-C", str(ws), "init"], env=ENV, check=True, capture_output=True)
    t = median([*MEMGIT, "-C", str(ws), "status"], n=5)
    row("status on sample_memory (median of 5)", f"{t:.3f} s", "target ≤ 0.3 s")
    t = median([*MEMGIT, "-C", str(ws), "dream", "--now", "2026-11-30", "--dry-run"], n=3)
    row("dream on sample_memory (median of 3)", f"{t:.2f} s", "well under 1 s")


def _budget_ws(root: Path, name: str, memory: str, budget: int = 2000) -> Path:
    ws = root / name
    ws.mkdir()
    (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
    (ws / "memgit.toml").write_text(f'[capacity]\n"MEMORY.md" = {budget}\n', encoding="utf-8")
    subprocess.run([*MEMGIT, "-C", str(ws), "init"], env=ENV, check=True, capture_output=True)
    return ws


def bench_large(root: Path, quick: bool) -> None:
    """A forced capacity prune of a large file, and a deeply nested list: near-linear, not quadratic."""
    print("large and deep memory files (dry-run dream over a 2,000-character budget)")
    sizes = (500, 2000) if quick else (500, 2000, 10000)
    times = {}
    for n in sizes:
        mem = "# MEMORY\n\n## Notes [P2]\n" + "".join(
            f"- [P2] Note {i}: the indexer for project{i} runs setting{i * 7 % 101} zz{i} "
            f"(2025-0{1 + i % 9}-{1 + i % 27:02d})\n" for i in range(n))
        ws = _budget_ws(root, f"large{n}", mem)
        times[n] = timed([*MEMGIT, "-C", str(ws), "dream", "--now", "2026-06-01", "--dry-run"])
        row(f"dream, forced prune of {n:,} entries", f"{times[n]:.2f} s",
            "target ≤ 5 s" if n <= 2000 else "target ≤ 30 s")
    big = max(sizes)
    row(f"dream {big:,} / 500 entries", f"{times[big] / times[500]:.1f}",
        f"target ≤ {2 * big // 500} (linear: {big // 500})")
    for depth in (400, 1600):
        mem = "# MEMORY\n\n## Notes [P2]\n" + "".join("  " * i + f"- [P2] level {i} note\n" for i in range(depth))
        ws = _budget_ws(root, f"deep{depth}", mem)
        t = timed([*MEMGIT, "-C", str(ws), "dream", "--now", "2026-06-01", "--dry-run"])
        row(f"dream, list nested {depth} deep ({len(mem) // 1024} KB)", f"{t:.2f} s",
            "target ≤ 10 s" if depth == 1600 else "")


def bench_scan() -> None:
    """The sensitive-content scan every line goes through (a library call, best of three)."""
    sys.path.insert(0, str(REPO))
    from memgit.sensitive import has_sensitive, scan

    print("sensitive-content scan")
    lines = [ln for p in sorted((REPO / "sample_memory").rglob("*.md"))
             for ln in p.read_text(encoding="utf-8").splitlines() if not has_sensitive(ln)]
    log = "\n".join(lines[i % len(lines)] for i in range(2000))
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    line = " ".join([token] * 2000) + " 持仓 " + "100 股，" * 2000 + "盈亏 +1,000 " * 500
    for name, text, target in (("scan of 2,000 ordinary log lines", log, "target ≤ 0.2 s"),
                               (f"scan of one {len(line):,}-character line", line, "target ≤ 1 s")):
        scan(text)
        best = min(_clock(scan, text) for _ in range(3))
        row(name, f"{best:.3f} s", target)


def _clock(fn, arg) -> float:
    t = time.perf_counter()
    fn(arg)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 10-year workspace")
    args = ap.parse_args()
    print(f"memgit benchmarks on {os.uname().machine}, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="memgit-bench-") as tmp:
        root = Path(tmp)
        os.environ.update({k: v for k, v in ENV.items() if k.startswith("GIT_")})
        bench_proposals(root)
        bench_approve(root)
        bench_status(root)
        bench_scan()
        bench_large(root, args.quick)
        bench_scale(root, args.quick)
        bench_window(root)
        bench_real(root)
    mb = PEAK["kb"] / 1024
    row("peak memory of the largest run", f"{mb:.0f} MB", f"target ≤ 300 MB ({PEAK['what']})")
    _ = resource  # the children's peak RSS is read in each measured subprocess


if __name__ == "__main__":
    main()
