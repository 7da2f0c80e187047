"""The model-backed dream: the real `anthropic` SDK talks HTTP to a stand-in of the
Messages API on 127.0.0.1 (tests/anthropic_stub.py) that answers with recorded
answers (tests/fixtures/anthropic/) and keeps every request body, so each test
can see what would have left the machine. Plus the gate's pure functions."""
from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from anthropic_stub import Reply, StubAPI, message, recorded

from memgit import journal, proposals, render, sensitive
from memgit.dream import dream
from memgit.dream import gate as g
from memgit.dream.anthropic_backend import TOOL_NAME, build_prompt, estimate, estimate_tokens, evidence_lines
from memgit.dream.collect import collect
from memgit.dream.signals import Context
from memgit.errors import MemgitError
from memgit.memory import Document
from memgit.workspace import Workspace

NOW = date(2026, 11, 30)
FAKE_KEY = "sk-ant-test-0000-not-a-real-key"
PASSWORD = "Hx7#mQ2vL9pz-wave"      # the password in the recorded secret_text answer
COCKPIT = "- [P1] Cockpit v1 待 push，侧栏的 UI bug 修完就上 (2026-11-02)"
TUNNEL = "- [P2] Temporary: Cloudflare tunnel for the demo on 2026-11-10 (2026-11-09)"
SDK_ENV = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR", "ANTHROPIC_BASE_URL",
           "ANTHROPIC_IDENTITY_TOKEN", "ANTHROPIC_IDENTITY_TOKEN_FILE", "ANTHROPIC_FEDERATION_RULE_ID",
           "ANTHROPIC_ORGANIZATION_ID", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_WEBHOOK_SIGNING_KEY")

# what the recorded "good" answer proposes, as memgit must store it
GOOD = {
    ("refresh", "MEMORY.md", (COCKPIT,), "[P1] Cockpit v1 已 push，侧栏 UI bug 已修复 (2026-11-29)", None),
    ("prune", "MEMORY.md", (TUNNEL,), None, None),
    ("consolidate", "USER.md", (), "Weekly review on Saturdays (2026-11-29)", "Preferences"),
}
REFRESH_ONLY = {next(x for x in GOOD if x[0] == "refresh")}


@pytest.fixture
def api(monkeypatch):
    """The stand-in API, with the SDK's environment pointing at it and a fake key."""
    for var in SDK_ENV:
        monkeypatch.delenv(var, raising=False)
    with StubAPI() as stub:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        yield stub


def configure(ws: Workspace, **llm) -> Workspace:
    """Append an [llm] table to memgit.toml; a fresh Workspace reads it."""
    lines = [f"{k} = {json.dumps(v)}" for k, v in llm.items()]
    with open(ws.root / "memgit.toml", "a", encoding="utf-8") as f:
        f.write("\n[llm]\n" + "\n".join(lines) + "\n")
    return Workspace(ws.root)


def ops_of(ws: Workspace) -> set[tuple]:
    return {(p.op.op, p.op.file, p.op.targets, p.op.text, p.op.section)
            for p in proposals.list_proposals(Workspace(ws.root))}


def reasons(report) -> list[str]:
    dropped = report["dropped"] if isinstance(report, dict) else report.dropped
    return [d["reason"] for d in dropped]


def refs_and_messages(git, root: Path) -> str:
    return git(root, "log", "--all", "--format=%H %D%n%B")


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


