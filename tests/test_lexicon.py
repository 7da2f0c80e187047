"""The word lists are data (memgit/data/lexicon/<lang>.toml): they load, every pattern compiles,
Traditional input folds onto the Simplified words, and concepts() maps words of both languages."""
from __future__ import annotations

import re

import pytest

from memgit import wordlists
from memgit.dream import lexicon as lx
from memgit.errors import DataError, MemgitError
from memgit.text import norm

PLAIN = {"word_set", "number", "expiry_unit", "concept"}  # tables of words or numbers, not patterns


def _patterns(node: dict, path: str = ""):
    """Every (key, alternative) of a word file's pattern lists."""
    for key, value in node.items():
        here = f"{path}{key}"
        if isinstance(value, dict):
            if here not in PLAIN:
                yield from _patterns(value, here + ".")
        elif isinstance(value, list):
            for alt in value:
                yield here, alt


@pytest.mark.parametrize("lang", wordlists.LANGUAGES)
def test_every_pattern_compiles(lang):
    found = list(_patterns(wordlists.data(lang)))
    assert len(found) > 200
    for key, alt in found:
        assert isinstance(alt, str) and alt, key
        re.compile(alt)


def test_languages_stay_apart():
    # English alternatives carry no Chinese; Chinese ones may carry an English loan ("待 push")
    cjk = re.compile(r"[\u3400-\u9fff]")
    assert not [a for _, a in _patterns(wordlists.data("en")) if cjk.search(a)]
    assert all(cjk.search(a) or a in ("？",) for _, a in _patterns(wordlists.data("zh")))


def test_done_states_come_from_data():
    assert [d[2] for d in lx.DONE] == [s for s, _ in lx.DONE_RANKS] == list(wordlists.table("done", "en"))
    assert set(wordlists.table("done", "zh")) == set(wordlists.table("done", "en"))
    assert lx.TRADITIONAL["已上线"] == "已上線" and lx.TRADITIONAL["已合并"] == "已合併"
    assert set(lx.TRADITIONAL) == {d[3] for d in lx.DONE}


def test_state_pairs_and_tables():
    assert [name for name, _, _ in lx.STATE_PAIRS] == ["connection", "running", "enabled"]
    assert lx.EXPIRY_DAYS["week"] == lx.EXPIRY_DAYS["周"] == 7
    assert lx.NUMBER_WORDS["three"] == lx.NUMBER_WORDS["三"] == 3
    assert "版本" in lx.VERSION_WORDS and "version" in lx.VERSION_WORDS
    assert lx.EXPIRES_IN.groups == 4


def test_traditional_input_folds_onto_simplified_words():
    assert lx.done_state(norm("新版已經上線"))[1] == "live"
    assert lx.done_state(norm("還沒上線")) is None  # negated
    assert lx.PENDING.search(norm("設計中，待審核"))
    assert lx.REMEDY.search(norm("重啟之後就好了"))
    assert lx.TRANSIENT_STATE.search(norm("這幾天很忙"))
    assert not lx.TRANSIENT_STATE.search(norm("幫忙看一下"))  # 帮忙 is help, not busy
    assert lx.EXPIRY_DAYS[lx.EXPIRES_IN.search(norm("3個月後過期")).group(4)] == 30


def test_as_written_lists_spell_both_scripts():
    from memgit.lifecycle import priority

    assert priority.STANDING_TITLE_RE.search("溝通習慣") and priority.STANDING_TITLE_RE.search("沟通习惯")
    assert priority.RULE_MARK_RE.search("切勿刪除") and priority.RULE_MARK_RE.search("NEVER skip it")
    assert not priority.RULE_MARK_RE.search("never mind")  # capitals only
    assert lx.ATTRIBUTION.sub("", "Ana says that tabs win") == "tabs win"


def test_concepts_map_both_languages():
    assert lx.concept("Deployed") == "deploy"
    assert lx.concept("上线") == lx.concept("上線") == lx.concept("部署") == "deploy"
    assert lx.concept("升級") == "upgrade"
    assert lx.concept("banana") is None
    assert lx.concepts("We rolled back, then 重新安裝 and merged") == {"rollback", "install", "merge"}
    assert lx.concepts("昨晚發布，今天換成新的") == {"release", "switch"}
    assert lx.concepts("a fixture and a suffix") == set()  # whole English words only
    assert lx.concepts("") == set()


def test_every_concept_has_both_languages():
    en, zh = wordlists.table("concept", "en"), wordlists.table("concept", "zh")
    assert set(en) == set(zh) and len(en) >= 8
    assert {"deploy", "fix", "upgrade", "switch", "release", "merge", "remove", "install"} <= set(en)


@pytest.fixture
def word_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(wordlists, "FOLDER", tmp_path)
    wordlists.data.cache_clear()
    yield tmp_path
    wordlists.data.cache_clear()


def test_malformed_file_is_a_clear_error(word_folder):
    (word_folder / "en.toml").write_text("pending = [\n", encoding="utf-8")
    with pytest.raises(DataError, match="malformed") as e:
        wordlists.words("pending")
    assert isinstance(e.value, MemgitError)


