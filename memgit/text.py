"""Meaning-bearing units of text in English, Simplified and Traditional Chinese.

Traditional characters are folded to Simplified (OpenCC's t2s) before any
comparison, English words are lower-cased and lightly stemmed, Chinese runs
are cut into words by rjieba (jieba's dictionary and algorithm), with
character bigrams where a lone character shows the dictionary failed, stop words
of both languages come from `memgit/data/stopwords/`, and versions, paths and
identifiers are kept whole. Everything that compares memory with logs goes
through `terms()`.
"""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain
from importlib.resources import files
from re import _constants as _sre, _parser as _sre_parse

# -- compiling word lists so re skips the positions no match can start at ---------------------------
_ZERO_WIDTH = (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT)
_CATEGORY = {_sre.CATEGORY_DIGIT: r"\d", _sre.CATEGORY_SPACE: r"\s", _sre.CATEGORY_WORD: r"\w"}


def _first(seq) -> tuple[set[str], bool] | None:
    """The characters (or \\d, \\s, \\w) a match of a parsed sequence can start with, and whether it can
    match empty; None when that is not a short list (., a negated set, a wide range)."""
    out: set[str] = set()
    for op, av in seq:
        if op in _ZERO_WIDTH:
            continue
        if op is _sre.LITERAL:
            out.add(re.escape(chr(av)))
            return out, False
        if op is _sre.IN:
            for o, a in av:
                if o is _sre.LITERAL:
                    out.add(re.escape(chr(a)))
                elif o is _sre.RANGE and a[1] - a[0] < 256:
                    out.update(re.escape(chr(c)) for c in range(a[0], a[1] + 1))
                elif o is _sre.CATEGORY and a in _CATEGORY:
                    out.add(_CATEGORY[a])  # \d: the digits of every script, as the pattern means
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


