"""memgit.redaction_cache: the spans the clean filter found in a log, reused by the dream while the log
and the filter's code are unchanged; spans only, never a value; a damaged or hostile file is ignored."""
from __future__ import annotations

import json
import os
from datetime import date

import pytest

from memgit import gitfilter, redaction_cache, sensitive
from memgit.dream import collect
from memgit.redaction_cache import CACHE_NAME, MIN_CHARS, RedactionCache

OPENAI = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
PASSWORD = "hunter2-Horse!9"
DSN_PASSWORD = "S3cretPass"


def a_log(n: int = 200) -> str:
    lines = ["# 2026-11-30", ""]
    for i in range(n):
        lines.append(f"- 10:{i % 60:02d} rebuilt the blog preview, step {i} of the release checklist")
        if i == 50:
            lines.append(f"- OpenAI key for the briefing: {OPENAI}")
        if i == 120:
            lines.append(f"- NAS admin password: {PASSWORD}")
        if i == 150:
            lines.append(f"- 行情库连接：postgres://quant:{DSN_PASSWORD}@10.0.0.5:5432/ticks")
    text = "\n".join(lines) + "\n"
    assert len(text) >= MIN_CHARS
    return text


@pytest.fixture
def path(tmp_path):
    return tmp_path / "memgit" / CACHE_NAME


def no_scan(monkeypatch):
    def refuse(text):
        raise AssertionError("scanned although the cache holds the text")

    monkeypatch.setattr(sensitive, "spans", refuse)


def test_the_filter_fills_the_cache_and_the_dream_redacts_from_it(path, monkeypatch):
    text = a_log()
    cache = RedactionCache(path)
    stored = gitfilter.clean(text.encode(), cache)
    cache.save()
    expected = sensitive.redact(text)
    assert stored.decode() == expected
    no_scan(monkeypatch)
    assert RedactionCache(path).redact(text) == expected


def test_the_cache_holds_spans_never_a_value(path):
    text = a_log()
    cache = RedactionCache(path)
    cache.redact(text)
    cache.save()
    data = path.read_text(encoding="utf-8")
    for value in (OPENAI, PASSWORD, DSN_PASSWORD, "hunter2", "S3cret", "sk-proj", "quant"):
        assert value not in data
    raw = json.loads(data)
    assert set(raw) == {"fingerprint", "entries"}
    [spans] = raw["entries"].values()
    assert spans and all(len(s) == 3 and all(isinstance(x, int) for x in s) for s in spans)


def test_a_short_text_is_never_cached(path):
    cache = RedactionCache(path)
    cache.redact(f"- NAS admin password: {PASSWORD}\n")
    cache.save()
    assert not path.exists()


def _assert_dropped_after(path, monkeypatch, change) -> None:
    """After `change` (patching what the fingerprint covers) the saved entries are dropped; the patch
    and the memoised fingerprint are undone either way."""
    change()
    redaction_cache.fingerprint.cache_clear()
    try:
        assert RedactionCache(path).entries == {}
    finally:
        monkeypatch.undo()
        redaction_cache.fingerprint.cache_clear()


def test_a_change_of_the_filter_code_drops_every_entry(path, monkeypatch, tmp_path):
    text = a_log()
    cache = RedactionCache(path)
    cache.redact(text)
    cache.save()
    assert RedactionCache(path).entries
    # a rule added to sensitive.py: another fingerprint, so the log is scanned again
    changed = tmp_path / "sensitive.py"
    changed.write_bytes(open(sensitive.__file__, "rb").read() + b"\n# a new rule\n")
    _assert_dropped_after(path, monkeypatch, lambda: monkeypatch.setattr(sensitive, "__file__", str(changed)))
    assert RedactionCache(path).entries


def test_a_new_cache_version_drops_every_entry(path, monkeypatch):
    cache = RedactionCache(path)
    cache.redact(a_log())
    cache.save()
    _assert_dropped_after(path, monkeypatch, lambda: monkeypatch.setattr(
        redaction_cache, "CACHE_VERSION", redaction_cache.CACHE_VERSION + 1))


