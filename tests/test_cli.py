"""The CLI as a user drives it: `python -m memgit -C <workspace> …` in a subprocess, for exit codes,
output and the rule that every expected failure is one `Error: …` line, exit 1, no traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import MEMORY_MD

from memgit import proposals
from memgit.ops import Evidence, Operation

TUNNEL = "- [P2] Temporary: Cloudflare tunnel for the demo on 2026-11-10 (2026-11-09)"
COCKPIT = "- [P1] Cockpit v1 待 push，侧栏的 UI bug 修完就上 (2026-11-02)"
ZED = "- Tried Zed editor for a week, back to helix (2026-10-07)"
KEYS = {"id", "op", "file", "status", "branch", "confidence", "reason", "sources"}


def clean_error(code: int, out: str, err: str, *needles: str) -> None:
    """An expected failure: exit 1, one `Error: …` line on stderr, no traceback."""
    assert code == 1, (code, out, err)
    assert err.startswith("Error: ") and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err + out
    for n in needles:
        assert n in err, (n, err)


def state(ws, git) -> tuple:
    root = ws.root
    files = tuple(sorted((str(p.relative_to(root)), p.read_bytes()) for p in root.rglob("*")
                         if p.is_file() and ".git" not in p.relative_to(root).parts))
    return (files, (root / ".git" / "index").read_bytes(), git(root, "rev-parse", "HEAD"),
            git(root, "status", "--porcelain", "--untracked-files=all"))


def propose_json(run_cli, ws, *args) -> dict:
    code, out, err = run_cli(ws, "propose", *args, "--json")
    assert code == 0, err
    return json.loads(out)


# -- init -----------------------------------------------------------------------------------------
def test_init_new_folder(tmp_path, run_cli, git):
    (tmp_path / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    code, out, err = run_cli(tmp_path, "init")
    assert code == 0, err
    assert out.splitlines()[0] == f"Initialised memgit workspace in {tmp_path.resolve()}"
    assert "wrote memgit.toml" in out and "hooks: pre-commit" in out and "committed current files" in out
    code, out, err = run_cli(tmp_path, "init", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["created_repo"] is False and d["wrote_config"] is False and d["hooks"] == ["pre-commit", "pre-push"]
    assert git(tmp_path, "symbolic-ref", "HEAD").strip() == "refs/heads/main"


def test_init_in_the_current_folder(tmp_path, run_cli):
    code, _out, err = run_cli(None, "init", cwd=tmp_path)
    assert code == 0, err
    assert (tmp_path / ".git").is_dir() and (tmp_path / "memgit.toml").is_file()


# -- propose --------------------------------------------------------------------------------------
def test_propose_each_kind_prints_the_proposal(workspace, run_cli, git):
    before = state(workspace, git)
    d = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare tunnel",
                     "--reason", "the demo is over")
    assert KEYS <= set(d)
    assert (d["op"], d["file"], d["status"], d["branch"], d["confidence"], d["reason"], d["sources"]) == \
        ("prune", "MEMORY.md", "open", f"memgit/{d['id']}", None, "the demo is over", [])
    assert d["targets"] == [TUNNEL]
    d = propose_json(run_cli, workspace, "refresh", "MEMORY.md", "--entry", "Cockpit v1",
                     "--to", "[P1] Cockpit v1 已上线 (2026-11-29)")
    assert d["op"] == "refresh" and d["targets"] == [COCKPIT] and d["text"] == "[P1] Cockpit v1 已上线 (2026-11-29)"
    d = propose_json(run_cli, workspace, "consolidate", "USER.md", "--section", "Preferences",
                     "--text", "偏好用 uv 而不是 pip (2026-11-30)")
    assert d["op"] == "consolidate" and d["section"] == "Preferences" and d["file"] == "USER.md"
    d = propose_json(run_cli, workspace, "merge", "MEMORY.md", "--entry", "每次 sync", "--entry", "Tried Zed",
                     "--to", "notes merged")
    assert d["op"] == "merge" and len(d["targets"]) == 2
    assert state(workspace, git) == before  # nothing the agent reads moved
    code, out, err = run_cli(workspace, "propose", "prune", "USER.md", "--entry", "Dentist")
    assert code == 0, err
    assert out.startswith("Proposed ") and "memgit/" in out and "memgit show" in out


def test_section_matches_a_heading_without_its_tag(workspace, run_cli, git):
    d = propose_json(run_cli, workspace, "consolidate", "MEMORY.md", "--section", "Projects",
                     "--text", "[P1] Blog moved to Astro 5 (2026-12-01)")
    assert d["section"] == "Projects"
    diff = git(workspace.root, "diff", f"main...memgit/{d['id']}")
    assert "+- [P1] Blog moved to Astro 5 (2026-12-01)" in diff
    after = git(workspace.root, "show", f"memgit/{d['id']}:MEMORY.md").splitlines()
    i = after.index("- [P1] Blog moved to Astro 5 (2026-12-01)")
    assert after[i - 1].startswith("- [P1] 3thing") and after[i - 4] == "## Projects [P1]"


def test_ambiguous_entry_lists_the_candidates(workspace, run_cli, git):
    refs = git(workspace.root, "for-each-ref")
    code, out, err = run_cli(workspace, "propose", "prune", "MEMORY.md", "--entry", "notion")
    clean_error(code, out, err, "2 entries", "line 16", "line 20", "MEMORY.md")
    assert git(workspace.root, "for-each-ref") == refs


def test_entry_and_section_not_found(workspace, run_cli):
    code, out, err = run_cli(workspace, "propose", "prune", "MEMORY.md", "--entry", "no such entry")
    clean_error(code, out, err, "no entry in MEMORY.md")
    code, out, err = run_cli(workspace, "propose", "consolidate", "MEMORY.md", "--section", "Hobbies",
                             "--text", "x")
    clean_error(code, out, err, "no section 'Hobbies'", "Projects", "Tools")


@pytest.mark.parametrize("args, needle", [
    (["prune", "../MEMORY.md", "--entry", "x"], "not a memory file"),
    (["prune", "memory/2026-11-29.md", "--entry", "Cockpit"], "not a memory file"),
    (["merge", "MEMORY.md", "--entry", "Cloudflare", "--to", "x"], "two or more"),
    (["merge", "MEMORY.md", "--entry", "Cloudflare", "--entry", "tunnel for", "--to", "x"], "same entry"),
    (["refresh", "MEMORY.md", "--entry", "Tried Zed", "--to", ZED], "changes nothing"),
    (["consolidate", "MEMORY.md", "--section", "Notes", "--text",
      "db postgres://admin:S3cretPass@db.example.com/prod"], "sensitive"),
])
def test_bad_proposals_are_clean_errors(workspace, run_cli, args, needle):
    code, out, err = run_cli(workspace, "propose", *args)
    clean_error(code, out, err, needle)
    assert "S3cretPass" not in err


def test_propose_twice_and_after_reject(workspace, run_cli):
    d = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Tried Zed")
    code, out, err = run_cli(workspace, "propose", "prune", "MEMORY.md", "--entry", "Tried Zed")
    clean_error(code, out, err, "already open", d["id"])
    code, out, err = run_cli(workspace, "reject", d["id"], "--reason", "still true")
    assert code == 0 and out.startswith(f"Rejected {d['id']}"), err
    code, out, err = run_cli(workspace, "propose", "prune", "MEMORY.md", "--entry", "Tried Zed")
    clean_error(code, out, err, "rejected before")


def test_propose_missing_required_option_is_a_usage_error(workspace, run_cli):
    code, _out, err = run_cli(workspace, "propose", "prune", "MEMORY.md")
    assert code == 2 and "--entry" in err and "Traceback" not in err


# -- proposals / show -----------------------------------------------------------------------------
def test_proposals_list_and_json(workspace, run_cli):
    code, out, _err = run_cli(workspace, "proposals")
    assert (code, out) == (0, "No open proposals.\n")
    assert json.loads(run_cli(workspace, "proposals", "--json")[1]) == []
    a = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare")
    b = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Tried Zed")
    code, out, _err = run_cli(workspace, "proposals")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2 and {ln.split()[0] for ln in lines} == {a["id"], b["id"]}
    assert all(" prune " in ln and "MEMORY.md" in ln for ln in lines)
    items = json.loads(run_cli(workspace, "proposals", "--json")[1])
    assert {i["id"] for i in items} == {a["id"], b["id"]} and all(KEYS <= set(i) for i in items)
    run_cli(workspace, "reject", a["id"])
    assert [i["id"] for i in json.loads(run_cli(workspace, "proposals", "--json")[1])] == [b["id"]]
    every = json.loads(run_cli(workspace, "proposals", "--all", "--json")[1])
    assert {(i["id"], i["status"]) for i in every} == {(a["id"], "rejected"), (b["id"], "open")}
    out = run_cli(workspace, "proposals", "--all")[1]
    assert "[rejected]" in out


def test_proposals_marks_a_stale_one(workspace, run_cli):
    d = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare")
    (workspace.root / "MEMORY.md").write_text(MEMORY_MD.replace(TUNNEL, "- tunnel gone"), encoding="utf-8")
    propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Tried Zed")  # snapshots the edit
    out = run_cli(workspace, "proposals")[1]
    stale = [ln for ln in out.splitlines() if ln.startswith(d["id"])]
    assert "[stale:" in stale[0] and "changed or vanished" in stale[0]


def test_show_reads_like_a_pull_request(workspace, run_cli):
    op = Operation("refresh", "MEMORY.md", (COCKPIT,), text="[P1] Cockpit v1 已上线 (2026-11-29)",
                   confidence=0.86, origin="offline", reason="the log says it shipped",
                   evidence=(Evidence("memory/2026-11-29.md:3", "Cockpit v1 pushed to GitHub"),))
    [p] = proposals.create(workspace, [op])
    code, out, err = run_cli(workspace, "show", p.id)
    assert code == 0, err
    assert out.splitlines()[0] == f"{p.title}  (memgit/{p.id})"
    assert "op: refresh" in out and "confidence: 0.86" in out and "origin: offline" in out
    assert "reason: the log says it shipped" in out
    assert 'memory/2026-11-29.md:3  "Cockpit v1 pushed to GitHub"' in out
    assert "\n-" + COCKPIT + "\n" in out and "\n+- [P1] Cockpit v1 已上线 (2026-11-29)\n" in out
    assert "--- a/MEMORY.md" in out and "+++ b/MEMORY.md" in out
    d = json.loads(run_cli(workspace, "show", p.id[:6], "--json")[1])
    assert d["id"] == p.id and d["evidence"] == [{"source": "memory/2026-11-29.md:3",
                                                   "quote": "Cockpit v1 pushed to GitHub"}]
    assert "-" + COCKPIT in d["diff"]


def test_show_colours_the_diff_on_a_terminal(workspace):
    pexpect = pytest.importorskip("pexpect")
    [p] = proposals.create(workspace, [Operation("prune", "MEMORY.md", (TUNNEL,))])
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    out = pexpect.run(f"{sys.executable} -m memgit -C {workspace.root} show {p.id}", env=env,
                      encoding="utf-8", timeout=60)
    assert "\x1b[31m-" + TUNNEL in out  # red removal, as git shows it


@pytest.mark.parametrize("cmd", ["show", "revert", "reject", "approve"])
@pytest.mark.parametrize("bad", ["zzzzzz", "../x", "12345678"])
def test_unknown_or_malformed_ids_are_clean_errors(workspace, run_cli, cmd, bad):
    code, out, err = run_cli(workspace, cmd, bad)
    clean_error(code, out, err, bad)


@pytest.mark.parametrize("cmd", ["show", "revert", "reject"])
def test_all_is_not_an_id(workspace, run_cli, cmd):
    code, _out, err = run_cli(workspace, cmd, "--all")
    assert code in (1, 2) and "Traceback" not in err
    assert "--all" in err


# -- approve --------------------------------------------------------------------------------------
def test_approve_one(workspace, run_cli, git):
    d = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare")
    code, out, err = run_cli(workspace, "approve", d["id"])
    assert code == 0, err
    assert out.splitlines()[0] == f"Approved {d['id']}: {d['title']}"
    sha = git(workspace.root, "rev-parse", "main").strip()
    assert out.splitlines()[-1] == f"main is now {sha[:8]}"
    msg = git(workspace.root, "log", "-1", "--format=%B", "main")
    assert f"Memgit-Proposal: {d['id']}" in msg and "Approved-by: Test Reviewer <reviewer@example.com>" in msg
    assert TUNNEL not in (workspace.root / "MEMORY.md").read_text(encoding="utf-8")


def test_approve_refused_exits_1_and_keeps_everything(workspace, run_cli, git):
    d = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare")
    agent = MEMORY_MD.replace(TUNNEL, "- [P2] Cloudflare tunnel kept for the second demo (2026-11-30)")
    (workspace.root / "MEMORY.md").write_text(agent, encoding="utf-8")
    code, out, err = run_cli(workspace, "approve", d["id"], "--json")
    assert code == 1
    r = json.loads(out)
    assert r["approved"] == [] and r["refused"][0]["id"] == d["id"] and r["commit"] is None
    assert (workspace.root / "MEMORY.md").read_text(encoding="utf-8") == agent
    code, out, err = run_cli(workspace, "approve", d["id"])
    assert code == 1 and out == ""
    assert err.startswith(f"Error: refused {d['id']} (still open): ") and len(err.strip().splitlines()) == 1
    assert "changed or vanished" in err
    assert json.loads(run_cli(workspace, "proposals", "--json")[1])[0]["status"] == "open"


def test_approve_all(workspace, run_cli):
    code, out, err = run_cli(workspace, "approve", "--all")
    assert (code, out) == (0, "Nothing to approve: no open proposals.\n")
    code, out, err = run_cli(workspace, "approve", "--all", "--json")
    assert code == 0 and json.loads(out) == {"approved": [], "refused": [], "commit": None}
    low, high = proposals.create(workspace, [
        Operation("prune", "MEMORY.md", (TUNNEL,), confidence=0.55, origin="offline"),
        Operation("prune", "MEMORY.md", (ZED,), confidence=0.92, origin="offline"),
    ])
    code, out, err = run_cli(workspace, "approve", "--all", "--min-confidence", "0.8", "--json")
    assert code == 0, err
    assert json.loads(out)["approved"] == [high.id]
    code, out, err = run_cli(workspace, "approve", "--all")
    assert code == 0 and f"Approved {low.id}" in out


@pytest.mark.parametrize("args", [[], ["--all", "12345678"]])
def test_approve_needs_ids_or_all(workspace, run_cli, args):
    clean_error(*run_cli(workspace, "approve", *args), "--all")


def test_min_confidence_out_of_range_is_a_usage_error(workspace, run_cli):
    code, _out, err = run_cli(workspace, "approve", "--all", "--min-confidence", "2")
    assert code == 2 and "--min-confidence" in err and "Traceback" not in err


# -- reject / revert ------------------------------------------------------------------------------
def test_reject_twice(workspace, run_cli):
    d = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare")
    assert run_cli(workspace, "reject", d["id"])[0] == 0
    clean_error(*run_cli(workspace, "reject", d["id"]), "not open")


def test_revert(workspace, run_cli, git):
    a = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare")
    b = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Tried Zed")
    assert run_cli(workspace, "approve", a["id"], b["id"])[0] == 0
    code, out, err = run_cli(workspace, "revert", a["id"])
    assert code == 0, err
    sha = git(workspace.root, "rev-parse", "main").strip()
    assert out == f"Reverted {a['id']}; main is now {sha[:8]}\n"
    data = (workspace.root / "MEMORY.md").read_text(encoding="utf-8")
    assert TUNNEL in data and ZED not in data
    clean_error(*run_cli(workspace, "revert", a["id"]), "already reverted")
    clean_error(*run_cli(workspace, "revert", "deadbeef"), "deadbeef")


# -- log / status ---------------------------------------------------------------------------------
def test_log(workspace, run_cli):
    code, out, _err = run_cli(workspace, "log")
    assert (code, out) == (0, "No history yet.\n")
    a = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare")
    b = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Tried Zed")
    (workspace.root / "USER.md").write_text("# USER\n\n- live edit\n", encoding="utf-8")
    run_cli(workspace, "approve", a["id"])
    run_cli(workspace, "reject", b["id"], "--reason", "still trying Zed")
    run_cli(workspace, "revert", a["id"])
    events = json.loads(run_cli(workspace, "log", "--json")[1])
    assert [e["kind"] for e in events] == ["revert", "reject", "approve", "snapshot", "propose", "propose"]
    assert all(e["at"] and e["summary"] for e in events)
    assert events[1]["reason"] == "still trying Zed"
    out = run_cli(workspace, "log", "-n", "2")[1]
    assert len(out.splitlines()) == 2 and "revert" in out.splitlines()[0]


def test_status(workspace, run_cli):
    code, out, err = run_cli(workspace, "status", "--json")
    assert code == 0, err
    d = json.loads(out)
    files = {f["file"]: f for f in d["files"]}
    assert files["MEMORY.md"] == {"file": "MEMORY.md", "chars": len(MEMORY_MD), "budget": 4000,
                                  "pct": round(100 * len(MEMORY_MD) / 4000, 1)}
    assert d["open_proposals"] == 0 and d["uncommitted"] == []
    p = propose_json(run_cli, workspace, "prune", "MEMORY.md", "--entry", "Cloudflare")
    (workspace.root / "MEMORY.md").write_text(MEMORY_MD + "- live\n", encoding="utf-8")
    d = json.loads(run_cli(workspace, "status", "--json")[1])
    assert d["open_proposals"] == 1 and d["proposals"] == [p["id"]] and d["uncommitted"] == ["MEMORY.md"]
    code, out, err = run_cli(workspace, "status")
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("MEMORY.md"))
    assert "[" in line and "%" in line and f"{len(MEMORY_MD) + 7}/4000 chars" in line
    assert "Open proposals: 1" in out and "Uncommitted agent edits: 1 file(s)" in out


# -- the error boundary ---------------------------------------------------------------------------
def test_outside_a_workspace(tmp_path, run_cli):
    clean_error(*run_cli(tmp_path, "status"), "memgit init")
    clean_error(*run_cli(tmp_path, "proposals"), "memgit init")


def test_version_and_help(run_cli):
    code, out, _err = run_cli(None, "--version")
    assert code == 0 and out.startswith("memgit ")
    code, out, _err = run_cli(None, "--help")
    assert code == 0 and "Quick start" in out


def test_consolidate_into_a_hermes_file_needs_no_section(workspace, run_cli):
    (workspace.root / "USER.md").write_text("User prefers uv\n§\n喜欢简短回答\n", encoding="utf-8")
    d = propose_json(run_cli, workspace, "consolidate", "USER.md", "--text", "Works in 北京时间")
    assert d["section"] is None
    assert run_cli(workspace, "approve", d["id"])[0] == 0
    assert (workspace.root / "USER.md").read_text(encoding="utf-8") == \
        "User prefers uv\n§\n喜欢简短回答\n§\nWorks in 北京时间\n"


def test_consolidate_into_a_markdown_file_names_its_sections(workspace, run_cli):
    code, out, err = run_cli(workspace, "propose", "consolidate", "MEMORY.md", "--text", "x")
    clean_error(code, out, err, "--section", "Projects", "Notes")


def test_status_shows_file_names_as_they_are(workspace, run_cli):
    (workspace.root / "memory" / "周报 2026-11.md").write_text("- 本周\n", encoding="utf-8")
    (workspace.root / "MEMORY.md").write_text(MEMORY_MD + "- live\n", encoding="utf-8")
    d = json.loads(run_cli(workspace, "status", "--json")[1])
    assert sorted(d["uncommitted"]) == ["MEMORY.md", "memory/周报 2026-11.md"]
    assert "  memory/周报 2026-11.md" in run_cli(workspace, "status")[1]


def test_an_unexpected_exception_keeps_its_traceback_and_exits_3(workspace, run_cli, git):
    """A bug is not a user error. Trigger: a main whose tree holds '..' (made by hand with git mktree),
    which GitPython refuses to read. If memgit learns to report that cleanly, pick another trigger."""
    root = workspace.root
    sub = subprocess.run(["git", "-C", str(root), "mktree"], input="", capture_output=True, text=True,
                         check=True).stdout.strip()
    bad = subprocess.run(["git", "-C", str(root), "mktree"], input=f"040000 tree {sub}\t..\n",
                         capture_output=True, text=True, check=True).stdout.strip()
    commit = git(root, "commit-tree", bad, "-p", "main", "-m", "hand-made").strip()
    git(root, "update-ref", "refs/heads/main", commit)
    code, _out, err = run_cli(workspace, "status")
    assert code == 3, (code, err)
    assert "Traceback (most recent call last)" in err and not err.startswith("Error: ")


def test_an_ordinary_git_repo_is_not_a_workspace(tmp_path, run_cli, git):
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "app.py").write_text("print(1)\n")
    git(tmp_path, "add", "app.py")
    git(tmp_path, "commit", "-q", "-m", "code")
    (tmp_path / "app.py").write_text("print(2)  # work in progress\n")
    head = git(tmp_path, "rev-parse", "HEAD")
    for args in (["propose", "prune", "MEMORY.md", "--entry", "x"], ["approve", "--all"], ["status"]):
        clean_error(*run_cli(tmp_path, *args), "not a memgit workspace", "memgit init")
    assert git(tmp_path, "rev-parse", "HEAD") == head
    assert git(tmp_path, "status", "--porcelain") == " M app.py\n"


def test_init_says_when_a_memory_file_is_missing(tmp_path, run_cli):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run_cli(empty, "init")
    assert code == 0, err
    assert "Warning: no memory file is here yet" in err
    typo = tmp_path / "typo"
    typo.mkdir()
    (typo / "MEMORY.md").write_text("# Memory\n\n- [P1] Blog runs on Astro (2026-01-01)\n")
    (typo / "memgit.toml").write_text('[memory]\nfiles = ["MEMORY.md", "USERS.md"]\n')
    code, out, err = run_cli(typo, "init")
    assert code == 0, err
    assert "Warning: USERS.md is listed under [memory] files in memgit.toml but does not exist" in err
    assert "MEMORY.md is listed" not in err


def test_memgit_help(run_cli, tmp_path):
    code, out, err = run_cli(None, "help", cwd=tmp_path)
    assert code == 0, err
    assert "Usage: memgit" in out and "dream" in out and "propose" in out
    code, out, err = run_cli(None, "help", "propose", "prune", cwd=tmp_path)
    assert code == 0, err
    assert out.startswith("Usage: memgit propose prune") and "--again" in out
    code, out, err = run_cli(None, "help", "nosuch", cwd=tmp_path)
    assert code == 1 and err.startswith("Error: memgit has no command 'nosuch'")


def test_proposals_sort_by_time_or_confidence(workspace, run_cli):
    import time

    from memgit import proposals
    from memgit.ops import Operation

    def make(needle, conf):
        e = workspace.document("MEMORY.md").entry(needle).text
        with workspace.repo.lock():
            return proposals.create(workspace, [Operation("prune", "MEMORY.md", (e,), confidence=conf,
                                                          origin="offline", reason="t")])[0].id
    old = make("Cloudflare tunnel for the demo", 0.95)
    time.sleep(1.1)
    new = make("yt-dlp 下載 podcast", 0.72)
    code, out, _ = run_cli(workspace, "proposals", "--json")
    assert [d["id"] for d in json.loads(out)] == [new, old]
    code, out, _ = run_cli(workspace, "proposals", "--sort", "confidence")
    assert [line.split()[0] for line in out.splitlines()] == [old, new]
