"""`memgit review` driven through a real pseudo-terminal (pexpect), plus the diff
model it shares with the web page (word-level changes, side by side)."""
from __future__ import annotations

import os
import re
import sys
import textwrap
from pathlib import Path

import pexpect
import pytest

from memgit import proposals
from memgit.ops import Evidence, Operation
from memgit.review import common
from memgit.review.terminal import PROMPT

BLOG = "[P1] Blog runs on Astro, deploys on push via GitHub Actions (2026-08-15)"
BLOG_NEW = "[P1] Blog runs on Astro, deploys on push via Cloudflare Pages (2026-11-29)"
TUNNEL = "[P2] Temporary: Cloudflare tunnel for the demo on 2026-11-10 (2026-11-09)"
UV = "喜欢用 uv 管理 Python 环境 (2026-10-05)"


def _entry(ws, file: str, needle: str) -> str:
    return ws.document(file).entry(needle).text


@pytest.fixture
def three(workspace):
    """A refresh (with evidence), a prune and a consolidate, open on the workspace."""
    ops = [
        Operation("refresh", "MEMORY.md", (_entry(workspace, "MEMORY.md", "Blog runs on Astro"),), text=BLOG_NEW,
                  confidence=0.91, reason="the blog moved to Cloudflare Pages", origin="offline",
                  evidence=(Evidence("memory/2026-11-29.md:3", "Blog now deploys from Cloudflare Pages"),)),
        Operation("prune", "MEMORY.md", (_entry(workspace, "MEMORY.md", "Temporary: Cloudflare"),),
                  confidence=0.8, reason="the demo is over", origin="offline"),
        Operation("consolidate", "USER.md", (), text="Weekly review moved to Saturday (2026-11-29)",
                  section="Schedule", reason="asked on 2026-11-29"),
    ]
    made = proposals.create(workspace, ops)
    return workspace, {p.op.op: p.id for p in made}


def spawn(ws, *args: str, color: bool = False, env: dict | None = None) -> pexpect.spawn:
    e = dict(os.environ)
    if color:
        e.pop("NO_COLOR", None)
        e["TERM"] = "xterm-256color"
    e.update(env or {})
    return pexpect.spawn(sys.executable, ["-m", "memgit", "-C", str(ws.root), "review", *args], env=e,
                         encoding="utf-8", timeout=30, dimensions=(60, 220))


def shown_id(child: pexpect.spawn) -> str:
    child.expect(r"\[\d/\d\] ([0-9a-f]{8})")
    return child.match.group(1)