def compile_words(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, finding exactly the same matches, faster on a long alternation of
    words or a pattern that opens with a lookbehind.

    re tries every branch at every position of a text, about a microsecond a character for a word
    list, and cannot skip ahead past an opening lookbehind; a lookahead for the characters a match can
    start with drops most positions after one test (under re.I it folds case as the pattern does).
    A pattern whose first characters are not a short list (., a negated set, a wide range) is compiled
    as is.
    """
    parsed = _sre_parse.parse(pattern, flags)
    if parsed.state.flags & (re.X | re.L | re.M):
        return re.compile(pattern, flags)
    # a branch that starts with "^" is tried at the start of the text only, whatever it starts with
    branches = parsed.data[0][1][1] if len(parsed.data) == 1 and parsed.data[0][0] is _sre.BRANCH \
        else [parsed.data]
    anchored = [b for b in branches if _at_start(b)]
    f = _first([(_sre.BRANCH, (None, [b for b in branches if not _at_start(b)]))])
    if f is None or f[1] or not f[0]:
        return re.compile(pattern, flags)
    chars = "(?=[" + "".join(sorted(f[0])) + "])"
    try:
        return re.compile(("(?:" + chars + "|^)" if anchored else chars) + "(?:" + pattern + ")", flags)
    except re.error:  # a global flag such as (?s) must stay at the start
        return re.compile(pattern, flags)


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


CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RE = re.compile(f"[{CJK}]")
CJK_RUN_RE = re.compile(f"[{CJK}]+")
_DIGIT_RE = re.compile(r"\d")
_DIGITS_RE = re.compile(r"\d+")
# a bare X.Y followed by a unit is a measurement, not a version
_UNIT = r"(?!\s*(?:%|‰|[kmgt]?b\b|m?s\b|sec|min|h\b|x\b|hz|khz|元|块|秒|分|倍|万|亿|[kmg]\b))"
VERSION_PATTERN = (r"(?<![\w.])v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?!\w|\.\w)" + _UNIT +
                   r"|(?<![\w.])v\d+(?!\w|\.\w)")
VERSION_RE = compile_words(VERSION_PATTERN, re.I)
PATH_RE = re.compile(r"(?:~|\.{0,2})/[\w.@%+-]+(?:/[\w.@%+-]*)*")
# a command with a flag ("nginx -t", "pytest -x", "git push --force"): as specific as a path, in any script
COMMAND_RE = re.compile(r"(?<![\w./-])([a-z][a-z0-9._+-]*)[ \t]+(--?[a-z][a-z0-9-]*)(?![\w-])")
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_'][A-Za-z0-9]+)*")
PERCENT_PATTERN = r"(?<![\w.])[-+]?\d+(?:\.\d+)?%"
PERCENT_RE = compile_words(PERCENT_PATTERN)
# an inline code span, its text captured (a tool, a file, a command the way a person wrote it)
CODE_SPAN = r"`([^`\n]{1,80})`"
CODE_SPAN_RE = re.compile(CODE_SPAN)
NUMBER_RE = compile_words(r"[-+]?\d+(?:[.,]\d+)*%?")
TIME_PREFIX_RE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s*[-–—:]?\s*)?")
STOPWORDS_DIR = "data/stopwords"


STOPWORD_FILES = {"en": ("en.txt", "en-memgit.txt"), "zh": ("zh.txt", "zh-memgit.txt")}


def _stopword_text(name: str) -> str:
    return files("memgit").joinpath(f"{STOPWORDS_DIR}/{name}").read_text(encoding="utf-8")


def _stopwords(lang: str) -> frozenset[str]:
    """A language's stop words: a general list shipped unchanged and memgit's own additions, files of
    `memgit/data/stopwords/` (one word a line, # comments)."""
    return frozenset(w for name in STOPWORD_FILES[lang] for line in _stopword_text(name).splitlines()
                     if (w := line.strip()) and not w.startswith("#"))


STOP = _stopwords("en")
STOP_ZH = _stopwords("zh")


def tokeniser_id() -> str:
    """What decides terms() besides this module's code: the stop-word data and the segmenter's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        seg = version("rjieba")
    except PackageNotFoundError:
        seg = "?"
    return f"rjieba {seg}\n" + "".join(_stopword_text(n) for names in STOPWORD_FILES.values() for n in names)


@lru_cache(maxsize=2)
def _converter(config: str = "t2s"):
    import opencc  # OpenCC is maintained and phrase-aware; only this module imports it

    return opencc.OpenCC(config)


@lru_cache(maxsize=65536)
def to_simplified(text: str) -> str:
    """Fold Traditional characters to Simplified (no-op for other text)."""
    if not CJK_RE.search(text):
        return text
    if _CANTONESE_IN.search(text):
        text = _CANTONESE_WORD.sub(lambda m: _CANTONESE_WORDS[m.group(0)], text).translate(_CANTONESE)
    return _converter().convert(text)


# Cantonese written in characters, folded one for one to Mandarin (a line of "唔好再 email" says 不要再 email):
# only characters and words Mandarin does not write so, each as long as its Mandarin one
_CANTONESE_WORDS = {"唔好": "不要", "係咪": "是不", "系咪": "是不", "邊個": "哪个", "边个": "哪个", "點解": "为何",
                    "点解": "为何", "乜嘢": "什么", "咩嘢": "什么"}
_CANTONESE_WORD = re.compile("|".join(_CANTONESE_WORDS))
_CANTONESE = str.maketrans("唔冇咗嘅喺嚟睇佢嗰啲哋揾搵攞啱冚咩", "不没了的在来看他那些们找找拿对全啥")
_CANTONESE_IN = re.compile("[唔冇咗嘅喺嚟睇佢嗰啲哋揾搵攞啱冚咩咪]")  # (咪: of the words "係咪", "系咪")


def to_traditional(text: str) -> str:
    """A Simplified word spelled in Traditional characters (for a word memgit writes into a Traditional
    entry)."""
    if not CJK_RE.search(text):
        return text
    return _converter("s2t").convert(text)


def is_traditional(text: str) -> bool:
    return bool(CJK_RE.search(text)) and _converter().convert(text) != text


def cjk_share(text: str) -> float:
    """The share of the text's letters that are Chinese characters."""
    cjk = CJK_RE.findall(text)
    if not cjk:  # most lines: no Chinese at all, so no need to count letters
        return 0.0
    return sum(map(str.isalpha, cjk)) / sum(map(str.isalpha, text))


def norm(text: str) -> str:
    """Lower-case, Traditional→Simplified, whitespace collapsed: the comparable form of a text."""
    return " ".join(to_simplified(text).lower().split())


def strip_time(line: str) -> str:
    """A log line without its list marker and leading HH:MM."""
    return TIME_PREFIX_RE.sub("", line, count=1).strip()


@lru_cache(maxsize=1)
def _snowball():
    # Snowball's English (Porter 2) stemmer: one stem for a word's inflections and derivations alike
    # ("calibrate", "calibrated", "calibration" → calibr), where the hand-written rules below gave three
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=8192)
def verb_stem(word: str) -> str | None:
    """The stem of the verb an irregular English form is of ("frozen", "froze" → freez; "broke" → break), when
    Snowball's stem of the form is another: lemminflect's tables of English inflections, which no stemmer holds
    (its data loads on the first call, a fifth of a second). None for a regular form, or a word it does not know."""
    w = word.lower()
    if not (w.isascii() and w.isalpha() and len(w) > 2):
        return None
    from lemminflect import getLemma

    lemmas = getLemma(w, upos="VERB", lemmatize_oov=False)
    base = stem(lemmas[0]) if lemmas else None
    return base if base and base != stem(w) and base[:1] == w[:1] else None


@lru_cache(maxsize=4096)
def is_english_word(word: str) -> bool:
    """A word lemminflect's English tables know in any part of speech ("quick", "square"; not "corel", "xero")."""
    w = word.lower()
    if not (w.isascii() and w.isalpha()):
        return False
    from lemminflect import getAllLemmas

    return bool(getAllLemmas(w))


@lru_cache(maxsize=4096)
def never_a_noun(word: str) -> bool:
    """A word lemminflect's English tables know, but never as a noun ("sit", "new", "calibrate"; not "bins",
    "clinic", nor a word they lack): it says what is done or how, never which thing."""
    w = word.lower()
    if not (w.isascii() and w.isalpha()):
        return False
    from lemminflect import getAllLemmas

    kinds = set(getAllLemmas(w))
    return bool(kinds) and not kinds & {"NOUN", "PROPN"}


@lru_cache(maxsize=131072)
def stem(word: str) -> str:
    """A word's stem: Snowball's for a plain English word of four letters or more, else the light rules."""
    w = word.lower()
    if len(w) > 3 and w.isascii() and w.isalpha():
        return _snowball().stemWord(w)
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


@lru_cache(maxsize=65536)
def version_key(v: str) -> tuple[int, ...]:
    nums = _DIGITS_RE.findall(v.split("-")[0].split("+")[0])
    return tuple(int(n) for n in nums)


@lru_cache(maxsize=1)
def _segmenter():
    # rjieba (jieba-rs: jieba's algorithm and dictionary in Rust) loads in a fraction of the time
    # jieba takes; imported only when a text holds Chinese, so English-only runs never pay for it
    import rjieba

    # the module's own functions use the instance it loads on import: a second Jieba() would load
    # the dictionary again (about 0.3 s)
    return rjieba


@lru_cache(maxsize=16384)
def is_noun(word: str) -> bool:
    """jieba tags the (Simplified) word, whole, as a noun: "锅", "冷藏车"; not "老", "一直"."""
    tags = _segmenter().tag(word, True)
    return len(tags) == 1 and tags[0][1].startswith("n")


# jieba's parts of speech that mark a function word: adverb, pronoun, preposition, conjunction,
# particle (u…), modal, interjection, onomatopoeia, non-word
_FUNCTION_POS = ("d", "r", "p", "c", "u", "y", "e", "o", "x")


@lru_cache(maxsize=65536)
def cjk_pairs(f: str) -> set[str]:
    """The pairs of Chinese characters a folded text holds, but for those with a particle: what two
    Chinese texts share however jieba cuts them ("按食材分类" and "食材分了")."""
    return {p for run in CJK_RUN_RE.findall(f) for i in range(len(run) - 1)
            if not _PARTICLES & set(p := run[i:i + 2])}


_PARTICLES = set("的了是在和也就都还又")


def cjk_words(run: str) -> tuple[str, ...]:
    """The words of a run of (Simplified) Chinese characters, stop words left out.

    As jieba's search mode, a long dictionary word also gives the shorter dictionary words inside it
    ("版本升级" → 版本, 升级, 版本升级), so a compound still meets its parts elsewhere. A content
    character jieba leaves alone gives its bigrams with the characters next to it instead ("导出月报"
    → 导出, 出月, 月报 from 导出|月|报)."""
    # A lone character is mostly where the dictionary failed: a word it lacks (月报, jargon, a
    # product's short name) was cut apart or fused with a neighbour into another dictionary word
    # (月报导出 → 月|报导|出). Bigrams restore what the old bigram tokeniser found there, and only
    # there, so common words elsewhere no longer bring the bigrams across their boundaries.
    jb = _segmenter()
    tagged = jb.tag(run, True)
    out: list[str] = []
    for i, (w, pos) in enumerate(tagged):
        n = len(w)
        if n > 2:
            out += [g for k in (2, 3) if n > k for g in (w[j:j + k] for j in range(n - k + 1)) if jb.has_word(g)]
            if not jb.has_word(w):
                # a word jieba's dictionary lacks was guessed whole ("主服库", "升主服"): its pairs meet the
                # same name cut otherwise elsewhere ("主服玩家库" → 主服|玩家|库)
                out += [w[j:j + 2] for j in range(n - 1) if not jb.has_word(w[j:j + 2])]
        if n > 1:
            out.append(w)
            continue
        # a lone character counts only in its bigrams: alone it names no subject, only dilutes one. A
        # stop character is a word of its own (说, 等), except a numeral or unit (月, 年), which
        # the stop list holds because alone it says nothing, but which heads a compound (月报)
        if pos.startswith(_FUNCTION_POS) or (w in STOP_ZH and pos != "m"):
            continue
        if i and not tagged[i - 1][1].startswith(_FUNCTION_POS):
            out.append(tagged[i - 1][0][-1] + w)
        if i + 1 < len(tagged) and not tagged[i + 1][1].startswith(_FUNCTION_POS):
            out.append(w + tagged[i + 1][0][0])
    return tuple(w for w in out if w not in STOP_ZH)


@lru_cache(maxsize=16384)
def cjk_cut(run: str) -> tuple[str, ...]:
    """A run of (Simplified) Chinese characters cut into jieba's words, every one kept, lone characters too."""
    return tuple(_segmenter().cut(run))


# a word jieba's dictionary counts this often (需要, 问题, 系统) is common Chinese: it is in many
# unrelated lines, so it cannot tell one subject from another
COMMON_FREQ = 5000


# each Chinese term's verdict, asked once; `known_common` takes verdicts found in another process
_COMMON: dict[str, bool] = {}


def is_common_word(term: str) -> bool:
    """A Chinese dictionary word common in the language at large, whatever a workspace's counts say."""
    if not CJK_RE.match(term):
        return False
    v = _COMMON.get(term)
    if v is None:
        jb = _segmenter()
        v = _COMMON[term] = bool(jb.has_word(term) and jb.suggest_freq(term) >= COMMON_FREQ)
    return v


@lru_cache(maxsize=16384)
def person_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Where jieba tags a person's name in a text (Traditional read as Simplified): (start, end) of each, as
    it stands in `text`. The tagger guesses (it calls 顾客 a name too): its callers check what it gives."""
    if not CJK_RE.search(text):
        return ()
    simple = to_simplified(text)
    if len(simple) != len(text):
        return ()
    out, at = [], 0
    for w, pos in _segmenter().tag(simple, True):
        if pos in ("nr", "nrfg") and CJK_RE.match(w):
            out.append((at, at + len(w)))
        at += len(w)
    return tuple(out)


def is_dictionary_word(term: str) -> bool:
    """A word of jieba's dictionary (Simplified): "王子" is, "王大" is not."""
    return bool(CJK_RE.match(term)) and bool(_segmenter().has_word(term))


def known_common(verdicts: dict[str, bool]) -> None:
    """Take `is_common_word` verdicts computed elsewhere (a forked process holding the same dictionary)."""
    _COMMON.update(verdicts)


_REF_RE = re.compile(r"(?<![\w&#])#(\d{2,7})(?![\w.])")


def terms(text: str, keep_versions: bool = True) -> list[str]:
    """Meaning-bearing terms: stemmed English words, Chinese words, versions, paths, identifiers."""
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
    if " -" in t:
        out += [f"{m.group(1)} {m.group(2)}" for m in COMMAND_RE.finditer(t)]
    if "#" in t:  # an issue's, a pull request's or an order's number ("PR #412", "#2291") names it
        out += [f"#{m.group(1)}" for m in _REF_RE.finditer(t)]
    t2 = PATH_RE.sub(" ", t) if has_path else t
    if found:  # taking out the paths makes no new version: none in `t`, none in `t2`
        t2 = VERSION_RE.sub(" ", t2)
    out.extend(chain.from_iterable(map(_word_terms, WORD_RE.findall(t2))))
    for run in CJK_RUN_RE.findall(t2):
        out += cjk_words(run)
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
