"""Secrets end to end: every positive of the corpus (detect-secrets' own test values and real-looking
provider formats, Chinese ID and bank card numbers, trading figures) planted in logs, sessions and memory;
a full cycle through the CLI, `memgit scrub` of what the approved prunes left in history, a push to a bare remote and a clone of it; zero may reach memory, a
proposal, a commit message, the journal, any ref of the three repositories or output, and the agent's
logs and transcripts stay byte for byte as written. The look-alikes (versions, hashes in prose, dates, rules such as "-8% stop loss") must survive.
Both rates are printed (`pytest -s`)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from memgit.adopt import init

sys.path.insert(0, str(Path(__file__).parent / "data"))
from secrets_corpus import LOOKALIKES, POSITIVES  # noqa: E402

DAYS = ["2026-05-27", "2026-05-29", "2026-05-31"]


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memgit", "-C", str(root), *args], capture_output=True, text=True)


def test_no_planted_secret_leaks_and_lookalikes_survive(tmp_path):
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "sessions").mkdir()
    values = sorted({v for _, _, vs in POSITIVES for v in vs if len(v) >= 4})
    for day in DAYS:  # every positive recurs on three days: the strongest pull towards consolidation
        lines = [f"# {day}", ""]
        for _, text, _ in POSITIVES:
            lines += [f"- 10:00 {ln}" if i == 0 else ln for i, ln in enumerate(text.splitlines())]
        (root / "memory" / f"{day}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    turns = [{"ts": f"{DAYS[-1]}T21:00:{i % 60:02d}+08:00", "session": "s", "role": "user", "text": text}
             for i, (_, text, _) in enumerate(POSITIVES)]
    (root / "sessions" / f"{DAYS[-1]}-s.jsonl").write_text(
        "\n".join(json.dumps(t, ensure_ascii=False) for t in turns) + "\n", encoding="utf-8")
    single = [(t, vs) for _, t, vs in POSITIVES if "\n" not in t][:40]
    lookalikes = [x for x in LOOKALIKES if "\n" not in x and x.strip()]
    memory = ["# MEMORY", "", "## Environment [P0]", "- Host: test box", "", "## Facts [P1]"]
    memory += [f"- [P1] {x} (2026-05-01)" for x in lookalikes]
    memory += ["", "## Notes [P2]"] + [f"- [P2] {t} (2026-04-01)" for t, _ in single]
    (root / "MEMORY.md").write_text("\n".join(memory) + "\n", encoding="utf-8")
    (root / "memgit.toml").write_text('[capacity]\n"MEMORY.md" = 200000\n\n[dream]\nwindow_days = 7\nmax_ops = 100\n')

    written = {p: p.read_bytes() for p in [*(root / "memory").iterdir(), *(root / "sessions").iterdir()]}
    output = []
    init(root)
    for args in (["dream", "--now", "2026-06-01"], ["dream", "--now", "2026-06-01", "--json"],
                 ["proposals", "--json"], ["proposals", "--all"]):
        p = cli(root, *args)
        assert p.returncode == 0, p.stderr
        output.append(p.stdout + p.stderr)
    ids = [x["id"] for x in json.loads(output[2])]
    assert ids, "the planted secrets in memory are proposed for pruning"
    from click.testing import CliRunner

    from memgit import cli as cli_module

    runner = CliRunner()
    for pid in ids:  # in-process: the same commands, without a start-up per call
        for args in (["show", pid], ["show", pid, "--json"], ["pr", pid]):
            r = runner.invoke(cli_module.cli, ["-C", str(root), *args])
            assert r.exit_code == 0, r.output
            output.append(r.output)
    for args in (["approve", "--all"], ["log", "--json"], ["status"], ["recall", "password token key"],
                 ["reflect", "--now", "2026-06-01", "--dry-run"]):
        p = cli(root, *args)
        assert p.returncode == 0, (args, p.stderr)
        output.append(p.stdout + p.stderr)

    # the approved prunes left the secrets in older commits: push refuses until they are scrubbed
    p = cli(root, "scrub")
    assert p.returncode == 0, p.stderr
    output.append(p.stdout + p.stderr)
    # push to a bare remote, clone it elsewhere: neither may hold a value either
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", str(hub)], check=True)
    p = cli(root, "push")
    assert p.returncode == 0, p.stderr
    output.append(p.stdout + p.stderr)
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(hub), str(other)], check=True)
    init(other)
    p = cli(other, "pull")
    assert p.returncode == 0, p.stderr
    output.append(p.stdout + p.stderr)
    # the agent's logs and transcripts are byte for byte what it wrote
    assert {p: p.read_bytes() for p in written} == written

    printed = "\n".join(output)
    after = (root / "MEMORY.md").read_text(encoding="utf-8")
    repos = [root, hub, other]
    messages = "\n".join(subprocess.run(["git", "-C", str(r), "log", "--all", "--format=%B"], capture_output=True,
                                        text=True).stdout for r in repos)
    refs = {r: subprocess.run(["git", "-C", str(r), "for-each-ref", "--format=%(refname)"], capture_output=True,
                              text=True).stdout.split() for r in repos}
    leaks = []
    for v in values:
        # as a token of its own: a short figure such as "1200" may well occur inside a commit id
        token = re.compile(r"(?<![0-9A-Za-z])" + re.escape(v) + r"(?![0-9A-Za-z])")
        where = []
        if token.search(after):
            where.append("MEMORY.md")
        if token.search(printed):
            where.append("output")
        if token.search(messages):
            where.append("a commit message or the journal")
        for r in repos:  # every ref's tree, logs and transcripts included, here, on the remote, in the clone
            g = subprocess.run(["git", "-C", str(r), "grep", "-l", "-F", "-e", v, *refs[r]], capture_output=True,
                               text=True).stdout
            if g.strip():
                where.append(f"a ref's tree in {r.name}: " + g.split()[0])
        if where:
            leaks.append((v[:12], where))
    kept = [x for x in lookalikes if f"- [P1] {x} (2026-05-01)" in after]
    print(f"\nsecrets: {len(values) - len(leaks)}/{len(values)} kept out ({100 * (1 - len(leaks) / len(values)):.1f} %); "
          f"look-alikes: {len(kept)}/{len(lookalikes)} survive ({100 * len(kept) / len(lookalikes):.1f} %)")
    assert leaks == []
    assert kept == lookalikes, sorted(set(lookalikes) - set(kept))
