"""memgit.text: terms in English, Simplified and Traditional Chinese; compile_words finds exactly what re.compile finds."""
from __future__ import annotations

import re
import subprocess
import sys
from importlib.resources import files

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.dream import lexicon as lx
from memgit.text import STOP, STOP_ZH, cjk_words, compile_words, terms

SAMPLES = [
    "", "ok", "hi there", "the deploy is pending review", "已经上线了，没再报错", "good morning!", "[09:00] bob: hello",
    "pinned to v1.2.3 after the rollback", "不要再用 pip 了，以后换成 uv", "timeouts again (third time)", "x → y",
    "Page 502 error then fixed", "nothing new today", "这周只是临时的", "it's done, merged and shipped",
]


@pytest.mark.parametrize("name", [n for n, v in vars(lx).items() if isinstance(v, re.Pattern)])
def test_lexicon_patterns_match_as_compiled(name):
    fast = getattr(lx, name)
    plain = re.compile(fast.pattern, fast.flags)
    for text in SAMPLES + [s.upper() for s in SAMPLES] + [f"{a} {b}" for a in SAMPLES[:6] for b in SAMPLES[6:]]:
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in plain.finditer(text)]


@pytest.mark.parametrize("pattern", [r"\bfoo\b|bar", r"^(?:hi|hello)\b|\bbye", r"(?:a|b)?c", r"x*", r"(?i)abc",
                                     r"[\w]+z", r"^only", r"(?<!dis)\bconnected\b|在线"])
def test_compile_words_same_matches(pattern):
    fast, plain = compile_words(pattern), re.compile(pattern)
    for text in ["foo bar", "hi hello bye", "ac bc c", "xx", "ABC abc", "wz", "only only", "disconnected connected 在线",
                 "  hi", "a\nhi"]:
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in plain.finditer(text)]
        assert fast.sub("_", text) == plain.sub("_", text)


@pytest.mark.parametrize("pattern,flags", [(r"(?<![\w.])v?\d+(?:\.\d+)+", re.I), (r"\bkelvin|straße", re.I),
                                           (r"(?<!\d)\d{2}[:：]\d{2}", 0), (r"\s+end", 0), (r"[a-f]\w*", re.I)])
def test_compile_words_with_flags_and_classes(pattern, flags):
    """Case-insensitive patterns and classes (\\d in any script) keep their matches."""
    fast, plain = compile_words(pattern, flags), re.compile(pattern, flags)
    assert fast.pattern != plain.pattern  # the prefilter is there
    for text in ["V1.2 v3.4.5 x1.2", "KELVIN \u212aelvin STRASSE straße", "12:30 ١٢:٣٠ 12：30", "a  end\tend",
                 "Face BEEF café"]:
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in plain.finditer(text)]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="v V1.2-+%x b3\u0661\u0662kms版元 /a", max_size=40))
def test_version_and_percent_patterns_find_what_the_plain_patterns_find(text):
    from memgit.text import PERCENT_PATTERN, PERCENT_RE, VERSION_PATTERN, VERSION_RE

    assert VERSION_RE.findall(text) == re.compile(VERSION_PATTERN, re.I).findall(text)
    assert PERCENT_RE.findall(text) == re.compile(PERCENT_PATTERN).findall(text)


def test_terms_gated_patterns():
    assert terms("check ~/a/b and v1.2.3, 50% done") == ["~/a/b", "1.2.3", "50%", "check"]
    assert terms("no digits or paths here") == ["digit", "path"]


def test_traditional_and_simplified_spellings_give_the_same_terms():
    hant = "部署腳本在週末壞了，記得檢查 cron"
    hans = "部署脚本在周末坏了，记得检查 cron"
    assert terms(hant) == terms(hans)
    assert {"部署", "脚本", "周末", "检查", "cron"} <= set(terms(hant))


