"""memgit.text: compile_words finds exactly what re.compile finds."""
from __future__ import annotations

import re

import pytest

from memgit.dream import lexicon as lx
from memgit.text import compile_words, terms

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


def test_terms_gated_patterns():
    assert terms("see ~/a/b and v1.2.3, 50% done") == ["~/a/b", "1.2.3", "50%", "see"]
    assert terms("no digits or paths here") == ["digit", "path"]
