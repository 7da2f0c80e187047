"""Transcripts holding the token kinds real agent transcripts carry (npm, PyPI, Docker Hub, Cloudflare,
NVIDIA, Brave, gateway tokens, labelled values in Chinese and English, a token inside a harness
`<task-notification>`), in Claude Code, OpenClaw and Codex files: ingested with --from auto, dreamed over,
every proposal approved, pushed to a bare remote: not one value in any ref, commit message, the journal
or any output."""
from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

from memgit.adopt import init

R = random.Random(1312)


def rnd(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


HEX = "0123456789abcdef"
VALUES = {
    "npm": "npm_" + rnd(36),
    "pypi": "pypi-AgEIcHlwaS5vcmc" + rnd(70, string.ascii_letters + string.digits + "-_"),
    "docker": "dckr_pat_" + rnd(27, string.ascii_letters + string.digits + "-_"),
    "cloudflare": rnd(40, string.ascii_letters + string.digits + "_"),
    "nvidia": "nvapi-" + rnd(64, string.ascii_letters + string.digits + "-_"),
    "brave": "BSA" + rnd(28),
    "gateway": rnd(48, HEX),
    "zh": rnd(32),
    "task": "npm_" + rnd(36),
}
SAID = {
    "npm": f"publish with npm token {VALUES['npm']} 然后 tag v2",
    "pypi": f"上传用这个 PyPI token: {VALUES['pypi']}",
    "docker": f"docker login -u me -p {VALUES['docker']}",
    "cloudflare": f"CLOUDFLARE_API_TOKEN={VALUES['cloudflare']}",
    "nvidia": f"NVIDIA key is {VALUES['nvidia']}, 記得換掉",
    "brave": f"BRAVE_API_KEY={VALUES['brave']}",
    "gateway": f"OPENCLAW_GATEWAY_TOKEN={VALUES['gateway']}",
    "zh": f"新的金鑰：{VALUES['zh']}",
}


def cli(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memgit", "-C", str(root), *args], capture_output=True,
                          text=True, cwd=cwd)


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def transcripts(src: Path) -> None:
    said = list(SAID.values())
    cc = []
    for i, text in enumerate(said):
        ts = f"2026-05-30T0{i % 9}:10:00.000Z"
        cc.append({"type": "user", "sessionId": "cc-1", "uuid": f"u{i}", "parentUuid": None, "timestamp": ts,
                   "isSidechain": False, "message": {"role": "user", "content": text}})
    cc.append({"type": "user", "sessionId": "cc-1", "uuid": "t1", "parentUuid": None,
               "timestamp": "2026-05-30T10:00:00.000Z", "isSidechain": False,
               "message": {"role": "user", "content": "<task-notification><task-id>b1</task-id><status>completed"
                           f"</status><summary>npm publish ok</summary><result>NPM_TOKEN={VALUES['task']}"
                           "</result></task-notification>"}})
    write_jsonl(src / "claude" / "-home-me-app" / "cc-1.jsonl", cc)
    oc = [{"type": "session", "version": 3, "id": "oc-1", "timestamp": "2026-05-30T11:00:00.000Z", "cwd": "/w"}]
    for i, text in enumerate(said):
        oc.append({"type": "message", "id": f"m{i}", "parentId": f"m{i - 1}" if i else None,
                   "timestamp": f"2026-05-30T11:0{i % 9}:00.000Z",
                   "message": {"role": "user", "content": [{"type": "text", "text": text}],
                               "timestamp": 1780138800000 + i}})
    write_jsonl(src / "openclaw" / "oc-1.jsonl", oc)
    cx = [{"timestamp": "2026-05-30T12:00:00.000Z", "type": "session_meta",
           "payload": {"id": "11111111-2222-4333-8444-555555555555", "timestamp": "2026-05-30T12:00:00.000Z",
                       "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.50.0"}}]
    for i, text in enumerate(said):
        cx.append({"timestamp": f"2026-05-30T12:0{i % 9}:30.000Z", "type": "event_msg",
                   "payload": {"type": "user_message", "message": text, "images": []}})
    write_jsonl(src / "codex" / "2026" / "05" / "30" /
                "rollout-2026-05-30T12-00-00-11111111-2222-4333-8444-555555555555.jsonl", cx)


def test_no_transcript_token_reaches_a_ref_a_message_the_journal_or_output(tmp_path):
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\n## Tools [P1]\n- [P1] Releases go out from CI (2026-05-01)\n",
                                    encoding="utf-8")
    (root / "memory" / "2026-05-30.md").write_text("# 2026-05-30\n\n- 10:00 release day\n", encoding="utf-8")
    src = tmp_path / "src"
    transcripts(src)
    init(root)
    output = []
    for args in (["ingest", str(src)], ["ingest", "--json", str(src)], ["dream", "--now", "2026-06-01"],
                 ["proposals", "--json"], ["approve", "--all"], ["log", "-n", "50"], ["status"],
                 ["recall", "npm token PyPI docker NVIDIA BRAVE gateway 金鑰"]):
        p = cli(root, *args)
        assert p.returncode == 0, (args, p.stderr)
        output.append(p.stdout + p.stderr)
    report = json.loads(output[1])
    assert {f["format"] for f in report["files"]} == {"claude-code", "openclaw", "codex"}
    bare = tmp_path / "hub.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", str(bare)], check=True)
    p = cli(root, "push")
    output.append(p.stdout + p.stderr)
    everything = "\n".join(output)
    for repo in (root, bare):
        everything += subprocess.run(["git", "-C", str(repo), "log", "--all", "-p", "--format=%H %B"],
                                     capture_output=True, text=True).stdout
        everything += subprocess.run(["git", "-C", str(repo), "grep", "-h", "-e", ".", *subprocess.run(
            ["git", "-C", str(repo), "for-each-ref", "--format=%(objectname)"], capture_output=True,
            text=True).stdout.split()], capture_output=True, text=True).stdout
    everything += "".join(p.read_text(encoding="utf-8") for p in (root / "sessions").glob("*.jsonl"))
    everything += (root / "MEMORY.md").read_text(encoding="utf-8")
    leaked = [k for k, v in VALUES.items() if v in everything]
    assert leaked == []
    assert "[REDACTED]" in everything  # the values were there to catch, and were caught