def test_missing_file_or_key_or_bad_pattern_is_a_clear_error(word_folder):
    with pytest.raises(DataError, match="missing"):
        wordlists.words("pending")
    (word_folder / "en.toml").write_text("pending = 'x'\nbad = ['(']\n", encoding="utf-8")
    (word_folder / "zh.toml").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="not a list"):
        wordlists.words("pending")
    with pytest.raises(DataError, match="no 'nothing'"):
        wordlists.words("nothing")
    with pytest.raises(DataError, match="bad pattern"):
        wordlists.pattern("bad")


def test_a_pattern_compiled_later_matches_as_one_compiled_now(word_folder):
    (word_folder / "en.toml").write_text("pending = ['on hold', 'waiting for']\nbad = ['(']\n", encoding="utf-8")
    (word_folder / "zh.toml").write_text("pending = ['等待中']\n", encoding="utf-8")
    now, later = wordlists.pattern("pending", re.I), wordlists.pattern_later("pending", re.I)
    for text in ("Build ON HOLD", "still waiting for review; 等待中", "nothing here", ""):
        assert [m.span() for m in later.finditer(text)] == [m.span() for m in now.finditer(text)]
        assert later.sub("#", text) == now.sub("#", text)
    assert later.pattern == now.pattern and later.source.startswith("(?:on hold)")
    bad = wordlists.pattern_later("bad")  # the list is read now, the pattern checked at first use
    with pytest.raises(DataError, match="bad pattern"):
        bad.search("x")
    with pytest.raises(DataError, match="no 'nothing'"):
        wordlists.pattern_later("nothing")


@pytest.mark.parametrize("line", ["wants the sheet at 19:00 instead, just today", "only for tonight send it by text",
                                  "tonight only: drop-off at 06:30", "今晚九点发，就今天", "只限今日改 Signal",
                                  "今天 3 点交，今天而已", "Stage 2 前一晚例外 7pm", "那天當面給我就好，就那天",
                                  "嗰晚 7pm 俾我，就嗰次", "send it at 7 that evening, just that once"])
def test_a_change_said_for_today_or_tonight_alone_is_an_exception(line):
    from memgit.dream import lexicon as lx
    from memgit.dream.model import fold
    assert lx.EXCEPTION.search(fold(line))


@pytest.mark.parametrize("line", ["from today send it at 19:00", "just today's numbers, nothing else", "今天起改 19:00",
                                  "今晚九点发 Excel", "没有例外", "一律不得例外",
                                  "就那天开始改 9 点"])
def test_a_change_from_today_on_is_no_exception(line):
    from memgit.dream import lexicon as lx
    from memgit.dream.model import fold
    assert not lx.EXCEPTION.search(fold(line))


@pytest.mark.parametrize("line, pending", [("食品業者登錄已送件，等衛生局審", True), ("referral deal — 等他们 manager sign", True),
                                           ("等下再说", False), ("等 Kevin 到了再开会", False)])
def test_a_wait_on_a_partys_review_said_with_its_one_verb_is_pending(line, pending):
    from memgit.dream import lexicon as lx
    from memgit.dream.model import fold
    assert bool(lx.PENDING.search(fold(line))) is pending


@pytest.mark.parametrize("line", ["group miss 咗 17:30 尾班街渡", "we missed the last bus back", "错过了末班车",
                                  "没赶上最后一班船"])
def test_a_connection_missed_is_a_mishap(line):
    from memgit.dream import lexicon as lx
    from memgit.dream.model import fold
    assert lx.MISHAP.search(fold(line))


@pytest.mark.parametrize("line", ["miss you guys", "no one missed the briefing"])
def test_missing_a_person_or_nothing_is_no_mishap(line):
    from memgit.dream import lexicon as lx
    from memgit.dream.model import fold
    assert not lx.MISHAP.search(fold(line))


@pytest.mark.parametrize("line, marker", [("由今日起，所有 route 一律出發前 check", True), ("即日起改用新表", True),
                                          ("今日起身好早", False), ("他由今日開始放假", True)])
def test_from_today_on_as_hong_kong_and_taiwan_write_it(line, marker):
    from memgit.dream import lexicon as lx
    from memgit.dream.model import fold
    assert bool(lx.TIME_MARKER.search(fold(line))) is marker


@pytest.mark.parametrize("line", ["send 去 Signal 得唔得", "九點傳好不好", "改 LINE 行不行"])
def test_whether_it_may_be_so_is_asked(line):
    from memgit.dream import lexicon as lx
    from memgit.dream.model import fold
    assert lx.ASKED.search(fold(line))


@pytest.mark.parametrize("line, word, negated", [("验证员当场说都没问题、通过了", "通过了", False),
                                                 ("一切无异常、已修复", "已修复", False),
                                                 ("还没通过", "通过", True), ("没有通过了", "通过了", True)])
def test_no_problem_is_no_negation_of_what_follows_it(line, word, negated):
    from memgit.dream import lexicon as lx
    assert lx.negated_at(line, line.index(word)) is negated
