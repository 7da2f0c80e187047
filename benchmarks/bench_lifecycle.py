#!/usr/bin/env python3
"""Time `memgit expire` and `memgit janitor` on a 10-year workspace.

    python3 benchmarks/bench_lifecycle.py [--days 3650] [--keep DIR]

Generates the workspace with ../shared/bench/gen_workspace.py, adds what the
janitor works on (an Events section with an entry every 5 days, a stale P1
section, P2 notes with conclusions), adopts it, then prints seconds for each
command (a run that proposes, and an idempotent second run).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

GEN = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "gen_workspace.py"
END = date(2026, 6, 1)


def extra_memory(days: int) -> str:
    start = END - timedelta(days=days)
    lines = ["", "## Events [P1]"]
    for i in range(0, days, 5):
        d = start + timedelta(days=i)
        lines.append(f"- [P1] Milestone {i // 5}: release train {i % 7} shipped 版本 {i // 30} 上线 ({d})")
    lines += ["", "## Decisions [P1]"]
    for i in range(20):
        lines.append(f"- [P1] Decided to keep zephyr{i} quorum settings unchanged ({start + timedelta(days=i)})")
    lines += ["", "## Experiments [P2]"]
    for i in range(50):
        lines.append(f"- [P2] Tried sharding strategy {i} on the staging cluster, too much overhead → stay on "
                     f"single node {i} ({start + timedelta(days=i)})")
    return "\n".join(lines) + "\n"


def timed(root: Path, *args: str) -> tuple[float, str]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "memgit", "-C", str(root), *args], capture_output=True, text=True,
                       check=True)
    return time.perf_counter() - t, p.stdout.splitlines()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=3650)
    ap.add_argument("--keep", type=Path, help="build the workspace here instead of a temp folder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memgit-bench-") as tmp:
        root = args.keep or Path(tmp) / "ws"
        subprocess.run([sys.executable, str(GEN), str(root), "--days", str(args.days)], check=True,
                       capture_output=True)
        with open(root / "MEMORY.md", "a", encoding="utf-8") as f:
            f.write(extra_memory(args.days))
        subprocess.run([sys.executable, "-m", "memgit", "-C", str(root), "init"], check=True, capture_output=True)
        now = END.isoformat()
        for cmd in (["expire"], ["expire"], ["janitor"], ["janitor"]):
            secs, first = timed(root, *cmd, "--now", now)
            print(f"{' '.join(cmd):<8} {secs:6.2f} s  {first}")


if __name__ == "__main__":
    main()