# -- end to end through the CLI ------------------------------------------------------------------
def test_good_operations_become_exactly_these_proposals(workspace, api, run_cli, git):
    api.answer(recorded("good"))
    main_before = workspace.main()
    code, out, err = run_cli(workspace, "dream", "--backend", "anthropic", "--now", NOW.isoformat(), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["backend"] == "anthropic"
    assert report["dropped"] == []
    assert report["tokens"] == {"input": 2310, "cached": 1873, "output": 412}
    assert ops_of(workspace) == GOOD
    made = proposals.list_proposals(Workspace(workspace.root))
    assert {p.op.origin for p in made} == {"anthropic"}
    assert all(p.op.evidence and p.op.reason for p in made)
    assert Workspace(workspace.root).main() == main_before      # nothing reached main
    code, out, _ = run_cli(workspace, "proposals", "--json")
    listed = json.loads(out)
    listed = listed["proposals"] if isinstance(listed, dict) else listed
    assert len(listed) == 3
    ev = journal.events(Workspace(workspace.root).repo, ("dream",))[0]
    assert ev.data["report"]["tokens"] == {"input": 2310, "cached": 1873, "output": 412}
    assert len(api.requests) == 1


def test_the_request_is_cached_memory_then_evidence_with_a_forced_tool(workspace, api):
    api.answer(recorded("good"))
    dream(workspace, NOW, backend="anthropic")
    (req,) = api.requests
    assert req.path == "/v1/messages"
    body = req.json
    assert body["model"] == workspace.config.llm.model
    assert body["max_tokens"] == workspace.config.llm.max_tokens
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert [t["name"] for t in body["tools"]] == [TOOL_NAME]
    (system,) = body["system"]
    assert system["cache_control"] == {"type": "ephemeral"}
    assert f"9| {COCKPIT}" in system["text"]                     # memory lines carry their numbers
    assert "Frozen lines of MEMORY.md: 3-6." in system["text"]
    user = body["messages"][0]["content"]
    assert "Today is 2026-11-30." in user
    assert "memory/2026-11-29.md:3: Cockpit v1 pushed to GitHub; 侧栏 bug 已修复" in user
    assert "sessions/2026-11-29-a1.jsonl:1 (user): Cockpit v1 可以 push 了" in user
    assert NOW.isoformat() not in system["text"]                  # the cached part does not change by day


def test_the_cli_makes_exactly_the_operations_that_pass_the_gate(workspace, api, run_cli, git):
    api.answer(recorded("mixed"))
    code, out, err = run_cli(workspace, "dream", "--backend", "anthropic", "--now", NOW.isoformat(), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert ops_of(workspace) == GOOD
    assert [(d["index"], d["op"]) for d in report["dropped"]] == [
        (1, "prune"), (2, "refresh"), (3, "consolidate"), (4, "prune"), (5, "consolidate"), (6, "refresh"),
        (8, "prune"), (10, "consolidate")]
    assert reasons(report) == [
        ("evidence source memory/2026-11-27.md:4 is not a line of the window's logs and sessions or of a "
         "memory file"),
        "the quote 'notion sync fixed, no more 502' does not occur at memory/2026-11-29.md:5",
        "the new text holds sensitive data (password)",
        "MEMORY.md line 5 is P0 or protected and is never changed automatically",
        "section 'Environment' of MEMORY.md is P0 or protected",
        "confidence 0.40 is below the threshold 0.70",
        "the target '- Playwright MCP pinned' is not an entry of MEMORY.md",
        "the same change appears twice in the answer",
    ]
    ev = journal.events(Workspace(workspace.root).repo, ("dream",))[0]
    assert reasons(ev.data["report"]) == reasons(report)         # every drop is journaled with its reason
    for where in (out, err, refs_and_messages(git, workspace.root)):
        assert PASSWORD not in where


# -- the gate, case by case, through the library ----------------------------------------------------
@pytest.mark.parametrize("case, expected", [
    ("invented_source", [r"^evidence source memory/2026-11-27\.md:4 is not a line"]),
    ("invented_quote", [r"^the quote 'notion sync fixed, no more 502' does not occur at memory/2026-11-29\.md:5$"]),
    ("secret_text", [r"^the new text holds sensitive data \(password\)$"]),
    ("p0_target", [r"^MEMORY\.md line 5 is P0 or protected", r"^section 'Environment' of MEMORY\.md is P0"]),
    ("low_confidence", [r"^confidence 0\.40 is below the threshold 0\.70$"]),
    ("malformed_items", [r"^'confidence' must be a number between 0 and 1$", r"^unknown op 'rewrite'",
                         r"^refresh needs exactly one target, got 0$", r"^an operation must be an object$"]),
])
def test_each_bad_operation_is_dropped_with_its_reason_and_the_good_one_passes(workspace, api, case, expected):
    api.answer(recorded(case))
    report = dream(workspace, NOW, backend="anthropic")
    assert ops_of(workspace) == REFRESH_ONLY
    got = reasons(report)
    assert len(got) == len(expected)
    for reason, pattern in zip(got, expected):
        assert re.search(pattern, reason), reason
    assert report.to_dict()["answered"] == len(expected) + 1


@pytest.mark.parametrize("case, expected", [
    ("no_tool_use", "the model answered without calling propose_operations"),
    ("operations_not_json", ("the 'operations' value is not valid JSON (the answer was cut off at max_tokens; "
                             "raise [llm] max_tokens in memgit.toml)")),
    ("invalid_body", "the API's answer is not valid JSON"),
])
def test_a_malformed_answer_drops_everything_without_crashing(workspace, api, case, expected):
    api.answer(recorded(case))
    report = dream(workspace, NOW, backend="anthropic")
    assert report.proposals == []
    assert ops_of(workspace) == set()
    assert reasons(report) == [expected]


def test_an_answer_that_is_no_message_drops_everything(workspace, api):
    api.answer(Reply(200, b"<html><body>Service temporarily unavailable</body></html>", {"content-type": "text/html"}))
    report = dream(workspace, NOW, backend="anthropic")
    assert report.proposals == []
    assert reasons(report) == ["the API's answer is not a Messages API message"]
    assert report.to_dict()["tokens"] == {"input": 0, "cached": 0, "output": 0}


def test_a_secret_in_the_new_text_goes_nowhere(workspace, api, git):
    api.answer(recorded("secret_text"))
    report = dream(workspace, NOW, backend="anthropic")
    assert ops_of(workspace) == REFRESH_ONLY
    repo = Workspace(workspace.root).repo
    for where in (json.dumps(report.to_dict(), ensure_ascii=False), refs_and_messages(git, workspace.root),
                  json.dumps([e.data for e in journal.events(repo)], ensure_ascii=False)):
        assert PASSWORD not in where


def test_operations_already_open_are_dropped_on_the_next_run(workspace, api):
    api.answer(recorded("good"))
    dream(workspace, NOW, backend="anthropic")
    report = dream(Workspace(workspace.root), NOW, backend="anthropic")
    assert report.proposals == []
    assert reasons(report) == ["the same change is already open or was rejected before"] * 3


def test_a_rejected_operation_is_not_proposed_again(workspace, api):
    api.answer(recorded("good"))
    dream(workspace, NOW, backend="anthropic")
    ws = Workspace(workspace.root)
    proposals.reject(ws, [p.id for p in proposals.list_proposals(ws)], "not now")
    report = dream(Workspace(workspace.root), NOW, backend="anthropic")
    assert report.proposals == []
    assert reasons(report) == ["the same change is already open or was rejected before"] * 3


# -- nothing sensitive leaves the machine ------------------------------------------------------------
def test_planted_secrets_never_reach_the_request(workspace, api, git):
    token = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    db_password = "Tr0ub4dor&3horse"
    memory = (workspace.root / "MEMORY.md").read_text(encoding="utf-8")
    memory = memory.replace("## Notes [P2]\n", f"## Notes [P2]\n- quant service Postgres password: {db_password} "
                                               f"(2026-11-20)\n- 今日 NVDA 持仓 1200 股，成本价 31.5，浮盈 +18,400 元\n")
    write(workspace.root, "MEMORY.md", memory)
    write(workspace.root, "memory/2026-11-28.md",
          f"# 2026-11-28\n\n- 10:00 Cockpit deploy token rotated to {token}; Cockpit v1 deployed on h1\n")
    with open(workspace.root / "sessions/2026-11-29-a1.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"ts": "2026-11-29T10:00:00+08:00", "session": "a1", "role": "user",
                            "text": f"Cockpit 的部署 token 换成 {token} 了，v1 已上线"}, ensure_ascii=False) + "\n")
    api.answer(recorded("good"))
    dream(Workspace(workspace.root), NOW, backend="anthropic")
    (req,) = api.requests
    sent = [req.raw.decode("utf-8"), json.dumps(req.json, ensure_ascii=False)]
    for secret in (token, db_password, "1200 股", "31.5", "18,400"):
        for text in sent:
            assert secret not in text
    readable = sent[1]
    # the lines were sent, only their sensitive values were not
    assert "quant service Postgres password: [REDACTED]" in readable
    assert "Cockpit deploy token rotated to [REDACTED]; Cockpit v1 deployed on h1" in readable
    assert "Cockpit 的部署 token 换成 [REDACTED]" in readable
    assert not sensitive.has_sensitive(req.json["system"][0]["text"])
    assert not sensitive.has_sensitive(req.json["messages"][0]["content"])