def finish(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return child.before


def main_file(ws, name: str) -> str:
    return ws.repo.read(ws.main(), name).decode()


def test_walks_each_proposal_approve_reject_skip(three) -> None:
    ws, ids = three
    before = ws.main()
    child = spawn(ws)
    acted = {}
    for _ in range(3):
        pid = shown_id(child)
        child.expect_exact(PROMPT)
        if pid == ids["refresh"]:
            child.send("a")
            child.expect(r"Approved .*main is now ([0-9a-f]{8})")
        elif pid == ids["prune"]:
            child.send("r")
            child.expect_exact("Reason (optional, remembered): ")
            child.sendline("the demo got extended")
            child.expect("Rejected")
        else:
            child.send("s")
        acted[pid] = True
    out = finish(child)
    assert len(acted) == 3
    assert "Reviewed 3 of 3: 1 approved, 0 edited and approved, 1 rejected, 1 skipped." in out
    assert ws.main() != before
    assert BLOG_NEW in main_file(ws, "MEMORY.md") and BLOG not in main_file(ws, "MEMORY.md")
    assert BLOG_NEW in (ws.root / "MEMORY.md").read_text()  # the agent's file follows main
    states = proposals.closed_states(ws)
    assert states[ids["refresh"]]["status"] == "approved"
    assert states[ids["prune"]]["status"] == "rejected"
    assert states[ids["prune"]]["reason"] == "the demo got extended"
    assert [p.id for p in proposals.list_proposals(ws)] == [ids["consolidate"]]


def test_header_evidence_and_word_highlights_without_colour(three) -> None:
    ws, ids = three
    child = spawn(ws, ids["refresh"])
    child.expect_exact(PROMPT)
    screen = child.before
    child.send("q")
    out = finish(child)
    assert "\x1b[" not in screen + out  # NO_COLOR is set by the hermetic seal
    assert "op: refresh" in screen and "file: MEMORY.md" in screen and "confidence: 0.91" in screen
    assert re.search(r"age: \d+[smhd]", screen)
    assert "reason: the blog moved to Cloudflare Pages" in screen
    assert 'memory/2026-11-29.md:3  "Blog now deploys from Cloudflare Pages"' in screen
    assert "-- [P1] Blog runs on Astro, deploys on push via [-GitHub Actions-] (2026-[-08-]-[-15-])" in screen
    assert "+- [P1] Blog runs on Astro, deploys on push via {+Cloudflare Pages+} (2026-{+11+}-{+29+})" in screen
    assert "Reviewed 0 of 1" in out and "1 not reviewed (quit)" in out


def test_colours_on_a_terminal_and_off_under_no_color(three) -> None:
    ws, ids = three
    child = spawn(ws, ids["refresh"], color=True)
    child.expect_exact(PROMPT)
    screen = child.before
    child.send("q")
    finish(child)
    assert "\x1b[31m-" in screen                                 # removed line red
    assert "\x1b[32m+" in screen                                 # added line green
    assert "\x1b[7m" in screen                                   # changed words in reverse video
    assert "GitHub Actions" in re.sub(r"\x1b\[[0-9;]*m", "", screen)
    assert "[-GitHub" not in screen                               # markers only without colour


def test_edit_in_editor_approves_the_edited_text(three, tmp_path: Path) -> None:
    ws, ids = three
    editor = tmp_path / "editor.py"
    editor.write_text(textwrap.dedent("""\
        import sys
        path = sys.argv[1]
        text = open(path, encoding="utf-8").read()
        open(path, "w", encoding="utf-8").write(text.replace("Cloudflare Pages", "Cloudflare Pages (wrangler)"))
        """))
    child = spawn(ws, ids["refresh"], env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
    child.expect_exact(PROMPT)
    child.send("e")
    child.expect(r"Approved edited proposal ([0-9a-f]{8}) \(replaces ([0-9a-f]{8})\)")
    new_id, old_id = child.match.group(1), child.match.group(2)
    out = finish(child)
    assert old_id == ids["refresh"] and new_id != old_id
    assert "1 edited and approved" in out
    text = main_file(ws, "MEMORY.md")
    assert "deploys on push via Cloudflare Pages (wrangler) (2026-11-29)" in text
    states = proposals.closed_states(ws)
    assert states[new_id]["status"] == "approved"
    assert states[old_id]["status"] == "rejected" and new_id in states[old_id]["reason"]
    edited = proposals.get(ws, new_id)
    assert edited.op.extra["edited_from"] == old_id
    assert edited.op.evidence == proposals.get(ws, old_id).op.evidence


def test_edit_adding_a_secret_is_refused_and_nothing_changes(three, tmp_path: Path) -> None:
    ws, ids = three
    before = ws.main()
    secret = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"
    editor = tmp_path / "editor.py"
    editor.write_text(f"import sys\nopen(sys.argv[1], 'w').write('Blog deploy token {secret}\\n')\n")
    child = spawn(ws, ids["refresh"], env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
    child.expect_exact(PROMPT)
    child.send("e")
    child.expect("Not done: (.*)sensitive data")
    child.expect_exact(PROMPT)    # back at the same proposal
    child.send("q")
    out = finish(child)
    assert secret not in out
    assert ws.main() == before
    assert {p.id for p in proposals.list_proposals(ws)} == set(ids.values())


def test_edit_unsaved_or_on_a_prune_changes_nothing(three) -> None:
    ws, ids = three
    before = ws.main()
    child = spawn(ws, ids["prune"])
    child.expect_exact(PROMPT)
    child.send("e")
    child.expect_exact("has no text to edit")
    child.expect_exact(PROMPT)
    child.send("x")
    child.expect_exact("a: approve")        # an unknown key shows the help
    child.expect_exact(PROMPT)
    child.send("q")
    finish(child)
    child = spawn(ws, ids["refresh"], env={"EDITOR": "true", "VISUAL": ""})
    child.expect_exact(PROMPT)
    child.send("e")
    child.expect_exact("Edit cancelled")    # `true` leaves the file unsaved
    child.expect_exact(PROMPT)
    child.send("s")
    out = finish(child)
    assert "1 skipped" in out
    assert ws.main() == before
    assert len(proposals.list_proposals(ws)) == 3


def test_nothing_open(workspace, run_cli) -> None:
    child = spawn(workspace)
    out = finish(child)
    assert "No open proposals." in out
    code, out, _ = run_cli(workspace, "review", "--json", input="")
    assert code == 0 and '"total": 0' in out


def test_without_a_terminal_keys_are_read_line_by_line(three, run_cli) -> None:
    ws, ids = three
    code, out, err = run_cli(ws, "review", ids["refresh"], input="a\n")
    assert code == 0, err
    assert "Reviewed 1 of 1: 1 approved" in out
    assert BLOG_NEW in main_file(ws, "MEMORY.md")


def test_a_secret_in_memory_is_redacted_on_screen(workspace, git) -> None:
    secret = "ghp_" + "Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pa0Sd1Fg2"
    path = workspace.root / "MEMORY.md"
    path.write_text(path.read_text() + f"- deploy token {secret}\n")
    git(workspace.root, "add", "MEMORY.md")
    git(workspace.root, "commit", "-q", "--no-verify", "-m", "agent wrote a token")
    git(workspace.root, "update-ref", "refs/heads/main", "HEAD")
    workspace.mark_synced(workspace.main())
    target = workspace.document("MEMORY.md").entry("deploy token").text
    [p] = proposals.create(workspace, [Operation("prune", "MEMORY.md", (target,), reason="a secret")])
    child = spawn(workspace, p.id)
    child.expect_exact(PROMPT)
    screen = child.before
    child.send("q")
    out = finish(child)
    assert secret not in screen + out
    assert "[REDACTED]" in screen


# -- the shared diff model ---------------------------------------------------------
def test_word_diff_marks_only_what_changed_including_han_characters() -> None:
    a, b = common.word_diff("Cockpit v1 待 push，侧栏 bug", "Cockpit v1 已上线，侧栏 bug")
    assert "".join(s.text for s in a) == "Cockpit v1 待 push，侧栏 bug"
    assert [s.text for s in a if s.changed] == ["待 push"]
    assert [s.text for s in b if s.changed] == ["已上线"]


def test_parse_diff_pairs_lines_numbers_them_and_keeps_rewrites_whole() -> None:
    diff = textwrap.dedent("""\
        diff --git a/M.md b/M.md
        index 1..2 100644
        --- a/M.md
        +++ b/M.md
        @@ -3,3 +3,3 @@
         ## Tools
        -- Playwright MCP pinned to 0.0.41
        -- totally unrelated line here
        +- Playwright MCP pinned to 0.0.43
        +- 完全不同的一行
        """)
    lines = common.parse_diff(diff)
    kinds = [ln.kind for ln in lines]
    assert kinds == ["file", "hunk", "context", "del", "del", "add", "add"]
    ctx, d1, d2, a1, a2 = lines[2:]
    assert (ctx.old, ctx.new) == (3, 3) and (d1.old, d2.old) == (4, 5) and (a1.new, a2.new) == (4, 5)
    assert [s.text for s in d1.segments if s.changed] == ["41"]
    assert [s.text for s in a1.segments if s.changed] == ["43"]
    assert not d2.paired and not a2.paired
    rows = common.side_by_side(lines)
    assert rows[2] == (ctx, ctx) and rows[3] == (d1, a1) and rows[4] == (d2, a2)


def test_parse_diff_shows_a_malformed_diff_as_it_is() -> None:
    text = "diff --git a/M.md b/M.md\n--- a/M.md\n+++ b/M.md\n@@ -1,4 +1,4 @@\n-- a\n+- b\n"
    lines = common.parse_diff(text)
    assert [ln.text for ln in lines] == text.splitlines() and {ln.kind for ln in lines} == {"note"}


def test_ctrl_c_stops_the_review_with_its_summary(three) -> None:
    ws, ids = three
    child = spawn(ws)
    pid = shown_id(child)
    child.expect_exact(PROMPT)
    child.send("s")
    shown_id(child)
    child.expect_exact(PROMPT)
    child.sendintr()
    out = finish(child)  # exit 0: stopping is the person's choice, not a failure
    assert "Aborted" not in out
    assert "Reviewed 1 of 3: 0 approved, 0 edited and approved, 0 rejected, 1 skipped; 2 not reviewed" in out
    assert pid in {p.id for p in proposals.list_proposals(ws)}


def test_ctrl_c_at_the_reject_reason_rejects_nothing(three) -> None:
    ws, ids = three
    child = spawn(ws)
    shown_id(child)
    child.expect_exact(PROMPT)
    child.send("r")
    child.expect_exact("Reason (optional, remembered): ")
    child.sendintr()
    out = finish(child)
    assert "Aborted" not in out and "Rejected" not in out
    assert "not reviewed" in out
    assert proposals.closed_states(ws) == {}
    assert len(proposals.list_proposals(ws)) == 3


def test_ctrl_c_stops_serve_cleanly(workspace) -> None:
    child = pexpect.spawn(sys.executable, ["-m", "memgit", "-C", str(workspace.root), "serve", "--no-open",
                                           "--port", "0"], encoding="utf-8", timeout=30)
    child.expect_exact("Press Ctrl-C to stop.")
    child.sendintr()
    out = finish(child)
    assert "Aborted" not in out and "Stopped serving" in out
