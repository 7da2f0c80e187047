"""reflect and the dream diary, on real workspaces."""
from __future__ import annotations

import subprocess
import sys
from datetime import date

from memgit import proposals
from memgit.lifecycle.diary import associate
from memgit.lifecycle.reflect import reflect
from test_dream import MEM_HEAD, _hermetic, log, make  # noqa: F401  (fixture re-used)

NOW = date(2026, 6, 1)


def test_reflect_reports_and_proposes_its_report(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Atlas v2 pending push (2026-04-01)\n"
                                "- [P1] Old importer handles XML feeds (2026-01-10)\n",
        **dict([log("2026-05-26", "gws missing after update; recreated the symlink ~/.local/bin/gws."),
                log("2026-05-28", "gws not found again, recreated the symlink ~/.local/bin/gws."),
                log("2026-05-29", "Atlas v2 pushed and deployed."),
                log("2026-05-31", "Third time: symlink ~/.local/bin/gws gone, recreated it.")]),
    })
    main = ws.main()
    r = reflect(ws, NOW)
    assert any(c["kind"] == "status" for c in r.contradictions)
    assert any("gws" in c["title"] for c in r.promotions)
    assert any("Old importer" in d["text"] for d in r.decay)
    assert "Atlas" not in " ".join(d["text"] for d in r.decay)  # referenced in the window
    assert ws.main() == main  # nothing reached main
    report = proposals.get(ws, r.report_proposal)
    assert report.op.op == "append" and report.op.file == f"reflections/{NOW.isoformat()}.md"
    assert not (ws.root / "reflections").exists()
    proposals.approve(ws, [report.id])
    text = (ws.root / "reflections" / "2026-06-01.md").read_text()
    assert text.startswith("# Reflection 2026-06-01") and "## Decay markers" in text
    assert set(r.proposals) <= {p.id for p in proposals.list_proposals(ws)}


def test_reflect_cli_prints_the_report(tmp_path):
    ws = make(tmp_path, {"MEMORY.md": MEM_HEAD, **dict([log("2026-05-30", "hi")])})
    p = subprocess.run([sys.executable, "-m", "memgit", "-C", str(ws.root), "reflect", "--now", "2026-06-01",
                        "--dry-run"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "# Reflection 2026-06-01" in p.stdout and "## Promotion candidates (0)" in p.stdout
    assert proposals.list_proposals(ws) == []


def test_diary_links_distant_contexts_and_is_seedable(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Infrastructure [P1]\n- [P1] Nightly restic backup to B2 at 02:00 (2026-03-01)\n",
        **dict([log("2026-05-10", "Restore drill from the B2 bucket took 40 minutes with restic."),
                log("2026-05-20", "Cockpit latency chart deployed to h1."),
                log("2026-05-25", "Read an article on Kubernetes operators.")]),
    })
    a = associate(ws, NOW, seed=3, dry_run=True)
    b = associate(ws, NOW, seed=3, dry_run=True)
    assert a == b
    assert a["insights"] and len(a["insights"]) <= 3
    assert any("restic" in i["text"] or "b2" in i["text"] for i in a["insights"])
    made = associate(ws, NOW, seed=3)
    p = proposals.get(ws, made["proposal"])
    assert p.op.file == "memgit-diary.md" and p.op.op == "append"
    proposals.approve(ws, [p.id])
    assert (ws.root / "memgit-diary.md").read_text().startswith("## 2026-06-01")


def test_diary_with_nothing_strong_proposes_nothing(tmp_path):
    ws = make(tmp_path, {"MEMORY.md": MEM_HEAD, **dict([log("2026-05-30", "hi there")])})
    r = associate(ws, NOW, seed=1)
    assert r["insights"] == [] and r["proposal"] is None
    assert proposals.list_proposals(ws) == []


def test_plain_dream_does_not_write_the_diary(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Infrastructure [P1]\n- [P1] Nightly restic backup to B2 (2026-03-01)\n",
        **dict([log("2026-05-10", "Restore drill from the B2 bucket with restic.")]),
    })
    cmd = [sys.executable, "-m", "memgit", "-C", str(ws.root), "dream", "--now", "2026-06-01"]
    assert subprocess.run(cmd, capture_output=True).returncode == 0
    assert all(p.op.file != "memgit-diary.md" for p in proposals.list_proposals(ws))
    assert subprocess.run([*cmd, "--associate", "--seed", "2"], capture_output=True).returncode == 0
    assert any(p.op.file == "memgit-diary.md" for p in proposals.list_proposals(ws))


def test_the_diary_leaves_openclaws_own_dreams_file_alone(tmp_path):
    """OpenClaw writes its dream diary to DREAMS.md; memgit's diary is a file of its own."""
    theirs = "# Dream Diary\n\n- written by OpenClaw's memory-core\n"
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Infrastructure [P1]\n- [P1] Nightly restic backup to B2 at 02:00 (2026-03-01)\n",
        "DREAMS.md": theirs,
        **dict([log("2026-05-10", "Restore drill from the B2 bucket took 40 minutes with restic."),
                log("2026-05-20", "Cockpit latency chart deployed to h1.")]),
    })
    made = associate(ws, NOW, seed=3)
    p = proposals.get(ws, made["proposal"])
    assert p.op.file == "memgit-diary.md"
    proposals.approve(ws, [p.id])
    assert (ws.root / "DREAMS.md").read_text() == theirs
    assert (ws.root / "memgit-diary.md").exists()


def test_reflect_leaves_out_what_a_person_refused_and_files_no_report_that_says_nothing_new(tmp_path):
    ws = make(tmp_path, {
        "MEMORY.md": MEM_HEAD + "## Projects [P1]\n- [P1] Atlas v2 pending push (2026-04-01)\n",
        **dict([log("2026-05-29", "Atlas v2 pushed and deployed."),
                log("2026-05-30", "Atlas v2 deployed on h1, smoke test green.")]),
    })
    r = reflect(ws, NOW)
    assert r.contradictions and r.report_proposal
    for pid in r.proposals:
        proposals.reject(ws, [pid], reason="not now")
    proposals.reject(ws, [r.report_proposal], reason="seen")
    again = reflect(ws, date(2026, 6, 2))
    refused = {proposals.get(ws, pid).op.title for pid in r.proposals}
    assert not any(c["title"] in refused for c in again.contradictions)
    # the same findings on the next day: no new report to review
    third = reflect(ws, date(2026, 6, 3))
    assert third.report_proposal is None or third.report_proposal == again.report_proposal


def test_reflect_with_nothing_to_report_proposes_no_report(tmp_path):
    ws = make(tmp_path, {"MEMORY.md": MEM_HEAD, **dict([log("2026-05-30", "hi there")])})
    r = reflect(ws, NOW)
    assert not (r.contradictions or r.promotions or r.decay)
    assert r.report_proposal is None
    assert proposals.list_proposals(ws) == []
