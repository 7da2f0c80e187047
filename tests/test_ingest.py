"""Transcript importers: each format from a realistic fixture, then the shared behaviour
(redaction, idempotence, ordering, safe file names, bad input)."""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from memgit.errors import MemgitError, NotFoundError
from dataclasses import replace

from memgit.ingest import READERS, IngestSummary, Turn, ingest, session_file_name

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
CLAUDE_SESSION = "5b1f3c9e-2d4a-4c7b-9e1f-8a6d2c4b7e10"
OPENCLAW_SESSION = "b7300bff-a214-4c11-97ae-eab26883c67a"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PASSWORD = "Tr0ub4dor&3-horse"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture
def hermes_db(tmp_path: Path) -> Path:
    path = tmp_path / "hermes" / "state.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as connection:
        connection.executescript((FIXTURES / "hermes" / "state.sql").read_text(encoding="utf-8"))
    connection.close()
    return path


def session_lines(workspace: Path, name: str) -> list[dict]:
    text = (workspace / "sessions" / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def said(workspace: Path, name: str) -> list[tuple[str, str]]:
    return [(line["role"], line["text"]) for line in session_lines(workspace, name)]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def claude_record(kind: str, text: str, ts: str, session: str = "s-1") -> dict:
    return {
        "type": kind,
        "sessionId": session,
        "uuid": f"u-{ts}",
        "timestamp": ts,
        "isSidechain": False,
        "message": {"role": kind, "content": [{"type": "text", "text": text}]},
    }


# --- each format from its fixture -------------------------------------------------------


def test_readers_are_registered_by_name() -> None:
    assert set(READERS) == {"codex", "claude-code", "openclaw", "hermes", "hermes-logs", "events", "jsonl"}


def test_claude_code_keeps_text_and_skips_tools_sidechains_and_meta(workspace: Path) -> None:
    summary = ingest(workspace, "claude-code", [FIXTURES / "claude-code"])

    name = f"claude-code-{CLAUDE_SESSION}.jsonl"
    assert replace(summary, files=[]) == IngestSummary(
        fmt="claude-code",
        files_read=1,
        sessions_written=[f"sessions/{name}"],
        turns_added=5,
        turns_skipped_duplicate=0,
        turns_redacted=0,
        warnings=[],
    )
    assert said(workspace, name) == [
        ("user", ("The weather CLI hits the API on every call. Add a cache that keeps responses for ten "
                 "minutes, and use httpx, not requests.")),
        ("assistant", ("I'll add a small file cache keyed by city with a ten-minute TTL, and switch the "
                      "client to httpx.")),
        ("assistant", ("Done: responses are cached in ~/.cache/weather for ten minutes, and the client uses "
                      "httpx with a 5 s timeout.")),
        ("user", "Thanks. Remember that I prefer httpx over requests in every project."),
        ("assistant", "Noted: I'll reach for httpx by default."),
    ]
    lines = session_lines(workspace, name)
    assert {line["session"] for line in lines} == {CLAUDE_SESSION}
    assert lines[0]["ts"] == "2025-11-03T09:15:10.512Z"
    assert [list(line) for line in lines] == [["ts", "session", "role", "text"]] * 5


def test_claude_code_reader_is_callable_on_one_file() -> None:
    file = FIXTURES / "claude-code" / "-home-ada-projects-weather" / f"{CLAUDE_SESSION}.jsonl"
    turns = [item for item in READERS["claude-code"](file) if isinstance(item, Turn)]  # readers also yield Skips
    assert turns[0] == Turn(
        ts="2025-11-03T09:15:10.512Z",
        session=CLAUDE_SESSION,
        role="user",
        text="The weather CLI hits the API on every call. Add a cache that keeps responses for ten minutes, "
             "and use httpx, not requests.",
    )
    texts = " ".join(turn.text for turn in turns)
    for hidden in ("httpx.Timeout(5.0)", "import requests", "Caveat", "Set model", "continued from", "interrupted"):
        assert hidden not in texts


def test_openclaw_keeps_user_and_assistant_text_only(workspace: Path) -> None:
    summary = ingest(workspace, "openclaw", [FIXTURES / "openclaw"])

    name = f"openclaw-{OPENCLAW_SESSION}.jsonl"
    assert summary.files_read == 2  # the transcript and its .reset archive (the index is not walked)
    assert summary.sessions_written == [f"sessions/{name}"]
    assert summary.warnings == []
    assert said(workspace, name) == [
        ("user", "This line lives in a reset archive."),
        ("user", "Book a table for two at Noma on Friday, 19:30."),
        ("assistant", ("I booked a table for two at Noma on Friday at 19:30 (ref NX-2291); the confirmation "
                      "is in your inbox.")),
        ("user", "Great. I'm vegetarian, remember that for future bookings."),
        ("assistant", "Got it: I'll ask for vegetarian menus when I book."),
    ]
    assert session_lines(workspace, name)[1]["ts"] == "2026-02-08T01:04:02.311Z"


def test_openclaw_reads_an_archive_when_named(workspace: Path) -> None:
    archive = next((FIXTURES / "openclaw").rglob("*.jsonl.reset.*"))
    summary = ingest(workspace, "openclaw", [archive])
    assert summary.turns_added == 1
    assert said(workspace, f"openclaw-{OPENCLAW_SESSION}.jsonl") == [
        ("user", "This line lives in a reset archive.")
    ]


def test_hermes_reads_sessions_and_skips_tools_rewinds_summaries_and_subagents(
    workspace: Path, hermes_db: Path
) -> None:
    summary = ingest(workspace, "hermes", [hermes_db.parent])

    assert summary.files_read == 1
    assert summary.warnings == []
    assert summary.sessions_written == [
        "sessions/hermes-20260906_121936_1e14af.jsonl",
        "sessions/hermes-20260907_080000_aa11bb.jsonl",
    ]
    assert said(workspace, "hermes-20260906_121936_1e14af.jsonl") == [
        ("user", "Water the tomatoes every second morning; the basil needs it daily."),
        ("assistant", "Saved: tomatoes every second morning, basil daily."),
        ("user", "How much water does the basil need?"),
        ("assistant", "About 200 ml each morning, more on hot days."),
        ("summary", "the user set a watering schedule."),
    ]
    # the reader drops the copy compaction re-inserted; the summary is kept as context only
    assert summary.turns_skipped_duplicate == 0
    assert summary.turns_added == 7
    lines = session_lines(workspace, "hermes-20260907_080000_aa11bb.jsonl")
    assert [line["ts"] for line in lines] == ["2026-09-07T08:00:01.000Z", "2026-09-07T08:00:04.000Z"]


def test_hermes_opens_the_database_read_only(workspace: Path, hermes_db: Path) -> None:
    before = hermes_db.read_bytes()
    ingest(workspace, "hermes", [hermes_db])
    assert hermes_db.read_bytes() == before
    assert sorted(p.name for p in hermes_db.parent.iterdir()) == ["state.db"]


def test_events_become_user_input_and_assistant_doings(workspace: Path) -> None:
    summary = ingest(workspace, "events", [FIXTURES / "events" / "agent-events.jsonl"])

    assert summary.sessions_written == ["sessions/events-run-42.jsonl", "sessions/events-run-43.jsonl"]
    assert said(workspace, "events-run-42.jsonl") == [
        ("user", "Deploy the billing service to staging"),
        ("assistant", ("Action: run_tests\nObservation: 212 passed, 0 failed\nOutcome: success\n"
                      "Goal: goal-deploy\nTags: deploy, staging")),
        ("user", '{"manifest": "billing.yaml", "namespace": "staging"}'),
        ("assistant", ("Action: kubectl_apply\nObservation: deployment.apps/billing configured\n"
                      "Outcome: success\nGoal: goal-deploy\nTags: deploy")),
    ]
    assert session_lines(workspace, "events-run-43.jsonl") == [
        {
            "ts": "2026-03-02T14:05:00.000Z",  # from Unix milliseconds
            "session": "run-43",
            "role": "assistant",
            "text": "Action: summarise_errors\nObservation: Error rate 0.2% over 24h\nOutcome: reported\n"
                    "Goal: goal-report",
        }
    ]


def test_jsonl_passes_valid_turns_through_unchanged(workspace: Path) -> None:
    summary = ingest(workspace, "jsonl", [FIXTURES / "jsonl"])

    assert summary.turns_added == 3
    source = (FIXTURES / "jsonl" / "notes.jsonl").read_text(encoding="utf-8")
    written = (workspace / "sessions" / "jsonl-morning-review.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line) for line in written.splitlines()] == [
        json.loads(line) for line in source.splitlines()
    ]


def test_jsonl_reports_each_invalid_line(workspace: Path, tmp_path: Path) -> None:
    good = {"ts": "2026-01-05T08:00:00Z", "session": "s", "role": "user", "text": "fine"}
    file = write_jsonl(tmp_path / "bad.jsonl", [
        good,
        {"ts": "2026-01-05T08:00:00Z", "session": "s", "role": "user"},
        {**good, "role": "system"},
        {**good, "text": 42},
        {**good, "ts": "yesterday"},
        {**good, "session": ""},
    ])

    summary = ingest(workspace, "jsonl", [file])

    assert summary.turns_added == 1
    assert summary.warnings == [
        f"{file}:2: missing key 'text'; line skipped",
        f"{file}:3: 'role' is 'system', not one of user, assistant, other, summary; line skipped",
        f"{file}:4: 'text' is not a string; line skipped",
        f"{file}:5: 'ts' 'yesterday' is not an ISO-8601 timestamp; line skipped",
        f"{file}:6: 'session' is empty; line skipped",
    ]


# --- shared behaviour -----------------------------------------------------------------


def test_secrets_are_redacted_before_writing(workspace: Path, tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "t.jsonl", [
        claude_record("user", f"Use my token {TOKEN} to push.", "2026-01-01T10:00:00Z"),
        claude_record("user", f"password={PASSWORD}", "2026-01-01T10:00:05Z"),
        claude_record("assistant", "Pushed.", "2026-01-01T10:00:09Z"),
    ])

    summary = ingest(workspace, "claude-code", [file])

    written = (workspace / "sessions" / "claude-code-s-1.jsonl").read_text(encoding="utf-8")
    assert TOKEN not in written
    assert PASSWORD not in written
    assert written.count("[REDACTED]") >= 2
    assert summary.turns_redacted == 2
    assert summary.turns_added == 3
    # redaction is stable, so the same input is still recognised as already ingested
    assert ingest(workspace, "claude-code", [file]).turns_added == 0


@pytest.mark.parametrize(
    ("fmt", "source"),
    [
        ("claude-code", FIXTURES / "claude-code"),
        ("openclaw", FIXTURES / "openclaw"),
        ("events", FIXTURES / "events"),
        ("jsonl", FIXTURES / "jsonl"),
    ],
)
def test_ingesting_twice_adds_nothing(workspace: Path, fmt: str, source: Path) -> None:
    first = ingest(workspace, fmt, [source])
    snapshot = {p.name: p.read_bytes() for p in (workspace / "sessions").iterdir()}

    second = ingest(workspace, fmt, [source])

    assert first.turns_added > 0
    assert second.turns_added == 0
    assert second.sessions_written == []
    assert second.turns_skipped_duplicate == first.turns_added + first.turns_skipped_duplicate
    assert {p.name: p.read_bytes() for p in (workspace / "sessions").iterdir()} == snapshot


def test_hermes_ingesting_twice_adds_nothing(workspace: Path, hermes_db: Path) -> None:
    ingest(workspace, "hermes", [hermes_db])
    again = ingest(workspace, "hermes", [hermes_db])
    assert (again.turns_added, again.turns_skipped_duplicate, again.sessions_written) == (0, 7, [])


def test_appends_keep_the_file_sorted_by_time(workspace: Path, tmp_path: Path) -> None:
    late = write_jsonl(tmp_path / "late.jsonl", [
        claude_record("user", "third", "2026-01-01T12:00:00Z"),
        claude_record("assistant", "fourth", "2026-01-01T12:00:01.500Z"),
    ])
    early = write_jsonl(tmp_path / "early.jsonl", [
        claude_record("user", "first", "2026-01-01T09:00:00+00:00"),
        claude_record("assistant", "second", "2026-01-01T11:59:59.999+01:00"),  # 10:59:59.999 UTC
        claude_record("user", "third", "2026-01-01T12:00:00Z"),
    ])

    ingest(workspace, "claude-code", [late])
    summary = ingest(workspace, "claude-code", [early])

    assert (summary.turns_added, summary.turns_skipped_duplicate) == (2, 1)
    lines = session_lines(workspace, "claude-code-s-1.jsonl")
    assert [line["text"] for line in lines] == ["first", "second", "third", "fourth"]
    assert lines[1]["ts"] == "2026-01-01T10:59:59.999Z"


def test_writes_leave_no_temporary_files(workspace: Path) -> None:
    ingest(workspace, "claude-code", [FIXTURES / "claude-code"], sessions_dir="logs/sessions")
    assert [p.name for p in (workspace / "logs" / "sessions").iterdir()] == [
        f"claude-code-{CLAUDE_SESSION}.jsonl"
    ]


def test_a_session_id_never_becomes_a_path(workspace: Path, tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "t.jsonl", [
        claude_record("user", "escape", "2026-01-01T10:00:00Z", session="../../outside"),
        claude_record("user", "slash", "2026-01-01T10:00:01Z", session="a/b"),
        claude_record("user", "underscore", "2026-01-01T10:00:02Z", session="a_b"),
    ])

    summary = ingest(workspace, "claude-code", [file])

    sessions = workspace / "sessions"
    assert sorted(p.parent for p in workspace.parent.rglob("*.jsonl") if p != file) == [sessions] * 3
    for written in summary.sessions_written:
        assert re.fullmatch(r"sessions/claude-code-[A-Za-z0-9._-]+\.jsonl", written)
    # the original id is kept inside the file, and a/b and a_b stay apart
    assert len(summary.sessions_written) == 3
    assert "sessions/claude-code-a_b.jsonl" in summary.sessions_written


@pytest.mark.parametrize("session", ["../x", "..", "", "a/../../b", ".hidden", "x" * 300, "naïve id"])
def test_session_file_names_are_plain_names(tmp_path: Path, session: str) -> None:
    name = session_file_name("jsonl", session)
    assert re.fullmatch(r"jsonl-[A-Za-z0-9_-][A-Za-z0-9._-]*\.jsonl", name)
    assert (tmp_path / name).resolve().parent == tmp_path.resolve()
    assert len(name) < 130


def test_clean_session_ids_are_kept_as_they_are() -> None:
    assert session_file_name("hermes", "20260906_121936_1e14af") == "hermes-20260906_121936_1e14af.jsonl"
    assert session_file_name("jsonl", "a/b") != session_file_name("jsonl", "a_b")


def test_malformed_lines_become_warnings(workspace: Path, tmp_path: Path) -> None:
    file = tmp_path / "t.jsonl"
    good = json.dumps(claude_record("user", "still here", "2026-01-01T10:00:00Z"))
    no_time = json.dumps({**claude_record("user", "when?", "x"), "timestamp": None})
    file.write_bytes(
        b"\xff\xfe not utf-8\n"
        + b'{"type": "user", "message": \n'
        + b"[1, 2, 3]\n"
        + b"\n"
        + good.encode()
        + b"\n"
        + no_time.encode()
        + b"\n"
    )

    summary = ingest(workspace, "claude-code", [file])

    assert summary.turns_added == 1
    assert summary.warnings == [
        f"{file}:1: not valid UTF-8; line skipped",
        f"{file}:2: malformed JSON; line skipped",
        f"{file}:3: not a JSON object; line skipped",
        f"{file}:6: no usable timestamp; line skipped",
    ]


def test_a_file_that_is_not_a_hermes_store_is_an_error_naming_it(workspace: Path, tmp_path: Path) -> None:
    not_db = tmp_path / "state.db"
    not_db.write_text("this is not a database\n", encoding="utf-8")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    connection.close()

    for path in (not_db, other):
        with pytest.raises(MemgitError, match=re.escape(f"{path} is not a hermes transcript")):
            ingest(workspace, "hermes", [path])
    assert not (workspace / "sessions").exists()


def test_an_existing_session_file_with_a_bad_line_is_left_alone(workspace: Path, tmp_path: Path) -> None:
    target = workspace / "sessions" / "claude-code-s-1.jsonl"
    target.parent.mkdir()
    target.write_text("hand edited, not json\n", encoding="utf-8")
    file = write_jsonl(tmp_path / "t.jsonl", [claude_record("user", "hello", "2026-01-01T10:00:00Z")])

    summary = ingest(workspace, "claude-code", [file])

    assert summary.turns_added == 0
    assert summary.warnings == [
        "sessions/claude-code-s-1.jsonl:1: not a JSON object; file left unchanged, fix it and ingest again"
    ]
    assert target.read_text(encoding="utf-8") == "hand edited, not json\n"


def test_a_directory_without_transcripts_is_an_error(workspace: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(MemgitError, match=re.escape(f"No openclaw transcript found in {empty}")):
        ingest(workspace, "openclaw", [empty])


def test_a_missing_path_raises_naming_it(workspace: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(NotFoundError, match=re.escape(str(missing))):
        ingest(workspace, "claude-code", [FIXTURES / "claude-code", missing])
    assert not (workspace / "sessions").exists()


def test_an_unknown_format_raises(workspace: Path) -> None:
    with pytest.raises(MemgitError, match="use one of: codex, claude-code, openclaw, hermes, hermes-logs, events, jsonl, auto"):
        ingest(workspace, "chatgpt", [FIXTURES / "jsonl"])


def test_init_layout_hermes_adopts_a_section_sign_workspace(tmp_path):
    import subprocess
    import sys

    from memgit.adopt import init
    from memgit.config import load_config

    root = tmp_path / "hermes"
    root.mkdir()
    (root / "MEMORY.md").write_text("User runs Debian 12 on the VPS\n§\nDeploys go through `make deploy`\n",
                                    encoding="utf-8")
    (root / "USER.md").write_text("Name: Ada\n§\nPrefers short answers\n", encoding="utf-8")
    init(root, layout="hermes")
    cfg = load_config(root)
    assert cfg.capacity == {"MEMORY.md": 2200, "USER.md": 1375}
    p = subprocess.run([sys.executable, "-m", "memgit", "-C", str(root), "propose", "consolidate", "MEMORY.md",
                        "--text", "Backups run nightly at 02:00"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([sys.executable, "-m", "memgit", "-C", str(root), "approve", "--all"], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == (
        "User runs Debian 12 on the VPS\n§\nDeploys go through `make deploy`\n§\nBackups run nightly at 02:00\n")
