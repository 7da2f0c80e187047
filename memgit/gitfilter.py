"""The git clean filter that keeps secrets out of what git stores: daily logs, transcripts and the
folders memgit moves them to go into git redacted, while the agent's working files stay as the agent
wrote them. Memory files are not filtered: main is exactly what the agent reads; a secret there is
pruned through a reviewed proposal, and `memgit scrub` then cleans the history.

Declared by `memgit init` in `.gitattributes` (`<path> filter=memgit`), so it covers memgit's own
snapshots and a person's `git add` alike, and configured in `.git/config` as a long-running
process filter (git's protocol v2, gitattributes(5) "Long Running Filter Process"): one memgit
process serves every file of a `git add`, not one per file. Smudge passes bytes through: a checkout
writes what git holds. `required = true`: when the filter cannot run, git refuses to stage instead of storing
the raw text.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

from memgit import sensitive
from memgit.redaction_cache import RedactionCache

NAME = "memgit"
MAX_PKT = 65516
ATTR_MARK = "# memgit: logs and transcripts are stored redacted (secrets never reach git)"


_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def clean(data: bytes, cache: RedactionCache | None = None) -> bytes:
    """What git stores for a file: the same bytes with every sensitive value replaced by [REDACTED].

    A transcript's JSON line is also read string by string as JSON decodes it, so a value hidden by
    escaping (a key block's "\\n", "\\u" escapes, quotes around a labelled value) is seen as the agent
    saw it; only the strings that hold one are rewritten. The spans found are remembered in `cache`
    when they are those of the file as written, which is what the dream redacts again.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    cleaned = text
    if "{" in text or "[" in text:
        cleaned = "".join(_clean_json_line(line) if line.lstrip()[:1] in ("{", "[") else line
                          for line in text.splitlines(keepends=True))
    where = sensitive.spans(cleaned)
    if cache is not None and cleaned == text:
        cache.record(text, where)
    return sensitive.apply_spans(cleaned, where).encode("utf-8")


def _clean_json_line(line: str) -> str:
    def one(m: re.Match) -> str:
        try:
            value = json.loads(m.group(0))
        except ValueError:
            return m.group(0)
        if not isinstance(value, str) or len(value) < 6 or not sensitive.has_sensitive(value):
            return m.group(0)
        return json.dumps(sensitive.redact(value), ensure_ascii=False)

    return _JSON_STRING.sub(one, line)


def attributes(paths: list[str], exempt: list[str] = ()) -> str:
    """The .gitattributes block for these workspace paths (files, or folders ending in /); the
    `exempt` files (memory files inside one of those folders) are stored as they are."""
    lines = [ATTR_MARK]
    for p in paths:
        p = p.replace(" ", "[[:space:]]")
        lines.append(f"{p}** filter={NAME}" if p.endswith("/") else f"{p} filter={NAME}")
    for p in exempt:
        lines.append(f"{p.replace(' ', '[[:space:]]')} -filter")
    return "\n".join(lines) + "\n"


# -- git's pkt-line protocol ---------------------------------------------------------------------
def _read_pkt(inp: BinaryIO) -> bytes | None:
    head = inp.read(4)
    if len(head) < 4:
        raise EOFError
    n = int(head, 16)
    if n == 0:
        return None  # flush
    return inp.read(n - 4)


def _read_list(inp: BinaryIO) -> list[str]:
    items = []
    while (pkt := _read_pkt(inp)) is not None:
        items.append(pkt.decode("utf-8", "replace").rstrip("\n"))
    return items


def _read_content(inp: BinaryIO) -> bytes:
    chunks = []
    while (pkt := _read_pkt(inp)) is not None:
        chunks.append(pkt)
    return b"".join(chunks)


def _write(out: BinaryIO, *items: bytes | None) -> None:
    for item in items:
        if item is None:
            out.write(b"0000")
        else:
            out.write(b"%04x" % (len(item) + 4) + item)


def _write_content(out: BinaryIO, data: bytes) -> None:
    for i in range(0, len(data), MAX_PKT):
        _write(out, data[i:i + MAX_PKT])
    _write(out, None)


def _cache() -> RedactionCache:
    """The workspace's redaction cache (git runs a filter at the top of the work tree); none outside
    a memgit workspace, whose state folder `memgit init` makes."""
    try:
        got = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return RedactionCache(None)
    git_dir = got.stdout.strip()
    if got.returncode != 0 or not git_dir or not (Path(git_dir) / "memgit").is_dir():
        return RedactionCache(None)
    return RedactionCache.for_git_dir(git_dir)


def serve(inp: BinaryIO | None = None, out: BinaryIO | None = None, cache: RedactionCache | None = None) -> None:
    inp = inp or sys.stdin.buffer
    out = out or sys.stdout.buffer
    hello = _read_list(inp)
    if "git-filter-client" not in hello or "version=2" not in hello:
        raise SystemExit("memgit filter: not a git filter-process client")
    _write(out, b"git-filter-server\n", b"version=2\n", None)
    out.flush()  # git reads the reply before it sends its capabilities
    caps = _read_list(inp)
    # smudge is served as is (git writes what it holds); a required filter must answer both
    _write(out, *[f"{c}\n".encode() for c in ("capability=clean", "capability=smudge") if c in caps], None)
    out.flush()
    while True:
        try:
            header = _read_list(inp)
        except EOFError:
            if cache is not None:
                cache.save()
            return
        data = _read_content(inp)
        command = next((h.split("=", 1)[1] for h in header if h.startswith("command=")), "")
        if command not in ("clean", "smudge"):
            _write(out, b"status=error\n", None)
            out.flush()
            continue
        if cache is None and command == "clean":
            cache = _cache()
        try:
            result = clean(data, cache) if command == "clean" else data
        except Exception:  # never store raw text because redaction failed: git reports the error
            _write(out, b"status=error\n", None)
            out.flush()
            continue
        _write(out, b"status=success\n", None)
        _write_content(out, result)
        _write(out, None)  # keep status=success
        out.flush()
