"""memgit janitor: fold old event months, move stale P1 sections to reference/, compress old P2
entries; every change a proposal, P0 and protected sections untouched, nothing lost."""
from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from memgit import proposals
from memgit.adopt import init
from memgit.lifecycle.janitor import conclusion, janitor
from memgit.lifecycle.priority import is_events, slug
from memgit.memory import Document, Section
from memgit.workspace import Workspace

NOW = date(2026, 6, 1)

P0_LINES = ["- Name: Ada Chen, prefers short answers (2025-01-01)",
            "- Timezone: Asia/Shanghai (2025-01-02)"]
CASES = ["- Case: deploy rollback took two hours (2025-01-05)",
         "- Case: cron drift after DST (2025-01-06)"]
EVENTS = ["- [P1] Hermes gateway 首次部署到 h1 (2025-06-14)",
          "- [P1] 持仓日报上线，第一份 08:30 自动生成 (2025-07-03)",
          "- [P1] restic 从 B2 恢复演练成功，用时 40 分钟 (2025-07-21)",
          "- [P1] Blog migrated from Jekyll to Astro (2025-08-15)",
          "- [P1] Cockpit v1 shipped to the team (2025-08-30)",
          "- [P1] Cockpit v2 design started (2026-05-02)",
          "- [P1] Cockpit v2 beta (2026-05-20)"]
TOOLS = ["- Playwright MCP pinned to 0.0.41 because 0.0.42 broke screenshots (2025-10-10)",
         "- yt-dlp 下載 podcast 用 --cookies-from-browser firefox (2025-10-03)"]
ZH_TOOLS = ["- 输入法用 Rime 小鹤双拼，候选词九个 (2025-09-01)",
            "- 终端字体用 Sarasa Mono SC，字号十四 (2025-09-02)"]
WORKFLOWS = ["- Weekly review every Friday 17:00, output goes to notes/weekly/ (2025-09-06)",
             "- Never push to main without running `make check` (2025-08-01)"]
RECENT = ["- Moved DNS to Cloudflare (2026-05-10)", "- Backups go to B2 nightly (2025-01-01)"]
NOTES = [("- [P2] Compared three caching layers for the API, measured p99 for a week → Redis caching wins "
          "(2026-03-01)"),
         "- [P2] Benchmarked two TTS engines; Qwen3 was faster so we keep Qwen3-TTS (2026-03-02)",
         "- [P2] 测试了三种向量库，写了对比表，跑了一周基准，结论：先用 sqlite-vec (2026-03-03)",
         "- [P2] Whisper on M4 is slow (2026-03-04)",
         "- [P2] Compared two fonts for the blog, one too thin → keep Inter (2026-05-25)"]


def block(title: str, lines: list[str]) -> str:
    return f"## {title}\n" + "".join(line + "\n" for line in lines) + "\n"


MEMORY_MD = ("# MEMORY\n\n" + block("Identity [P0]", P0_LINES) + block("Agent Cases", CASES)
             + block("Events [P1]", EVENTS) + block("Tools [P1]", TOOLS) + block("工具设置 [P1]", ZH_TOOLS)
             + block("Workflows [P1]", WORKFLOWS) + block("Recent [P1]", RECENT) + block("Notes [P2]", NOTES))
LOG = "# 2026-05-20\n\n- 10:00 Ran make check before the push, then the weekly review\n"
TOML = """\
[memory]
files = ["MEMORY.md"]
protected_sections = ["Agent Cases"]

[capacity]
"MEMORY.md" = 6000
"""


def make_ws(root: Path, files: dict[str, str], toml: str) -> Workspace:
    for rel, text in {**files, "memgit.toml": toml}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode("utf-8"))
    init(root)
    return Workspace(root)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_ws(tmp_path / "ws", {"MEMORY.md": MEMORY_MD, "memory/2026-05-20.md": LOG}, TOML)


def by_rule(report, name):
    return [p for p in report.proposals if p["rule"] == name]


def memory(ws: Workspace) -> list[str]:
    return (ws.root / "MEMORY.md").read_text(encoding="utf-8").splitlines()


