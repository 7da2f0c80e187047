"""The Codex CLI importer: who said what in a rollout, what was left out and why, in the
current `{"timestamp", "type", "payload"}` layout and the older 2025 one, and that a dream
over the imported sessions takes nothing from Codex's own text."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memgit.errors import MemgitError
from memgit.ingest import codex, detect, ingest

from conftest import SHARED

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
CODEX = FIXTURES / "codex" / "sessions"
CURRENT_ID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
LEGACY_ID = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
SUBAGENT_ID = "0199a1b2-0000-7000-8000-00000000abcd"
CURRENT = CODEX / "2026" / "03" / "14" / f"rollout-2026-03-14T10-30-00-{CURRENT_ID}.jsonl"
SUBAGENT = CODEX / "2026" / "03" / "14" / f"rollout-2026-03-14T10-40-00-{SUBAGENT_ID}.jsonl"
LEGACY = CODEX / "2025" / "06" / "02" / f"rollout-2025-06-02T10-15-00-{LEGACY_ID}.jsonl"
REAL = SHARED / "eval" / "real-transcripts"

OWNER_BRIEFING = ("From now on, use bullet points for the daily briefing instead of long paragraphs. "
                  "以后日报都用要点列表。")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


def lines(workspace: Path, session: str) -> list[dict]:
    text = (workspace / "sessions" / f"codex-{session}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def said(workspace: Path, session: str) -> list[tuple[str, str]]:
    return [(line["role"], line["text"]) for line in lines(workspace, session)]


# --- recognising the format -------------------------------------------------------------------


def test_both_layouts_are_recognised_as_codex_and_nothing_else() -> None:
    for path in (CURRENT, LEGACY, SUBAGENT):
        assert detect(path) == ["codex"], path


def test_no_other_format_is_taken_for_codex() -> None:
    others = [p for p in FIXTURES.rglob("*") if p.is_file() and "codex" not in p.parts]
    assert others
    assert [p for p in others if codex.looks_like(p)] == []


def test_a_directory_walk_opens_rollouts_only() -> None:
    assert codex.wants("rollout-2026-03-14T10-30-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
    assert not codex.wants("history.jsonl")
    assert not codex.wants(f"{CURRENT_ID}.jsonl")
    assert not codex.wants("rollout-2025-04-20T10-00-00.json")


def test_looks_like_never_raises(tmp_path: Path) -> None:
    (tmp_path / "rollout-x.jsonl").write_bytes(b"\xff\xfe{not json\n[1, 2]\n")
    assert codex.looks_like(tmp_path / "rollout-x.jsonl") is False
    assert codex.looks_like(tmp_path / "missing.jsonl") is False
    (tmp_path / "meta-only.jsonl").write_text('{"id": "x", "timestamp": "2025-06-02T08:15:00Z"}\n')
    assert codex.looks_like(tmp_path / "meta-only.jsonl") is False


# --- the current layout ---------------------------------------------------------------------


def test_current_layout_keeps_the_person_and_the_assistant_once_each(workspace: Path) -> None:
    summary = ingest(workspace, "codex", [CURRENT])

    assert summary.sessions_written == [f"sessions/codex-{CURRENT_ID}.jsonl"]
    assert said(workspace, CURRENT_ID) == [
        ("user", OWNER_BRIEFING),
        ("assistant", "好的：daily briefing 以後改用要點列表，不再寫長段落。"),
        # the IDE extension's wrapper is cut down to the request
        ("user", "請幫我看一下 deploy.sh 為什麼在 staging 上失敗，謝謝。"),
        ("assistant", "deploy.sh 在 staging 失败是因为缺少 DEPLOY_ENV；我已经补上并重新跑通了。"),
        ("user", "停一下，先別改 CI 設定。"),
        ("summary", "Summary of the work so far: the user said from now on the deploy target is production "
                    "instead of staging, and commit messages switch to Chinese instead of English. "
                    "部署已切换到生产环境。"),
    ]
    first = lines(workspace, CURRENT_ID)[0]
    assert first == {"ts": "2026-03-14T09:30:01.200Z", "session": CURRENT_ID, "role": "user",
                     "text": OWNER_BRIEFING}


def test_current_layout_says_what_it_left_out_and_why(workspace: Path) -> None:
    summary = ingest(workspace, "codex", [CURRENT])

    [report] = summary.files
    assert report.fmt == "codex"
    assert report.kept == {"user": 3, "assistant": 2, "summary": 1}
    assert report.skipped == {
        "session meta": 1,
        "developer message": 1,
        "AGENTS.md instructions": 1,
        "harness text": 1,            # <environment_context>
        "turn context": 1,
        "turn marker": 2,             # task_started, task_complete
        "duplicate of an event": 5,   # the response-item copies of user_message / agent_message events
        "reasoning": 2,               # a reasoning item, an agent_reasoning event
        "token count": 1,
        "tool call": 5,               # function, custom tool, local shell, web search, an MCP call's end event
        "tool output": 2,
        "shell output": 2,            # exec_command_end, a <user_shell_command> message
        "undo snapshot": 1,
        "turn aborted": 2,            # the event and the <turn_aborted> message
        "compaction": 2,              # context_compacted event, encrypted compaction item
        "compaction summary": 1,      # the summary handed on as a user message
        "API error": 1,
        "review mode": 1,
        "control event": 1,           # plan_update
        "system message": 1,
        "unknown record": 1,          # a record kind this reader does not know
    }
    assert summary.warnings == []


def test_nothing_codex_wrote_itself_reaches_the_session(workspace: Path) -> None:
    ingest(workspace, "codex", [CURRENT])
    text = json.dumps(lines(workspace, CURRENT_ID), ensure_ascii=False)
    for harness in ("AGENTS.md", "INSTRUCTIONS", "environment_context", "permissions instructions", "haiku",
                    "tabs instead of spaces", "DEPLOY_ENV unset", "user_shell_command", "turn_aborted",
                    "Another language model", "My request for Codex", "Active file", "gAAAA", "stream disconnected"):
        assert harness not in text, harness


def test_an_item_no_event_matches_is_kept(tmp_path: Path, workspace: Path) -> None:
    """A message only the response items carry (an older CLI began the rollout) is not lost."""
    path = tmp_path / f"rollout-2026-03-14T10-30-00-{CURRENT_ID}.jsonl"
    shutil.copyfile(CURRENT, path)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"timestamp": "2026-03-14T09:33:00.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "再跑一次測試 please"}]}},
            ensure_ascii=False) + "\n")
    summary = ingest(workspace, "codex", [path])
    assert said(workspace, CURRENT_ID)[-1] == ("user", "再跑一次測試 please")
    assert summary.files[0].skipped["duplicate of an event"] == 5


def test_a_subagent_rollout_gives_no_turns(workspace: Path) -> None:
    summary = ingest(workspace, "codex", [SUBAGENT])
    assert summary.turns_added == 0
    assert summary.files[0].skipped == {"session meta": 1, "subagent": 4}


# --- the older 2025 layout ------------------------------------------------------------------


def test_legacy_layout_keeps_the_conversation_in_order(workspace: Path) -> None:
    summary = ingest(workspace, "codex", [LEGACY])

    assert said(workspace, LEGACY_ID) == [
        ("user", "幫我把 README 的安裝步驟改成 uv，thanks!"),
        ("assistant", "README 的安装步骤已改成 `uv pip install atlas`。"),
        ("user", "好"),
        ("user", "好"),  # said twice, kept twice: each bare line gets its own moment
    ]
    assert [line["ts"] for line in lines(workspace, LEGACY_ID)] == [
        "2025-06-02T08:15:00.004Z", "2025-06-02T08:15:00.010Z", "2025-06-02T08:15:00.011Z",
        "2025-06-02T08:15:00.012Z"]
    [report] = summary.files
    assert report.kept == {"user": 3, "assistant": 1}
    assert report.skipped == {"session meta": 1, "AGENTS.md instructions": 1, "harness text": 1, "reasoning": 1,
                              "tool call": 2, "tool output": 1, "session state": 2}
    assert summary.warnings == []


def test_the_session_id_falls_back_to_the_file_names_uuid(tmp_path: Path, workspace: Path) -> None:
    path = tmp_path / "rollout-2026-03-14T10-30-00-0199ffff-aaaa-7bbb-8ccc-dddddddddddd.jsonl"
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in [
        {"timestamp": "2026-03-14T09:30:00Z", "type": "turn_context", "payload": {"cwd": "/tmp"}},
        {"timestamp": "2026-03-14T09:30:01Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "hello 你好"}},
    ]), encoding="utf-8")
    ingest(workspace, "codex", [path])
    assert said(workspace, "0199ffff-aaaa-7bbb-8ccc-dddddddddddd") == [("user", "hello 你好")]


def test_bad_lines_are_warnings_not_errors(tmp_path: Path, workspace: Path) -> None:
    path = tmp_path / f"rollout-2026-03-14T10-30-00-{CURRENT_ID}.jsonl"
    path.write_text("\n".join([
        json.dumps({"timestamp": "2026-03-14T09:30:00Z", "type": "session_meta", "payload": {"id": CURRENT_ID}}),
        "{broken",
        json.dumps({"timestamp": "2026-03-14T09:30:01Z", "type": "event_msg", "payload": "not an object"}),
        json.dumps({"timestamp": "yesterday", "type": "event_msg",
                    "payload": {"type": "agent_message", "message": "hi"}}),
        json.dumps({"timestamp": "2026-03-14T09:30:02Z", "type": "event_msg",
                    "payload": {"type": "user_message", "message": "ok 好"}}),
    ]) + "\n", encoding="utf-8")
    summary = ingest(workspace, "codex", [path])
    assert said(workspace, CURRENT_ID) == [("user", "ok 好")]
    assert [w.split(": ", 1)[1] for w in summary.warnings] == [
        "malformed JSON; line skipped", "event_msg line without a payload object; line skipped",
        "no usable timestamp; line skipped"]


# --- through the CLI ----------------------------------------------------------------------------

USER_MD = """# USER

