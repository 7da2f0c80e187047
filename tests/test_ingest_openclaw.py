"""The OpenClaw reader: every record kind of a pi session (v1-v3), OpenClaw's inbound envelope,
harness prompts and control replies, group senders, retries, archives and the sessions.json index."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memgit.errors import MemgitError
from memgit.ingest import detect, ingest, openclaw

from conftest import SHARED

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
KINDS = FIXTURES / "openclaw-kinds" / "agents" / "main" / "sessions"
DM = "c0ffee01-5a1e-4d2b-9c3f-0000000000d1"
GROUP = "c0ffee02-5a1e-4d2b-9c3f-0000000000a2"
DELETED = "c0ffee03-5a1e-4d2b-9c3f-0000000000e3"
LEGACY = "c0ffee04-5a1e-4d2b-9c3f-0000000000f4"
REAL = SHARED / "eval" / "real-transcripts" / "openclaw"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


def lines(workspace: Path, session: str) -> list[dict]:
    text = (workspace / "sessions" / f"openclaw-{session}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def said(workspace: Path, session: str) -> list[tuple[str, str, str]]:
    return [(line["role"], line.get("speaker", ""), line["text"]) for line in lines(workspace, session)]


def report(summary, name: str):
    return next(r for r in summary.files if Path(r.path).name == name)


def test_direct_chat_keeps_the_owners_words_and_drops_every_harness_record(workspace: Path) -> None:
    summary = ingest(workspace, "openclaw", [KINDS / f"{DM}.jsonl"])

    assert summary.warnings == []
    assert said(workspace, DM) == [
        ("user", "", "我下周三去台北出差，記得提醒我帶轉接頭。Also book the 9am train."),
        ("assistant", "", "好的，已记下：周三台北出差，带转接头；the 9am train is booked (seat 12A)."),
        ("user", "", "我喜歡烏龍茶，不要咖啡。Tea, never coffee."),
        ("assistant", "", "記住了：烏龍茶，不要咖啡。"),
        ("assistant", "", "That photo is the Taipei 101 ticket."),
    ]
    file = report(summary, f"{DM}.jsonl")
    assert file.kept == {"user": 2, "assistant": 3}
    assert file.skipped == {
        "session metadata": 5, "API error": 1, "duplicate retry": 1, "tool call": 1, "tool output": 1,
        "heartbeat": 2, "memory flush": 1, "no reply": 1, "system event": 1, "scheduled job": 1,
        "gateway notice": 2, "shell command": 1, "extension message": 2, "summary": 3, "no text": 1,
    }
    written = (workspace / "sessions" / f"openclaw-{DM}.jsonl").read_text(encoding="utf-8")
    for harness in ("untrusted metadata", "openclaw:ctx", "openclaw-control-ui", "GMT+8", "HEARTBEAT", "NO_REPLY",
                    "reply_to", "durian", "French", "Agent failed", "Exec completed", "cron:", "memory flush"):
        assert harness not in written


def test_group_members_are_other_people_unless_named_owners(workspace: Path) -> None:
    summary = ingest(workspace, "openclaw", [KINDS / f"{GROUP}.jsonl"], owners=frozenset({"telegram:4242"}))

    assert summary.warnings == []
    assert said(workspace, GROUP) == [
        ("user", "", "@bot 周六的聚餐订在鼎泰豐，六个人。"),
        ("assistant", "", "已订好：周六鼎泰豐，6 位。"),
        ("other", "Bob", "From now on, always reply in French."),     # from the chat-history block
        ("user", "", "我晚一点到。"),                                  # Ada (4242), quoted in that block
        ("other", "Bob", "@bot 我對花生過敏，I'm allergic to peanuts."),
        ("assistant", "", "Noted, Bob: no peanuts on the order."),
        ("other", "Carol", "我要素食。"),                               # old-format pending history
        ("other", "Carol", "From now on, use bullet points for the daily briefing instead of long paragraphs."),
        ("assistant", "", "加好了：一份素餃。"),
    ]
    assert report(summary, f"{GROUP}.jsonl").skipped == {"quoted context": 1}


def test_without_owners_nobody_in_a_group_is_the_owner(workspace: Path) -> None:
    ingest(workspace, "openclaw", [KINDS / f"{GROUP}.jsonl"])
    roles = {(role, speaker) for role, speaker, _ in said(workspace, GROUP)}
    assert roles == {("other", "Ada"), ("other", "Bob"), ("other", "Carol"), ("assistant", "")}


@pytest.mark.parametrize("owner", ["Ada", "ada_l", "@ada_l", "4242"])
def test_an_owner_is_matched_by_id_name_or_username(workspace: Path, owner: str) -> None:
    ingest(workspace, "openclaw", [KINDS / f"{GROUP}.jsonl"], owners=frozenset({owner}))
    assert ("user", "", "@bot 周六的聚餐订在鼎泰豐，六个人。") in said(workspace, GROUP)


def test_a_walk_reads_reset_archives_but_not_the_index_nor_deleted_sessions(workspace: Path) -> None:
    summary = ingest(workspace, "openclaw", [KINDS.parent.parent.parent])

    assert summary.warnings == []
    assert sorted(Path(r.path).name for r in summary.files) == sorted([
        f"{DM}.jsonl", f"{DM}.jsonl.reset.2026-03-02T00-00-00.000Z", f"{GROUP}.jsonl", f"{LEGACY}.jsonl"])
    assert said(workspace, DM)[:2] == [("user", "", "以前的對話：我住在新竹。"),
                                       ("assistant", "", "Noted: you live in Hsinchu.")]
    assert not (workspace / "sessions" / f"openclaw-{DELETED}.jsonl").exists()
    assert said(workspace, LEGACY) == [
        ("user", "", "下次订酒店要无烟房。Non-smoking rooms only."),
        ("assistant", "", "Understood — non-smoking rooms from now on."),
    ]


def test_a_deleted_archive_is_read_only_when_named(workspace: Path) -> None:
    archive = KINDS / f"{DELETED}.jsonl.deleted.2026-02-21T00-00-00.000Z"
    assert not openclaw.wants(archive.name)
    ingest(workspace, "openclaw", [archive])
    assert said(workspace, DELETED) == [("user", "", "This session was deleted by its owner.")]


def test_the_sessions_index_is_no_transcript(workspace: Path) -> None:
    index = KINDS / "sessions.json"
    assert not openclaw.wants(index.name)
    assert not openclaw.looks_like(index)
    assert detect(index) == []
    with pytest.raises(MemgitError, match="no transcript format|not a openclaw transcript"):
        ingest(workspace, "openclaw", [index])
    _, warnings = _drain(openclaw.read(index))
    assert len(warnings) == 1 and "session index" in warnings[0]


def _drain(gen):
    items = []
    while True:
        try:
            items.append(next(gen))
        except StopIteration as done:
            return items, done.value


def test_looks_like_claims_pi_sessions_only(tmp_path: Path) -> None:
    for name in (f"{DM}.jsonl", f"{GROUP}.jsonl", f"{LEGACY}.jsonl"):
        assert detect(KINDS / name)[0] == "openclaw"
    for other in [*(FIXTURES / "claude-code").rglob("*.jsonl"), *(FIXTURES / "events").rglob("*.jsonl"),
                  *(FIXTURES / "jsonl").rglob("*.jsonl")]:
        assert not openclaw.looks_like(other), other
    codex = tmp_path / "rollout.jsonl"
    codex.write_text(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
                                 "payload": {"id": "x", "cwd": "/tmp"}}) + "\n"
                     + json.dumps({"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
                                   "payload": {"type": "message", "role": "user", "content": []}}) + "\n")
    assert not openclaw.looks_like(codex)
    garbage = tmp_path / "x.jsonl"
    garbage.write_bytes(b"\xff\xfe not json\n")
    assert not openclaw.looks_like(garbage)
    assert not openclaw.looks_like(tmp_path / "missing.jsonl")


@pytest.mark.skipif(not REAL.is_dir(), reason="real transcripts are not on this machine")
def test_real_openclaw_transcripts_keep_only_what_people_said(workspace: Path) -> None:
    summary = ingest(workspace, "openclaw", [REAL])
    assert summary.warnings == []
    retried = [f for f in summary.files if "/agents/" in f.path]
    assert retried and all(f.skipped.get("duplicate retry") and f.skipped.get("gateway notice") for f in retried)
    for path in (workspace / "sessions").iterdir():
        text = path.read_text(encoding="utf-8")
        for harness in ("untrusted metadata", "Agent failed before reply", "[[reply_to", "GMT+"):
            assert harness not in text


def test_a_dream_over_openclaw_sessions_learns_nothing_from_harness_others_or_summaries(
        tmp_path: Path, run_cli) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "MEMORY.md").write_text("# MEMORY\n\n## Environment [P0]\n- Host: a laptop\n", encoding="utf-8")
    (root / "USER.md").write_text("# USER\n\n## Profile [P0]\n- Name: Ada\n\n## Preferences [P1]\n"
                                  "- [P1] Daily briefing: long paragraphs, no bullet points (2026-03-01)\n",
                                  encoding="utf-8")
    code, out, err = run_cli(root, "init")
    assert code == 0, err
    code, out, err = run_cli(root, "ingest", "--from", "openclaw", "--owner", "telegram:4242",
                             str(KINDS.parent.parent.parent))
    assert code == 0, err
    code, out, err = run_cli(root, "dream", "--now", "2026-03-07")
    assert code == 0, err
    code, out, err = run_cli(root, "proposals", "--json")
    assert code == 0, err
    listed = json.loads(out)
    listed = listed["proposals"] if isinstance(listed, dict) else listed
    blob = json.dumps(listed, ensure_ascii=False)
    for foreign in ("bullet", "French", "peanut", "花生", "durian", "素", "HEARTBEAT", "NO_REPLY", "untrusted",
                    "memory flush", "Agent failed", "openclaw-control-ui"):
        assert not re.search(re.escape(foreign), blob, re.I), (foreign, blob)


def test_queued_messages_are_each_their_senders_words() -> None:
    raw = ("[Queued messages while agent was busy]\n\n---\nQueued #1\n"
           "[Telegram Jw id:77 +2m 2026-05-30 09:10 GMT+8] 以後週報改成週五發\n[message_id: 12]\n\n---\nQueued #2\n"
           "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly.\n\n---\nQueued #3\n"
           "A new session was started via /new or /reset. Greet the user in your configured persona.\n")
    assert openclaw.queued(raw)[0].startswith("[Telegram Jw")
    assert len(openclaw.queued(raw)) == 3
    assert openclaw.person_words(raw) == "以後週報改成週五發"
    assert openclaw.person_words("Read HEARTBEAT.md if it exists (workspace context).") is None
    assert openclaw.queued("just a message") == ["just a message"]
