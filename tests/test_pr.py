"""`memgit pr`: a proposal as a pull-request title and markdown body."""
from __future__ import annotations

import json

import pytest

from memgit import proposals
from memgit.errors import NotFoundError
from memgit.ops import Evidence, Operation
from memgit.review.pr import build

BLOG_NEW = "[P1] Blog runs on Astro, deploys on push via Cloudflare Pages (2026-11-29)"
SECRET = "ghp_" + "Mn1Bv2Cx3Za4Sd5Fg6Hj7Kl8Qw9Er0Ty1Ui2"


@pytest.fixture
def refresh(workspace):
    target = workspace.document("MEMORY.md").entry("Blog runs on Astro").text
    [p] = proposals.create(workspace, [Operation(
        "refresh", "MEMORY.md", (target,), text=BLOG_NEW, confidence=0.87, origin="offline",
        reason="the blog moved <b>off</b> GitHub Actions",
        evidence=(Evidence("memory/2026-11-29.md:3", "Blog now deploys from Cloudflare Pages"),
                  Evidence("sessions/2026-11-29-a1.jsonl:2", "moved the blog, <script>x</script>")))])
    return workspace, p


def test_title_and_body_hold_op_confidence_reason_evidence_and_diff(refresh) -> None:
    ws, p = refresh
    pr = build(ws, p.id)
    assert pr.title == f"memgit: {p.title}"
    assert pr.branch == f"memgit/{p.id}"
    body = pr.body
    assert "**Operation:** `refresh` on `MEMORY.md`" in body
    assert "**Confidence:** 0.87" in body and "**Origin:** offline" in body
    assert "### Reason\n\nthe blog moved &lt;b&gt;off&lt;/b&gt; GitHub Actions\n" in body
    assert "- `memory/2026-11-29.md:3`\n  > Blog now deploys from Cloudflare Pages\n" in body
    assert "&lt;script&gt;x&lt;/script&gt;" in body and "<script>" not in body
    fenced = body.split("```diff\n", 1)[1].split("\n```\n", 1)[0]
    assert fenced == proposals.diff(ws, p).rstrip("\n")
    assert "-- [P1] Blog runs on Astro, deploys on push via GitHub Actions (2026-08-15)" in fenced
    assert f"+- {BLOG_NEW}" in fenced
    assert f"memgit approve {p.id}" in body
    assert pr.text() == f"{pr.title}\n\n{pr.body}"


def test_cli_prints_title_line_then_body_for_gh(refresh, run_cli) -> None:
    ws, p = refresh
    code, out, err = run_cli(ws, "pr", p.id)
    assert code == 0, err
    title, blank, *body = out.split("\n")
    assert title == f"memgit: {p.title}" and blank == ""
    assert "\n".join(body).startswith("**Operation:**")
    code, only_title, _ = run_cli(ws, "pr", p.id, "--title")
    assert only_title == title + "\n"
    code, only_body, _ = run_cli(ws, "pr", p.id, "--body")
    assert only_body == "\n".join(body)
    code, js, _ = run_cli(ws, "pr", p.id, "--json")
    assert json.loads(js) == {"id": p.id, "branch": p.branch, "title": title, "body": only_body}
    code, _, err = run_cli(ws, "pr", "deadbeef")
    assert code == 1 and err.startswith("Error: no proposal 'deadbeef'")
    code, _, err = run_cli(ws, "pr", "../../etc")
    assert code == 1 and "not a proposal id" in err


def test_secrets_are_redacted_in_diff_title_and_evidence(workspace, git) -> None:
    path = workspace.root / "MEMORY.md"
    path.write_text(path.read_text() + f"- GitHub deploy token {SECRET}\n")
    git(workspace.root, "commit", "-qam", "agent wrote a token", "--no-verify")
    git(workspace.root, "update-ref", "refs/heads/main", "HEAD")
    workspace.mark_synced(workspace.main())
    target = workspace.document("MEMORY.md").entry("deploy token").text
    [p] = proposals.create(workspace, [Operation(
        "prune", "MEMORY.md", (target,), reason=f"remove {SECRET}",
        evidence=(Evidence("MEMORY.md:21", f"- GitHub deploy token {SECRET}"),))])
    assert SECRET in workspace.repo.diff(p.base, p.commit)   # the raw git diff holds it: the PR must not
    pr = build(workspace, p.id)
    assert SECRET not in pr.text()
    assert "-- GitHub deploy token [REDACTED]" in pr.body


def test_backticks_in_the_diff_get_a_longer_fence(workspace) -> None:
    [p] = proposals.create(workspace, [Operation("consolidate", "MEMORY.md", (), section="Tools",
                                                 text="Fence example: ```sh make check``` (2026-11-29)")])
    body = build(workspace, p.id).body
    assert "````diff\n" in body and body.count("````") == 2


def test_stale_and_closed_proposals_say_so(refresh) -> None:
    ws, p = refresh
    target = ws.document("MEMORY.md").entry("Blog runs on Astro").text
    [prune] = proposals.create(ws, [Operation("prune", "MEMORY.md", (target,), reason="gone")])
    proposals.approve(ws, [prune.id])
    stale = build(ws, p.id).body
    assert "> [!WARNING]" in stale and "no longer applies to main" in stale
    closed = build(ws, prune.id).body
    assert "**Status:** approved" in closed
    with pytest.raises(NotFoundError):
        build(ws, "0000")


def test_no_flag_is_silently_ignored(refresh, run_cli) -> None:
    ws, p = refresh
    code, whole, _ = run_cli(ws, "pr", p.id)
    code, both, err = run_cli(ws, "pr", p.id, "--title", "--body")
    assert code == 0, err
    assert both == whole  # both parts asked: both printed, not only the last flag
    code, _, err = run_cli(ws, "pr", p.id, "--title", "--json")
    assert code == 1 and err.startswith("Error: --json prints the title and the body")
    code, out, err = run_cli(ws, "approve", p.id, "--min-confidence", "0.9")
    assert code == 1 and "--min-confidence applies only with --all" in err
    assert proposals.get(ws, p.id).status == "open"
