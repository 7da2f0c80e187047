"""A version, model or tool that changes without a dotted `vX.Y`: one slot of an entry refreshed.

Each test builds a real workspace in a real git repo (as tests/test_dream.py does), dreams with the
offline engine, approves everything and checks memory afterwards. The change must be stated (not asked,
planned or denied), about the entry's subject, and name the one slot it moves; everything else in the
entry stays as it was written.
"""
from __future__ import annotations

from datetime import date

import pytest

from memgit import proposals
from memgit.dream import dream
from memgit.workspace import Workspace

from test_dream import _hermetic, make  # noqa: F401  (the autouse fixture is re-used)

NOW = date(2026, 6, 1)
HEAD = "# MEMORY\n\n## Environment [P0]\n- Host: a small VPS, agent runs under systemd\n\n"




def log(day: str, *lines: str) -> tuple[str, str]:
    return f"memory/{day}.md", f"# {day}\n\n" + "".join(f"- {10 + i}:00 {t}\n" for i, t in enumerate(lines))


def cycle(ws: Workspace, now: date = NOW):
    report = dream(ws, now)
    opened = proposals.list_proposals(ws)
    if opened:
        result = proposals.approve(ws, [])
        assert not result.refused, result.refused
    return report, opened


def read(ws: Workspace) -> str:
    return (ws.root / "MEMORY.md").read_text(encoding="utf-8")


def refreshed(tmp_path, entries: str, *days: tuple[str, str]) -> tuple[str, list]:
    ws = make(tmp_path, {"MEMORY.md": HEAD + "## Stack [P1]\n" + entries, **dict(days)})
    _, opened = cycle(ws)
    return read(ws), opened


# -- a version of any form -----------------------------------------------------------------
def test_integer_version_after_a_product_name_moves_in_an_arrow(tmp_path):
    text, opened = refreshed(tmp_path, "- [P1] Main database: PostgreSQL 15 on db01 (2026-03-01)\n",
                             log("2026-05-30", "db01: PostgreSQL 15 → 16, pg_upgrade went fine."))
    assert len(opened) == 1
    assert "- [P1] Main database: PostgreSQL 16 on db01 (2026-05-30)" in text
    assert "PostgreSQL 15" not in text


def test_upgrade_to_a_named_version_in_traditional_chinese(tmp_path):
    text, _ = refreshed(tmp_path, "- [P1] 前端 Next.js 14 + Tailwind (2026-03-01)\n",
                        log("2026-05-30", "前端升級到 Next.js 15，build 都過了。"))
    assert "- [P1] 前端 Next.js 15 + Tailwind (2026-05-30)" in text


def test_a_model_name_with_its_version_glued_on_in_simplified_chinese(tmp_path):
    text, _ = refreshed(tmp_path, "- [P1] 本地模型 qwen2.5，用 ollama 跑 (2026-03-01)\n",
                        log("2026-05-29", "模型从 qwen2.5 换成 qwen3 了，速度差不多。"))
    assert "- [P1] 本地模型 qwen3，用 ollama 跑 (2026-05-29)" in text


def test_a_mixed_line_moves_the_version_and_keeps_the_rest(tmp_path):
    text, _ = refreshed(tmp_path, "- [P1] CI 用 Node 18 跑测试 (2026-03-01)\n",
                        log("2026-05-30", "CI: upgraded Node from 18 to 20，全部通过"))
    assert "- [P1] CI 用 Node 20 跑测试 (2026-05-30)" in text


def test_only_the_entry_of_the_subject_named_is_refreshed(tmp_path):
    text, opened = refreshed(tmp_path, "- [P1] Blog frontend: Next.js 14 (2026-03-01)\n"
                                       "- [P1] Docs site: Next.js 14, static export (2026-03-01)\n",
                             log("2026-05-30", "Docs site upgraded to Next.js 15."))
    assert len(opened) == 1
    assert "Docs site: Next.js 15, static export" in text
    assert "Blog frontend: Next.js 14" in text


def test_a_line_about_a_compound_of_the_same_name_moves_nothing(tmp_path):
    # "orion-mobile" is another thing of the Orion family; and a line as late says staging stays
    text, opened = refreshed(tmp_path, "- [P1] Orion (web app) staging runs Node 18 (2026-03-01)\n",
                             log("2026-05-30", "orion-mobile 的 CI 升到 Node 22 了。"))
    assert opened == [] and "staging runs Node 18" in text
    (tmp_path / "b").mkdir()
    text, opened = refreshed(tmp_path / "b", "- [P1] Orion-Web staging runs Node 18 (2026-03-01)\n",
                             log("2026-05-30", "Orion-Web upgraded to Node 22."))
    assert "Orion-Web staging runs Node 22" in text