# -- failures are clean -----------------------------------------------------------------------------------
def test_a_rate_limit_after_the_sdk_retries_is_a_clean_cli_error_and_changes_nothing(workspace, api, run_cli,
                                                                                   git):
    api.answer(recorded("rate_limited"))
    main_before = workspace.main()
    journal_before = git(workspace.root, "rev-parse", "refs/memgit/journal", check=False).stdout
    code, _, err = run_cli(workspace, "dream", "--backend", "anthropic", "--now", NOW.isoformat())
    assert code == 1
    assert err == ("Error: the Anthropic API is rate limiting this key after 2 retries (429); try again later, "
                   "or set fallback_offline = true under [llm] in memgit.toml.\n")
    assert len(api.requests) == 3                                  # the SDK's own two retries happened
    assert ops_of(workspace) == set()
    assert Workspace(workspace.root).main() == main_before
    assert git(workspace.root, "rev-parse", "refs/memgit/journal", check=False).stdout == journal_before


def test_a_server_error_after_the_sdk_retries_is_a_clean_error(workspace, api):
    api.answer(recorded("server_error"))
    with pytest.raises(MemgitError, match=r"^the Anthropic API failed after 2 retries \(500\); try again later"):
        dream(workspace, NOW, backend="anthropic")
    assert len(api.requests) == 3
    assert ops_of(workspace) == set()
    assert journal.events(Workspace(workspace.root).repo, ("dream",)) == []


