"""`memgit push` / `memgit pull` between clones through a local bare repository."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memgit import adopt, journal, proposals, remote
from memgit.errors import ConflictError, MemgitError
from memgit.ops import Operation
from memgit.repo import JOURNAL
from memgit.workspace import Workspace

BLOG_NEW = "[P1] Blog runs on Astro, deploys on push via Cloudflare Pages (2026-11-29)"


@pytest.fixture
def hub(tmp_path: Path, git) -> Path:
    bare = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    return bare


def clone(hub: Path, tmp_path: Path, name: str, git) -> Workspace:
    dest = tmp_path / name
    git(tmp_path, "clone", "-q", str(hub), str(dest))
    adopt.init(dest)
    return Workspace(dest)


@pytest.fixture
def hosts(workspace, hub, tmp_path, git):
    """Host A (the original workspace) pushed to the hub, host B a fresh clone adopted with init."""
    git(workspace.root, "remote", "add", "origin", str(hub))
    remote.push(workspace)
    return workspace, clone(hub, tmp_path, "b", git)


def entry(ws: Workspace, needle: str, file: str = "MEMORY.md") -> str:
    return ws.document(file).entry(needle).text


def propose(ws: Workspace, op: Operation):
    with ws.repo.lock():
        ws.prepare()
        return proposals.create(ws, [op])[0]


def prune(ws: Workspace, needle: str, file: str = "MEMORY.md"):
    return propose(ws, Operation("prune", file, (entry(ws, needle, file),), reason="test"))


def refresh(ws: Workspace, needle: str, text: str):
    return propose(ws, Operation("refresh", "MEMORY.md", (entry(ws, needle),), text=text, reason="test"))


def open_ids(ws: Workspace) -> set[str]:
    return {p.id for p in proposals.list_proposals(ws, check=False)}


def main_text(ws: Workspace, file: str = "MEMORY.md") -> str:
    return ws.repo.read(ws.main(), file).decode()


def remote_refs(hub: Path) -> dict[str, str]:
    out = subprocess.run(["git", "-C", str(hub), "for-each-ref", "--format=%(refname) %(objectname)"],
                         capture_output=True, text=True, check=True).stdout
    return dict(line.split(" ") for line in out.splitlines())


def agree(a: Workspace, b: Workspace) -> None:
    assert a.main() == b.main()
    assert open_ids(a) == open_ids(b)
    assert (a.root / "MEMORY.md").read_bytes() == (b.root / "MEMORY.md").read_bytes() \
        == a.repo.read(a.main(), "MEMORY.md")


def test_init_in_a_fresh_clone_adopts_it_without_rewriting_history(hosts, git) -> None:
    a, b = hosts
    assert b.main() == a.main()
    assert git(b.root, "rev-parse", "HEAD").strip() == a.main()
    assert git(b.root, "status", "--porcelain").strip() == ""
    hook = b.root / ".git" / "hooks" / "pre-commit"
    assert "memgit pre-commit hook" in hook.read_text()
    assert adopt.init(b.root).commit is None   # adopting twice changes nothing either


def test_proposal_made_on_a_is_approved_on_b_and_leaves_a_open_list(hosts, hub) -> None:
    a, b = hosts
    p = refresh(a, "Blog runs on Astro", BLOG_NEW)
    sent = remote.push(a)
    assert sent.opened == [p.id] and sent.journal
    assert f"refs/heads/memgit/{p.id}" in remote_refs(hub)

    got = remote.pull(b)
    assert got.new_open == [p.id] and got.journal == "fast-forward" and got.main == "up to date"
    assert proposals.get(b, p.id).op.text == BLOG_NEW

    assert proposals.approve(b, [p.id]).approved
    sent = remote.push(b)
    assert sent.main and sent.closed == [p.id] and sent.removed == [p.id]
    refs = remote_refs(hub)
    assert f"refs/heads/memgit/{p.id}" not in refs and f"refs/memgit/closed/{p.id}" in refs

    back = remote.pull(a)
    assert back.main == "fast-forward" and back.removed == [p.id] and back.closed == {p.id: "approved"}
    assert back.files == ["MEMORY.md"]
    agree(a, b)
    assert BLOG_NEW in (a.root / "MEMORY.md").read_text()
    assert proposals.get(a, p.id).status == "approved"
    assert remote.push(a).up_to_date and remote.pull(b).main == "up to date"


def test_concurrent_approvals_on_two_hosts_keep_both(hosts, hub) -> None:
    a, b = hosts
    p1 = prune(a, "Temporary: Cloudflare")
    p2 = prune(a, "喜欢用 uv", "USER.md")
    remote.push(a)
    remote.pull(b)
    proposals.approve(a, [p1.id])
    proposals.approve(b, [p2.id])
    remote.push(a)
    hub_before = remote_refs(hub)
    with pytest.raises(ConflictError, match="run `memgit pull origin`"):
        remote.push(b)
    assert remote_refs(hub) == hub_before           # refused atomically: nothing half-pushed

    merged = remote.pull(b)
    assert merged.main == "merged" and merged.journal == "merged"
    assert merged.theirs == 1 and merged.ours == 1
    assert merged.removed == [p1.id] and merged.closed == {p1.id: "approved"}
    assert b.repo.info(b.main()).parents[1] == a.main()
    assert len(b.repo.info(b.repo.ref(JOURNAL)).parents) == 2    # union of both journals
    remote.push(b)
    assert remote.pull(a).main == "fast-forward"
    agree(a, b)
    assert "Temporary: Cloudflare" not in main_text(a) and "喜欢用 uv" not in main_text(a, "USER.md")
    approved = {e.data["id"] for e in journal.events(a.repo, ("approve",))}
    assert {p1.id, p2.id} <= approved
    assert {proposals.get(a, i).status for i in (p1.id, p2.id)} == {"approved"}


def test_adjacent_entries_changed_on_both_hosts_merge_by_re_applying_approvals(hosts) -> None:
    a, b = hosts
    p1 = prune(a, "Temporary: Cloudflare")        # two neighbouring lines: git's line merge conflicts
    p2 = prune(a, "notion\" 每次 sync")
    remote.push(a)
    remote.pull(b)
    proposals.approve(a, [p1.id])
    proposals.approve(b, [p2.id])
    remote.push(a)
    merged = remote.pull(b)
    assert merged.main == "merged"
    assert merged.replayed == [f"MEMORY.md: {p1.id}"]
    text = main_text(b)
    assert "Temporary: Cloudflare" not in text and "每次 sync" not in text
    assert "Tried Zed editor" in text
    remote.push(b)
    remote.pull(a)
    agree(a, b)


def test_a_real_conflict_stops_with_nothing_changed(hosts, git) -> None:
    a, b = hosts
    pa = refresh(a, "Blog runs on Astro", BLOG_NEW)
    remote.push(a)
    remote.pull(b)
    pb = refresh(b, "Blog runs on Astro", "[P1] Blog moved to Hugo (2026-11-29)")
    proposals.approve(a, [pa.id])
    proposals.approve(b, [pb.id])
    remote.push(a)
    before = (b.main(), b.repo.ref(JOURNAL), open_ids(b), (b.root / "MEMORY.md").read_bytes())
    with pytest.raises(ConflictError) as err:
        remote.pull(b)
    msg = str(err.value)
    assert "MEMORY.md" in msg and "git merge refs/memgit/remotes/origin/main" in msg
    assert (b.main(), b.repo.ref(JOURNAL), open_ids(b), (b.root / "MEMORY.md").read_bytes()) == before
    assert b.repo.ref("refs/memgit/remotes/origin/main") == a.main()   # theirs kept for a hand merge
    assert "Hugo" in main_text(b) and BLOG_NEW in main_text(a)

    # the way out the message gives: merge by hand, then pull and push
    m = git(b.root, "merge", "refs/memgit/remotes/origin/main", check=False)
    assert m.returncode != 0, m.stdout + m.stderr
    print("MERGE", m.stdout, m.stderr)
    mem = b.root / "MEMORY.md"
    resolved = main_text(a).replace(BLOG_NEW, "[P1] Blog moved to Hugo on Cloudflare Pages (2026-11-30)")
    mem.write_text(resolved)
    git(b.root, "add", "MEMORY.md")
    git(b.root, "commit", "-q", "--no-edit")
    got = remote.pull(b)
    assert got.main == "ahead" and got.journal == "merged" and got.removed == [pa.id]
    remote.push(b)
    remote.pull(a)
    agree(a, b)
    assert mem.read_text() == resolved


def test_rejected_on_one_host_is_not_proposed_again_on_the_other(hosts) -> None:
    a, b = hosts
    p = prune(a, "Tried Zed editor")
    remote.push(a)
    remote.pull(b)
    proposals.reject(b, [p.id], "still true")
    remote.push(b)
    got = remote.pull(a)
    assert got.closed == {p.id: "rejected"} and p.id not in open_ids(a)
    op = Operation("prune", "MEMORY.md", (entry(a, "Tried Zed editor"),), reason="again")
    assert proposals.create(a, [op], skip_known=True) == []
    with pytest.raises(ConflictError, match="rejected"):
        proposals.create(a, [op])


def test_pull_keeps_the_agents_live_edits(hosts) -> None:
    a, b = hosts
    p = refresh(b, "Blog runs on Astro", BLOG_NEW)
    proposals.approve(b, [p.id])
    remote.push(b)
    user = a.root / "USER.md"
    user.write_text(user.read_text() + "- Likes oolong tea (2026-11-30)\n")          # not yet committed
    mem = a.root / "MEMORY.md"
    mem.write_text(mem.read_text().replace("Tried Zed editor for a week", "Tried Zed editor for two weeks"))
    got = remote.pull(a)
    assert got.main == "merged"   # the agent's snapshot and b's approval
    assert "Likes oolong tea" in user.read_text() and "Likes oolong tea" in main_text(a, "USER.md")
    text = mem.read_text()
    assert BLOG_NEW in text and "Tried Zed editor for two weeks" in text
    assert text == main_text(a)


def test_daily_logs_written_on_both_hosts_keep_both_lines(hosts) -> None:
    a, b = hosts
    for ws, line in ((a, "- 18:00 host A: gateway restarted\n"), (b, "- 18:05 host B: notion sync ok\n")):
        log = ws.root / "memory" / "2026-11-29.md"
        log.write_text(log.read_text() + line)
        with ws.repo.lock():
            ws.prepare()
    remote.push(a)
    got = remote.pull(b)
    assert got.unioned == ["memory/2026-11-29.md"]
    text = main_text(b, "memory/2026-11-29.md")
    assert "host A: gateway restarted" in text and "host B: notion sync ok" in text
    assert "<<<<<<<" not in text


def test_three_clones_agree(hosts, hub, tmp_path, git) -> None:
    a, b = hosts
    c = clone(hub, tmp_path, "c", git)
    pa = prune(a, "Tried Zed editor")
    remote.push(a)
    for ws in (b, c):
        remote.pull(ws)
    proposals.approve(b, [pa.id])
    pc = prune(c, "喜欢用 uv", "USER.md")
    remote.push(b)
    with pytest.raises(ConflictError):
        remote.push(c)
    remote.pull(c)
    remote.push(c)
    for ws in (a, b):
        remote.pull(ws)
    agree(a, b)
    agree(b, c)
    assert open_ids(a) == {pc.id}


def test_push_and_pull_cli(hosts, run_cli) -> None:
    a, b = hosts
    p = prune(a, "Tried Zed editor")
    code, out, err = run_cli(a, "push")
    assert code == 0, err
    assert f"open proposals sent: {p.id}" in out
    code, out, err = run_cli(b, "pull", "origin")
    assert code == 0, err
    assert f"new open proposals from origin: {p.id}" in out
    code, out, _ = run_cli(b, "pull", "--json")
    assert json.loads(out)["main"] == "up to date"
    proposals.approve(a, [p.id])
    prune(b, "喜欢用 uv", "USER.md")
    run_cli(a, "push")
    code, out, err = run_cli(b, "push")
    assert code == 1 and err.startswith("Error: origin has changes this clone lacks")
    assert "memgit pull origin" in err
    code, out, err = run_cli(b, "pull")
    assert code == 0, err
    assert "closed on origin" in out and "Run `memgit push origin`" in out
    code, out, err = run_cli(b, "push", "nowhere")
    assert code == 1 and "no git remote named 'nowhere'" in err


def test_unreachable_remote_is_a_clean_error(workspace, tmp_path, git) -> None:
    git(workspace.root, "remote", "add", "origin", str(tmp_path / "missing.git"))
    with pytest.raises(MemgitError, match="cannot reach remote 'origin'"):
        remote.pull(workspace)
    with pytest.raises(MemgitError, match="cannot reach remote 'origin'"):
        remote.push(workspace)


def test_a_plain_bare_remote_round_trip_whose_head_names_master(workspace, tmp_path, git, run_cli) -> None:
    """`git init --bare` (HEAD → master): push from one clone, clone + init + pull on another,
    approve there, pull back."""
    plain = tmp_path / "plain.git"
    subprocess.run(["git", "-c", "init.defaultBranch=master", "init", "-q", "--bare", str(plain)], check=True)
    git(workspace.root, "remote", "add", "origin", str(plain))
    remote.push(workspace)
    a_main = workspace.main()
    prune(workspace, "Cloudflare tunnel for the demo")
    remote.push(workspace)

    dest = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(plain), str(dest))  # warns: remote HEAD names a branch that does not exist
    code, out, err = run_cli(dest, "init")
    assert code == 0, err
    b = Workspace(dest)
    assert b.main() == a_main  # the remote's main, not a new unrelated one
    assert (dest / "MEMORY.md").read_bytes() == workspace.repo.read(a_main, "MEMORY.md")
    code, out, err = run_cli(dest, "pull")
    assert code == 0, err
    (pid,) = open_ids(b)
    proposals.approve(b, [pid])
    remote.push(b)
    remote.pull(workspace)
    agree(workspace, b)
    assert "Cloudflare tunnel for the demo" not in main_text(workspace)


def test_pull_of_an_unrelated_main_says_what_is_wrong(workspace, tmp_path, git, hub) -> None:
    git(workspace.root, "remote", "add", "origin", str(hub))
    remote.push(workspace)
    other = tmp_path / "other"
    other.mkdir()
    (other / "MEMORY.md").write_text("# Memory\n\n- [P1] something else entirely (2026-01-01)\n")
    adopt.init(other)
    ows = Workspace(other)
    git(other, "remote", "add", "origin", str(hub))
    with pytest.raises(MemgitError) as e:
        remote.pull(ows)
    msg = str(e.value)
    assert "share no history" in msg and "git 2.38" not in msg
