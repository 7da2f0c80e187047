"""`memgit ingest --from auto` on one folder mixing the products' files: each file is read in its own
format, and per file the summary says what was kept (per speaker) and what was left out, and why."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"


def mixed(tmp_path: Path) -> Path:
    src = tmp_path / "mixed"
    shutil.copytree(FIXTURES / "claude-code", src / "claude")
    shutil.copytree(FIXTURES / "openclaw-kinds", src / "openclaw")
    shutil.copytree(FIXTURES / "codex", src / "codex")
    shutil.copytree(FIXTURES / "hermes-kinds" / "sessions", src / "hermes" / "sessions")
    db = src / "hermes" / "state.db"
    with sqlite3.connect(db) as c:
        c.executescript((FIXTURES / "hermes-kinds" / "v30.sql").read_text(encoding="utf-8"))
    c.close()
    (src / "notes.txt").write_text("not a transcript\n", encoding="utf-8")
    return src


def test_auto_reads_each_product_in_its_format_and_reports_per_file(tmp_path, run_cli):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# MEMORY\n\n- [P1] something (2026-01-01)\n", encoding="utf-8")
    assert run_cli(ws, "init")[0] == 0
    src = mixed(tmp_path)
    code, out, err = run_cli(ws, "ingest", "--json", str(src))
    assert code == 0, err
    report = json.loads(out)
    by_format: dict[str, list[dict]] = {}
    for f in report["files"]:
        by_format.setdefault(f["format"], []).append(f)
    assert {"claude-code", "openclaw", "codex", "hermes", "hermes-logs"} <= set(by_format)
    for fmt in ("claude-code", "openclaw", "codex", "hermes"):
        assert any(f["kept"].get("user") for f in by_format[fmt]), fmt
    # what was left out is said, with a reason, where the product writes control records
    for fmt in ("openclaw", "codex", "hermes"):
        assert any(f["skipped"] for f in by_format[fmt]), fmt
    assert not any(f["path"].endswith("sessions.json") for f in report["files"] if f["format"])
    assert report["turns_added"] > 0
    names = {Path(p).name.split("-", 1)[0] for p in report["sessions_written"]}
    assert {"claude", "openclaw", "codex", "hermes"} <= names
    # the human summary names each file with what it read and left out
    code, out, err = run_cli(ws, "ingest", str(src))
    assert code == 0, err
    assert "(codex): read" in out and "(openclaw): read" in out and "left out" in out


def test_a_named_file_in_the_wrong_format_is_an_error_naming_what_it_looks_like(tmp_path, run_cli):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert run_cli(ws, "init")[0] == 0
    rollout = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
    code, out, err = run_cli(ws, "ingest", "--from", "openclaw", str(rollout))
    assert code == 1 and str(rollout) in err and "looks like codex" in err
    stray = tmp_path / "notes.jsonl"
    stray.write_text('{"hello": "world"}\n', encoding="utf-8")
    code, out, err = run_cli(ws, "ingest", str(stray))
    assert code == 1 and "in no transcript format memgit reads" in err