def test_a_timeout_is_a_clean_error(workspace, api):
    ws = configure(workspace, timeout=0.2)
    api.answer(recorded("good", delay=5))
    with pytest.raises(MemgitError, match=r"did not answer within 0\.2 s after 2 retries \(timeout\)"):
        dream(ws, NOW, backend="anthropic")
    assert ops_of(ws) == set()


def test_without_a_key_the_error_names_anthropic_api_key(workspace, api, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MemgitError, match=r"^no Anthropic API key: set ANTHROPIC_API_KEY"):
        dream(workspace, NOW, backend="anthropic")
    assert api.requests == []


def test_an_exhausted_budget_sends_nothing(workspace, api):
    ws = configure(workspace, token_budget=500)
    api.answer(recorded("good"))
    with pytest.raises(MemgitError, match=r"over the \[llm\] token_budget of 500; raise token_budget in memgit\.toml"):
        dream(ws, NOW, backend="anthropic")
    assert api.requests == []
    assert ops_of(ws) == set()


def test_a_tight_budget_leaves_out_the_least_telling_evidence(workspace, api):
    news = ["Blog on Astro v5 now, deploy pending review", "Playwright MCP 0.0.45 is planned for next week",
            "yt-dlp podcast download broke again, cookies fixed it", "Zed editor v2 released, still on helix",
            "Notion MCP server sync fixed after re-auth", "3thing 落地頁文案 定稿已完成",
            "Cloudflare tunnel for the demo expires tomorrow", "Dentist appointment moved, still 2026-12-03"]
    write(workspace.root, "memory/2026-11-27.md",
          "# 2026-11-27\n\n" + "".join(f"- 1{i}:00 {t}\n" for i, t in enumerate(news)))
    ws = Workspace(workspace.root)
    ctx = _context(ws)
    full = build_prompt(ctx, ws.config)
    assert full.truncated == 0 and len(full.lines) >= 8
    one_line = estimate(full.user) // len(full.lines)
    budget = full.tokens - 3 * one_line
    ws = configure(ws, token_budget=budget)
    api.answer(recorded("good"))
    report = dream(ws, NOW, backend="anthropic")
    sent = report.to_dict()["sent"]
    assert sent["left_out_for_budget"] > 0
    assert sent["estimated_input"] <= budget
    assert any("token_budget" in w for w in report.warnings)
    user = api.requests[0].json["messages"][0]["content"]
    assert f"{sent['left_out_for_budget']} more left out to stay within the token budget" in user
    assert user.count("\nmemory/") + user.count("\nsessions/") == sent["evidence_lines"]