def test_a_version_move_said_not_to_touch_the_entry_on_the_same_day_moves_nothing(tmp_path):
    entry = "- [P1] Orion web staging runs Node 18, deploys via GitHub Actions (2026-03-01)\n"
    change = "Orion CI runners upgraded to Node 22."
    text, opened = refreshed(tmp_path, entry, log("2026-05-30", change, "Asked Lin: Orion staging still Node 18."))
    assert opened == [] and "runs Node 18" in text
    (tmp_path / "b").mkdir()
    text, _ = refreshed(tmp_path / "b", entry, log("2026-05-30", change))
    assert "Orion web staging runs Node 22" in text


# -- a chosen tool ---------------------------------------------------------------------------
def test_a_tool_replaced_in_traditional_chinese(tmp_path):
    text, _ = refreshed(tmp_path, "- [P1] Python 依賴用 pip 安裝 (2026-03-01)\n",
                        log("2026-05-30", "pip 換成 uv 了"))
    assert "- [P1] Python 依賴用 uv 安裝 (2026-05-30)" in text


def test_a_tool_swap_that_removes_the_entrys_file_takes_the_one_file_put_in_its_place(tmp_path):
    entry = "- [P1] Python deps are installed with pip + requirements.txt (2026-03-01)\n"
    text, _ = refreshed(tmp_path, entry, log("2026-05-30", "Python 依賴從 pip 換成 uv 了，requirements.txt 刪掉，uv.lock 已提交。"))
    assert "- [P1] Python deps are installed with uv + uv.lock (2026-05-30)" in text
    # the file removed with nothing named instead, or two files named: a person rewrites the entry
    for line in ("Switched pip to uv, requirements.txt deleted.",
                 "Switched pip to uv, requirements.txt deleted, uv.lock and pylock.toml committed."):
        (tmp_path / str(len(line))).mkdir()
        text, opened = refreshed(tmp_path / str(len(line)), entry, log("2026-05-30", line))
        assert opened == [] and "pip + requirements.txt" in text


def test_a_switch_naming_only_the_new_tool_takes_the_one_the_line_retires(tmp_path):
    entry = ("- [P1] 每期节目的摘要用本地 ollama 跑 llama3 生成 (2026-03-01)\n"
             "- [P1] 代码审查助手也用 llama3，先别动 (2026-03-01)\n")
    text, opened = refreshed(tmp_path, entry, log("2026-05-30", "周柏拍板：以后节目摘要统一换成 deepseek-r1，llama3 那套摘要流程停掉。"))
    assert len(opened) == 1 and "- [P1] 每期节目的摘要用本地 ollama 跑 deepseek-r1 生成 (2026-05-30)" in text
    assert "- [P1] 代码审查助手也用 llama3，先别动 (2026-03-01)" in text
    # the old tool never said to stop, or a plan: nothing moves
    for line in ("以后节目摘要统一换成 deepseek-r1，llama3 还留着备用。", "打算把节目摘要换成 deepseek-r1，llama3 停掉。"):
        (tmp_path / str(len(line))).mkdir()
        text, opened = refreshed(tmp_path / str(len(line)), entry, log("2026-05-30", line))
        assert opened == [] and "跑 llama3 生成" in text


def test_a_switch_to_a_tool_of_two_words_whose_old_one_is_unsubscribed(tmp_path):
    entry = ("- [P1] 合約用 Inkwell 線上簽，範本放在「標準合約」資料夾 (2026-03-01)\n"
             "- [P1] 問卷用 Tally 收 (2026-03-01)\n")
    text, opened = refreshed(tmp_path, entry, log("2026-05-30", "定案：之後合約全部改用 Paper Trail 簽，Inkwell 月底停訂"))
    assert len(opened) == 1 and "- [P1] 合約用 Paper Trail 線上簽，範本放在「標準合約」資料夾 (2026-05-30)" in text


