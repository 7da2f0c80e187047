"""memgit.recall and `memgit recall`: ranked search over memory, reference/, archives and logs,
the recall cache, and the wake check that `memgit approve` runs."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memgit import proposals, recall
from memgit.adopt import init
from memgit.ops import Operation
from memgit.workspace import Workspace


def write(root: Path, rel: str, text: str | bytes, age: float | None = None) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    if age is not None:  # an old file: past the racy window, so the cache keeps it
        t = time.time() - age
        os.utime(p, (t, t))
    return p


def search(ws: Workspace, query: str, k: int = 10, warnings: list[str] | None = None):
    return recall.recall(ws, [query], k, warnings)[0]


def where(hits) -> list[tuple[str, int]]:
    return [(h.path, h.line) for h in hits]


# -- what is searched, and what a hit holds ---------------------------------------------
def test_hit_is_the_whole_entry_as_written_with_its_tag(workspace):
    hits = search(workspace, "Cockpit push")
    top = hits[0]
    assert (top.path, top.line) in {("MEMORY.md", 9), ("memory/2026-11-29.md", 3), ("sessions/2026-11-29-a1.jsonl", 1)}
    entry = next(h for h in hits if h.path == "MEMORY.md")
    assert entry.text == "- [P1] Cockpit v1 待 push，侧栏的 UI bug 修完就上 (2026-11-02)"
    assert entry.line == 9
    log = next(h for h in hits if h.path == "memory/2026-11-29.md")
    assert log.text == "- 09:10 Cockpit v1 pushed to GitHub; 侧栏 bug 已修复"
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert set(top.to_dict()) == {"path", "line", "text", "score"}


def test_traditional_query_finds_simplified_text_and_the_reverse(workspace):
    assert ("MEMORY.md", 6) in where(search(workspace, "部署目標"))          # 部署目标 in MEMORY.md
    assert ("MEMORY.md", 11) in where(search(workspace, "落地页 文案"))      # 落地頁文案 in MEMORY.md
    hits = search(workspace, "會議紀要")                                      # 繁體 in USER.md
    assert hits[0].path == "USER.md" and "會議紀要" in hits[0].text


def test_versions_and_paths_are_whole_terms(workspace):
    write(workspace.root, "memory/2026-11-28.md",
          "# 2026-11-28\n\n- 10:00 relinked ~/.local/bin/gws after the updater\n- 11:00 exporter 2.4.1 is fine\n")
    hits = search(workspace, "0.0.41")
    assert hits and hits[0].text.startswith("- Playwright MCP pinned to 0.0.41")
    assert where(search(workspace, "~/.local/bin/gws")) == [("memory/2026-11-28.md", 3)]
    assert search(workspace, "2.4") == []           # a version is not a prefix of another


def test_reference_archives_and_archived_logs_are_searched(workspace):
    root = workspace.root
    write(root, "reference/deploy.md", "# Deploy\n\n- [P1] The blue-green switch lives in /etc/nginx/conf.d/bg.conf\n")
    write(root, "memory/archive-2025-12/2025-12-03.md",
          "# 2025-12-03\n\n- 09:00 chat\n- 10:00 Quokka benchmark finished in 41 minutes\n")
    write(root, "memory/archive-2025-12/MEMORY.archived.md",
          "## From MEMORY.md, Notes (archived 2026-01-15)\n\n- [P2] Tried the Quokka editor for a day (2025-11-02)\n")
    write(root, "memory/archive-2025-12/nested/deeper.md", "- Quokka nested note\n")
    got = where(search(workspace, "quokka"))
    assert set(got) == {("memory/archive-2025-12/2025-12-03.md", 4),
                        ("memory/archive-2025-12/MEMORY.archived.md", 3),
                        ("memory/archive-2025-12/nested/deeper.md", 1)}
    assert where(search(workspace, "blue-green")) == [("reference/deploy.md", 3)]


def test_multiline_entry_is_one_hit_and_prose_lines_are_hits(tmp_path):
    root = tmp_path / "ws"
    write(root, "MEMORY.md", "# MEMORY\n\nSome prose about the Walrus cluster.\n\n## Tools [P1]\n"
                             "- [P1] Walrus backup steps:\n  1. stop the writer\n  2. snapshot the volume\n"
                             "- [P1] Unrelated entry\n")
    write(root, "USER.md", "# USER\n")
    init(root)
    hits = search(Workspace(root), "walrus snapshot")
    assert hits[0].line == 6
    assert hits[0].text == ("- [P1] Walrus backup steps:\n  1. stop the writer\n  2. snapshot the volume")
    assert ("MEMORY.md", 3) in where(hits)
    assert search(Workspace(root), "tools") == []       # headings are structure, not hits


def test_hermes_section_sign_files_are_entries(tmp_path):
    root = tmp_path / "ws"
    write(root, "MEMORY.md", "User runs the Zephyr bot on a Pi\n§\nZephyr logs rotate weekly\nkept 4 weeks\n§\nOther\n")
    write(root, "USER.md", "Name: Ada\n")
    init(root)
    hits = search(Workspace(root), "zephyr rotate")
    assert hits[0].text == "Zephyr logs rotate weekly\nkept 4 weeks" and hits[0].line == 3


def test_recall_reads_the_working_tree_not_main(workspace):
    with (workspace.root / "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write("- [P2] Capybara sync added by the agent just now (2026-11-30)\n")
    hits = search(workspace, "capybara")
    assert [h.path for h in hits] == ["MEMORY.md"]
    assert b"Capybara" not in workspace.repo.read(workspace.main(), "MEMORY.md")


def test_single_unit_corpus_still_scores_positive(tmp_path):
    root = tmp_path / "ws"
    write(root, "MEMORY.md", "- Okapi alone\n")
    init(root)
    hits = search(Workspace(root), "okapi")
    assert where(hits) == [("MEMORY.md", 1)] and hits[0].score > 0


def test_k_limits_and_stopwords_find_nothing(workspace):
    assert len(search(workspace, "notion 502 sync mcp", k=2)) == 2
    assert search(workspace, "the and of") == []
    with pytest.raises(Exception, match="-k 0"):
        recall.recall(workspace, ["notion"], 0)


# -- what is never read or shown --------------------------------------------------------------
def test_symlinks_leading_out_of_the_workspace_are_not_followed(workspace, tmp_path):
    outside = tmp_path / "outside"
    write(outside, "2026-11-27.md", "- 10:00 Pangolin secret plans outside\n")
    write(outside, "ref/notes.md", "- Pangolin reference outside\n")
    (workspace.root / "memory" / "2026-11-27.md").symlink_to(outside / "2026-11-27.md")
    (workspace.root / "reference").symlink_to(outside / "ref")
    inside = write(workspace.root, "notes/real.md", "- Pangolin inside note\n")
    (workspace.root / "memory" / "2026-11-26.md").symlink_to(inside)
    warnings: list[str] = []
    hits = search(workspace, "pangolin", warnings=warnings)
    assert where(hits) == [("memory/2026-11-26.md", 1)]      # a link inside the workspace is fine
    assert any(w.startswith("memory/2026-11-27.md: a symlink leading outside") for w in warnings)
    assert any(w.startswith("reference: a symlink leading outside") for w in warnings)


def test_unreadable_files_are_skipped_with_a_warning(workspace):
    root = workspace.root
    write(root, "memory/2026-11-20.md", b"- 10:00 Ocelot \xff\xfe broken bytes\n")
    write(root, "memory/2026-11-21.md", b"\x00\x01binary Ocelot")
    write(root, "memory/2026-11-22.md", "- 10:00 Ocelot readable line\n")
    warnings: list[str] = []
    hits = search(workspace, "ocelot", warnings=warnings)
    assert where(hits) == [("memory/2026-11-22.md", 1)]
    assert "memory/2026-11-20.md: not valid UTF-8, not searched; save it as UTF-8." in warnings
    assert any(w.startswith("memory/2026-11-21.md: binary data") for w in warnings)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_file_without_read_permission_is_skipped(workspace):
    p = write(workspace.root, "memory/2026-11-20.md", "- 10:00 Ocelot line\n")
    p.chmod(0)
    warnings: list[str] = []
    try:
        assert search(workspace, "ocelot", warnings=warnings) == []
    finally:
        p.chmod(0o644)
    assert any(w.startswith("memory/2026-11-20.md: cannot be read") for w in warnings)


def test_secrets_are_redacted_in_hits_and_never_cached(workspace):
    secret = "hunter2-Xq9vLm3Rt"
    write(workspace.root, "memory/2026-11-25.md", f"- 10:00 Jaguar db password: {secret}\n", age=60)
    hits = search(workspace, "jaguar password")
    assert hits[0].text == "- 10:00 Jaguar db password: [REDACTED]"
    cache = workspace.repo.git_dir / "memgit" / recall.CACHE_NAME
    assert cache.is_file() and secret not in cache.read_text(encoding="utf-8")
    assert all(secret not in h.text for h in search(workspace, secret))


# -- the cache --------------------------------------------------------------------------
def _cache(ws: Workspace) -> dict:
    return json.loads((ws.repo.git_dir / "memgit" / recall.CACHE_NAME).read_text(encoding="utf-8"))


def test_cache_is_used_keyed_by_size_and_mtime_and_drops_vanished_files(workspace):
    root = workspace.root
    log = write(root, "memory/2026-11-24.md", "- 10:00 Narwhal deploy\n", age=3600)
    search(workspace, "narwhal")
    data = _cache(workspace)
    rec = data["files"]["memory/2026-11-24.md"]
    assert rec[0] == log.stat().st_size and rec[1] == log.stat().st_mtime_ns
    # the cache is really read: a planted text (same key) comes back
    rec[3][0][1] = "- 10:00 Narwhal deploy (from the cache)"
    (workspace.repo.git_dir / "memgit" / recall.CACHE_NAME).write_text(json.dumps(data), encoding="utf-8")
    assert search(workspace, "narwhal")[0].text.endswith("(from the cache)")
    # a changed file (new mtime, same size) is read again
    write(root, "memory/2026-11-24.md", "- 10:00 Narwhal deplox\n", age=1800)
    assert search(workspace, "narwhal")[0].text == "- 10:00 Narwhal deplox"
    log.unlink()
    assert search(workspace, "narwhal") == []
    assert "memory/2026-11-24.md" not in _cache(workspace)["files"]


def test_a_file_written_just_now_is_searched_but_not_cached(workspace):
    write(workspace.root, "memory/2026-11-24.md", "- 10:00 Axolotl fresh\n")
    assert where(search(workspace, "axolotl")) == [("memory/2026-11-24.md", 1)]
    assert "memory/2026-11-24.md" not in _cache(workspace)["files"]


def test_a_broken_cache_is_ignored(workspace):
    state = workspace.repo.git_dir / "memgit"
    state.mkdir(exist_ok=True)
    (state / recall.CACHE_NAME).write_text("{not json", encoding="utf-8")
    write(workspace.root, "memory/2026-11-24.md", "- 10:00 Narwhal deploy\n", age=3600)
    assert where(search(workspace, "narwhal")) == [("memory/2026-11-24.md", 1)]
    assert "memory/2026-11-24.md" in _cache(workspace)["files"]


# -- the CLI ------------------------------------------------------------------------------
def test_cli_json_single_query(workspace, run_cli):
    code, out, err = run_cli(workspace, "recall", "notion", "502", "-k", "3", "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert isinstance(hits, list) and 1 <= len(hits) <= 3
    assert all(set(h) == {"path", "line", "text", "score"} for h in hits)
    assert any("502" in h["text"] for h in hits)


def test_cli_queries_file_gives_one_list_per_line_in_order(workspace, run_cli, tmp_path):
    qfile = tmp_path / "q.txt"
    qfile.write_text("Cockpit push\n\n會議紀要\nnothing-matches-zzz\n", encoding="utf-8")
    code, out, err = run_cli(workspace, "recall", "--queries", str(qfile), "--json")
    assert code == 0, err
    lists = json.loads(out)
    assert len(lists) == 4
    assert any("Cockpit" in h["text"] for h in lists[0])
    assert lists[1] == [] and lists[3] == []
    assert lists[2][0]["path"] == "USER.md"
    code, out, _ = run_cli(workspace, "recall", "--queries", "-", "--json", input="Cockpit\n")
    assert code == 0 and len(json.loads(out)) == 1


def test_cli_text_output_and_errors(workspace, run_cli, tmp_path):
    code, out, _ = run_cli(workspace, "recall", "Cockpit")
    assert code == 0 and "MEMORY.md:9" in out and "    - [P1] Cockpit v1" in out
    code, out, _ = run_cli(workspace, "recall", "zzzqqq")
    assert code == 0 and out.strip() == "No hits."
    code, _, err = run_cli(workspace, "recall")
    assert code == 1 and err.startswith("Error: give either QUERY words or --queries FILE")
    code, _, err = run_cli(workspace, "recall", "x", "--queries", str(tmp_path / "q.txt"))
    assert code == 1 and "Error:" in err
    code, _, err = run_cli(workspace, "recall", "x", "-k", "0")
    assert code == 2 and "-k" in err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\xfa")
    code, _, err = run_cli(workspace, "recall", "--queries", str(bad))
    assert code == 1 and "not UTF-8" in err and "Traceback" not in err


def test_cli_warns_on_stderr_and_still_answers(workspace, run_cli):
    write(workspace.root, "memory/2026-11-20.md", b"- \xff Ocelot\n")
    code, out, err = run_cli(workspace, "recall", "Cockpit", "--json")
    assert code == 0 and json.loads(out)
    assert "Warning: memory/2026-11-20.md: not valid UTF-8" in err


# -- the wake check ---------------------------------------------------------------------
def _drowned_workspace(tmp_path: Path) -> Workspace:
    """A daily status line repeated for two weeks among other log lines, and many [P1] entries."""
    root = tmp_path / "ws"
    entries = "".join(f"- [P1] Project{i} runs release r{i} on host{i} (2026-04-{i:02d})\n" for i in range(1, 21))
    write(root, "MEMORY.md", "# MEMORY\n\n## Projects [P1]\n" + entries)
    write(root, "USER.md", "# USER\n\n## Identity [P0]\n- Name: Ada\n")
    for d in range(1, 15):
        write(root, f"memory/2026-05-{d:02d}.md",
              f"# 2026-05-{d:02d}\n\n- 09:00 Nimbus scheduler, Atlas gateway, Beacon indexer: all green\n"
              f"- 12:00 lunch note {d} about topic{d}\n- 15:00 read item{d} and wrote draft{d}\n"
              f"- 18:00 evening walk number{d}\n")
    init(root)
    return Workspace(root)


DROWNED = "[P1] Nimbus scheduler, Atlas gateway, Beacon indexer: all green (2026-05-14)"


def _propose(ws: Workspace, op: Operation):
    with ws.repo.lock():
        ws.prepare()
        return proposals.create(ws, [op])[0]


def test_wake_check_passes_for_an_approved_consolidation_and_refresh(workspace):
    p1 = _propose(workspace, Operation("consolidate", "MEMORY.md", (), text="[P1] Gateway moved to Caddy 2.8 (2026-11-30)",
                                        section="Projects"))
    p2 = _propose(workspace, Operation("refresh", "MEMORY.md",
                                        ("- [P1] Cockpit v1 待 push，侧栏的 UI bug 修完就上 (2026-11-02)",),
                                        text="[P1] Cockpit v1 已上线 (2026-11-29)"))
    p3 = _propose(workspace, Operation("prune", "MEMORY.md",
                                        ("- Tried Zed editor for a week, back to helix (2026-10-07)",)))
    r = proposals.approve(workspace, [p1.id, p2.id, p3.id])
    assert len(r.approved) == 3
    assert recall.wake_check(workspace, r.approved) == []


def test_wake_check_reports_a_consolidation_drowned_by_the_logs(tmp_path):
    ws = _drowned_workspace(tmp_path)
    p = _propose(ws, Operation("consolidate", "MEMORY.md", (), text=DROWNED, section="Projects"))
    r = proposals.approve(ws, [p.id])
    assert recall.wake_check(ws, r.approved) == [p.id]
    # why: its key terms are the status line's, and fourteen shorter log lines outrank it
    index = recall.build_index(ws)
    key = index.key_terms(DROWNED)
    assert "p1" not in key and len(key) == 5
    assert all(h.path.startswith("memory/") for h in index.search_terms(key, 10))


def test_wake_check_reports_an_approved_entry_the_agent_replaced(workspace):
    p = _propose(workspace, Operation("consolidate", "MEMORY.md", (), text="[P1] Kestrel proxy on h1 (2026-11-30)",
                                       section="Projects"))
    r = proposals.approve(workspace, [p.id])
    path = workspace.root / "MEMORY.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Kestrel proxy", "Kestrel gone"), encoding="utf-8")
    assert recall.wake_check(workspace, r.approved) == [p.id]


def test_approve_runs_the_wake_check_end_to_end(tmp_path, run_cli):
    ws = _drowned_workspace(tmp_path)
    code, out, err = run_cli(ws, "propose", "consolidate", "MEMORY.md", "--section", "Projects",
                             "--text", "[P1] Harbor exporter moved to the new NAS (2026-05-14)", "--json")
    assert code == 0, err
    good = json.loads(out)["id"]
    code, out, err = run_cli(ws, "approve", good, "--json")
    assert code == 0, err
    assert json.loads(out)["wake_check_missing"] == []
    code, out, err = run_cli(ws, "propose", "consolidate", "MEMORY.md", "--section", "Projects",
                             "--text", DROWNED, "--json")
    bad = json.loads(out)["id"]
    code, out, err = run_cli(ws, "approve", bad)
    assert code == 0
    assert f"Approved {bad}" in out
    assert f"Warning: wake check: recall does not find the change of {bad} by its own key terms." in err
    assert good not in err


def test_imported_sessions_are_searched_turn_by_turn_with_who_said_it(workspace):
    root = workspace.root
    write(root, "sessions/openclaw-g1.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [
        {"ts": "2026-11-28T10:00:00Z", "session": "g1", "role": "other", "speaker": "Lin",
         "text": "我們把 Zephyr 打包腳本移到 CI 了"},
        {"ts": "2026-11-28T10:01:00Z", "session": "g1", "role": "user",
         "text": "Zephyr packaging now runs in CI, token sk-ant-api03-" + "Q" * 40},
        "not json at all",
    ]))
    hits = search(workspace, "zephyr")
    assert {(h.path, h.line) for h in hits} == {("sessions/openclaw-g1.jsonl", 1), ("sessions/openclaw-g1.jsonl", 2)}
    texts = {h.line: h.text for h in hits}
    assert texts[1].startswith("Lin: ") and texts[2].startswith("user: ")
    assert "sk-ant-api03" not in texts[2] and "[REDACTED]" in texts[2]
    assert ("sessions/2026-11-29-a1.jsonl", 2) in where(search(workspace, "Pushed Cockpit GitHub"))