def test_fallback_offline_when_configured(workspace, api):
    ws = configure(workspace, fallback_offline=True)
    api.answer(recorded("server_error"))
    report = dream(ws, NOW, backend="anthropic")
    assert report.backend == "offline"
    assert any("(500)" in w and "offline" in w for w in report.warnings)


def test_usage_counts_cache_reads_and_writes_as_cached(workspace, api):
    api.answer(message([], input_tokens=12, cache_creation_input_tokens=3000, cache_read_input_tokens=40,
                       output_tokens=7))
    report = dream(workspace, NOW, backend="anthropic")
    assert report.to_dict()["tokens"] == {"input": 12, "cached": 3040, "output": 7}
    assert report.proposals == [] and report.dropped == []


# -- the evidence: compact -----------------------------------------------------------------------------
def _context(ws: Workspace, now: date = NOW, days: int | None = None) -> Context:
    col = collect(ws, now, days or ws.config.dream.window_days)
    return Context(col, "MEMORY.md", "USER.md")


def test_chatter_and_routine_lines_are_not_sent(workspace):
    write(workspace.root, "memory/2026-11-28.md", "# 2026-11-28\n\n"
          "- 08:00 Ada said good morning, asked about the weather in Hangzhou.\n"
          "- 08:05 晚饭吃了牛肉面。\n"
          "- 09:00 Looked at the Blog analytics, nothing unusual.\n"
          "- 10:00 Blog migrated to Astro v5 and deployed.\n")
    ws = Workspace(workspace.root)
    texts = [ln.text for ln in evidence_lines(_context(ws))]
    assert "Blog migrated to Astro v5 and deployed." in texts
    assert not any("weather" in t or "牛肉面" in t or "analytics" in t for t in texts)


def test_the_same_text_on_several_days_is_one_line_with_all_its_ids(workspace):
    for d in (26, 27, 28):
        write(workspace.root, f"memory/2026-11-{d}.md", f"# 2026-11-{d}\n\n- 09:00 gws not found again after the "
                                                         f"update; re-created the symlink\n")
    ws = Workspace(workspace.root)
    lines = [ln for ln in evidence_lines(_context(ws)) if "gws" in ln.text]
    assert len(lines) == 1
    assert lines[0].refs == ("memory/2026-11-26.md:3", "memory/2026-11-27.md:3", "memory/2026-11-28.md:3")


def test_estimate_tokens_compares_the_request_with_the_window_verbatim(workspace):
    chatter = ["Ada said good morning, asked about the weather.", "查了一下汇率，没变化。",
               "Thanks, that's all for today.", "Looked at a few news headlines.", "晚饭吃了牛肉面。"]
    for d in range(23, 30):
        body = [f"- {8 + i:02d}:00 {chatter[(d + i) % len(chatter)]}" for i in range(10)]
        body.append(f"- 19:00 Cockpit v1 staging check on day {d}: deploy to prod pending")
        write(workspace.root, f"memory/2026-11-{d}.md", f"# 2026-11-{d}\n\n" + "\n".join(body) + "\n")
    ws = Workspace(workspace.root)
    fig = estimate_tokens(ws, NOW)
    assert fig["window_days"] == 7
    assert fig["request"] == fig["stable"] + fig["evidence"]
    assert fig["naive_request"] == fig["stable"] + fig["verbatim"]
    assert 0 < fig["evidence_lines"] < fig["window_lines"]
    assert fig["evidence"] < fig["verbatim"] / 3                 # routine lines stay home
    assert estimate_tokens(ws, NOW, window_days=3)["window_lines"] < fig["window_lines"]


