"""The dream on workspaces unlike the bench's: other words, other scripts, negative cases.

Each test builds a real workspace in a real git repo, dreams with the offline
engine, approves everything and checks what memory looks like afterwards.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import pytest

from memgit import journal, proposals
from memgit.adopt import init
from memgit.dream import dream
from memgit.workspace import Workspace

NOW = date(2026, 6, 1)


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch, tmp_path):
    home = tmp_path / "_home"
    home.mkdir()
    for k, v in {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1",
                 "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
                 "GIT_COMMITTER_EMAIL": "t@example.invalid", "NO_COLOR": "1"}.items():
        monkeypatch.setenv(k, v)


def make(tmp_path: Path, files: dict[str, str], budget: int = 4000, window: int = 7) -> Workspace:
    ws = tmp_path / "ws"
    ws.mkdir()
    cfg = f'[capacity]\n"MEMORY.md" = {budget}\n"USER.md" = 2000\n\n[dream]\nwindow_days = {window}\n'
    files = {"memgit.toml": cfg, **files}
    for rel, text in files.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    init(ws)
    return Workspace(ws)


def log(day: str, *lines: str) -> tuple[str, str]:
    return f"memory/{day}.md", f"# {day}\n\n" + "".join(f"- {10 + i}:00 {t}\n" for i, t in enumerate(lines))


def session(name: str, *turns: tuple[str, str, str]) -> tuple[str, str]:
    rows = [json.dumps({"ts": ts, "session": name, "role": role, "text": text}, ensure_ascii=False)
            for ts, role, text in turns]
    return f"sessions/{name}.jsonl", "\n".join(rows) + "\n"


def cycle(ws: Workspace, now: date = NOW):
    report = dream(ws, now)
    opened = proposals.list_proposals(ws)
    if opened:
        result = proposals.approve(ws, [])
        assert not result.refused, result.refused
    return report, opened


def read(ws: Workspace, name: str = "MEMORY.md") -> str:
    return (ws.root / name).read_text(encoding="utf-8")


MEM_HEAD = "# MEMORY\n\n## Environment [P0]\n- Host: a small VPS, agent runs under systemd\n\n"


# -- refresh: status ----------------------------------------------------------------------
def test_status_moved_in_english_is_refreshed(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Atlas v2 in design, Next.js + FastAPI (2026-04-01)\n"
                                "- [P1] Ledger importer handles CSV only (2026-04-03)\n",
        **dict([log("2026-05-27", "Atlas v2: finished the last review round."),
                log("2026-05-29", "Atlas v2 went live this morning, no incidents."),
                log("2026-05-31", "Atlas traffic looks normal after two days.")]),
    })
    report, opened = cycle(ws)
    text = read(ws)
    assert re.search(r"Atlas v2 live", text)
    assert "in design" not in text
    assert "Ledger importer handles CSV only" in text
    assert any(p.op.op == "refresh" for p in opened)
    assert report.counts["refresh"] == 1


def test_status_moved_in_traditional_chinese_keeps_the_script(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## 專案 [P1]\n- [P1] 報表系統 v1 待上線，等資料源確認 (2026-04-01)\n",
        **dict([log("2026-05-28", "報表系統 v1 已部署上線，網址已發給 Jw。"),
                log("2026-05-30", "報表系統運行正常，沒有報錯。")]),
    })
    cycle(ws)
    text = read(ws)
    assert "報表系統 v1 已上線" in text
    assert "待上線" not in text


def test_status_not_moved_when_negated(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Beacon v1 pending review (2026-05-01)\n",
        **dict([log("2026-05-29", "Beacon v1 is not deployed yet, still waiting on review."),
                log("2026-05-30", "Beacon v1 还没上线，review 还在排队。")]),
    })
    report, opened = cycle(ws)
    assert opened == []
    assert "Beacon v1 pending review" in read(ws)


# -- refresh: version -------------------------------------------------------------------------
def test_version_bump_in_chinese_logs(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## 工具 [P1]\n- [P1] 爬虫服务 crawler 跑在 v1.2 (2026-03-01)\n"
                                "- [P1] exporter 固定在 2.4.1，2.5.0 有内存泄漏 (2026-03-09)\n",
        **dict([log("2026-05-27", "crawler 从 v1.2 升级到 v1.4，配置不用改。"),
                log("2026-05-30", "crawler v1.4 连续跑了三天，很稳定。"),
                log("2026-05-31", "看了 exporter 的更新日志，继续用 2.4.1。")]),
    })
    cycle(ws)
    text = read(ws)
    assert "crawler 跑在 v1.4" in text
    assert "v1.2" not in text
    assert "exporter 固定在 2.4.1" in text


def test_single_unconfirmed_version_mention_is_skipped(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Tools [P1]\n- [P1] notifier runs v0.8 (2026-03-01)\n",
        **dict([log("2026-05-30", "Read that notifier v0.9 is out.")]),
    })
    report, opened = cycle(ws)
    assert opened == []
    assert report.skipped and report.skipped[0]["score"] < 0.7


# -- refresh: preference ---------------------------------------------------------------------
def test_preference_restated_in_english_session(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD,
        "USER.md": "# USER\n\n## Profile [P0]\n- Name: Sam\n\n## Preferences [P1]\n"
                   "- [P1] Daily briefing: long paragraphs, no bullet points (2026-03-01)\n"
                   "- [P1] Dates as YYYY-MM-DD (2026-03-02)\n",
        **dict([session("s1",
                        ("2026-05-30T09:00:00+00:00", "user", "The briefing is too long to read."),
                        ("2026-05-30T09:01:00+00:00", "user",
                         "From now on, use bullet points for the daily briefing instead of long paragraphs."),
                        ("2026-05-30T09:01:20+00:00", "assistant",
                         "Got it: bullet points for the daily briefing from now on."))]),
    })
    cycle(ws)
    text = read(ws, "USER.md")
    assert re.search(r"briefing.*bullet points|bullet points.*briefing", text, re.I)
    assert "long paragraphs, no bullet points" not in text
    assert "Dates as YYYY-MM-DD" in text


def test_one_week_exception_does_not_overwrite_a_standing_rule(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Workflows [P1]\n- [P1] Standup every Monday 09:30 (2026-03-01)\n",
        **dict([log("2026-05-26", "Standup moved to 10:00 this week only, Sam has a dentist appointment."),
                log("2026-05-27", "本周站会临时改到 10:00。"),
                log("2026-05-28", "Standup at 10:00 today as agreed, this week only.")]),
    })
    report, opened = cycle(ws)
    assert "Standup every Monday 09:30" in read(ws)
    assert all("10:00" not in (p.op.text or "") for p in opened)


# -- consolidate: recurring -----------------------------------------------------------------------
def test_recurring_gotcha_in_other_words_is_consolidated(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Tools [P1]\n- [P1] Deploys use docker compose on the VPS (2026-02-01)\n",
        **dict([log("2026-05-26", "docker compose up failed: network proxy_net not found. "
                                  "Fix: docker network create proxy_net, then up again."),
                log("2026-05-28", "Again the proxy_net network was missing after reboot; "
                                  "docker network create proxy_net fixed it."),
                log("2026-05-31", "Third time this month: proxy_net gone after a reboot, recreated it with "
                                  "docker network create proxy_net."),
                log("2026-05-30", "Tried a new terminal font, looks fine.")]),
    })
    cycle(ws)
    text = read(ws)
    assert re.search(r"proxy_net", text)
    assert "terminal font" not in text


def test_recurring_rule_in_simplified_chinese_is_consolidated_without_figures(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Notes [P2]\n- [P2] 看盘软件用同花顺 (2026-03-01)\n",
        **dict([log("2026-05-26", "止盈规则：涨 20% 卖一半，剩下的跟踪止盈。"),
                log("2026-05-28", "今天按规则执行了：涨 20% 卖一半。持仓 500 股，成本价 12.3。"),
                log("2026-05-30", "复盘：涨 20% 卖一半 这条规则很好用。")]),
    })
    report, opened = cycle(ws)
    text = read(ws)
    assert re.search(r"20%.*卖一半", text)
    assert "500 股" not in text and "12.3" not in text
    blob = json.dumps(report.to_dict(), ensure_ascii=False) + "".join(p.op.reason for p in opened)
    assert "500 股" not in blob and "成本价 12.3" not in blob


def test_chatter_over_several_days_is_not_memory(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Quill v1 deployed on the VPS (2026-05-10)\n",
        **dict([log("2026-05-26", "Sam said good morning and asked about the weather."),
                log("2026-05-28", "早上好，今天天气不错。"),
                log("2026-05-30", "Sam said good morning, asked about the weather again."),
                log("2026-05-31", "Thanks, that's all for today.")]),
        **dict([session("q1", ("2026-05-31T10:00:00+00:00", "user", "hi"),
                        ("2026-05-31T10:00:05+00:00", "assistant", "Hi Sam, how can I help?"))]),
    })
    report, opened = cycle(ws)
    assert opened == []
    assert "weather" not in read(ws)


# -- prune -------------------------------------------------------------------------------------
def test_stale_entries_are_pruned(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Notes [P2]\n"
                                "- [P2] Temporary: staging tunnel for the client demo on 2026-05-20 (2026-05-18)\n"
                                "- [P2] API cookies exported for the scraper, expire in 14 days (2026-05-01)\n"
                                "- [P2] 同步服務 sync 一直報 502，待查 (2026-05-10)\n"
                                "- [P2] Dashboard uses the dark theme (2026-04-12)\n",
        **dict([log("2026-05-29", "sync 服務的 502 修好了，是憑證過期。"),
                log("2026-05-31", "Dashboard still on the dark theme.")]),
    })
    cycle(ws)
    text = read(ws)
    assert "staging tunnel" not in text
    assert "API cookies" not in text
    assert "502" not in text
    assert "dark theme" in text


def test_secret_in_memory_is_pruned_and_never_printed(tmp_path):
    key = "AKIAIOSFODNN7EXAMPLE"
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + f"## Notes [P2]\n- [P2] AWS key for backups: {key} (2026-04-01)\n"
                                "- [P2] Backups run nightly (2026-04-02)\n",
        **dict([log("2026-05-30", "Backups ran fine.")]),
    })
    report, opened = cycle(ws)
    assert key not in read(ws)
    assert "Backups run nightly" in read(ws)
    out = subprocess.run(["git", "log", "--all", "--format=%B"], cwd=ws.root, capture_output=True,
                         text=True).stdout
    assert key not in out
    assert key not in json.dumps(report.to_dict())
    assert all(key not in json.dumps(p.to_dict()) for p in proposals.list_proposals(ws, include_closed=True))
    # no ref's tree keeps it either: proposals made beside the prune were rebased when approved
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)"], cwd=ws.root, capture_output=True,
                          text=True).stdout.split()
    hits = subprocess.run(["git", "grep", "-l", "-F", key, *refs], cwd=ws.root, capture_output=True, text=True)
    assert hits.stdout == "", hits.stdout


def test_secret_prune_beside_other_proposals_leaves_no_ref_holding_it(tmp_path):
    key = "ghp_" + "R8fK2mQ7xW4nT1vB9cZ3pL6sD0hJ5gY2aE7u"
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + f"## Projects [P1]\n- [P1] Atlas v2 pending push (2026-05-01)\n\n"
                                f"## Notes [P2]\n- [P2] CI token: {key} (2026-04-01)\n",
        **dict([log("2026-05-29", "Atlas v2 pushed and deployed.")]),
    })
    dream(ws, NOW)
    assert len(proposals.list_proposals(ws)) == 2
    secret = next(p for p in proposals.list_proposals(ws) if p.op.op == "prune")
    proposals.approve(ws, [secret.id])  # only the prune; the other stays open
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)"], cwd=ws.root, capture_output=True,
                          text=True).stdout.split()
    hits = subprocess.run(["git", "grep", "-l", "-F", key, *refs], cwd=ws.root, capture_output=True, text=True)
    assert hits.stdout == "", hits.stdout
    (left,) = proposals.list_proposals(ws)
    assert left.applies and "Atlas v2 deployed" in proposals.diff(ws, left)


def test_over_budget_prunes_lowest_value_until_under(tmp_path):
    notes = "".join(f"- [P2] Experiment {i}: tried tool{i} for a while, dropped it (2026-03-{i + 1:02d})\n"
                    for i in range(20))
    mem = MEM_HEAD + "## Projects [P1]\n- [P1] Harbor dashboard deployed on the VPS (2026-05-20)\n\n" \
                     "## Experiments [P2]\n" + notes
    budget = int(len(mem) / 1.1)
    ws = make(tmp_path, {"MEMORY.md": mem, **dict([log("2026-05-30", "Harbor dashboard got a new chart.")])},
              budget=budget)
    report, opened = cycle(ws)
    assert len(read(ws)) <= 0.9 * budget
    assert "Harbor dashboard" in read(ws)
    assert "Host: a small VPS" in read(ws)
    assert all(p.op.op == "prune" for p in opened)


def test_duplicates_in_chinese_are_merged(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## 操作 [P1]\n- [P1] 导出月报：报表 → 导出 → CSV (2026-03-01)\n"
                                "- [P1] 月报导出方法：报表 > 导出 > CSV (2026-03-20)\n"
                                "- [P1] 退款超过 500 元需要第二人审批 (2026-04-02)\n",
        **dict([log("2026-05-29", "客户又问怎么导出月报。")]),
    })
    cycle(ws)
    text = read(ws)
    assert len(re.findall(r"^.*月报.*$", text, re.M)) == 1
    assert "退款超过 500 元" in text


def test_contradiction_newer_label_wins(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Tools [P1]\n- [P1] Editor: vim for everything (2026-01-05)\n"
                                "- [P1] Shell: zsh with starship (2026-01-06)\n"
                                "- [P1] Editor: helix, switched from vim (2026-05-02)\n",
        **dict([log("2026-05-30", "Quick fix in helix.")]),
    })
    cycle(ws)
    text = read(ws)
    assert "vim for everything" not in text
    assert "Editor: helix" in text
    assert "Shell: zsh" in text


# -- guard rails ---------------------------------------------------------------------------------
def test_p0_is_never_changed(tmp_path):
    mem = ("# MEMORY\n\n## Core [P0]\n- Migration of the NAS 待 push\n- Gateway runs v0.3\n\n"
           "## Notes [P2]\n- [P2] nothing else (2026-05-01)\n")
    ws = make(tmp_path, {"MEMORY.md": mem,
                         **dict([log("2026-05-28", "NAS migration 已 push 并部署上线。"),
                                 log("2026-05-29", "Upgraded the gateway from v0.3 to v0.5."),
                                 log("2026-05-30", "Gateway v0.5 stable.")])})
    cycle(ws)
    text = read(ws)
    assert "- Migration of the NAS 待 push" in text
    assert "- Gateway runs v0.3" in text


def test_dream_is_idempotent_and_remembers_rejections(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Orchid v1 pending push (2026-05-01)\n"
                                "## Tools [P1]\n- [P1] indexer runs v0.4 (2026-04-01)\n",
        **dict([log("2026-05-29", "Orchid v1 pushed and deployed."),
                log("2026-05-30", "Upgraded indexer from v0.4 to v0.6."),
                log("2026-05-31", "indexer v0.6 stable.")]),
    })
    first = dream(ws, NOW)
    ids = {p["id"] for p in first.proposals}
    assert len(ids) == 2
    again = dream(ws, NOW)
    assert [p["id"] for p in again.proposals] == []
    assert len(proposals.list_proposals(ws)) == 2
    version = next(p for p in proposals.list_proposals(ws) if "indexer" in p.op.text)
    proposals.reject(ws, [version.id], "we stay on 0.4 for now")
    third = dream(ws, NOW)
    assert third.proposals == []
    assert len(proposals.list_proposals(ws)) == 1
    # an agent edit of the target makes the open proposal stale
    f = ws.root / "MEMORY.md"
    f.write_text(f.read_text().replace("Orchid v1 pending push", "Orchid v1 pending push to prod"))
    with ws.repo.lock():
        ws.prepare()
    (stale,) = proposals.list_proposals(ws)
    assert stale.applies is False


def test_evidence_quotes_are_really_at_their_sources(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Nimbus v3 待 push (2026-05-01)\n",
        **dict([log("2026-05-29", "Nimbus v3 已 push 并上线。", "db password: hunter2hunter2 for Nimbus")]),
    })
    report = dream(ws, NOW)
    assert report.proposals
    for p in proposals.list_proposals(ws):
        for ev in p.op.evidence:
            path, line = ev.source.rsplit(":", 1)
            actual = (ws.root / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
            assert " ".join(ev.quote.split()) in " ".join(actual.split())
            assert "hunter2hunter2" not in ev.quote


def test_quiet_week_changes_nothing_and_is_journaled(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Quill v1 deployed (2026-05-12)\n",
        **dict([log("2026-05-30", "hi"), log("2026-05-15", "Quill v1 deployed, smoke tests green.")]),
    })
    main = ws.main()
    report, opened = cycle(ws)
    assert opened == [] and ws.main() == main
    (ev,) = journal.events(ws.repo, ("dream",))
    assert ev.summary.startswith("Reviewed 1 log(s), 0 session(s) · prune 0 | refresh 0")


def test_unreadable_inputs_are_skipped_with_warnings(tmp_path):
    ws = make(tmp_path, {"MEMORY.md": MEM_HEAD, **dict([session("ok", ("2026-05-30T09:00:00Z", "user", "hi"))])})
    (ws.root / "memory").mkdir(exist_ok=True)
    (ws.root / "memory" / "2026-05-29.md").write_bytes(b"# x\n- \xff\xfe broken\n")
    (ws.root / "memory" / "2026-05-30.md").write_bytes(b"\x00\x01binary")
    (ws.root / "sessions" / "bad.jsonl").write_text('{"ts": "2026-05-30T09:00:00Z"\nnot json\n')
    outside = tmp_path / "outside.md"
    outside.write_text("# secret\n- outside\n")
    (ws.root / "memory" / "2026-05-31.md").symlink_to(outside)
    report = dream(ws, NOW)
    joined = " ".join(report.warnings)
    assert "2026-05-29.md" in joined and "UTF-8" in joined
    assert "2026-05-30.md" in joined and "binary" in joined
    assert "bad.jsonl" in joined and "malformed" in joined
    assert "outside the workspace" in joined


def test_dream_cli_json_and_dry_run(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Quill v1 待 push (2026-05-01)\n",
        **dict([log("2026-05-29", "Quill v1 已 push 并部署上线。")]),
    })
    cmd = [sys.executable, "-m", "memgit", "-C", str(ws.root), "dream", "--now", "2026-06-01"]
    p = subprocess.run([*cmd, "--dry-run", "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["dry_run"] is True and data["counts"]["refresh"] == 1
    assert proposals.list_proposals(ws) == []
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0 and "refresh" in p.stdout
    assert len(proposals.list_proposals(ws)) == 1
    p = subprocess.run([*cmd[:5], "dream", "--now", "June 1st"], capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.startswith("Error: --now") and "Traceback" not in p.stderr


def test_one_label_listing_several_things_is_not_a_contradiction(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Repos [P1]\n- [P1] Repo: blog source at ~/src/blog (2026-01-05)\n"
                                "- [P1] Repo: memgit checkout at ~/src/memgit (2026-04-06)\n",
        **dict([log("2026-05-29", "Fixed a typo in the blog post.")]),
    })
    report, opened = cycle(ws)
    assert "Repo: blog source" in read(ws) and "Repo: memgit checkout" in read(ws)


def test_a_setting_that_changed_keeps_the_newer_value(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Setup [P1]\n- [P1] Default shell: bash (2026-01-05)\n"
                                "- [P1] Terminal: kitty (2026-01-06)\n- [P1] Default shell: fish (2026-05-10)\n",
        **dict([log("2026-05-29", "Wrote a fish function for the deploy alias.")]),
    })
    cycle(ws)
    text = read(ws)
    assert "Default shell: fish" in text and "Default shell: bash" not in text and "kitty" in text


def test_status_refresh_is_not_undone_by_a_negated_error_and_drops_what_was_needed(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Invoice parser: in progress, needs OCR fallback (2026-04-11)\n",
        **dict([log("2026-05-26", "Invoice parser OCR fallback done."),
                log("2026-05-28", "Invoice parser went live for the accounting team."),
                log("2026-05-30", "Invoice parser processed 120 invoices without errors.")]),
    })
    cycle(ws)
    text = read(ws)
    assert "- [P1] Invoice parser: live (2026-05-28)" in text


def test_preference_reported_in_a_log_line_refreshes_without_the_attribution(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD,
        "USER.md": "# USER\n\n## 基本 [P0]\n- 称呼：Jw\n\n## 偏好 [P1]\n- [P1] 周报：每周五晚上发 (2026-03-01)\n"
                   "- [P1] 回复用中文 (2026-03-02)\n",
        **dict([log("2026-05-29", "Jw 说以后周报改成周日晚上发，周五太忙看不完。")]),
    })
    cycle(ws)
    text = read(ws, "USER.md")
    assert "- [P1] 周报：每周日晚上发 (2026-05-29)" in text  # the one slot moved, not the complaint
    assert "每周五晚上发" not in text and "回复用中文" in text


def test_a_plan_announced_from_now_on_is_not_a_preference(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Garden sensor dashboard on Grafana (2026-04-01)\n",
        "USER.md": "# USER\n\n## Profile [P0]\n- Name: Mei\n\n## Preferences [P1]\n- [P1] Short answers (2026-03-01)\n",
        **dict([log("2026-05-30", "Mei said she will be on vacation from now on until Tuesday.")]),
    })
    report, opened = cycle(ws)
    assert opened == []


def test_routine_nothing_new_lines_are_not_consolidated(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Quill v1 deployed (2026-05-12)\n",
        **dict([log("2026-05-26", "Checked the inbox, nothing important."),
                log("2026-05-28", "Checked the inbox again, nothing important."),
                log("2026-05-30", "检查了邮箱，一切正常。"),
                log("2026-05-31", "Checked the inbox, nothing important, as usual.")]),
    })
    report, opened = cycle(ws)
    assert opened == []


def test_far_over_budget_gets_under_even_past_the_operation_limit(tmp_path):
    notes = "".join(f"- [P2] n{i} tried x{i} (2026-03-{i % 28 + 1:02d})\n" for i in range(40))
    mem = MEM_HEAD + "## Projects [P1]\n- [P1] Harbor dashboard deployed on the VPS (2026-05-20)\n\n" \
                     "## Experiments [P2]\n" + notes
    budget = int(len(mem) / 1.6)
    ws = make(tmp_path, {"MEMORY.md": mem, **dict([log("2026-05-30", "Harbor dashboard got a new chart.")])},
              budget=budget)
    report, opened = cycle(ws)
    assert len(opened) <= ws.config.dream.max_ops
    assert len(read(ws)) <= 0.9 * budget
    assert "Harbor dashboard" in read(ws) and "Host: a small VPS" in read(ws)


def test_protected_sections_are_left_alone_like_p0(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Agent Cases\n- [P2] Case 12: Orchid v1 pending push (2026-04-01)\n"
                                "- [P2] Temporary: demo tunnel on 2026-05-01 (2026-04-30)\n",
        **dict([log("2026-05-29", "Orchid v1 pushed and deployed."), log("2026-05-30", "Orchid v1 stable.")]),
    })
    with open(ws.root / "memgit.toml", "a", encoding="utf-8") as f:
        f.write('\n[memory]\nprotected_sections = ["Agent Cases"]\n')
    ws = type(ws)(ws.root)
    report, opened = cycle(ws)
    assert opened == []
    assert "Case 12: Orchid v1 pending push" in read(ws) and "demo tunnel" in read(ws)


# -- precision on memories shaped like real ones ----------------------------------------------
def test_over_budget_never_means_deleting_identity_rules_or_untagged_facts(tmp_path):
    facts = "".join(f"- Fact {i}: the {i}th host runs service number {i} on port {8000 + i}\n" for i in range(60))
    ws = make(tmp_path, {
        "MEMORY.md": "# MEMORY\n\n## Who I Am\n- **Name:** Kit\n- **Human:** Ilya\n\n## Rules\n"
                     "- **NEVER restart the gateway while an agent works**\n- 改东西前必须先备份\n\n"
                     "## Facts\n" + facts + "\n## Scratch [P2]\n"
                     "- [P2] Tried a Raycast extension, uninstalled after a day (2026-03-14)\n",
    }, budget=800)
    before = read(ws)
    report = dream(ws, NOW)
    prunes = [p for p in proposals.list_proposals(ws) if p.op.op == "prune"]
    assert all(len(t.splitlines()) <= 12 for p in prunes for t in p.op.targets)
    assert {t for p in prunes for t in p.op.targets} <= {"- [P2] Tried a Raycast extension, uninstalled after a "
                                                         "day (2026-03-14)"}
    proposals.approve(ws, [])
    after = read(ws)
    for line in ("- **Name:** Kit", "- **NEVER restart the gateway while an agent works**", "- 改东西前必须先备份",
                 "- Fact 0: the 0th host runs service number 0 on port 8000"):
        assert line in after
    assert after.count("- Fact ") == before.count("- Fact ")
    assert report.capacity[0]["after_pct"] > 100  # honest: still over, nothing destroyed to hide it


def test_openclaw_session_memory_logs_are_read(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Moonbeam landing page 设计中 (2026-05-10)\n",
        "memory/2026-05-29-moonbeam-launch.md": "# Session\n\n- Moonbeam landing page 已上线\n",
        "memory/2026-05-30-1412.md": "# Session\n\n- Moonbeam landing page 上线后运行正常\n",
    })
    report = dream(ws, NOW)
    assert report.logs == 2
    assert any(p["op"] == "refresh" for p in report.proposals)


def test_the_agents_own_decision_is_not_the_persons_preference(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD,
        "USER.md": "# USER\n\n## Preferences\n- Trusts the agent to make decisions autonomously\n",
        **dict([log("2026-05-30", "Decision: stop replying to every post, decisions on engagement instead "
                                  "of volume.")]),
    })
    report = dream(ws, NOW)
    assert not [p for p in report.proposals if p["file"] == "USER.md"]


def test_fields_that_share_a_template_are_not_merged(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Agents\n### Main\n- **Telegram**: @main_bot\n- **Model**: Falcon 4.1\n"
                                "### Helper\n- **Telegram**: @helper_bot\n- **Model**: Heron 2.3\n\n"
                                "## Blog\n- 第三期周报已发出 (2026-05-01)\n- 第五期周报已发出 (2026-05-03)\n",
    })
    report = dream(ws, NOW)
    assert not [p for p in report.proposals if p["op"] in ("merge", "prune")]


def test_a_state_the_newest_logs_report_ended_is_refreshed(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Channels [P1]\n- Signal bridge 已连接（备用号）\n- Telegram bot 已连接\n",
        **dict([log("2026-05-28", "Signal bridge 断开，需要重新扫码"),
                log("2026-05-30", "Signal bridge 仍断连，等待处理", "Telegram bot 正常")]),
    })
    report, _ = cycle(ws)
    text = read(ws)
    assert "Signal bridge 断连（备用号）" in text
    assert "- Telegram bot 已连接" in text


def test_a_state_that_came_back_or_was_never_lost_stays(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Channels [P1]\n- NAS share online\n- Signal bridge 已连接\n",
        **dict([log("2026-05-27", "NAS share offline during the power cut"),
                log("2026-05-29", "NAS share offline again this morning"),
                log("2026-05-30", "NAS share online again after the reboot", "Signal bridge 零断连，稳定")]),
    })
    report = dream(ws, NOW)
    assert not [p for p in report.proposals if p["op"] == "refresh"]


def test_a_labelled_setting_takes_the_identifier_assigned_to_it(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Agents [P1]\n### Scout (Main)\n- **Model**: Qwen 2.5 (ollama/qwen2.5)\n"
                                "### Helper\n- **Model**: Llama 3 (ollama/llama3)\n"
                                "### Notes\n- **Models**: qwen2.5 for chat, llama3 for code\n",
        **dict([log("2026-05-30", "切換 main agent model：\n  - primary: `openrouter/qwen3-32b`\n"
                                  "  - fallbacks: `ollama/llama3`")]),
    })
    cycle(ws)
    text = read(ws)
    assert "- **Model**: `openrouter/qwen3-32b` (2026-05-30)" in text
    assert "- **Model**: Llama 3 (ollama/llama3)" in text          # the helper's own setting
    assert "- **Models**: qwen2.5 for chat, llama3 for code" in text  # a list of values is left alone


def test_entries_built_around_a_retired_tool_are_pruned_and_nothing_else(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Tooling [P1]\n- All browser calls go through `webproxy` on port 9000\n"
                                "- webproxy config: `config/webproxy.json`\n"
                                "- Grafana: dashboards on h1, reached via webproxy\n"
                                "- [Tool notes](memory/tools.md) — webproxy quirks\n"
                                "- Never call the browser API without webproxy\n",
        **dict([log("2026-05-30", "Jw clarified that `webproxy` is not required anymore; use the native "
                                  "browser tool.")]),
    })
    cycle(ws)
    text = read(ws)
    assert "All browser calls go through" not in text and "webproxy config" not in text
    for kept in ("Grafana: dashboards on h1", "[Tool notes](memory/tools.md)", "Never call the browser API"):
        assert kept in text


def test_a_tool_the_agent_alone_calls_deprecated_retires_nothing(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Tooling [P1]\n- All browser calls go through `webproxy` on port 9000\n",
        **dict([log("2026-05-30", "Read that `webproxy` upstream is deprecated; still works fine here.")]),
    })
    report = dream(ws, NOW)
    assert not report.proposals


def test_the_primary_in_a_list_of_models_takes_the_new_primary(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Status [P1]\n- **Models:** Qwen 2.5 primary, Llama 3 fallback, Phi-3 local\n",
        **dict([log("2026-05-30", "Switched the agent: models primary: `openrouter/qwen3-32b`, fallbacks unchanged.")]),
    })
    cycle(ws)
    assert "- **Models:** `openrouter/qwen3-32b` primary, Llama 3 fallback, Phi-3 local (2026-05-30)" in read(ws)


# -- scale: work grows with the file, not with its square ------------------------------------
def test_forced_prune_of_a_large_file_never_rebuilds_or_reparses_it(tmp_path, monkeypatch):
    from memgit import memory

    notes = "".join(f"- [P2] n{i} tried x{i} on host{i} (2026-03-{i % 28 + 1:02d})\n" for i in range(400))
    mem = MEM_HEAD + "## Experiments [P2]\n" + notes
    ws = make(tmp_path, {"MEMORY.md": mem}, budget=len(mem) // 4)
    counts = {"parse": 0, "splice": 0}
    real_init, real_splice = memory.Document.__init__, memory.Document.splice

    def counting_init(self, *a, **kw):
        counts["parse"] += 1
        real_init(self, *a, **kw)

    def counting_splice(self, *a, **kw):
        counts["splice"] += 1
        return real_splice(self, *a, **kw)

    monkeypatch.setattr(memory.Document, "__init__", counting_init)
    monkeypatch.setattr(memory.Document, "splice", counting_splice)
    memory._CACHE.clear()
    report = dream(ws, NOW, dry_run=True)
    assert report.counts["prune"] == ws.config.dream.max_ops  # hundreds of candidates were weighed
    assert counts["parse"] <= 2                              # main's file, once (plus USER.md at most)
    assert counts["splice"] == 0                             # sizes come from the edits, not new bytes


def test_duplicate_pairs_grow_linearly_when_a_term_is_in_many_entries(tmp_path, monkeypatch):
    from memgit.dream.rules import duplicates

    # "gateway" is in 120 of 600 entries: still specific (≤ a quarter), but 7,140 pairs on its own
    notes = "".join(f"- [P2] probe{i} {'gateway ' if i % 5 == 0 else ''}check on rack{i} "
                    f"(2026-03-{i % 28 + 1:02d})\n" for i in range(600))
    ws = make(tmp_path, {"MEMORY.md": MEM_HEAD + "## Checks [P2]\n" + notes}, budget=10 ** 6)
    calls = {"n": 0}
    real = duplicates._same_fact

    def counting(*a):
        calls["n"] += 1
        return real(*a)

    monkeypatch.setattr(duplicates, "_same_fact", counting)
    dream(ws, NOW, dry_run=True)
    assert calls["n"] <= 600  # about one pair per entry at most; every pair of the 120 (7,140) before


def test_an_error_is_over_when_what_failed_succeeds_on_two_days(tmp_path):
    entry = "- [P2] restic 夜間備份到 B2 一直失敗，只看到 unauthorized，原因待查 (2026-05-20)\n"
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## 問題 [P2]\n" + entry + "- [P2] Grafana alert sync fails with 502, cause unknown "
                                                          "(2026-05-21)\n",
        **dict([log("2026-05-27", "換了 B2 的 application key，手動跑 restic 備份，成功。"),
                log("2026-05-29", "restic 夜間備份連續兩晚成功。"),
                log("2026-05-30", "Grafana alert sync succeeded once after the restart.")]),
    })
    report, opened = cycle(ws)
    text = read(ws)
    assert "一直失敗" not in text                      # two days of success: the error is over
    assert "Grafana alert sync fails with 502" in text  # one success is no fix


def test_session_memory_turns_keep_their_speakers(tmp_path):
    from memgit.dream.collect import _log_observations

    text = ("# Session: 2026-05-30 19:44:06 UTC\n\n- **Session Key**: agent:main:main\n\n## Conversation Summary\n\n"
            "user: Read HEARTBEAT.md if it exists (workspace context). If nothing needs attention, reply HEARTBEAT_OK.\n"
            "user: [Telegram Jw id:77 +19m 2026-05-30 01:22 GMT+8] 以后日报改到晚上九点发\n[message_id: 18]\n"
            "assistant: 好的，Jw！\n\n以后日报改到晚上九点。\n"
            "user: System: [2026-05-30 03:02:11 GMT+8] Model switched.\n\n[Telegram Jw id:77 +1s 2026-05-30 03:02 GMT+8] hi\n")
    obs = _log_observations("memory/2026-05-30-1944.md", date(2026, 5, 30), text)
    turns = [(o.role, o.text) for o in obs if o.role != "log"]
    assert turns == [("user", "以后日报改到晚上九点发"), ("assistant", "好的，Jw！ 以后日报改到晚上九点。"), ("user", "hi")]
    assert obs[-1].raw.startswith("user: System:")  # the cited line is the turn's first line, as written


def test_the_assistants_turn_in_a_session_memory_log_is_not_the_persons_state(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## About Jw\n- **近况**：这几天很忙，晚点回消息\n",
        **dict([log("2026-05-26", "整理了周报"), log("2026-05-28", "周报已发")]),
        "memory/2026-05-31-0300.md": "# Session: 2026-05-31 03:00:00 UTC\n\n## Conversation Summary\n\n"
                                     "user: [Telegram Jw id:77 +9m 2026-05-31 03:01 GMT+8] hi\n"
                                     "assistant: Jw 好！凌晨 3 点还在忙啊 😄\n",
    })
    report = dream(ws, NOW)
    assert [p["op"] for p in report.proposals] == ["prune"]


def test_a_changed_preference_keeps_the_details_the_person_kept(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD,
        "USER.md": "# USER\n\n## Preferences\n- [P1] 週報每週五 17:00 寄到 ops@example.com，用 PDF 附件 (2026-04-01)\n",
        **dict([session("w1", ("2026-05-30T20:10:00+08:00", "user", "週報以後改成網頁連結，PDF 附件太佔信箱了。"),
                        ("2026-05-30T20:10:30+08:00", "assistant", "好的，週報改成網頁連結。時間和收件人要改嗎？"),
                        ("2026-05-30T20:11:00+08:00", "user", "不用，還是週五 17:00、還是 ops@example.com。"))]),
    })
    cycle(ws)
    user = (ws.root / "USER.md").read_text(encoding="utf-8")
    assert "- [P1] 週報每週五 17:00 寄到 ops@example.com，用 網頁連結 (2026-05-30)\n" in user


def test_an_undated_session_is_read_for_a_window_after_the_machines_clock_and_skipped_when_older_than_its_window(tmp_path):
    import os
    from datetime import timedelta
    from memgit.dream.collect import collect
    later = date.today() + timedelta(days=60)
    turn = (f"{(later - timedelta(days=2)).isoformat()}T09:00:00+00:00", "user", "from now on bullet points please")
    ws = make(tmp_path, {"MEMORY.md": MEM_HEAD, **dict([session("chat", turn)])})
    # a dream run for a later day: the file's time says nothing of when it was written
    assert collect(ws, later, 7).sessions_read == {"sessions/chat.jsonl"}
    # a window in the past, the undated file last written long before it: not read
    past = date(2026, 1, 10)
    old = (ws.root / "sessions" / "chat.jsonl")
    old.write_text(json.dumps({"ts": "2026-01-08T09:00:00+00:00", "session": "chat", "role": "user",
                               "text": "from now on bullet points please"}) + "\n", encoding="utf-8")
    stamp = datetime(2025, 6, 1).timestamp()
    os.utime(old, (stamp, stamp))
    assert collect(ws, past, 7).sessions_read == set()


def test_a_run_id_never_holds_three_digits_in_a_row():
    from memgit.dream import _run_id
    ids = [_run_id(f"seed {k}") for k in range(2000)]
    assert all(re.fullmatch(r"[0-9a-f]{10}", i) and not re.search(r"\d{3}", i) for i in ids)
    assert len(set(ids)) == len(ids)


def test_a_proposal_id_and_the_journal_s_hashes_never_hold_three_digits_in_a_row():
    # (a full unseen run once flagged a door code, 2680, read into an approval's commit hash in the journal)
    from memgit.journal import _spaced
    from memgit.ops import Operation
    ops = [Operation("prune", "MEMORY.md", (f"- [P1] entry {k} (2026-01-01)",)) for k in range(2000)]
    ids = [o.id for o in ops]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) and not re.search(r"\d{3}", i) and i in o.fingerprint
               for i, o in zip(ids, ops))
    assert len(set(ids)) == len(ids)
    sha = "7c54bb959017c28e2875b40c1f1188358d150145"
    assert not re.search(r"\d{3}", _spaced(sha)) and _spaced(sha).replace("x", "") == sha
    assert not re.search(r"(?<![0-9a-z])\d+(?:\.\d+)?(?![0-9a-z])", _spaced("ab12315cd"))  # (no figure made: "31.5")
    assert _spaced([sha, None]) == [_spaced(sha), None] and _spaced("approve 2680") == "approve 2680"