@pytest.mark.parametrize("line, want", [
    ("Decision from Dana and Lee: release notes now come from Changesets on the build box.",
     "- [P1] Release notes are generated with Changesets and posted to the wiki (2026-05-30)"),
    ("发布说明现在改由 Changesets 生成，Towncrier 不用了。",
     "- [P1] Release notes are generated with Changesets and posted to the wiki (2026-05-30)"),
])
def test_what_a_job_is_now_done_with_replaces_the_one_tool_its_entry_uses(tmp_path, line, want):
    entry = ("- [P1] Release notes are generated with Towncrier and posted to the wiki (2026-03-01)\n"
             "- [P1] Changelog checks in CI come from Towncrier's check command (2026-03-01)\n")
    text, opened = refreshed(tmp_path, entry, log("2026-05-30", line))
    assert len(opened) == 1 and want in text
    assert "- [P1] Changelog checks in CI come from Towncrier's check command (2026-03-01)" in text


def test_what_another_job_is_now_done_with_or_a_question_moves_nothing(tmp_path):
    entry = "- [P1] Release notes are generated with Towncrier and posted to the wiki (2026-03-01)\n"
    for k, line in enumerate(("Invoices now come from Xero.", "Should release notes now come from Changesets?")):
        (tmp_path / str(k)).mkdir()
        text, opened = refreshed(tmp_path / str(k), entry, log("2026-05-30", line))
        assert opened == [] and "generated with Towncrier" in text


def test_switched_from_to_keeps_markup_and_tag(tmp_path):
    text, _ = refreshed(tmp_path, "- [P1] **TTS**: `Piper`, runs locally (2026-03-01)\n",
                        log("2026-05-31", "Switched the TTS from Piper to Kokoro, the voices are much better."))
    assert "- [P1] **TTS**: `Kokoro`, runs locally (2026-05-31)" in text


def test_replaced_with_in_english(tmp_path):
    text, _ = refreshed(tmp_path, "- web01 reverse proxy: nginx\n",
                        log("2026-05-30", "Replaced nginx with Caddy on web01."))
    assert "- web01 reverse proxy: Caddy\n" in text  # no date where the person wrote none


def test_switched_x_to_y_and_a_simplified_mixed_frame(tmp_path):
    text, opened = refreshed(tmp_path, "- [P1] Python deps are managed with pip (2026-03-01)\n"
                                       "- [P1] 语音合成 TTS 用 Piper (2026-03-01)\n",
                             log("2026-05-30", "Switched pip to uv for the deps."),
                             log("2026-05-31", "TTS 从 Piper 改用 Kokoro"))
    assert len(opened) == 2
    assert "Python deps are managed with uv (2026-05-30)" in text
    assert "语音合成 TTS 用 Kokoro (2026-05-31)" in text


# -- what must stay ----------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "should we move PostgreSQL 15 to 16?",          # a question
    "PostgreSQL 15 → 16？",
    "要不要把 PostgreSQL 升级到 16",
    "planning to upgrade PostgreSQL from 15 to 16 next week",   # a plan
    "考虑把 PostgreSQL 15 升级到 16",
    "打算下周把 PostgreSQL 从 15 升到 16",
    "not upgrading PostgreSQL from 15 to 16 yet",   # a negation
    "PostgreSQL 15 不升级到 16，pgvector 还不支持",
])
def test_a_question_plan_or_negation_moves_no_version(tmp_path, line):
    text, opened = refreshed(tmp_path, "- [P1] Main database: PostgreSQL 15 on db01 (2026-03-01)\n",
                             log("2026-05-30", line))
    assert opened == []
    assert "PostgreSQL 15 on db01 (2026-03-01)" in text


@pytest.mark.parametrize("line", [
    "not switching from pip to uv",
    "考虑把 pip 换成 uv",
    "考慮把 pip 換成 uv",
    "没有把 pip 换成 uv，太麻烦",
    "要不要把 pip 换成 uv？",
    "we'll replace pip with uv next month",
    "maybe switch from pip to uv",
    "rolled back from uv to pip",
])
def test_a_question_plan_or_negation_moves_no_tool(tmp_path, line):
    text, opened = refreshed(tmp_path, "- [P1] Python 依赖用 pip 安装 (2026-03-01)\n",
                             log("2026-05-30", line))
    assert opened == []
    assert "依赖用 pip 安装" in text


def test_a_different_subject_sharing_the_product_name_is_left_alone(tmp_path):
    text, opened = refreshed(tmp_path, "- [P1] 博客前端 Next.js 14 (2026-03-01)\n",
                             log("2026-05-30", "文档站升级到 Next.js 15"))
    assert opened == []
    assert "博客前端 Next.js 14" in text