def test_templates_fail_loudly_on_a_missing_variable():
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        render.render("dream_evidence.md.j2", now="2026-11-30")


def test_only_html_templates_are_autoescaped():
    env = render.environment()
    assert env.autoescape("review_list.html.j2") is True
    assert env.autoescape("dream_system.md.j2") is False
    line = {"refs": ["memory/2026-11-29.md:3"], "more": 0, "tag": "", "text": "a <b> & \"c\""}
    out = render.render("dream_evidence.md.j2", now="2026-11-30", start="2026-11-23", logs=1, sessions=0,
                        total=1, lines=[line], truncated=0)
    assert 'memory/2026-11-29.md:3: a <b> & "c"\n' in out            # prompts carry text verbatim


# -- the gate's pure functions --------------------------------------------------------------------------
DOC = Document("MEMORY.md", (
    "# MEMORY\n\n## Environment [P0]\n- Host: Mac mini\n\n## Tools\n"
    "- [P1] Gateway runs v0.13\n  behind nginx (2026-09-02)\n- Backup key: sk-ant-api03-"
    + "Zq8Xv2Lm5Nw9Rt4Yp7Kd1Hs6Fg3Jc0Bv8Ne2Mq5Wx7Tz4Ua1Io9Pl6Kj3Hg0Fd5Sa8Qw2Er7Ty4Ui1Op-AbC2dEfGh\n"
    "- dup\n- dup\n").encode())


def _ground(**kw) -> g.Ground:
    lines = {"memory/2026-11-29.md:3": "- 09:10 Gateway   upgraded to v0.17,\tall green",
             **{f"MEMORY.md:{i}": t for i, t in enumerate(g.redacted_lines(DOC), 1)}}
    return g.Ground({"MEMORY.md": DOC}, lines, ("MEMORY.md", "USER.md"), 0.7, **kw)


def _op(**kw) -> dict:
    base = {"op": "refresh", "file": "MEMORY.md", "targets": ["- [P1] Gateway runs v0.13\n  behind nginx (2026-09-02)"],
            "text": "[P1] Gateway runs v0.17 behind nginx (2026-11-29)", "confidence": 0.9, "reason": "Upgraded.",
            "evidence": [{"source": "memory/2026-11-29.md:3", "quote": "Gateway upgraded to v0.17, all green"}]}
    return {**base, **kw}


def test_quotes_match_whitespace_normalised_at_their_line_only():
    lines = _ground().lines
    g.check_quote(lines, "memory/2026-11-29.md:3", "Gateway upgraded  to\nv0.17")
    g.check_quote(lines, "memory/2026-11-29.md:3", "…upgraded to v0.17…")
    with pytest.raises(g.Drop, match="does not occur"):
        g.check_quote(lines, "MEMORY.md:7", "Gateway upgraded to v0.17")
    with pytest.raises(g.Drop, match="is not path:line"):
        g.check_quote(lines, "memory/2026-11-29.md", "Gateway")
    with pytest.raises(g.Drop, match="is empty"):
        g.check_quote(lines, "memory/2026-11-29.md:3", " … ")


def test_targets_resolve_to_one_exact_entry():
    exact = "- [P1] Gateway runs v0.13\n  behind nginx (2026-09-02)"
    assert g.resolve_target(DOC, exact).text == exact
    assert g.resolve_target(DOC, "[P1] Gateway runs v0.13 behind nginx (2026-09-02)").text == exact
    secret_entry = g.resolve_target(DOC, "- Backup key: [REDACTED]")      # as the model saw it
    assert secret_entry.text.startswith("- Backup key: sk-ant-api03-")
    with pytest.raises(g.Drop, match="matches 2 entries"):
        g.resolve_target(DOC, "- dup")
    with pytest.raises(g.Drop, match="is not an entry"):
        g.resolve_target(DOC, "Gateway runs")