def test_cantonese_written_in_characters_folds_to_mandarin_one_for_one():
    from memgit.text import is_traditional, to_simplified

    said = "部打印機冇再報錯，佢話唔好再 email，嗰啲 quotes 收咗"
    got = to_simplified(said)
    assert got == "部打印机没再报错，他话不要再 email，那些 quotes 收了"
    assert len(got) == len(said)  # (a place in one is the same place in the other)
    # Mandarin's own 不好 stays "not good"; a Simplified Cantonese line is not Traditional
    assert to_simplified("天氣不好") == "天气不好"
    assert not is_traditional("唔好再发")
    # a question word of one ("係咪要改", "系咪") folds whole, however else the line is written
    assert to_simplified("係咪要改時間") == "是不要改时间"


def test_chinese_is_cut_into_dictionary_words_not_bigrams():
    got = set(terms("研究生命起源"))
    assert got == {"研究", "生命", "起源"}
    assert "究生" not in got                      # a bigram across two words


def test_a_word_straddling_two_words_is_not_fused():
    got = set(terms("南京市长江大桥"))
    assert {"南京市", "长江", "大桥"} <= got
    assert "市长" not in got                      # 市|长江: no mayor in this sentence


def test_a_compound_also_gives_its_dictionary_parts():
    assert {"版本", "升级", "版本升级"} <= set(terms("数据库版本升级"))


def test_stop_words_come_from_the_shipped_data():
    base = files("memgit").joinpath("data/stopwords")
    assert base.joinpath("zh.txt").is_file() and base.joinpath("en.txt").is_file()
    assert {"的", "了", "我们"} <= STOP_ZH and {"the", "and", "of"} <= STOP
    assert not any(w.startswith("#") for w in STOP | STOP_ZH)
    assert "的" not in terms("我的服务器") and "the" not in terms("the server")


def test_mixed_line_keeps_versions_paths_and_identifiers_whole():
    got = terms("把 Nginx 升級到 1.25.3，設定在 /etc/nginx/conf.d/app.conf，跑 blue-green_switch")
    assert "1.25.3" in got and "/etc/nginx/conf.d/app.conf" in got
    assert {"nginx", "升级", "blue-green_switch"} <= set(got)
    assert not any(t in ("1", "25", "3", "etc", "conf") for t in got)


def test_words_of_a_run_are_cached_and_stop_free():
    assert cjk_words("我们的数据库") == ("数据", "据库", "数据库")


def test_english_only_text_never_loads_the_segmenter():
    code = ("import sys, memgit.text as t; t.terms('deployed v1.2 to /srv/app'); "
            "print('rjieba' in sys.modules); t.terms('部署'); print('rjieba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_a_lone_character_pairs_with_its_neighbours_where_the_dictionary_fails():
    # jieba cuts 灰度|包回|滚 (a fused 包回 and a lone 滚): the bigram 回滚 restores the word
    got = set(terms("灰度包回滚"))
    assert "回滚" in got and "回滚" in set(terms("回滚灰度包"))
    assert "滚" not in got                        # alone, a character names no subject


def test_a_lone_stop_or_function_character_makes_no_bigram():
    assert set(terms("我说继续")) == {"继续"}      # 说 is a word of its own, 我 a pronoun
    assert set(terms("都报错了")) == {"报错"}


def test_common_chinese_words_are_known_from_the_dictionary():
    from memgit.text import is_common_word

    assert is_common_word("需要") and is_common_word("问题")
    assert not is_common_word("扫描") and not is_common_word("浏览器")
    assert not is_common_word("the") and not is_common_word("月报")  # not Chinese; not a dictionary word


def test_memgit_adds_its_own_stop_words_to_the_general_lists():
    assert {"today", "thanks", "new"} <= STOP and {"今天", "已经", "一直"} <= STOP_ZH


def test_a_word_the_dictionary_lacks_gives_its_pairs_to_meet_the_same_name_cut_otherwise():
    # jieba guesses 主服库 whole here, and cuts 主服|玩家|库 there: the pair 主服 joins them
    assert "主服" in set(terms("主服库 PG 16 起来了")) & set(terms("主服玩家库跑 PostgreSQL 14"))
    assert set(terms("数据库")) == {"数据", "据库", "数据库"}  # a dictionary word keeps only its words


def test_a_noun_is_told_from_an_adverb_by_its_part_of_speech():
    from memgit.text import is_noun
    assert is_noun("锅") and is_noun("冷藏车") and not is_noun("老") and not is_noun("一直")