def test_a_different_subject_sharing_the_old_tool_is_left_alone(tmp_path):
    text, opened = refreshed(tmp_path, "- [P1] TTS: Piper, runs locally (2026-03-01)\n",
                             log("2026-05-30", "The wiki search indexer switched from Piper to Kokoro."))
    assert opened == []
    assert "TTS: Piper" in text


def test_a_pinned_version_stays(tmp_path):
    text, opened = refreshed(tmp_path,
                             "- [P1] Claude Code pinned to 0.0.41 because 0.0.42 broke the hooks (2026-03-01)\n"
                             "- [P1] Main DB PostgreSQL 15, pinned: pgvector is not ready (2026-03-01)\n",
                             log("2026-05-29", "claude code 0.0.41 → 0.0.45 on the laptop"),
                             log("2026-05-30", "PostgreSQL 15 → 16 on the test box"))
    assert opened == []
    assert "pinned to 0.0.41 because" in text and "PostgreSQL 15, pinned" in text


def test_an_entry_naming_two_versions_is_left_alone(tmp_path):
    text, opened = refreshed(tmp_path, "- [P1] Node 18 on the build box, Node 20 on prod (2026-03-01)\n"
                                       "- [P1] 本地模型 qwen2.5，备用 qwen2 (2026-03-01)\n",
                             log("2026-05-30", "upgraded Node to 22"),
                             log("2026-05-31", "模型换成 qwen3 了"))
    assert opened == []
    assert "Node 18 on the build box, Node 20 on prod" in text and "qwen2.5，备用 qwen2" in text


def test_a_tool_inside_a_command_is_not_rewritten(tmp_path):
    text, opened = refreshed(tmp_path, "- [P1] Dev setup: `pip install -e .[dev]` (2026-03-01)\n",
                             log("2026-05-30", "pip 换成 uv 了"))
    assert opened == []
    assert "`pip install -e .[dev]`" in text


def test_an_assistant_turn_moves_nothing(tmp_path):
    import json
    turn = json.dumps({"ts": "2026-05-30T09:00:00+00:00", "session": "s1", "role": "assistant",
                       "text": "I switched the TTS from Piper to Kokoro for you."})
    text, opened = refreshed(tmp_path, "- [P1] TTS: Piper, runs locally (2026-03-01)\n",
                             ("sessions/s1.jsonl", turn + "\n"))
    assert opened == []
    assert "TTS: Piper" in text


@pytest.mark.parametrize("line", ["Switched TTS to Kokoro.", "Replaced TTS with Kokoro.", "Switched the TTS to Kokoro."])
def test_a_slot_named_without_its_old_value_moves_no_tool(tmp_path, line):
    text, opened = refreshed(tmp_path, "- [P1] Piper is the TTS engine, runs locally (2026-03-01)\n",
                             log("2026-05-30", line))
    assert opened == []
    assert "Piper is the TTS engine" in text


@pytest.mark.parametrize("line", ["changed the retries from 3 to 5", "set retries to 5", "moved retries to 5"])
def test_a_bare_number_is_a_version_only_when_a_release_moves(tmp_path, line):
    text, opened = refreshed(tmp_path, "- [P1] Fetcher retries 3 times before giving up (2026-03-01)\n",
                             log("2026-05-30", line))
    assert opened == []
    assert "retries 3 times" in text


def test_a_flow_of_arrows_moves_no_tool(tmp_path):
    text, opened = refreshed(tmp_path, "- [P1] Alerts go to Telegram (2026-03-01)\n",
                             log("2026-05-30", "Alerts: cron → Telegram → phone"))
    assert opened == []


LISTED = HEAD + ("## Render farm settings\n### Summary\n"
                 "- **Queues:** Blender 3.6 main, Houdini 19.5/Nuke 14 overflow, local GPU idle\n")


def test_a_labelled_list_restated_in_its_scope_is_refreshed_to_the_new_list(tmp_path):
    ws = make(tmp_path, {"MEMORY.md": LISTED, **dict([
        log("2026-05-30", "Audited the render farm settings file: configured queues are `blender-4.2`, "
                          "`houdini-20`, and `nuke-15` (checked with the farm CLI).")])})
    report, opened = cycle(ws)
    assert [p.op.op for p in opened] == ["refresh"]
    assert "- **Queues:** `blender-4.2`, `houdini-20`, `nuke-15` (2026-05-30)\n" in read(ws)
    assert "Blender 3.6 main" not in read(ws)


