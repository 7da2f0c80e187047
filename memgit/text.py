"""Meaning-bearing units of text in English, Simplified and Traditional Chinese.

Traditional characters are folded to Simplified (OpenCC's t2s) before any
comparison, English words are lower-cased and lightly stemmed, Chinese runs
become character bigrams, and versions, paths and identifiers are kept whole.
Everything that compares memory with logs goes through `terms()`.
"""
from __future__ import annotations

import re
from functools import lru_cache

CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RE = re.compile(f"[{CJK}]")
CJK_RUN_RE = re.compile(f"[{CJK}]+")
# a bare X.Y followed by a unit is a measurement, not a version
_UNIT = r"(?!\s*(?:%|‰|[kmgt]?b\b|m?s\b|sec|min|h\b|x\b|hz|khz|元|块|秒|分|倍|万|亿|[kmg]\b))"
VERSION_RE = re.compile(r"(?<![\w.])v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?!\w|\.\w)" + _UNIT +
                        r"|(?<![\w.])v\d+(?!\w|\.\w)", re.I)
PATH_RE = re.compile(r"(?:~|\.{0,2})/[\w.@%+-]+(?:/[\w.@%+-]*)*")
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_'][A-Za-z0-9]+)*")
PERCENT_RE = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?%")
NUMBER_RE = re.compile(r"[-+]?\d+(?:[.,]\d+)*%?")
TIME_PREFIX_RE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s*[-–—:]?\s*)?")

STOP = frozenset("""
a an the and or but if then else of to in on at by for with from into onto over under up down out off
is are was were be been being am do does did done have has had having it its it's this that these those
there here i me my we our you your he she they them their his her as so than too very just also only
not no yes can could would should will shall may might must about after before again all any both each
few more most other some such own same what which who whom when where why how again once now today
still got get gets getting make made let lets via per new old one two three first second third time
times day days week weeks s t re ve ll d m ok okay thanks thank hi hello please said says say
behind between through during without within because while above below around near across since like
using use used uses being into onto upon whether either neither each every much many lot lots
""".split())
# function characters: a bigram holding one of them crosses a word boundary or carries no meaning
STOP_CJK = frozenset("的了是在和与及也都就还又再很太把被让给对从到为着过吗呢吧啊呀嗯哦这那个些我你他她它们说")
# common words that carry no subject: a Chinese run is split at them before it becomes bigrams, so
# no bigram straddles a word boundary next to one ("一下今天" gives no "下今")
COMMON_ZH = ("一下", "一个", "今天", "明天", "昨天", "已经", "现在", "然后", "因为", "所以", "但是", "如果",
             "可以", "没有", "不是", "就是", "还是", "一直", "有点", "我们", "你们", "他们", "这个", "那个",
             "这些", "什么", "怎么", "时候")
STOP_BIGRAMS = frozenset(COMMON_ZH)
_COMMON_RE = re.compile("|".join(COMMON_ZH))


@lru_cache(maxsize=1)
def _converter():
    import opencc  # OpenCC is maintained and phrase-aware; only this module imports it

    return opencc.OpenCC("t2s")


@lru_cache(maxsize=65536)
def to_simplified(text: str) -> str:
    """Fold Traditional characters to Simplified (no-op for other text)."""
    if not CJK_RE.search(text):
        return text
    return _converter().convert(text)


def is_traditional(text: str) -> bool:
    return bool(CJK_RE.search(text)) and to_simplified(text) != text


def cjk_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if CJK_RE.match(c)) / len(letters)


def norm(text: str) -> str:
    """Lower-case, Traditional→Simplified, whitespace collapsed: the comparable form of a text."""
    return " ".join(to_simplified(text).lower().split())


def strip_time(line: str) -> str:
    """A log line without its list marker and leading HH:MM."""
    return TIME_PREFIX_RE.sub("", line, count=1).strip()


@lru_cache(maxsize=131072)
def stem(word: str) -> str:
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
        return w[:-1] if len(w) > 3 and w[-1] == w[-2] else w
    if len(w) > 4 and w.endswith("ed") and not w.endswith("eed"):
        w = w[:-2]
        return w[:-1] if len(w) > 3 and w[-1] == w[-2] else w
    if len(w) > 3 and w.endswith("es") and w[-3] in "sxz":
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def versions(text: str) -> list[str]:
    return list(_versions(text))


@lru_cache(maxsize=65536)
def _versions(text: str) -> tuple[str, ...]:
    return tuple(m.group(0) for m in VERSION_RE.finditer(text))


def version_key(v: str) -> tuple[int, ...]:
    nums = re.findall(r"\d+", v.split("-")[0].split("+")[0])
    return tuple(int(n) for n in nums)


def cjk_bigrams(run: str) -> list[str]:
    out: list[str] = []
    for piece in _COMMON_RE.split(run):
        if len(piece) == 1:
            out += [piece] if piece not in STOP_CJK else []
            continue
        grams = [piece[i:i + 2] for i in range(len(piece) - 1)]
        out += [g for g in grams if g[0] not in STOP_CJK and g[1] not in STOP_CJK]
    return out


def terms(text: str, keep_versions: bool = True) -> list[str]:
    """Meaning-bearing terms: stemmed English words, Chinese bigrams, versions, paths, identifiers."""
    t = to_simplified(text)
    out: list[str] = []
    for m in PATH_RE.finditer(t):
        out.append(m.group(0).lower().rstrip("/."))
    if keep_versions:
        out += [v.lower().lstrip("v") for v in versions(t)]
    out += [m.group(0).lstrip("+") for m in PERCENT_RE.finditer(t)]
    t2 = VERSION_RE.sub(" ", PATH_RE.sub(" ", t))
    for m in WORD_RE.finditer(t2):
        w = m.group(0)
        lw = w.lower()
        if lw in STOP or len(lw) < 2:
            continue
        out.append(stem(lw) if lw.isalpha() else lw)
        if ("-" in lw or "_" in lw) and lw.isascii():
            out += [stem(p) for p in re.split(r"[-_]", lw) if len(p) > 1 and p not in STOP]
    for run in CJK_RUN_RE.findall(t2):
        out += cjk_bigrams(run)
    return out


def term_set(text: str) -> frozenset[str]:
    return frozenset(terms(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Overlap coefficient |a∩b| / min(|a|,|b|)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def clauses(text: str) -> list[str]:
    """Split a sentence into clauses at Chinese and English punctuation."""
    parts = re.split(r"[，,；;。！!？?]\s*|(?<=[a-z])\.\s+|\s[—–]\s", text)
    return [p.strip() for p in parts if p and p.strip()]