@pytest.mark.parametrize("content", [
    b"", b"\x00\xff not json", b"[]", b'{"fingerprint": 1}', b"{" * 100_000,
    b'{"fingerprint": "FP", "entries": []}',
])
def test_a_damaged_cache_file_is_ignored(path, content):
    path.parent.mkdir(parents=True)
    path.write_bytes(content.replace(b"FP", redaction_cache.fingerprint().encode()))
    text = a_log()
    assert RedactionCache(path).redact(text) == sensitive.redact(text)


@pytest.mark.parametrize("entry", [
    "no list", [["1", 0, 5]], [[1, 0]], [[True, 0, 5]], [[10 ** 9, 0, 5]], [[0, 0, 5]], [[3, 5, 5]],
    [[3, -1, 5]], [[3, 0, 10 ** 6]], [[5, 0, 4], [3, 0, 4]], [[5, 0, 8], [5, 4, 9]], [[3, 0, 2.5]],
])
def test_a_hostile_entry_is_ignored_and_the_text_scanned(path, entry):
    text = a_log()
    path.parent.mkdir(parents=True)
    key = redaction_cache._key(text)
    path.write_text(json.dumps({"fingerprint": redaction_cache.fingerprint(), "entries": {key: entry}}))
    assert RedactionCache(path).redact(text) == sensitive.redact(text)


def test_a_cache_that_is_not_a_regular_file_is_not_read(path, tmp_path):
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # opening a FIFO for reading would wait for a writer
    text = a_log()
    assert RedactionCache(path).redact(text) == sensitive.redact(text)
    path.unlink()
    target = tmp_path / "elsewhere.json"
    RedactionCache(target).redact(text)
    cache = RedactionCache(target)
    cache.dirty = True
    cache.save()
    path.symlink_to(target)  # a symlink is not followed
    assert RedactionCache(path).entries == {}


def test_a_full_cache_drops_its_oldest_entries(path, monkeypatch):
    monkeypatch.setattr(redaction_cache, "MAX_ENTRIES", 3)
    cache = RedactionCache(path)
    texts = [a_log(100 + i) for i in range(5)]
    for t in texts:
        cache.redact(t)
    cache.save()
    assert list(RedactionCache(path).entries) == [redaction_cache._key(t) for t in texts[2:]]


def test_log_observations_are_the_same_through_the_cache(path, monkeypatch):
    text = a_log()
    plain = collect._log_observations("memory/2026-11-30.md", date(2026, 11, 30), text)
    cache = RedactionCache(path)
    gitfilter.clean(text.encode(), cache)
    cache.save()
    no_scan(monkeypatch)  # only the whole file is looked up; no line of this log is a transcript turn
    cached = collect._log_observations("memory/2026-11-30.md", date(2026, 11, 30), text, RedactionCache(path))
    assert cached == plain
    assert any(o.sensitive for o in cached)
    assert not any(v in o.text or v in o.raw for o in cached for v in (OPENAI, PASSWORD, DSN_PASSWORD))


def test_a_dream_reuses_what_git_add_found(workspace, git, monkeypatch):
    from memgit.dream import dream

    root = workspace.root
    log = root / "memory" / "2026-11-30.md"
    log.write_text(a_log(), encoding="utf-8")
    git(root, "add", "memory/2026-11-30.md")  # the clean filter runs in its own process and fills the cache
    path = root / ".git" / "memgit" / CACHE_NAME
    data = path.read_text(encoding="utf-8")
    assert PASSWORD not in data and OPENAI not in data and DSN_PASSWORD not in data
    assert redaction_cache._key(log.read_text(encoding="utf-8")) in json.loads(data)["entries"]
    scanned = []
    real = sensitive.spans
    monkeypatch.setattr(sensitive, "spans", lambda t: scanned.append(t) or real(t))
    dream(workspace, now=date(2026, 12, 1), dry_run=True)
    assert log.read_text(encoding="utf-8") not in scanned
