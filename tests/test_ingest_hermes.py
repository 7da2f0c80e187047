"""Hermes Agent: the state.db of schemas 5, 18 and 30 and the session logs in
~/.hermes/sessions/, each record kind from tests/fixtures/ingest/hermes-kinds/:
who said what, what was left out and why, and a dream that builds nothing from a
summary, harness text or a subagent."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from memgit.errors import MemgitError
from memgit.ingest import detect, hermes, hermes_logs, ingest

from conftest import SHARED

KINDS = Path(__file__).parent / "fixtures" / "ingest" / "hermes-kinds"
LOGS = KINDS / "sessions"
OTHER_FORMATS = Path(__file__).parent / "fixtures" / "ingest"
REAL = SHARED / "eval" / "real-transcripts"


def build(tmp_path: Path, version: str) -> Path:
    path = tmp_path / version / "state.db"
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as connection:
        connection.executescript((KINDS / f"{version}.sql").read_text(encoding="utf-8"))
    connection.close()
    return path


def lines(workspace: Path, name: str) -> list[dict]:
    text = (workspace / "sessions" / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def said(workspace: Path, name: str) -> list[tuple[str, str]]:
    return [(line["role"], line["text"]) for line in lines(workspace, name)]


def everything(workspace: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((workspace / "sessions").glob("*.jsonl")))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


# --- schema 5: rotation compaction, inline system prompt, subagents without a marker -------


def test_v5_compaction_rotation_keeps_one_copy_and_the_summary_as_context(workspace: Path, tmp_path: Path) -> None:
    summary = ingest(workspace, "hermes", [build(tmp_path, "v5")])

    assert summary.warnings == []
    assert summary.sessions_written == [
        "sessions/hermes-20260301_100000_a1b2c3.jsonl",
        "sessions/hermes-20260301_101320_c0ffee.jsonl",
        "sessions/hermes-20260301_120000_c0c0c0.jsonl",
    ]
    assert said(workspace, "hermes-20260301_100000_a1b2c3.jsonl") == [
        ("user", "我下个月从上海搬到杭州, please keep the move date on the 15th."),
        ("assistant", "好的, the move is set for the 15th."),
        ("user", "帮我找搬家公司 quotes."),
        ("assistant", "I found three quotes; the cheapest is 2,800 元."),
        ("user", "这是新公寓的租约 — the lease starts on the 14th."),
        ("assistant", "Noted: the lease starts on the 14th, one day before the move."),
    ]
    assert said(workspace, "hermes-20260301_101320_c0ffee.jsonl") == [
        ("summary", "## Active Task\nThe user always wants the cheapest mover and is moving on the 15th."),
        ("user", "請幫我預約最便宜的那家, Saturday morning works."),
        ("assistant", "已預約: the mover comes on Saturday at 09:00."),
    ]
    # the cron hint is cut from the job's prompt; the silent reply is not kept
    assert said(workspace, "hermes-20260301_120000_c0c0c0.jsonl") == [
        ("user", "Check whether the mover sent a confirmation email."),
    ]
    (report,) = summary.files
    assert report.kept == {"user": 5, "assistant": 4, "summary": 1}
    assert report.skipped == {
        "system prompt": 2, "tool call": 1, "tool output": 2, "subagent": 2, "memory review": 3,
        "duplicate after compaction": 3, "compaction note": 1, "silent reply": 1,
    }
    assert "base64" not in everything(workspace) and "iVBORw0KGgo" not in everything(workspace)


# --- the middle schemas: `active` without `compacted` ---------------------------------------


def test_v18_undone_rows_and_linked_subagents_are_left_out(workspace: Path, tmp_path: Path) -> None:
    summary = ingest(workspace, "hermes", [build(tmp_path, "v18")])

    assert summary.sessions_written == [
        "sessions/hermes-20260512_080000_5e5e5e.jsonl",
        "sessions/hermes-20260512_081000_88bb88.jsonl",
    ]
    assert said(workspace, "hermes-20260512_080000_5e5e5e.jsonl") == [
        ("user", "Book a dentist appointment 下周二下午."),
        ("assistant", "Booked: Tuesday 15:00 with Dr. 王."),
        ("user", "Remind me the evening before, 用繁體中文 please."),
        ("assistant", "好的, 我會在前一天晚上提醒你."),
    ]
    # a /new reset is the owner's next conversation, not a subagent
    assert said(workspace, "hermes-20260512_081000_88bb88.jsonl") == [
        ("user", "New topic: 我對花生過敏, remember that."),
        ("assistant", "Noted: you are allergic to peanuts."),
    ]
    (report,) = summary.files
    assert report.skipped == {"undone": 2, "harness text": 1, "tool call": 1, "tool output": 1, "subagent": 2}
    assert "cancel" not in everything(workspace)


# --- schema 30: in-place compaction, hidden rows, markers -----------------------------------


def test_v30_in_place_compaction_hidden_rows_and_markers(workspace: Path, tmp_path: Path) -> None:
    summary = ingest(workspace, "hermes", [build(tmp_path, "v30")])

    assert summary.warnings == []
    assert said(workspace, "hermes-20260920_090000_aaaa01.jsonl") == [
        ("user", "我在学西班牙语, I practise every evening at 21:00."),
        ("assistant", "¡Muy bien! I will quiz you at 21:00."),
        ("user", "Use Latin American vocabulary, 不要西班牙本土的."),
        ("assistant", "Entendido: Latin American vocabulary only."),
        ("summary", "## Historical Task Snapshot\nFrom now on the user wants Castilian vocabulary instead of Latin American."),
        ("user", "這是我的作業 — please check the verbs."),
        ("assistant", "Two verbs need the preterite: fui, comí."),
        ("user", "謝謝, 明天見."),
    ]
    # a /branch is kept; the delegated subagent and the tool session are not
    assert said(workspace, "hermes-20260920_093000_bbbb04.jsonl") == [
        ("user", "In this branch, 试试 Portuguese for a week."),
    ]
    # rotation with the summary merged into the next message: the message is kept, the summary is context
    assert said(workspace, "hermes-20260920_101000_ffff06.jsonl") == [
        ("summary", "From now on the user wants very spicy food instead of mild."),
        ("user", "今晚做什麼菜? Something with tofu."),
        ("assistant", "Try mapo tofu without chili: 不辣版麻婆豆腐."),
        ("summary", "The user asked for recipes."),
        ("user", "Add a shopping list too."),
    ]
    assert said(workspace, "hermes-20260920_110000_cccc07.jsonl") == [
        ("user", "Check the Spanish class calendar for changes."),
    ]
    assert not (workspace / "sessions" / "hermes-20260920_091500_dddd02.jsonl").exists()
    assert not (workspace / "sessions" / "hermes-20260920_092000_eeee03.jsonl").exists()
    (report,) = summary.files
    assert report.skipped == {
        "system prompt": 2, "undone": 2, "duplicate after compaction": 4, "compaction note": 2,
        "hidden row": 2, "harness text": 1, "memory review": 2, "subagent": 3, "silent reply": 1,
    }
    text = everything(workspace)
    for hidden in ("French", "task list", "Files read", "ASYNC DELEGATION", "computadora", "web page", "/9j/4AAQ",
                   "studies French", "Notion", "[SILENT]", "SYSTEM:", "CONTEXT COMPACTION", "PRIOR CONTEXT"):
        assert hidden not in text


def test_every_schema_is_opened_read_only(workspace: Path, tmp_path: Path) -> None:
    for version in ("v5", "v18", "v30"):
        db = build(tmp_path, version)
        before = db.read_bytes()
        ingest(workspace, "hermes", [db])
        assert db.read_bytes() == before
        assert sorted(p.name for p in db.parent.iterdir()) == ["state.db"]


def test_reading_twice_adds_nothing(workspace: Path, tmp_path: Path) -> None:
    db = build(tmp_path, "v30")
    first = ingest(workspace, "hermes", [db])
    again = ingest(workspace, "auto", [db, LOGS])
    assert first.turns_added > 0 and again.turns_skipped_duplicate == first.turns_added
    assert again.turns_added == 6 and again.sessions_written == ["sessions/hermes-logs-20260402_183000_ab12cd.jsonl"]
    assert ingest(workspace, "auto", [db, LOGS]).turns_added == 0


# --- the session logs ------------------------------------------------------------------------


def test_gateway_transcript_follows_the_same_speaker_rules(workspace: Path) -> None:
    summary = ingest(workspace, "hermes-logs", [LOGS / "20260402_183000_ab12cd.jsonl"])

    assert said(workspace, "hermes-logs-20260402_183000_ab12cd.jsonl") == [
        ("user", "订两张去台北的机票, aisle seats please."),
        ("assistant", "Found CI 502 at 08:10; 要我訂嗎?"),
        ("user", "Here is my passport page, 請用這個名字."),
        ("assistant", "Booked two aisle seats on CI 502 under that name."),
        ("summary", "## Active Task\nThe user wants a window seat."),
        ("user", "Also 提醒我 to check in 24 hours before."),
    ]
    ts = [line["ts"] for line in lines(workspace, "hermes-logs-20260402_183000_ab12cd.jsonl")]
    assert ts == sorted(ts) and len(set(ts)) == len(ts)  # one time per turn in the log: order and each kept
    assert ts[0].startswith("2026-04-02T18:30:00.")
    (report,) = summary.files
    assert report.skipped == {"session metadata": 1, "tool call": 1, "tool output": 1,
                              "duplicate after compaction": 1, "compaction note": 1, "memory review": 2,
                              "silent reply": 1}
    assert summary.warnings == [f"{LOGS / '20260402_183000_ab12cd.jsonl'}:15: malformed JSON; line skipped"]
    assert "iVBORw0KGgo" not in everything(workspace)


def test_agent_session_logs_are_read_and_subagent_logs_skipped(workspace: Path, tmp_path: Path) -> None:
    alone = tmp_path / "cli-sessions"
    alone.mkdir()
    shutil.copy(LOGS / "session_20260402_183000_ab12cd.json", alone / "session_20260402_183000_ab12cd.json")
    shutil.copy(LOGS / "session_20260402_184500_5ub5ub.json", alone / "session_20260402_184500_5ub5ub.json")

    summary = ingest(workspace, "hermes-logs", [alone])

    assert summary.sessions_written == ["sessions/hermes-logs-20260402_183000_ab12cd.jsonl"]
    assert said(workspace, "hermes-logs-20260402_183000_ab12cd.jsonl") == [
        ("user", "订两张去台北的机票, aisle seats please."),
        ("assistant", "Found CI 502 at 08:10; 要我訂嗎?"),
        ("user", "Here is my passport page, 請用這個名字."),
    ]
    ts = [line["ts"] for line in lines(workspace, "hermes-logs-20260402_183000_ab12cd.jsonl")]
    assert ts == ["2026-04-02T18:30:00.001Z", "2026-04-02T18:30:00.002Z", "2026-04-02T18:30:00.003Z"]
    assert {r.path.rsplit("/", 1)[1]: r.skipped for r in summary.files} == {
        "session_20260402_183000_ab12cd.json": {"tool call": 1, "tool output": 1},
        "session_20260402_184500_5ub5ub.json": {"subagent": 2},
    }


def test_a_gateway_session_is_read_once_from_its_transcript(workspace: Path) -> None:
    summary = ingest(workspace, "auto", [LOGS])

    assert summary.sessions_written == ["sessions/hermes-logs-20260402_183000_ab12cd.jsonl"]
    by_name = {Path(r.path).name: r for r in summary.files}
    assert by_name["session_20260402_183000_ab12cd.json"].skipped == {"duplicate of the session's .jsonl transcript": 5}
    assert by_name["session_20260402_183000_ab12cd.json"].kept == {}
    assert "sessions.json" not in by_name  # the gateway's index is not opened


def test_auto_recognises_hermes_files_and_only_them(tmp_path: Path) -> None:
    db = build(tmp_path, "v30")
    assert detect(db) == ["hermes"]
    for log in ("20260402_183000_ab12cd.jsonl", "session_20260402_183000_ab12cd.json"):
        assert detect(LOGS / log) == ["hermes-logs"]
    assert not hermes_logs.wants("sessions.json") and hermes_logs.wants("session_x.json")
    for other in OTHER_FORMATS.rglob("*"):
        if other.is_file() and "hermes" not in other.parts[-2] and "hermes-kinds" not in other.parts:
            assert not hermes_logs.looks_like(other), other
            assert not hermes.looks_like(other), other
    # memgit's own session lines and Codex rollouts are not Hermes logs
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"ts": "2026-01-01T00:00:00Z", "session": "s", "role": "user", "text": "hi"}) + "\n")
    codex = tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl"
    codex.write_text(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "response_item",
                                 "payload": {"type": "message", "role": "user", "content": []}}) + "\n")
    claude = tmp_path / "claude.jsonl"
    claude.write_text(json.dumps({"type": "user", "sessionId": "s", "uuid": "u", "role": "user",
                                  "message": {"role": "user", "content": "hi"}}) + "\n")
    for path in (own, codex, claude):
        assert not hermes_logs.looks_like(path), path


def test_a_named_log_in_the_wrong_format_is_an_error(workspace: Path) -> None:
    with pytest.raises(MemgitError, match="looks like hermes-logs"):
        ingest(workspace, "claude-code", [LOGS / "20260402_183000_ab12cd.jsonl"])


def test_bad_input_warns_and_never_raises(tmp_path: Path) -> None:
    broken = tmp_path / "session_broken.json"
    broken.write_text("{\"session_id\": 1, \"messages\": [")
    assert not hermes_logs.looks_like(broken)
    gen = hermes_logs.read(broken)
    with pytest.raises(StopIteration) as done:
        next(gen)
    assert "not a Hermes session log" in done.value.value[0]
    odd = tmp_path / "session_odd.json"
    odd.write_text(json.dumps({"session_id": "odd", "session_start": "2026-04-02T10:00:00",
                               "messages": ["not a message", {"role": "user", "content": {"weird": 1}}]}))
    items = list(hermes_logs.read(odd))
    assert [type(i).__name__ for i in items] == ["Skip"]


# --- the dream never builds on a summary, harness text or a subagent --------------------------


def test_a_dream_over_hermes_sessions_builds_nothing_from_summaries_harness_or_subagents(
    tmp_path: Path, run_cli
) -> None:
    root = tmp_path / "memory-home"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n\n- Studies Spanish.\n", encoding="utf-8")
    (root / "USER.md").write_text("# User\n\n- Lives in Shanghai.\n", encoding="utf-8")
    assert run_cli(root, "init")[0] == 0
    db = build(tmp_path, "v30")
    code, out, err = run_cli(root, "ingest", "--from", "hermes", str(db))
    assert code == 0, err
    code, out, err = run_cli(root, "dream", "--now", "2026-09-21")
    assert code == 0, err
    code, out, err = run_cli(root, "proposals", "--json")
    assert code == 0, err
    proposed = out
    for foreign in ("Castilian", "spicy", "asked for recipes", "task list", "Files read", "vocab.md", "Notion",
                    "computadora", "web page", "French", "SILENT", "COMPACTION"):
        assert foreign not in proposed, foreign


# --- real transcripts, when present: no other product's file is taken for Hermes -------------


@pytest.mark.skipif(not REAL.is_dir(), reason="the evaluation transcripts are not here")
def test_real_transcripts_of_other_products_are_not_taken_for_hermes() -> None:
    files = [p for p in sorted(REAL.rglob("*")) if p.is_file() and p.suffix in (".jsonl", ".json", ".db")][:400]
    for path in files:
        if "hermes" in str(path.relative_to(REAL)).lower():
            continue
        assert not hermes_logs.looks_like(path), path
        assert not hermes.looks_like(path), path


def test_typed_json_is_kept_as_text_and_parts_lose_their_images() -> None:
    assert hermes.text_parts('[{"a": 1}]') == ('[{"a": 1}]', False)
    assert hermes.text_parts('[{"type": "text", "text": "看這張圖"}, {"type": "input_image", "image_url": "data:x"}]') \
        == ("看這張圖", True)
    assert hermes.text_parts([{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]) == ("", True)
