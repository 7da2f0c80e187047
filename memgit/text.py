"""Meaning-bearing units of text in English, Simplified and Traditional Chinese.

Traditional characters are folded to Simplified (OpenCC's t2s) before any
comparison, English words are lower-cased and lightly stemmed, Chinese runs
become character bigrams, and versions, paths and identifiers are kept whole.
Everything that compares memory with logs goes through `terms()`.
"""
from __future__ import annotations

import re
from functools import lru_cache
from re import _constants as _sre, _parser as _sre_parse

CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RE = re.compile(f"[{CJK}]")
CJK_RUN_RE = re.compile(f"[{CJK}]+")
_DIGIT_RE = re.compile(r"\d")
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
    # each pattern runs only where what every match needs occurs: a path holds "/", a version a
    # digit, a percentage "%" (most log lines hold none of them)
    has_path = "/" in t
    if has_path:
        for m in PATH_RE.finditer(t):
            out.append(m.group(0).lower().rstrip("/."))
    found = _versions(t) if _DIGIT_RE.search(t) else ()
    if keep_versions:
        out += [v.lower().lstrip("v") for v in found]
    if "%" in t:
        out += [m.group(0).lstrip("+") for m in PERCENT_RE.finditer(t)]
    t2 = PATH_RE.sub(" ", t) if has_path else t
    if found:  # taking out the paths makes no new version: none in `t`, none in `t2`
        t2 = VERSION_RE.sub(" ", t2)
    for w in WORD_RE.findall(t2):
        out += _word_terms(w)
    for run in CJK_RUN_RE.findall(t2):
        out += cjk_bigrams(run)
    return out


@lru_cache(maxsize=131072)
def _word_terms(w: str) -> tuple[str, ...]:
    """The terms one English word gives: its stem, and the parts of a hyphenated or snake_case name."""
    lw = w.lower()
    if lw in STOP or len(lw) < 2:
        return ()
    out = [stem(lw) if lw.isalpha() else lw]
    if ("-" in lw or "_" in lw) and lw.isascii():
        out += [stem(p) for p in re.split(r"[-_]", lw) if len(p) > 1 and p not in STOP]
    return tuple(out)


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


# -- compiling word lists so re skips the positions no match can start at ---------------------------
_ZERO_WIDTH = (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT)


def _first(seq) -> tuple[set[str], bool] | None:
    """The characters a match of a parsed sequence can start with, and whether it can match empty;
    None when that is not a short list (a class such as \\w, a negated set, a wide range)."""
    out: set[str] = set()
    for op, av in seq:
        if op in _ZERO_WIDTH:
            continue
        if op is _sre.LITERAL:
            out.add(chr(av))
            return out, False
        if op is _sre.IN:
            for o, a in av:
                if o is _sre.LITERAL:
                    out.add(chr(a))
                elif o is _sre.RANGE and a[1] - a[0] < 256:
                    out.update(map(chr, range(a[0], a[1] + 1)))
                else:
                    return None
            return out, False
        if op is _sre.BRANCH:
            empty = False
            for alt in av[1]:
                f = _first(alt)
                if f is None:
                    return None
                out |= f[0]
                empty |= f[1]
            if not empty:
                return out, False
        elif op is _sre.SUBPATTERN:
            if av[1] or av[2]:  # flags of its own
                return None
            f = _first(av[3])
            if f is None:
                return None
            out |= f[0]
            if not f[1]:
                return out, False
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            lo, _, sub = av
            f = _first(sub)
            if f is None:
                return None
            out |= f[0]
            if lo > 0 and not f[1]:
                return out, False
        else:
            return None
    return out, True


def compile_words(pattern: str) -> re.Pattern[str]:
    """`re.compile(pattern)`, finding exactly the same matches, faster on a long alternation of words.

    re tries every branch at every position of a text, about a microsecond a character for a word
    list; a lookahead for the characters a match can start with drops most positions after one test.
    A pattern whose first characters are not a short list (case-insensitive, \\w, ...) is compiled as is.
    """
    parsed = _sre_parse.parse(pattern)
    if parsed.state.flags & (re.I | re.X | re.L | re.M):
        return re.compile(pattern)
    # a branch that starts with "^" is tried at the start of the text only, whatever it starts with
    branches = parsed.data[0][1][1] if len(parsed.data) == 1 and parsed.data[0][0] is _sre.BRANCH \
        else [parsed.data]
    anchored = [b for b in branches if _at_start(b)]
    f = _first([(_sre.BRANCH, (None, [b for b in branches if not _at_start(b)]))])
    if f is None or f[1] or not f[0]:
        return re.compile(pattern)
    chars = "(?=[" + "".join(re.escape(c) for c in sorted(f[0])) + "])"
    try:
        return re.compile(("(?:" + chars + "|^)" if anchored else chars) + "(?:" + pattern + ")")
    except re.error:  # a global flag such as (?s) must stay at the start
        return re.compile(pattern)


def _at_start(seq) -> bool:
    """The parsed sequence can match only at the start of the text (it starts with "^")."""
    while seq:
        op, av = seq[0]
        if op is _sre.AT:
            return av is _sre.AT_BEGINNING
        if op is not _sre.SUBPATTERN or av[1] or av[2]:
            return False
        seq = av[3]
    return False