def test_old_event_months_fold_into_one_line_each_and_the_lines_go_to_reference(ws: Workspace):
    folds = by_rule(janitor(ws, NOW), "events-fold")
    # 2025-06 has one entry (nothing to fold), 2026-05 is recent
    assert [(p["dest"], p["count"]) for p in folds] == [("reference/events.md", 2), ("reference/events.md", 2)]
    result = proposals.approve(ws, [p["id"] for p in folds])
    assert not result.refused
    lines = memory(ws)
    assert "- [P1] 2025-07: 持仓日报上线，第一份 08:30 自动生成; restic 从 B2 恢复演练成功，用时 40 分钟" in lines
    assert "- [P1] 2025-08: Blog migrated from Jekyll to Astro; Cockpit v1 shipped to the team" in lines
    for kept in (EVENTS[0], EVENTS[5], EVENTS[6]):
        assert kept in lines
    events = lines[lines.index("## Events [P1]") + 1:lines.index("## Tools [P1]") - 1]
    assert events == [EVENTS[0], "- [P1] 2025-07: 持仓日报上线，第一份 08:30 自动生成; restic 从 B2 恢复演练成功，用时 40 分钟",
                      "- [P1] 2025-08: Blog migrated from Jekyll to Astro; Cockpit v1 shipped to the team",
                      EVENTS[5], EVENTS[6]]
    ref = (ws.root / "reference" / "events.md").read_text(encoding="utf-8").splitlines()
    for original in EVENTS[1:5]:
        assert original in ref, "the full original lines are kept in reference/"
    assert "## Events 2025-07 (from MEMORY.md) [P1]" in ref


def test_every_word_of_a_folded_fact_stays_in_the_fold_line(ws: Workspace):
    report = janitor(ws, NOW)
    for p in by_rule(report, "events-fold"):
        op = proposals.get(ws, p["id"]).op
        fold = op.extra["leave"]
        for target in op.targets:
            words = re.sub(r"^- \[P1\] | \(\d{4}-\d{2}-\d{2}\)$", "", target)
            assert words in fold


def test_a_chinese_timeline_heading_folds_into_a_chinese_reference_file(tmp_path: Path):
    text = ("# MEMORY\n\n## 大事记\n- 博客迁移到 Astro (2025-08-15)\n- Cockpit v1 上线 (2025-08-30)\n"
            "\n## 時間線 [P1]\n- 第一次部署 (2025-05-01)\n- 第二次部署 (2025-05-09)\n")
    ws = make_ws(tmp_path / "ws", {"MEMORY.md": text}, TOML)
    folds = by_rule(janitor(ws, NOW), "events-fold")
    assert sorted(p["dest"] for p in folds) == ["reference/大事记.md", "reference/時間線.md"]
    proposals.approve(ws, [])
    lines = memory(ws)
    assert "- [P1] 2025-08: 博客迁移到 Astro; Cockpit v1 上线" in lines
    assert "- [P1] 2025-05: 第一次部署; 第二次部署" in lines
    assert "- 第一次部署 (2025-05-01)" in (ws.root / "reference" / "時間線.md").read_text(encoding="utf-8")


def test_stale_unreferenced_p1_sections_move_to_reference_with_an_index_line(ws: Workspace):
    moves = by_rule(janitor(ws, NOW), "p1-reference")
    # Workflows is mentioned in the log of 2026-05-20, Recent has a recent entry
    assert sorted(p["dest"] for p in moves) == ["reference/tools.md", "reference/工具设置.md"]
    proposals.approve(ws, [p["id"] for p in moves])
    lines = memory(ws)
    assert "- [P1] Tools: see reference/tools.md" in lines
    assert "- [P1] 工具设置: see reference/工具设置.md" in lines
    for moved in TOOLS + ZH_TOOLS:
        assert moved not in lines
    assert all(t in (ws.root / "reference/tools.md").read_text(encoding="utf-8").splitlines() for t in TOOLS)
    assert all(t in (ws.root / "reference/工具设置.md").read_text(encoding="utf-8").splitlines()
               for t in ZH_TOOLS)
    for stays in WORKFLOWS + RECENT:
        assert stays in lines


