#!/usr/bin/env python3
"""How many dream candidates fall in each confidence band, on labelled workspaces.

For each case folder (a workspace with gold.json, as ../shared/bench uses) it
copies the workspace, runs `memgit init` and `memgit dream --dry-run --json`,
and counts what the dream would propose (at or above the threshold) and what it
skipped for low confidence, by band. Reading the proposals in each band is how
the default threshold is set: what passes it must be right.

    python3 benchmarks/bands.py ../shared/bench/dev ../shared/eval/real-workspaces
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BANDS = [(0.0, 0.5), (0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)]


def cases(paths: list[str]) -> list[Path]:
    out = []
    for p in map(Path, paths):
        out += [p] if (p / "gold.json").exists() else sorted(d for d in p.iterdir() if (d / "gold.json").exists())
    return out


def band(x: float) -> str:
    for lo, hi in BANDS:
        if lo <= x < hi:
            return f"{lo:.1f}–{min(hi, 1.0):.1f}"
    return "?"


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    memgit = [sys.executable, "-m", "memgit"]
    env = dict(os.environ, NO_COLOR="1")
    env.pop("ANTHROPIC_API_KEY", None)
    proposed: dict[str, int] = {}
    skipped: dict[str, int] = {}
    for case in cases(sys.argv[1:]):
        gold = json.loads((case / "gold.json").read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            shutil.copytree(case, ws, ignore=shutil.ignore_patterns("gold.json"))
            subprocess.run([*memgit, "-C", str(ws), "init", *gold.get("init", [])], env=env, check=True,
                           capture_output=True)
            p = subprocess.run([*memgit, "-C", str(ws), "dream", "--now", gold["now"], "--dry-run", "--json"],
                               env=env, capture_output=True, text=True, check=True)
            report = json.loads(p.stdout)
        for prop in report["proposals"]:
            proposed[band(prop["confidence"])] = proposed.get(band(prop["confidence"]), 0) + 1
            print(f"{case.name}\t{prop['confidence']:.2f}\t{prop['op']}\t{prop['title'][:70]}")
        for s in report["skipped"]:
            if "below threshold" in s["why"]:
                skipped[band(s["score"])] = skipped.get(band(s["score"]), 0) + 1
    print("\nband\tproposed\tskipped (below threshold)")
    for lo, _ in BANDS:
        b = band(lo)
        print(f"{b}\t{proposed.get(b, 0)}\t{skipped.get(b, 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