def test_the_gate_passes_a_good_operation_with_exact_targets():
    v = g.gate([_op(targets=["[P1] Gateway runs v0.13 behind nginx (2026-09-02)"])], _ground())
    (op,) = v.passed
    assert v.dropped == []
    assert op.targets == ("- [P1] Gateway runs v0.13\n  behind nginx (2026-09-02)",)
    assert op.origin == "anthropic" and op.confidence == 0.9
    assert op.evidence[0].source == "memory/2026-11-29.md:3"


def test_pruning_an_entry_that_holds_a_secret_passes_without_repeating_it():
    v = g.gate([_op(op="prune", targets=["- Backup key: [REDACTED]"], text=None,
                    evidence=[{"source": "MEMORY.md:9", "quote": "Backup key: [REDACTED]"}])], _ground())
    (op,) = v.passed
    assert "sk-ant" not in json.dumps(op.to_dict())


@pytest.mark.parametrize("item, reason", [
    (_op(file="../etc/passwd"), r"is not a memory file"),
    (_op(file="USER.md", op="prune", text=None), r"USER\.md does not exist yet"),
    (_op(targets=["- Host: Mac mini"]), r"line 4 is P0 or protected"),
    (_op(op="merge", targets=["- dup", "- dup"]), r"matches 2 entries"),
    (_op(text="[P0] Gateway runs v0.17"), r"claims P0"),
    (_op(text="Gateway key [REDACTED] (2026-11-29)"), r"copies a redacted value"),
    (_op(op="consolidate", targets=[], section="Environment [P0]", text="x"), r"section 'Environment' .* P0"),
    (_op(op="consolidate", targets=[], section="Secrets [P0]", text="x"), r"section name claims P0"),
    (_op(confidence=True), r"'confidence' must be a number"),
    (_op(confidence=1.5), r"'confidence' must be a number"),
    (_op(evidence=[]), r"'evidence' must be a non-empty list"),
    (_op(evidence=[{"source": "MEMORY.md:7"}]), r"needs a 'source' and a 'quote'"),
    (_op(targets="- dup"), r"'targets' must be a list"),
    (_op(op="move"), r"unknown op 'move'"),
    (_op(reason=""), r"'reason' is empty"),
    ({k: v for k, v in _op().items() if k != "file"}, r"missing 'file'"),
    (None, r"an operation must be an object"),
])
def test_the_gate_drops_with_a_reason(item, reason):
    v = g.gate([item], _ground())
    assert v.passed == []
    (d,) = v.dropped
    assert re.search(reason, d["reason"]), d["reason"]
    assert d["index"] == 0


def test_consolidate_may_open_a_new_section_or_a_configured_file_not_yet_written():
    v = g.gate([_op(op="consolidate", targets=[], section="## Gotchas [P1]", text="gws needs a symlink"),
                _op(op="consolidate", targets=[], file="USER.md", section=None, text="Prefers uv")], _ground())
    assert [(o.file, o.section) for o in v.passed] == [("MEMORY.md", "Gotchas"), ("USER.md", None)]


def test_known_fingerprints_and_repeats_are_dropped():
    op = g.check(_op(), _ground())
    v = g.gate([_op(), _op()], _ground(known=frozenset({op.fingerprint})))
    assert v.passed == []
    assert reasons(v) == ["the same change is already open or was rejected before"] * 2
    v = g.gate([_op(), _op()], _ground())
    assert len(v.passed) == 1 and reasons(v) == ["the same change appears twice in the answer"]


def test_a_dropped_record_never_repeats_a_secret():
    key = "sk-ant-api03-" + "Zq8Xv2Lm5Nw9Rt4Yp7Kd1Hs6Fg3Jc0Bv8Ne2Mq5Wx7Tz4Ua1Io9Pl6Kj3Hg0Fd5Sa8Qw2Er7Ty4Ui1Op-AbC2dEfGh"
    v = g.gate([_op(text=f"Gateway key {key}")], _ground())
    assert "sk-ant" not in json.dumps(v.dropped)
    assert v.dropped[0]["reason"] == "the new text holds sensitive data (Anthropic API key)"


def test_the_answer_must_be_a_list():
    assert reasons(g.gate({"op": "prune"}, _ground())) == ["the answer's 'operations' is not a list"]