def test_old_p2_entries_compress_into_their_conclusion_keeping_the_date(ws: Workspace):
    comp = by_rule(janitor(ws, NOW), "p2-compress")
    got = sorted(proposals.get(ws, p["id"]).op.text for p in comp)
    assert got == sorted(["[P2] Redis caching wins (2026-03-01)", "[P2] we keep Qwen3-TTS (2026-03-02)",
                          "[P2] 测试了三种向量库 → 先用 sqlite-vec (2026-03-03)"])
    proposals.approve(ws, [p["id"] for p in comp])
    lines = memory(ws)
    assert "- [P2] Redis caching wins (2026-03-01)" in lines
    assert NOTES[3] in lines and NOTES[4] in lines, "one clause, or too recent: unchanged"


@pytest.mark.parametrize("body, want", [
    ("Compared three caching layers for the API, measured p99 → Redis caching wins", "Redis caching wins"),
    ("Benchmarked two TTS engines; Qwen3 was faster so we keep Qwen3-TTS", "we keep Qwen3-TTS"),
    ("测试了三种向量库，写了对比表，跑了一周基准，结论：先用 sqlite-vec", "测试了三种向量库 → 先用 sqlite-vec"),
    ("試了三種向量庫，每個都跑了一週的基準測試，太慢，還是用 sqlite-vec 比較穩",
     "試了三種向量庫 → 還是用 sqlite-vec 比較穩"),
    ("Tried Zed, Helix and Kakoune for a month each so I settled on Helix", "I settled on Helix"),
    ("测试了三种向量库，结论：先用 sqlite-vec", None),   # only reworded, not compressed
    ("Tried the new GC flags => no gain", None),
    ("试过 Whisper large-v3 做 STT，M4 上太慢，暂时不用", None),
    ("Whisper on M4 is slow", None),
    ("Tried Zed editor for a week, back to helix", None),
])
def test_conclusion(body, want):
    assert conclusion(body) == want
    if want:
        assert conclusion(want) is None, "a conclusion is a fixed point"


def test_p0_and_protected_sections_never_change(ws: Workspace):
    janitor(ws, date(2030, 1, 1))   # everything is old by then
    proposals.approve(ws, [])
    lines = memory(ws)
    i = lines.index("## Identity [P0]")
    assert lines[i + 1:i + 3] == P0_LINES
    i = lines.index("## Agent Cases")
    assert lines[i + 1:i + 3] == CASES


def test_nothing_is_lost_and_a_second_run_proposes_nothing(ws: Workspace, git):
    first = janitor(ws, NOW)
    assert len(first.made) == 7
    assert janitor(ws, NOW).made == [], "the open proposals already hold every change"
    proposals.approve(ws, [])
    after = janitor(ws, NOW)
    assert after.made == [] and after.proposals == [], "compacted memory is a fixed point"
    files = " ".join(ws.repo.read(ws.main(), p).decode("utf-8")
                     for p in ws.repo.list_files(ws.main()) if p.endswith(".md"))
    for line in EVENTS + TOOLS + ZH_TOOLS + WORKFLOWS + RECENT + P0_LINES + CASES:
        assert line in files, line
    root = git(ws.root, "rev-list", "--max-parents=0", "main").strip()
    history = git(ws.root, "log", "-p", "--first-parent", "--diff-merges=first-parent", f"{root}..main")
    for line in NOTES[:3]:
        assert "\n-" + line + "\n" in history, "a compressed entry's full text stays in the approvals' history"


def test_revert_undoes_a_fold_and_approve_refuses_a_changed_entry(ws: Workspace):
    folds = by_rule(janitor(ws, NOW), "events-fold")
    proposals.approve(ws, [folds[0]["id"]])
    proposals.revert(ws, folds[0]["id"])
    assert (ws.root / "MEMORY.md").read_text(encoding="utf-8") == MEMORY_MD
    assert not (ws.root / "reference" / "events.md").exists()
    # the agent edits an entry of the other month: its fold no longer applies
    text = MEMORY_MD.replace("Cockpit v1 shipped to the team", "Cockpit v1 shipped to everyone")
    (ws.root / "MEMORY.md").write_text(text, encoding="utf-8")
    result = proposals.approve(ws, [folds[1]["id"]])
    assert result.approved == [] and "changed or vanished" in result.refused[0][1]
    assert (ws.root / "MEMORY.md").read_text(encoding="utf-8") == text


