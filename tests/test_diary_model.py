"""The dream diary with the anthropic backend: the real SDK against the local stand-in API."""
from __future__ import annotations

import json
from datetime import date

import pytest
from anthropic_stub import Reply, StubAPI

from memgit import proposals
from memgit.errors import MemgitError
from memgit.lifecycle.diary import associate
from test_dream import MEM_HEAD, _hermetic, log, make  # noqa: F401

NOW = date(2026, 6, 1)
SECRET = "ghp_" + "Zk3Lm8Qp2Rs7Tv1Wx4Yz6Ab9Cd0Ef5Gh2Ij3"


def insights_reply(items: list) -> Reply:
    body = {"id": "msg_d", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": [{"type": "tool_use", "id": "toolu_d", "name": "propose_insights",
                         "input": {"insights": items}}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 120, "output_tokens": 40, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}}
    return Reply(200, json.dumps(body).encode(), {"content-type": "application/json"})


@pytest.fixture
def api(monkeypatch):
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    with StubAPI() as stub:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
        yield stub


def workspace(tmp_path):
    return make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Infrastructure [P1]\n- [P1] Nightly restic backup to B2 at 02:00 (2026-03-01)\n",
        **dict([log("2026-05-10", "Restore drill from the B2 bucket took 40 minutes with restic."),
                log("2026-05-20", f"Rotated the CI token: GH_TOKEN={SECRET}"),
                log("2026-05-25", "Disk on the NAS at 91%, pruned old snapshots.")]),
    })


def test_model_insights_pass_memgit_checks_before_the_diary(tmp_path, api):
    ws = workspace(tmp_path)
    first = associate(ws, NOW, seed=1, dry_run=True, backend="offline")
    assert first["snippets"] >= 3
    api.answer(insights_reply([
        {"text": "The restore drill and the nearly full NAS point the same way: backups need room to grow.",
         "sources": ["S1", "S2", "S3", "S4"]},
        {"text": "Invented link.", "sources": ["S1", "S99"]},
        {"text": f"The token {SECRET} was rotated.", "sources": ["S1", "S2"]},
        {"text": "One. Two. Three sentences are too many.", "sources": ["S1", "S2"]},
    ]))
    r = associate(ws, NOW, seed=1, backend="anthropic")
    assert len(r["insights"]) == 1 and "backups need room" in r["insights"][0]["text"]
    reasons = " | ".join(d["reason"] for d in r["dropped"])
    assert "not sent" in reasons and "sensitive" in reasons and "two sentences" in reasons
    assert r["tokens"]["input"] == 120
    sent = b"".join(req.raw for req in api.requests)
    assert SECRET.encode() not in sent  # nothing sensitive leaves the machine
    p = proposals.get(ws, r["proposal"])
    assert p.op.file == "memgit-diary.md" and p.op.origin == "anthropic"
    assert SECRET not in json.dumps(p.to_dict())


def test_model_failure_is_a_clean_error_or_falls_back(tmp_path, api):
    ws = workspace(tmp_path)
    api.answer(Reply(500, b'{"type":"error","error":{"type":"api_error","message":"down"}}',
                     {"content-type": "application/json", "x-should-retry": "false"}))
    with pytest.raises(MemgitError, match="500"):
        associate(ws, NOW, seed=1, backend="anthropic")
    with open(ws.root / "memgit.toml", "a", encoding="utf-8") as f:
        f.write("\n[llm]\nfallback_offline = true\n")
    from memgit.workspace import Workspace

    ws2 = Workspace(ws.root)
    r = associate(ws2, NOW, seed=1, backend="anthropic")
    assert "dropped" not in r  # the offline engine answered
    assert any("fell back" in w for w in ws2.warnings)
