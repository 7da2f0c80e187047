"""memgit.proposals against real repos: proposals as branches that never touch the working tree,
approval re-applied to a moved main, refusal that keeps the agent's edit, reject memory, revert."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import AUTHOR_EMAIL, AUTHOR_NAME, MEMORY_MD

from memgit import journal, proposals
from memgit.errors import ConflictError, MemgitError, NotFoundError, SensitiveDataError
from memgit.ops import Evidence, Operation
from memgit.repo import CLOSED_PREFIX, JOURNAL, MAIN, PROPOSAL_PREFIX

COCKPIT = "- [P1] Cockpit v1 待 push，侧栏的 UI bug 修完就上 (2026-11-02)"
BLOG = "- [P1] Blog runs on Astro, deploys on push via GitHub Actions (2026-08-15)"
TUNNEL = "- [P2] Temporary: Cloudflare tunnel for the demo on 2026-11-10 (2026-11-09)"
NOTION_502 = '- MCP server "notion" 每次 sync 都报 502，原因待查 (2026-11-12)'
ZED = "- Tried Zed editor for a week, back to helix (2026-10-07)"
HOST = "- Host: Mac mini M4, macOS 15; the agent runs under launchd"


def snapshot_state(ws, git) -> dict:
    """Everything a proposal must leave alone: files, index, HEAD, status."""
    root: Path = ws.root
    files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
             if p.is_file() and ".git" not in p.relative_to(root).parts}
    return {"files": files, "index": (root / ".git" / "index").read_bytes(),
            "HEAD": git(root, "rev-parse", "HEAD"), "head_ref": git(root, "symbolic-ref", "HEAD"),
            "status": git(root, "status", "--porcelain", "--untracked-files=all")}


def main_sha(git, ws) -> str:
    return git(ws.root, "rev-parse", MAIN).strip()


def memory(ws) -> str:
    return (ws.root / "MEMORY.md").read_text(encoding="utf-8")


def prune(target: str, **kw) -> Operation:
    return Operation("prune", "MEMORY.md", (target,), **kw)


# -- create ---------------------------------------------------------------------------------------
def test_a_proposal_is_one_commit_on_its_own_branch(workspace, git):
    base = main_sha(git, workspace)
    [p] = proposals.create(workspace, [prune(TUNNEL, reason="the demo is over")])
    root = workspace.root
    assert p.status == "open" and p.branch == f"memgit/{p.id}" and p.base == base
    assert git(root, "rev-parse", f"refs/heads/memgit/{p.id}").strip() == p.commit
    assert git(root, "rev-parse", f"{p.commit}^").strip() == base
    assert f"memgit/{p.id}" in git(root, "branch", "--list", "memgit/*")
    diff = git(root, "diff", f"main...memgit/{p.id}")
    assert [ln for ln in diff.splitlines() if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))] \
        == ["-" + TUNNEL]
    msg = git(root, "log", "-1", "--format=%B", p.commit)
    assert f"Memgit-Proposal: {p.id}" in msg and "Reason: the demo is over" in msg
    record = json.loads(next(ln for ln in msg.splitlines() if ln.startswith("Memgit-Record: "))[15:])
    assert Operation.from_dict(record) == p.op
    assert journal.events(workspace.repo)[0].kind == "propose"


def test_creating_proposals_never_touches_worktree_index_or_head(workspace, git):
    # with a live, uncommitted agent edit and an untracked file present
    (workspace.root / "USER.md").write_text("# USER\n\n- live agent edit\n", encoding="utf-8")
    (workspace.root / "memory" / "2026-11-30.md").write_text("- new log\n", encoding="utf-8")
    before = snapshot_state(workspace, git)
    main = main_sha(git, workspace)
    made = proposals.create(workspace, [
        prune(TUNNEL),
        Operation("refresh", "MEMORY.md", (COCKPIT,), text="[P1] Cockpit v1 已上线 (2026-11-29)"),
        Operation("consolidate", "MEMORY.md", text="[P1] Notion sync is hourly", section="Projects"),
        Operation("merge", "MEMORY.md", (NOTION_502, ZED), text="notes merged"),
        Operation("move", "memory/2026-11-29.md", dest="memory/archive-2026-11/2026-11-29.md"),
    ])
    assert len(made) == 5 and len({p.id for p in made}) == 5
    assert snapshot_state(workspace, git) == before
    assert main_sha(git, workspace) == main


def test_the_same_change_twice_is_refused_or_skipped(workspace):
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    with pytest.raises(ConflictError, match=p.id):
        proposals.create(workspace, [prune(TUNNEL, reason="other words, same change")])
    assert proposals.create(workspace, [prune(TUNNEL)], skip_known=True) == []
    # twice in one batch: one proposal
    assert len(proposals.create(workspace, [prune(ZED), prune(ZED)], skip_known=True)) == 1


def test_a_change_that_changes_nothing_is_not_proposed(workspace):
    same = Operation("refresh", "MEMORY.md", (ZED,), text=ZED)
    with pytest.raises(MemgitError, match="changes nothing"):
        proposals.create(workspace, [same])
    assert proposals.create(workspace, [same], skip_known=True) == []
    assert proposals.list_proposals(workspace) == []


def test_sensitive_text_never_becomes_a_proposal(workspace, git):
    refs_before = git(workspace.root, "for-each-ref")
    op = Operation("consolidate", "MEMORY.md", text="db is postgres://admin:S3cretPass@db.example.com/prod",
                   section="Projects")
    with pytest.raises(SensitiveDataError) as ei:
        proposals.create(workspace, [op])
    assert "S3cretPass" not in str(ei.value)
    assert git(workspace.root, "for-each-ref") == refs_before


def test_evidence_and_reason_are_redacted(workspace, git):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    op = prune(TUNNEL, reason=f"superseded; token {token}", confidence=0.8, origin="offline",
               evidence=(Evidence("memory/2026-11-29.md:2", f"used {token} for the tunnel"),))
    [p] = proposals.create(workspace, [op])
    everything = git(workspace.root, "log", "--all", "--format=%B") + json.dumps(p.to_dict())
    assert token not in everything
    assert "[REDACTED]" in p.op.reason and "[REDACTED]" in p.op.evidence[0].quote


# -- list / get -----------------------------------------------------------------------------------
def test_list_and_get(workspace):
    a, b = proposals.create(workspace, [prune(TUNNEL, confidence=0.9, origin="offline", reason="over",
                                              evidence=(Evidence("memory/2026-11-29.md:3", "demo done"),)),
                                        prune(ZED)])
    listed = proposals.list_proposals(workspace)
    assert {p.id for p in listed} == {a.id, b.id}
    d = {p.id: p.to_dict() for p in listed}[a.id]
    assert {"id", "op", "file", "status", "branch", "confidence", "reason", "sources"} <= set(d)
    assert (d["op"], d["file"], d["status"], d["branch"], d["confidence"], d["reason"], d["sources"]) == \
        ("prune", "MEMORY.md", "open", f"memgit/{a.id}", 0.9, "over", ["memory/2026-11-29.md:3"])
    assert d["applies"] is True
    assert proposals.get(workspace, a.id[:5]).id == a.id
    for bad in ("zzzz", "../x", "--all", "", "ab"):
        with pytest.raises(NotFoundError):
            proposals.get(workspace, bad)
    with pytest.raises(NotFoundError, match="no proposal"):
        proposals.get(workspace, "0000000")


def test_a_proposal_whose_target_changed_is_listed_as_stale(workspace):
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    (workspace.root / "MEMORY.md").write_text(MEMORY_MD.replace(TUNNEL, TUNNEL + " extended"), encoding="utf-8")
    with workspace.repo.lock():
        workspace.prepare()
    [q] = proposals.list_proposals(workspace)
    assert q.id == p.id and q.applies is False and "changed or vanished" in q.why_not


# -- approve --------------------------------------------------------------------------------------
def test_approve_merges_with_trailers_and_updates_the_file(workspace, git):
    root = workspace.root
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    main = main_sha(git, workspace)
    r = proposals.approve(workspace, [p.id])
    assert [x.id for x in r.approved] == [p.id] and r.refused == []
    new_main = main_sha(git, workspace)
    assert r.commit == new_main
    assert git(root, "rev-parse", f"{new_main}^1", f"{new_main}^2").split() == [main, p.commit]
    msg = git(root, "log", "-1", "--format=%B", new_main)
    assert f"Memgit-Proposal: {p.id}" in msg
    assert f"Approved-by: {AUTHOR_NAME} <{AUTHOR_EMAIL}>" in msg and "Approved-at: " in msg
    trailers = git(root, "log", "-1", "--format=%(trailers:key=Memgit-Proposal,valueonly)", new_main)
    assert trailers.strip() == p.id
    assert memory(workspace) == MEMORY_MD.replace(TUNNEL + "\n", "")
    assert git(root, "status", "--porcelain") == ""
    refs = git(root, "for-each-ref", "--format=%(refname)")
    assert PROPOSAL_PREFIX + p.id not in refs and CLOSED_PREFIX + p.id in refs
    assert proposals.get(workspace, p.id).status == "approved"
    assert [x.id for x in proposals.list_proposals(workspace)] == []
    assert [(x.id, x.status) for x in proposals.list_proposals(workspace, include_closed=True)] == \
        [(p.id, "approved")]
    ev = journal.events(workspace.repo, ("approve",))[0]
    # (the journal writes a hash with an x after each two digits a third follows: no short number read into it)
    assert ev.data["id"] == p.id and ev.data["commit"].replace("x", "") == new_main


def test_approve_after_main_moved_by_another_approval(workspace, git):
    a, b, c = proposals.create(workspace, [
        prune(TUNNEL),
        Operation("refresh", "MEMORY.md", (COCKPIT,), text="[P1] Cockpit v1 已上线 (2026-11-29)"),
        Operation("consolidate", "MEMORY.md", text="[P2] Notion sync fixed by token refresh", section="Notes"),
    ])
    assert a.base == b.base == c.base
    proposals.approve(workspace, [b.id])
    proposals.approve(workspace, [a.id])
    proposals.approve(workspace, [c.id])
    data = memory(workspace)
    assert TUNNEL not in data and COCKPIT not in data
    assert "- [P1] Cockpit v1 已上线 (2026-11-29)" in data
    assert data.endswith(ZED + "\n- [P2] Notion sync fixed by token refresh\n")
    assert len(git(workspace.root, "log", "--first-parent", "--format=%H", "main").split()) == 4


def test_approve_after_an_agent_edit_elsewhere_in_the_file(workspace, git):
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    live = MEMORY_MD.replace(BLOG, BLOG + "\n- [P1] Blog gets a Chinese edition (2026-11-30)")
    (workspace.root / "MEMORY.md").write_text(live, encoding="utf-8")
    r = proposals.approve(workspace, [p.id])
    assert r.refused == []
    assert memory(workspace) == live.replace(TUNNEL + "\n", "")
    subjects = git(workspace.root, "log", "--first-parent", "--format=%s", "main").splitlines()
    assert subjects[0].startswith(f"memgit: approve {p.id}") and subjects[1] == "memgit: live edits (the agent's or by hand)"
    assert workspace.repo.read(main_sha(git, workspace), "MEMORY.md") == memory(workspace).encode()


def test_approval_refused_when_the_agent_changed_the_target(workspace, git):
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    edited = MEMORY_MD.replace(TUNNEL, "- [P2] Cloudflare tunnel stays: the demo moved to 2026-12-10 (2026-11-30)")
    (workspace.root / "MEMORY.md").write_text(edited, encoding="utf-8")
    r = proposals.approve(workspace, [p.id])
    assert r.approved == [] and r.commit is None
    [(pid, why)] = r.refused
    assert pid == p.id and "changed or vanished" in why and "\n" not in why
    assert memory(workspace) == edited  # the agent's edit is kept
    assert workspace.repo.read(main_sha(git, workspace), "MEMORY.md") == edited.encode()
    assert "approve" not in git(workspace.root, "log", "-1", "--format=%s", "main")
    assert proposals.get(workspace, p.id).status == "open"
    assert git(workspace.root, "status", "--porcelain") == ""


def test_approve_all_in_order_and_by_confidence(workspace):
    low, high, manual = proposals.create(workspace, [
        prune(TUNNEL, confidence=0.5, origin="offline"),
        prune(ZED, confidence=0.9, origin="offline"),
        Operation("consolidate", "MEMORY.md", text="manual entry", section="Notes"),
    ])
    r = proposals.approve(workspace, [], min_confidence=0.8)
    assert [p.id for p in r.approved] == [high.id]
    assert {p.id for p in proposals.list_proposals(workspace)} == {low.id, manual.id}
    r = proposals.approve(workspace, [])
    assert {p.id for p in r.approved} == {low.id, manual.id}
    assert proposals.approve(workspace, []).approved == []


def test_approving_a_closed_proposal_is_refused(workspace):
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    proposals.approve(workspace, [p.id])
    r = proposals.approve(workspace, [p.id])
    assert r.approved == [] and r.refused[0][0] == p.id and "approved, not open" in r.refused[0][1]


def test_automated_proposal_on_p0_cannot_be_made(workspace):
    with pytest.raises(ConflictError, match="P0"):
        proposals.create(workspace, [prune(HOST, origin="offline", confidence=0.99)])
    [p] = proposals.create(workspace, [prune(HOST)])  # a person may ask for it
    assert p.op.origin == "manual"


# -- reject ---------------------------------------------------------------------------------------
def test_reject_is_remembered(workspace, git):
    [p] = proposals.create(workspace, [prune(TUNNEL, origin="offline", confidence=0.8)])
    before = main_sha(git, workspace)
    [r] = proposals.reject(workspace, [p.id], "the demo was postponed")
    assert r.id == p.id
    assert main_sha(git, workspace) == before and memory(workspace) == MEMORY_MD
    assert proposals.get(workspace, p.id).status == "rejected"
    assert proposals.list_proposals(workspace) == []
    with pytest.raises(ConflictError, match="rejected"):
        proposals.create(workspace, [prune(TUNNEL)])
    # a dream proposing the same operation later is silently skipped
    assert proposals.create(workspace, [prune(TUNNEL, origin="offline", confidence=0.95, run="r2")],
                            skip_known=True) == []
    assert p.op.fingerprint in proposals.rejected_fingerprints(workspace)
    ev = journal.events(workspace.repo, ("reject",))[0]
    assert ev.data["reason"] == "the demo was postponed" and ev.data["id"] == p.id
    with pytest.raises(MemgitError, match="not open"):
        proposals.reject(workspace, [p.id])


def test_reject_reason_is_redacted(workspace, git):
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    proposals.reject(workspace, [p.id], "password: hunter2-Horse!9 is still valid")
    assert "hunter2-Horse!9" not in git(workspace.root, "log", JOURNAL, "--format=%B")


# -- revert ---------------------------------------------------------------------------------------
def test_revert_keeps_later_approvals_and_agent_edits(workspace, git):
    a, b = proposals.create(workspace, [
        prune(TUNNEL),
        Operation("refresh", "MEMORY.md", (COCKPIT,), text="[P1] Cockpit v1 已上线 (2026-11-29)"),
    ])
    proposals.approve(workspace, [a.id])
    proposals.approve(workspace, [b.id])
    agent_line = "- [P2] Agent wrote this after both approvals (2026-11-30)"
    (workspace.root / "MEMORY.md").write_text(memory(workspace) + agent_line + "\n", encoding="utf-8")
    user_before = (workspace.root / "USER.md").read_bytes()
    before = main_sha(git, workspace)
    sha = proposals.revert(workspace, a.id)
    assert main_sha(git, workspace) == sha
    assert git(workspace.root, "rev-list", "--parents", "-n1", sha).split()[1:] != []
    assert len(git(workspace.root, "rev-list", "--parents", "-n1", sha).split()) == 2  # one parent
    assert git(workspace.root, "merge-base", "--is-ancestor", before, sha, check=False).returncode == 0
    data = memory(workspace)
    assert TUNNEL in data  # a's change undone
    assert "- [P1] Cockpit v1 已上线 (2026-11-29)" in data and COCKPIT not in data  # b kept
    assert data.endswith(agent_line + "\n")  # the agent's edit kept
    assert (workspace.root / "USER.md").read_bytes() == user_before
    assert f"Memgit-Reverts: {a.id}" in git(workspace.root, "log", "-1", "--format=%B", sha)
    assert proposals.get(workspace, a.id).status == "reverted"
    assert proposals.create(workspace, [prune(TUNNEL, origin="offline")], skip_known=True) == []
    with pytest.raises(MemgitError, match="already reverted"):
        proposals.revert(workspace, a.id)


def test_revert_refuses_when_the_same_lines_changed_since(workspace, git):
    [p] = proposals.create(workspace, [Operation("refresh", "MEMORY.md", (ZED,), text="Tried Zed; back to helix")])
    proposals.approve(workspace, [p.id])
    (workspace.root / "MEMORY.md").write_text(
        memory(workspace).replace("- Tried Zed; back to helix", "- Helix forever"), encoding="utf-8")
    with pytest.raises(ConflictError, match="revert it by hand"):
        proposals.revert(workspace, p.id)
    assert "- Helix forever" in memory(workspace)


def test_reverting_a_never_approved_proposal_is_an_error(workspace):
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    with pytest.raises(NotFoundError, match="never approved"):
        proposals.revert(workspace, p.id)
    proposals.reject(workspace, [p.id])
    with pytest.raises(NotFoundError, match="never approved"):
        proposals.revert(workspace, p.id)


def test_the_same_change_approved_once_can_be_proposed_again(workspace):
    op = Operation("consolidate", "MEMORY.md", text="[P2] Weekly review moved to Saturday", section="Notes")
    [p] = proposals.create(workspace, [op])
    proposals.approve(workspace, [p.id])
    # the agent removed it by hand; the same consolidation is wanted again
    (workspace.root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    with workspace.repo.lock():
        workspace.prepare()
    [q] = proposals.create(workspace, [op])
    assert q.id != p.id and q.id.startswith(p.id) and len(q.id) == 12
    proposals.approve(workspace, [q.id])
    assert memory(workspace).endswith("- [P2] Weekly review moved to Saturday\n")


def test_a_whole_file_move_is_approved_as_a_rename(workspace, git):
    [p] = proposals.create(workspace, [Operation("move", "memory/2026-11-29.md",
                                                 dest="memory/archive-2026-11/2026-11-29.md")])
    proposals.approve(workspace, [p.id])
    assert not (workspace.root / "memory" / "2026-11-29.md").exists()
    assert (workspace.root / "memory" / "archive-2026-11" / "2026-11-29.md").is_file()
    assert git(workspace.root, "status", "--porcelain") == ""


# -- refs are compare-and-swap; crashes lose nothing ------------------------------------------------
def test_ref_updates_are_compare_and_swap(workspace, git):
    main = main_sha(git, workspace)
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    with pytest.raises(ConflictError, match="run the command again"):
        workspace.repo.update_refs([(MAIN, p.commit, p.commit), (PROPOSAL_PREFIX + "x", p.commit, None)])
    assert main_sha(git, workspace) == main  # all or nothing
    assert git(workspace.root, "rev-parse", "-q", "--verify", PROPOSAL_PREFIX + "x", check=False).returncode != 0


@pytest.mark.parametrize("point", ["approve:before-refs", "approve:after-refs", "approve:after-worktree"])
def test_a_crash_during_approve_loses_no_agent_write(workspace, git, run_cli, point):
    [p] = proposals.create(workspace, [prune(TUNNEL)])
    live = MEMORY_MD.replace(BLOG, BLOG + "\n- agent line written before the approval")
    (workspace.root / "MEMORY.md").write_text(live, encoding="utf-8")
    code, _, _ = run_cli(workspace, "approve", p.id, env={"MEMGIT_CRASH_AT": point})
    assert code == 137
    # the agent writes again right after the crash
    after_crash = (workspace.root / "MEMORY.md").read_text(encoding="utf-8") + "- agent line after the crash\n"
    (workspace.root / "MEMORY.md").write_text(after_crash, encoding="utf-8")
    # the next command that changes memory repairs the working tree first (three-way, keeping the agent)
    code, _out, err = run_cli(workspace, "propose", "prune", "MEMORY.md", "--entry", "Tried Zed")
    assert code == 0, err
    code, _out, err = run_cli(workspace, "approve", "--all")
    assert code == 0, err
    data = memory(workspace)
    assert "- agent line written before the approval" in data and "- agent line after the crash" in data
    assert TUNNEL not in data and ZED not in data
    assert git(workspace.root, "status", "--porcelain") == ""


def test_approving_a_consolidation_the_agent_already_wrote_adds_no_duplicate(workspace, git):
    text = "[P2] Weekly review moved to Saturday (2026-11-29)"
    [p] = proposals.create(workspace, [Operation("consolidate", "MEMORY.md", text=text, section="Notes")])
    live = MEMORY_MD.replace("## Notes [P2]\n", "## Notes [P2]\n- " + text + "\n")
    (workspace.root / "MEMORY.md").write_text(live, encoding="utf-8")
    r = proposals.approve(workspace, [p.id])
    assert [x.id for x in r.approved] == [p.id] and r.refused == []  # what was asked for is in main
    assert memory(workspace) == live
    assert workspace.repo.read(main_sha(git, workspace), "MEMORY.md") == live.encode()
    assert proposals.list_proposals(workspace) == []


def test_the_same_id_twice_is_one_approval_or_rejection(workspace, git):
    a, b = proposals.create(workspace, [
        Operation("consolidate", "MEMORY.md", text="[P2] Weekly review moved to Saturday", section="Notes"),
        prune(ZED),
    ])
    r = proposals.approve(workspace, [a.id, a.id[:6], a.id])
    assert [x.id for x in r.approved] == [a.id] and r.refused == []
    assert memory(workspace).count("Weekly review moved to Saturday") == 1
    assert git(workspace.root, "status", "--porcelain") == ""
    assert [x.id for x in proposals.reject(workspace, [b.id, b.id])] == [b.id]


def test_crlf_bom_and_hermes_files_keep_their_bytes_through_approval(workspace, git):
    root = workspace.root
    memory_bytes = "\ufeff# MEMORY\r\n\r\n## Notes [P2]\r\n- one (2026-01-02)\r\n- two\r\n- three".encode("utf-8")
    user_bytes = "User prefers uv\n§\n喜欢简短回答\n§\nUses helix\n".encode()
    (root / "MEMORY.md").write_bytes(memory_bytes)
    (root / "USER.md").write_bytes(user_bytes)
    with workspace.repo.lock():
        workspace.prepare()
    a, b, c = proposals.create(workspace, [
        Operation("refresh", "MEMORY.md", ("- two",), text="deux"),
        Operation("prune", "USER.md", ("喜欢简短回答",)),
        Operation("consolidate", "USER.md", text="Works in 北京时间"),
    ])
    diff = git(root, "diff", f"main...memgit/{a.id}")
    assert [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")] == \
        ["-- two", "+- deux"]
    assert workspace.repo.read(a.commit, "MEMORY.md") == memory_bytes.replace(b"- two\r\n", b"- deux\r\n")
    ino = (root / "MEMORY.md").stat().st_ino
    r = proposals.approve(workspace, [a.id, b.id, c.id])
    assert r.refused == []
    assert (root / "MEMORY.md").read_bytes() == memory_bytes.replace(b"- two\r\n", b"- deux\r\n")
    assert (root / "MEMORY.md").stat().st_ino == ino  # rewritten in its own inode: an agent's open handle stays on it
    assert (root / "USER.md").read_bytes() == "User prefers uv\n§\nUses helix\n§\nWorks in 北京时间\n".encode()
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".") and p.name not in (".git", ".gitattributes")) == []
    assert git(root, "status", "--porcelain") == ""


def test_a_move_out_of_the_workspace_is_never_proposed(workspace, git):
    refs = git(workspace.root, "for-each-ref")
    with pytest.raises(MemgitError, match="outside the workspace"):
        proposals.create(workspace, [Operation("move", "memory/2026-11-29.md", dest="../evil.md")])
    assert git(workspace.root, "for-each-ref") == refs
    assert git(workspace.root, "fsck", "--no-dangling", check=False).returncode == 0


def test_a_person_can_propose_a_reverted_change_again_and_the_dream_still_never_does(workspace, run_cli):
    args = ("propose", "prune", "MEMORY.md", "--entry", "Cloudflare tunnel for the demo", "--json")
    code, out, err = run_cli(workspace, *args)
    assert code == 0, err
    first = json.loads(out)["id"]
    assert run_cli(workspace, "approve", first)[0] == 0
    assert run_cli(workspace, "revert", first)[0] == 0
    code, out, err = run_cli(workspace, *args)
    assert code == 1 and "add --again" in err
    code, out, err = run_cli(workspace, *args, "--again")
    assert code == 0, err
    second = json.loads(out)["id"]
    assert second != first
    assert run_cli(workspace, "approve", second)[0] == 0
    assert "Cloudflare tunnel for the demo" not in (workspace.root / "MEMORY.md").read_text()
    # proposed again after a second revert, it gets an id of its own again
    assert run_cli(workspace, "revert", second)[0] == 0
    code, out, err = run_cli(workspace, *args, "--again")
    assert code == 0, err
    assert json.loads(out)["id"] not in (first, second)
    assert proposals.get(workspace, first).op.fingerprint in proposals.rejected_fingerprints(workspace)


def test_show_gives_the_change_against_todays_main(workspace, run_cli):
    """Two prunes from one base: once one is approved, the other's diff no longer shows the first
    entry as still there, and an entry the agent edited since shows its new words."""
    doc = workspace.document("MEMORY.md")
    a, b = proposals.create(workspace, [
        Operation("prune", "MEMORY.md", (doc.entry("Cloudflare tunnel for the demo").text,), reason="t"),
        Operation("refresh", "MEMORY.md", (doc.entry("每次 sync 都报 502").text,),
                  text='- MCP server "notion" 的 502 已修好，sync 正常 (2026-11-29)', reason="t")])
    proposals.approve(workspace, [a.id])
    mem = workspace.root / "MEMORY.md"
    mem.write_text(mem.read_text().replace("Timezone: Asia/Shanghai", "Timezone: Asia/Taipei"))
    with workspace.repo.lock():
        workspace.prepare()  # the live edit is committed, as any approval or dream does first
    code, out, err = run_cli(workspace, "show", b.id, "--json")
    assert code == 0, err
    d = json.loads(out)["diff"]
    assert "Cloudflare tunnel for the demo" not in d  # pruned already: not context of today's change
    assert "502 已修好" in d
    code, body, _ = run_cli(workspace, "pr", b.id, "--body")
    assert "Cloudflare tunnel for the demo" not in body
    before = workspace.main()
    proposals.approve(workspace, [b.id])
    applied = workspace.repo.diff(before, workspace.main())
    assert [ln for ln in applied.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")] == \
        [ln for ln in d.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]


def test_age_counts_from_the_proposal_not_from_its_last_move(workspace, monkeypatch):
    doc = workspace.document("MEMORY.md")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1793527200 +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1793527200 +0000")
    a, b = proposals.create(workspace, [
        Operation("prune", "MEMORY.md", (doc.entry("Cloudflare tunnel for the demo").text,), reason="t"),
        Operation("prune", "MEMORY.md", (doc.entry("yt-dlp 下載 podcast").text,), reason="t")])
    made = proposals.get(workspace, b.id).created
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1795168800 +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1795168800 +0000")
    proposals.approve(workspace, [a.id])       # main moves on …
    assert proposals.get(workspace, b.id).created == made
    proposals.reject(workspace, [b.id], "no")
    assert proposals.get(workspace, b.id).created == made   # closed, still from when it was proposed


def test_threads_of_one_process_rebuild_the_states_cache_at_once(workspace):
    # the review server answers in threads of one process: their cache writes must not share a temp file
    import threading

    proposals.create(workspace, [prune(TUNNEL, reason="the demo is over")])
    errors: list[BaseException] = []
    start = threading.Barrier(16)

    def one() -> None:
        start.wait()
        try:
            for _ in range(20):
                proposals._write_cache(workspace, "tip", {"x": {"status": "open"}})
        except BaseException as e:  # noqa: BLE001 - any failure is the finding
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not list((workspace.repo.state_dir()).glob("*.tmp"))
    assert json.loads((workspace.repo.state_dir() / "states.json").read_text())["tip"] == "tip"