@pytest.mark.parametrize("line", [
    # another system's queues: nothing in the line names what the entry's headings are about
    "The print shop's configured queues are `a4-color`, `a3-mono`, and `poster`.",
    # asked, not stated as a list of values
    "Should the queues be blender-4.2 and houdini-20? Waiting for an answer.",
])
def test_a_list_out_of_scope_or_not_restated_changes_nothing(tmp_path, line):
    ws = make(tmp_path, {"MEMORY.md": LISTED, **dict([log("2026-05-30", line)])})
    _, opened = cycle(ws)
    assert opened == []


def test_two_different_lists_on_the_newest_day_change_nothing(tmp_path):
    ws = make(tmp_path, {"MEMORY.md": LISTED, **dict([log(
        "2026-05-30", "Render farm settings: configured queues are `blender-4.2`, `houdini-20`.",
        "Render farm settings after the rollback: queues are `blender-3.6`, `nuke-14`.")])})
    _, opened = cycle(ws)
    assert opened == []


def test_a_version_moved_by_someone_with_a_tool_refreshes_the_one_entry_naming_it(tmp_path):
    ws = make(tmp_path, {"MEMORY.md": HEAD + "## Databases [P1]\n- [P1] Billing DB runs MariaDB 10 on sql-3, "
                                             "hourly binlog backups (2026-04-02)\n- [P1] Cache is Valkey 8\n",
                         **dict([log("2026-05-30", "Ana ran mariadb-upgrade on sql-3 at night: billing DB moved "
                                                   "from MariaDB 10 to MariaDB 11, took 9 minutes.")])})
    _, opened = cycle(ws)
    assert [p.op.op for p in opened] == ["refresh"]
    assert "- [P1] Billing DB runs MariaDB 11 on sql-3, hourly binlog backups (2026-05-30)\n" in read(ws)


def test_a_tool_swap_that_also_removes_what_the_entry_names_is_left_to_a_person(tmp_path):
    ws = make(tmp_path, {"MEMORY.md": HEAD + "## Tooling [P1]\n- [P1] Site assets are built with gulp + "
                                             "gulpfile.js (2026-04-02)\n",
                         **dict([log("2026-05-30", "Site assets build switched from gulp to vite; gulpfile.js removed."),
                                    log("2026-05-31", "站点资源的构建从 gulp 换成 vite 了，gulpfile.js 删掉。")])})
    _, opened = cycle(ws)
    assert opened == []


def test_a_chinese_change_verb_with_its_aspect_particle_still_moves_the_tool(tmp_path):
    # 换成了 = 换成 + 了 (done): the particle is grammar, not part of the value
    from tests.test_rules import ctx
    from memgit.dream.rules import slot_changes

    mem = "## 系统\n- [P1] 库存系统的数据库是 MySQL，跑在 db-bj-3 (2026-05-01)\n"
    c = ctx(mem, [("2026-05-29", "迁移完成：库存系统数据库从 MySQL 换成了 PostgreSQL，还是在 db-bj-3 上")])
    texts = [x.op.text for x in slot_changes(c)]
    assert len(texts) == 1 and "PostgreSQL" in texts[0] and "db-bj-3" in texts[0] and "MySQL" not in texts[0]


def test_a_tool_of_several_capitalised_words_is_one_name(tmp_path):
    from tests.test_rules import ctx
    from memgit.dream.rules import slot_changes

    mem = "## Sites\n- [P1] The docs site for quillpad is hosted on Netlify (2026-05-01)\n"
    c = ctx(mem, [("2026-05-29", "Moved the quillpad docs site from Netlify to Cloudflare Pages, DNS updated.")])
    assert [x.op.text for x in slot_changes(c)] == [
        "[P1] The docs site for quillpad is hosted on Cloudflare Pages (2026-05-29)"]


def test_a_swapped_tool_does_not_inherit_the_old_ones_host(tmp_path):
    # the host belongs to the old tool: "Forgejo at git.home.lan" would be wrong, so a person rewrites it
    from tests.test_rules import ctx
    from memgit.dream.rules import slot_changes

    mem = "## Infra\n- [P1] Code for quillpad is kept on a self-hosted Gitea at git.home.lan (2026-05-01)\n"
    c = ctx(mem, [("2026-05-29", "Switched quillpad code from Gitea to Forgejo on the new box.")])
    assert slot_changes(c) == []
    kept = ctx(mem, [("2026-05-29", "Switched quillpad code from Gitea to Forgejo, still self-hosted at git.home.lan.")])
    (out,) = slot_changes(kept)
    assert "Forgejo at git.home.lan" in out.op.text