## Profile [P0]
- Name: Sam

## Preferences [P1]
- [P1] Daily briefing: long paragraphs, no bullet points (2026-03-01)
- [P1] Code style: spaces, no tabs (2026-03-02)
- [P1] Deploy target: staging server (2026-03-03)
- [P1] Commit messages in English (2026-03-04)
- [P1] Replies in prose, not haiku (2026-03-05)
"""
MEMORY_MD = "# MEMORY\n\n## Environment [P0]\n- Host: a small VPS, agent runs under systemd\n"


def initialised(root: Path, run_cli) -> Path:
    root.mkdir()
    (root / "USER.md").write_text(USER_MD, encoding="utf-8")
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    code, _, err = run_cli(root, "init")
    assert code == 0, err
    return root


def test_the_cli_reads_a_sessions_tree_with_from_codex_and_from_auto(tmp_path: Path, run_cli) -> None:
    for fmt in ("codex", "auto"):
        root = initialised(tmp_path / fmt, run_cli)
        code, out, err = run_cli(root, "ingest", "--from", fmt, str(CODEX), "--json")
        assert code == 0, err
        report = json.loads(out)
        assert report["files_read"] == 3
        assert sorted(report["sessions_written"]) == [f"sessions/codex-{CURRENT_ID}.jsonl",
                                                      f"sessions/codex-{LEGACY_ID}.jsonl"]
        assert said(root, LEGACY_ID)[0] == ("user", "幫我把 README 的安裝步驟改成 uv，thanks!")


def test_a_rollout_named_with_from_claude_code_is_a_clean_error(tmp_path: Path, run_cli) -> None:
    root = initialised(tmp_path / "ws", run_cli)
    code, out, err = run_cli(root, "ingest", "--from", "claude-code", str(CURRENT))
    assert code == 1
    assert str(CURRENT) in err and "looks like codex" in err and "--from codex" in err
    assert "Traceback" not in err
    assert not (root / "sessions").exists()
    with pytest.raises(MemgitError, match="looks like codex"):
        ingest(tmp_path, "openclaw", [LEGACY])


# --- the dream -----------------------------------------------------------------------------------


def test_a_dream_over_a_codex_rollout_takes_nothing_from_codex_or_a_summary(tmp_path: Path, run_cli) -> None:
    root = initialised(tmp_path / "ws", run_cli)
    code, _, err = run_cli(root, "ingest", "--from", "auto", str(CODEX))
    assert code == 0, err

    code, _, err = run_cli(root, "dream", "--now", "2026-03-15")
    assert code == 0, err
    code, out, err = run_cli(root, "proposals", "--json")
    assert code == 0, err
    found = json.loads(out)
    # what the person said does reach memory: the briefing preference they restated ...
    assert [(p["op"], p["file"], p["targets"]) for p in found] == [
        ("refresh", "USER.md", ["- [P1] Daily briefing: long paragraphs, no bullet points (2026-03-01)"])]
    assert "bullet points" in found[0]["text"]
    # ... and nothing from AGENTS.md, instructions, tool output, reasoning, a sub-agent or the summary
    # (each of which, read as the person's words, refreshes code style or the deploy target)
    quoted = json.dumps([(p["text"], p["evidence"]) for p in found], ensure_ascii=False)
    for bait in ("tabs", "production", "haiku", "Chinese", "中文", "生产", "Summary of the work"):
        assert bait not in quoted, bait


# --- real rollouts (evaluation data; skipped where it is absent) -------------------------------


def test_real_rollouts_read_without_warnings_and_other_real_files_are_not_codex(workspace: Path) -> None:
    if not REAL.is_dir():
        pytest.skip(f"no real transcripts at {REAL}")
    rollouts = sorted((REAL / "codex").rglob("rollout-*.jsonl"))
    others = [p for p in REAL.rglob("*.jsonl") if "codex" not in p.relative_to(REAL).parts]
    if not rollouts:
        pytest.skip("no real Codex rollouts")
    assert [p for p in others if codex.looks_like(p)] == []
    summary = ingest(workspace, "auto", rollouts)
    assert summary.warnings == []
    for report in summary.files:
        assert report.fmt == "codex"
        assert report.kept.get("user", 0) >= 1 and report.kept.get("assistant", 0) >= 1
        assert report.skipped.get("duplicate of an event", 0) >= 1