def test_slug_and_events_headings():
    assert slug("Agent Cases") == "agent-cases"
    assert slug("工具设置") == "工具设置"
    assert slug("Tools & Settings (2025)") == "tools-settings-2025"
    assert slug("!!!") == "section"
    for title, yes in (("Events", True), ("Timeline", True), ("Project history", True), ("大事记", True),
                       ("時間線", True), ("时间线", True), ("大事記", True), ("Tools", False),
                       ("Eventually consistent stores", False), ("Historyless", False)):
        assert is_events(Section(title, 2, 0, 1, None, "P1")) is yes, title


def test_entries_holding_secrets_are_left_alone(tmp_path: Path):
    text = MEMORY_MD.replace(TOOLS[1], TOOLS[1] + "\n- staging db password: hunter2-Xq9!zz (2025-10-04)")
    ws = make_ws(tmp_path / "ws", {"MEMORY.md": text, "memory/2026-05-20.md": LOG}, TOML)
    report = janitor(ws, NOW)
    assert "reference/tools.md" not in [p["dest"] for p in by_rule(report, "p1-reference")]
    assert any("sensitive" in w for w in report.warnings)
    assert "hunter2" not in json.dumps(report.to_dict(), ensure_ascii=False)


def test_hermes_files_only_get_p2_compression(tmp_path: Path):
    text = ("[P2] Compared three caching layers for the API, measured p99 → Redis caching wins (2026-03-01)\n"
            "§\nUser prefers Rime (2025-01-01)\n")
    ws = make_ws(tmp_path / "ws", {"MEMORY.md": text}, TOML)
    report = janitor(ws, NOW)
    assert [p["rule"] for p in report.proposals] == ["p2-compress"]
    proposals.approve(ws, [])
    assert (ws.root / "MEMORY.md").read_text(encoding="utf-8") == (
        "[P2] Redis caching wins (2026-03-01)\n§\nUser prefers Rime (2025-01-01)\n")
    assert Document("MEMORY.md", (ws.root / "MEMORY.md").read_bytes()).hermes


def test_cli_janitor(ws: Workspace, run_cli):
    code, out, err = run_cli(ws, "janitor", "--now", NOW.isoformat(), "--dry-run", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["command"] == "janitor" and len(data["proposals"]) == 7
    assert all(p["id"] is None and p["status"] == "dry-run" for p in data["proposals"])
    code, out, err = run_cli(ws, "janitor", "--now", NOW.isoformat())
    assert code == 0, err
    assert "proposed 7 change(s)" in out and "Review with `memgit proposals`" in out
    code, out, _ = run_cli(None, "janitor", "--help")
    assert code == 0 and "Example: memgit janitor" in out


def test_standing_preferences_and_the_user_profile_never_move_to_reference(tmp_path: Path):
    prefs = ["- Answers short, in 中文 unless I write English (2025-01-03)",
             "- 報告用表格，不要長段落 (2025-01-04)"]
    user = "# USER\n\n" + block("Work [P1]", ["- Runs a two-person studio in Taipei (2025-01-02)",
                                               "- 每週五下午不開會 (2025-01-05)"])
    toml = TOML.replace('files = ["MEMORY.md"]', 'files = ["MEMORY.md", "USER.md"]') + '"USER.md" = 3000\n'
    ws = make_ws(tmp_path / "ws", {
        "MEMORY.md": "# MEMORY\n\n" + block("Preferences [P1]", prefs) + block("Tools [P1]", TOOLS)
                     + block("偏好 [P1]", ["- 回覆先給結論 (2025-01-06)", "- 週報寄到 Notion (2025-01-07)"]),
        "USER.md": user, "memory/2026-05-20.md": LOG}, toml)
    moves = by_rule(janitor(ws, NOW), "p1-reference")
    assert [p["dest"] for p in moves] == ["reference/tools.md"]  # the stale tool notes still move
