"""The dream's shared model: what every rule reads and returns.

An `Item` is a memory entry with the units rules compare (subject terms, head clause, versions);
the `Context` holds the window's observations and the entries, with inverted indexes over specific
terms so a rule asks only what shares a term with what it looks at; a `Candidate` is an operation
with its confidence and the features it was computed from.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache, partial
from dataclasses import dataclass, field
from datetime import date

from memgit import sensitive
from memgit.dream import lexicon as lx, parallel
from memgit.dream.collect import Collected, Observation
from memgit.lifecycle.priority import core_kind
from memgit.memory import DATE_TAIL_RE, ISO_DATE_RE, Document, Entry
from memgit.ops import Evidence, Operation
from memgit.text import (PERCENT_RE, cjk_share, clauses, compile_words, is_common_word, is_traditional, known_common,
                         term_set, to_simplified, to_traditional, version_key, versions)


CJK_IN = re.compile("[\u4e00-\u9fff]")


NUM_RE = PERCENT_RE  # a percentage


def clause_at(f: str, pos: int, marks: re.Pattern[str]) -> str:
    """The clause of `f` holding `pos`: from the last of `marks` before it to the next one after it."""
    start = max((m.end() for m in marks.finditer(f, 0, pos)), default=0)
    end = marks.search(f, pos)
    return f[start:end.start() if end else len(f)]


@lru_cache(maxsize=131072)
def fold(text: str) -> str:
    """Lower case and Simplified, keeping every character's position."""
    f = to_simplified(text).lower()
    return f if len(f) == len(text) else to_simplified(text)


@dataclass
class Candidate:
    op: Operation
    kind: str
    score: float
    features: dict = field(default_factory=dict)
    forced: bool = False

    @property
    def targets(self) -> tuple[str, ...]:
        return self.op.targets

    def to_dict(self) -> dict:
        return {"kind": self.kind, "op": self.op.op, "file": self.op.file, "title": self.op.title,
                "score": round(self.score, 3), "features": self.features}


class DisjointSets:
    """Union-find over 0..n-1 (path halving)."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        p = self.parent
        while p[i] != i:
            p[i] = p[p[i]]
            i = p[i]
        return i

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)




@dataclass
class Item:
    """An entry with the units the rules compare."""

    entry: Entry
    doc: Document
    folded: str
    subject: frozenset[str]          # terms without status words and versions
    versions: list[str]
    head: frozenset[str] = frozenset()  # subject terms of the first clause: what the entry is about
    secret: bool = False                # holds sensitive data: only ever pruned, never reworded or merged
    core: bool = False                  # identity or a marked rule: never changed automatically
    # core only by a rule's word inside it ("…; shift swaps must be approved by Dana"): the tool it names may be swapped
    # for the one that took its part, every other word kept (memgit.dream.verify)
    worded_rule: bool = False

    @property
    def frozen(self) -> bool:
        return self.entry.frozen or self.secret or self.core

    @property
    def renamable(self) -> bool:
        """Not frozen, or a rule's word inside it its only sign of a rule (`worded_rule`): the name of what does its
        work may be swapped, nothing else."""
        return not self.frozen or self.worded_rule and not self.entry.frozen and not self.secret

    @property
    def step(self) -> bool:
        """A numbered step of a procedure: removing one alone breaks the procedure."""
        return bool(re.match(r"\s*\d+[.)]", self.entry.marker or ""))


def _subject(body: str) -> frozenset[str]:
    b = lx.STATE_WORDS.sub(" ", fold(body))
    b = NUM_RE.sub(" ", b)
    vs = {v.lower().lstrip("v") for v in versions(body)}
    # the concepts it names in either language ("backup" / "备份" → "~backup"), state words aside
    return frozenset(t for t in term_set(b) if t not in vs) | lx.concept_terms(b)


_CHUNKS = 16  # of the window's lines, for two processors to share: few enough to send, enough to balance


def _chunks(obs: list[Observation]) -> list[slice]:
    """`obs` cut into `_CHUNKS` runs of about the same length of text (what finding their terms costs)."""
    total = sum(len(o.text) for o in obs) or 1
    out, start, acc = [], 0, 0
    for i, o in enumerate(obs):
        acc += len(o.text)
        if acc * _CHUNKS >= total * (len(out) + 1) and i + 1 < len(obs):
            out.append(slice(start, i + 1))
            start = i + 1
    out.append(slice(start, len(obs)))
    return out


def _window_terms(obs: list[Observation]) -> tuple[list[frozenset[str]], dict[str, bool]]:
    """Every observation's terms, and whether each Chinese one is common Chinese (`is_common_word`)."""
    found = [o.terms for o in obs]
    return found, {t: is_common_word(t) for ts in found for t in ts if CJK_IN.match(t)}


# a name made to be one: letters joined to digits, '_' or '-' (no plain word, no bare number)
_IDENTIFIER = re.compile(r"(?=.*[a-z])(?=.*[0-9_-])[a-z0-9][a-z0-9._-]*[a-z0-9]")


class _Memo(dict):
    """A dict that computes a missing key's value once, with `of(key)`."""

    def __init__(self, of):
        super().__init__()
        self.of = of

    def __missing__(self, key):
        v = self[key] = self.of(key)
        return v


class Context:
    def __init__(self, col: Collected, primary: str, user_file: str | None):
        self.col = col
        self.now = col.now
        self.primary = primary
        self.user_file = user_file
        self.items: list[Item] = []
        self.obs = col.observations
        if parallel.worth_forking(len(self.obs)):
            # the window's terms (most of the model's cost) are found on two processors: a child starts on
            # them while this one reads the entries, then both take the next chunk of lines
            parts = _chunks(self.obs)
            # chunks holding Chinese first: the child takes them, so a window with a few Chinese lines
            # loads the Chinese dictionary in one process only
            order = sorted(range(len(parts)),
                           key=lambda i: not any(CJK_IN.search(o.text) for o in self.obs[parts[i]]))
            found, _ = parallel.run_split([partial(_window_terms, self.obs[p]) for p in parts],
                                          first=self._read_entries, order=order)
            for p, (terms, common) in zip(parts, found):
                for o, ts in zip(self.obs[p], terms):
                    o.__dict__["terms"] = ts  # what `Observation.terms` (a cached property) would compute
                known_common(common)
        else:
            self._read_entries()
        df: dict[str, int] = {}
        for o in self.obs:
            for t in o.terms:
                df[t] = df.get(t, 0) + 1
        for it in self.items:
            for t in it.subject:
                df[t] = df.get(t, 0) + 1
        self.n = max(1, len(self.obs) + len(self.items))
        self.df = df
        # a term's idf and whether it is an anchor, computed on first ask; plain dict lookups after that
        # (rules ask them hundreds of thousands of times a run)
        self._idf: dict[str, float] = _Memo(self._idf_of)
        # an entry's terms' weight, its concepts, and its words that spell one of them
        self._tw: dict[frozenset[str], tuple[float, tuple[str, ...], tuple[tuple[str, str], ...]]] = {}
        self._anchor: dict[str, bool] = _Memo(self._anchor_of)
        # inverted indexes over anchor terms: a rule asks only the observations (or entries) that share
        # a specific term with what it looks at, so its cost grows with the window, not entries × lines
        self._obs_by_term: dict[str, list[int]] = {}
        for i, o in enumerate(self.obs):
            for t in o.terms:
                if self.anchor(t):
                    self._obs_by_term.setdefault(t, []).append(i)
        self._items_by_term: dict[str, list[int]] = {}
        for i, it in enumerate(self.items):
            for t in it.subject | it.head:
                if self.anchor(t):
                    self._items_by_term.setdefault(t, []).append(i)

    def _read_entries(self) -> None:
        """The memory's entries as the rules see them (`Item`)."""
        for doc in self.col.docs.values():
            for e in doc.entries:
                body = e.body
                first = clauses(LABEL_RE.sub("", body, count=1) if _label(body) else body)
                head = _subject(first[0]) if first else frozenset()
                if _label(body):
                    head = _subject(LABEL_RE.match(body).group(1)) | head
                kind = core_kind(e, doc.section_at(e.start), doc)
                self.items.append(Item(e, doc, fold(body), _subject(body), versions(body), head,
                                       sensitive.has_sensitive(e.text) or (doc.name, e.text) in self.col.live_secrets,
                                       kind is not None, kind == "word" and e.own_tag is not None))

    def obs_about(self, it: Item) -> list[Observation]:
        """Window observations sharing a specific term with the entry, in window order."""
        idx: set[int] = set()
        for t in it.subject | it.head:
            idx.update(self._obs_by_term.get(t, ()))
        return [self.obs[i] for i in sorted(idx)]

    def items_about(self, o: Observation) -> list[Item]:
        """Entries sharing a specific term with the observation, in file order."""
        idx: set[int] = set()
        for t in o.terms:
            idx.update(self._items_by_term.get(t, ()))
        return [self.items[i] for i in sorted(idx)]

    def near(self, text: str, pos: int, terms: frozenset[str] | set[str], span: int = 40,
             specific: bool = True) -> bool:
        """One of `terms` (a specific one, unless told) stands within `span` characters of `pos` in
        `text` (folded): a status or version word belongs to the subject named next to it, not to
        the whole line."""
        window = term_set(text[max(0, pos - span):pos + span])
        return any(t in window and (not specific or self.anchor(t)) for t in terms)

    def distinctive(self, it: Item, k: int = 3) -> frozenset[str]:
        """The entry's k rarest terms: what names it among similar entries ("SEO report", not "cron")."""
        # names in any script (product, host, command) identify better than Chinese words, which a
        # segmenter can make rare by accident; a concept ("~server") is a common word in any language
        # and a count ("两三次", "三个") names nothing
        named = [t for t in it.subject if not CJK_IN.search(t) and not t.startswith("~")] or \
            [t for t in it.subject if not t.startswith("~") and not _a_count(t)] or list(it.subject)
        return frozenset(sorted(named, key=lambda t: (-self.idf(t), t))[:k])

    def _idf_of(self, t: str) -> float:
        return math.log((self.n + 1) / (self.df.get(t, 0) + 0.5)) + 0.1

    def idf(self, t: str) -> float:
        return self._idf[t]

    def weight(self, terms) -> float:
        return sum(map(self._idf.__getitem__, terms))

    def _anchor_of(self, t: str) -> bool:
        # a window's counts are few: a word common in Chinese at large may look rare in them
        if len(t) < 2 or (t.isascii() and t.isalpha() and len(t) < 3) or is_common_word(t):
            return False
        # an identifier ("orders_sync", "ci-runner-01", "kb_prod") names one thing however often a week's
        # lines talk about it: the subject most discussed is the one most likely to have changed
        limit = 0.5 * self.n if _IDENTIFIER.fullmatch(t) else 0.25 * self.n
        return self.df.get(t, 0) <= max(6, limit)

    def anchor(self, t: str) -> bool:
        """A term specific enough to identify a subject."""
        return self._anchor[t]

    def mentions(self, o: Observation, it: Item) -> float:
        """How much of the entry's subject (or of its head clause) the observation names.

        0 when no specific term is shared.
        """
        full = self.share(o, it.subject)
        if full and it.head and it.head != it.subject:
            full = max(full, self.share(o, it.head))
        return full

    def share(self, o: Observation, terms: frozenset[str]) -> float:
        """How much of `terms` (a subject) the observation names, by weight; 0 with no specific term shared."""
        shared = o.terms & terms
        if not shared or not any(self.anchor(t) for t in shared):
            return 0.0
        return self.weight(shared) / max(self._counted_weight(terms, shared), 1e-9)

    def _counted_weight(self, terms: frozenset[str], shared: frozenset[str]) -> float:
        """The weight a share is measured against: a concept ("~server") is another spelling of a word
        the entry holds anyway, so it counts when the line shares it and is no part of what it missed;
        and a line sharing the concept in other words ("backup" for "备份") missed none of its spellings."""
        cached = self._tw.get(terms)
        if cached is None:
            concepts = tuple(t for t in terms if t.startswith("~"))
            spelled = tuple((t, c) for t in terms if not t.startswith("~")
                            and (c := f"~{lx.concept(t)}") in concepts)
            cached = self._tw[terms] = (self.weight(terms), concepts, spelled)
        w, concepts, spelled = cached
        return (w - sum(self._idf[t] for t in concepts if t not in shared)
                - sum(self._idf[t] for t, c in spelled if c in shared and t not in shared))

    def evidence(self, obs: list[Observation], limit: int = 4, first: Observation | None = None
                 ) -> tuple[Evidence, ...]:
        """Quotes of the newest observations; `first` (the line a new entry is written from) always."""
        out, seen = [], set()
        if first is not None and first.quote():
            seen.add(first.ref)
            limit -= 1
        for o in sorted(obs, key=lambda o: (o.day, o.source, o.line), reverse=True):
            if len(out) >= limit:
                break
            q = o.quote()
            if not q or o.ref in seen:
                continue
            seen.add(o.ref)
            out.append(Evidence(o.ref, q))
        if first is not None and first.quote():
            out.append(Evidence(first.ref, first.quote()))
            out.sort(key=lambda e: e.source, reverse=True)
        return tuple(reversed(out))

    def recency(self, obs: list[Observation]) -> float:
        if not obs:
            return 0.0
        last = max(o.day for o in obs)
        return 0.05 if (self.now - last).days <= 3 else 0.0


def entry_evidence(it: Item, quote: str | None = None) -> Evidence:
    q = quote if quote is not None else it.entry.text.split("\n")[0]
    return Evidence(f"{it.entry.file}:{it.entry.line}", q)


_CLOSING_MARKS = frozenset("。！？；，、）」』】")


def compose(it: Item, body: str, day: date | None) -> str:
    """The entry's new text: its own tag, the new body, and the date it was last confirmed."""
    tag = f"[{it.entry.own_tag}] " if it.entry.own_tag else ""
    body = DATE_TAIL_RE.sub("", body).strip()
    # the date as the entry set it off: "…飞书群。(2025-10-08)" has no space before it, so nor has the new one
    was = DATE_TAIL_RE.search(it.entry.text.split("\n")[0])
    gap = "" if was and not was.group(0)[:1].isspace() and body[-1:] in _CLOSING_MARKS else " "
    when = f"{gap}({day.isoformat()})" if day else ""
    return f"{tag}{body}{when}"


def _script(word_zh: str, word_en: str, like: str, context: str = "") -> str:
    """The word in the script of `like` (the phrase it replaces), Traditional if `context` is."""
    if cjk_share(like) < 0.3 and not CJK_IN.search(like):
        return word_en
    if is_traditional(like + context):
        return lx.TRADITIONAL.get(word_zh) or to_traditional(word_zh)
    return word_zh


def _affirmed(pattern: re.Pattern[str], text: str) -> bool:
    """`pattern` occurs and is not negated ("没有报错", "no errors", "not pending")."""
    return lx.first_affirmed(pattern, text) is not None


# a code that names one of many things of a kind: letters, a dash, digits ("PO-0412", "BP-5521", "INC-77")
_CODE = re.compile(r"(?<![\w-])([A-Za-z]{1,6})-?(\d{2,})(?![\w-])")


def _codes(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m in _CODE.finditer(text):
        out.setdefault(m.group(1).lower(), set()).add(m.group(2))
    return out


def _version_clash(it: Item, o: Observation) -> bool:
    """Entry and observation both name versions of the same shape, and none agree: another release; or
    both name codes of one series ("PO-0412", "PO-0415") and none agree: another one of its kind."""
    mine = _codes(it.entry.body)
    if mine:
        theirs = _codes(o.text)
        if any(p in theirs and not (n & theirs[p]) for p, n in mine.items()):
            return True
    if not it.versions:
        return False
    ov = versions(o.text)
    if not ov:
        return False
    shape = lambda v: len(version_key(v))  # noqa: E731
    same = [v for v in ov if any(shape(v) == shape(e) for e in it.versions)]
    if not same:
        return False
    ek = {version_key(e) for e in it.versions}
    return not any(version_key(v) in ek for v in same)


# a name with an aside saying what it is, at an entry's start ("出單機（櫃台那台熱感印表機）", "有机认证（某认证中心）")
_ASIDE = re.compile(r"([^（(]{2,24})[（(][^）)]{2,40}[）)]")


def aside_name(text: str) -> frozenset[str]:
    """The terms of the name before an aside saying what it is, when the text opens so: a line naming them all
    names the thing, whatever words it gives the rest."""
    m = _ASIDE.match(text)
    return _subject(m.group(1)) if m else frozenset()


_NUMBERED_HEAD = re.compile(r"(?<![\d.])(\d{1,4})\s*[号號]\s*([\u4e00-\u9fff]{1,3})")


@lru_cache(maxsize=65536)
def numbered_heads(text: str, width: int = 3) -> frozenset[tuple[str, str]]:
    """A Chinese numbered thing's number with each of the first `width` characters after 号 ("2 号挤奶位" → 2 with
    挤, 奶, 位): what a short way of saying it ("2 号位") keeps."""
    if "号" not in text and "號" not in text:
        return frozenset()
    return frozenset((to_simplified(c), m.group(1)) for m in _NUMBERED_HEAD.finditer(text) for c in m.group(2)[:width])


# a Chinese name in quotes ("「农博士」", "“沉船”"): one name, however the segmenter cuts it
QUOTED_CJK = re.compile(r"[「『“\"]([\u4e00-\u9fff]{2,8})[」』”\"]")


_LATIN_OPENING = re.compile(r"^[a-z0-9][\w.+-]*[ \t]+(?=[\u4e00-\u9fff])")


def first_name_word(it: Item, items: list[Item]) -> str:
    """The first word of the Chinese name an entry opens with ("周家" of "周家婚礼（6月21日）…", "北斗" of "北斗船载终端
    一直掉线"), what the logs call it for short, when it is no common word and no other entry writes it; else ""."""
    from memgit.text import CJK_RUN_RE, cjk_cut

    body = fold(it.entry.body).lstrip()
    # (after a name in Latin letters it opens with, the Chinese one: "主控台" of "DCC 主控台（Digitrax）一直断线")
    body = _LATIN_OPENING.sub("", body, count=1)
    # (a quoted name it opens with is that name whole: "“沉船”房第三关的磁力锁…")
    q = QUOTED_CJK.match(body)
    m = CJK_RUN_RE.match(body)
    if q:
        first = q.group(1)
    elif not m or len(m.group(0)) < 3:
        return ""
    else:
        first = cjk_cut(m.group(0))[0]
    if len(first) < 2 or is_common_word(first) or any(first in x.folded for x in items if x is not it):
        return ""
    return first


# a numbered item: a kind and its number ("build 398", "Dock 3", "ticket #4471")
NUMBERED_RE = re.compile(r"(?<![\w-])([A-Za-z]{2,12})[ \t#]*(\d{1,6})(?![\w./-]|:\d)")
# (a clock time's colon, "每天 08:30 開放", is no label's)
LABEL_RE = re.compile(r"^([^:：]{1,24})(?:(?<!\d)[:：]|[:：](?!\d))\s*")


# -- merge and contradiction -----------------------------------------------------------------
def _label(body: str) -> str | None:
    m = LABEL_RE.match(body)
    return " ".join(fold(m.group(1)).split()) if m and len(m.group(1).split()) <= 4 else None


BARE_NUM_RE = compile_words(r"(?<![\w.:/-])[-+$¥€£]?\d+(?:[.,]\d+)?(?![\w.:/-]|\.\d)")


def _values(body: str) -> set[str]:
    """The numbers an entry states (versions, percentages, amounts, counts): two entries
    that say the same words with different numbers are not duplicates."""
    body = ISO_DATE_RE.sub(" ", body)
    return ({v.lower().lstrip("v") for v in versions(body)} | set(NUM_RE.findall(body))
            | {n.lstrip("+") for n in BARE_NUM_RE.findall(body)} | zh_numbers(body))


ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
            "八": 8, "九": 9}


ZH_UNIT = {"十": 10, "百": 100, "千": 1000, "万": 10000, "萬": 10000}


ZH_NUM_RE = re.compile("[零〇一二两兩三四五六七八九十百千万萬]+")


def _a_count(term: str) -> bool:
    """A Chinese word that is a numeral, or one with a measure word after it ("三次", "两三个")."""
    m = ZH_NUM_RE.match(term)
    return bool(m) and m.end() >= len(term) - 1


def zh_number(run: str) -> int | None:
    """A Chinese numeral as an int ("十二" → 12, "第三" → 3), None if it is not one."""
    total, section, digit = 0, 0, None
    for ch in run:
        if ch in ZH_DIGIT:
            digit = ZH_DIGIT[ch]
        elif ch in ZH_UNIT:
            unit = ZH_UNIT[ch]
            if unit == 10000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
        else:
            return None
    return total + section + (digit or 0)


# a lone numeral before one of these counts ("一号店", "三楼", "二期", "五年级"); elsewhere it is a word's part (一起, 一直)
_ORDINAL_AFTER = re.compile("[号號楼樓层層栋棟期区區组組班]|年[级級]")


def zh_numbers(text: str) -> set[str]:
    """Numbers written in Chinese numerals, as digits: "第三篇" and "第五篇" state different numbers."""
    out = set()
    for m in ZH_NUM_RE.finditer(text):
        n = zh_number(m.group(0))
        if n is not None and (len(m.group(0)) > 1 or text[max(0, m.start() - 1):m.start()] == "第"
                              or _ORDINAL_AFTER.match(text, m.end())):
            out.add(str(n))
    return out


# a clock time, over folded text: "8am" / "8:30 p.m.", "07:00", "晚上8点半" (groups: en, 24-hour, Chinese)
_PERIOD = "|".join(sorted((*lx.CLOCK_AM, *lx.CLOCK_PM), key=len, reverse=True))
CLOCK_RE = re.compile(
    # (not the minutes or seconds of another time, "1:18:00"; a label's colon before it is no part of one: "汇总：18:00")
    r"(?<![\d.])(?<!\d[:：])(?P<eh>\d{1,2})(?:[:.](?P<em>\d{2}))?(?P<sp>\s?)(?P<ap>[ap])\.?m\b\.?"
    r"|(?<![\d.])(?<!\d[:：])(?P<h>\d{1,2})[:：](?P<m>\d{2})(?![\d])"
    rf"|(?P<per>{_PERIOD})?\s*(?P<zh>\d{{1,2}}|[零一二两三四五六七八九十]{{1,3}})\s*点(?:\s*(?P<zm>半|一刻|\d{{1,2}})\s*分?)?")


_A_LITTLE = frozenset("早晚快慢多少好大小高低长短近远重轻")  # (before 一点: "a little" earlier, later, …)
_COUNTED = re.compile(r"(?:最多|至多|最少|至少|不超过|一共|共|第|列)\s*$")
_PM_BEFORE = re.compile(rf"(?:{'|'.join(lx.CLOCK_PM)})\s*$")
_RANGE_TO = re.compile(r"\s*(?:到|至|[-–—~～]|to)\s*")


_SAME_SENTENCE = re.compile(r"[^。！？!?;；\n]{0,24}")


def clocks(f: str) -> list[tuple[int, int, int, str]]:
    """The clock times of a folded text: (start, end, minutes after midnight, style). Styles: "24" ("07:00"),
    "24s" ("7:00"), "en" ("7am"), "zh" ("早上7点")."""
    out = []
    for m in CLOCK_RE.finditer(f):
        if m.group("ap"):
            h, mi = int(m.group("eh")), int(m.group("em") or 0)
            if not 1 <= h <= 12:
                continue
            h = h % 12 + (12 if m.group("ap") == "p" else 0)
            style = "en"
        elif m.group("h"):
            h, mi = int(m.group("h")), int(m.group("m"))
            style = "24" if len(m.group("h")) == 2 else "24s"
            # "晚上 7:30" is 19:30, and so is the end of "晚上 7:30 到 9:30"
            if 1 <= h <= 11 and (_PM_BEFORE.search(f, max(0, m.start() - 4), m.start())
                                 or out and out[-1][2] >= 720 and _RANGE_TO.fullmatch(f, out[-1][1], m.start())
                                 and (h + 12) * 60 + mi > out[-1][2]):
                h += 12
        else:
            h = int(m.group("zh")) if m.group("zh").isdigit() else zh_number(m.group("zh"))
            zm = m.group("zm")
            mi = 30 if zm == "半" else 15 if zm == "一刻" else int(zm) if zm else 0
            if h is None:
                continue
            if not m.group("per") and not zm and _COUNTED.search(f, max(0, m.start() - 4), m.start()):
                continue  # "最多 5 点", "第一点": points counted, no time of day
            if not zm and f.startswith(("多", "左右"), m.end()):
                continue  # "我五点多就要去接孙子": about then, no time set
            if not m.group("per") and not zm and m.group("zh") == "一" \
                    and f[max(0, m.start() - 1):m.start()] in _A_LITTLE:
                continue  # "早一点", "快一點": a little, no time
            if m.group("per") in lx.CLOCK_PM and 1 <= h <= 11:
                h += 12
            elif not m.group("per") and 1 <= h <= 11 and out and out[-1][2] >= 720 and _RANGE_TO.fullmatch(
                    f, out[-1][1], m.start()) and (h + 12) * 60 + mi > out[-1][2]:
                h += 12  # "下午 2 點到 5 點" ends at 17:00, as "晚上 7:30 到 9:30" does at 21:30
            elif not m.group("per") and 1 <= h <= 11 and out and out[-1][2] >= 720 and out[-1][3] == "zh" \
                    and _SAME_SENTENCE.fullmatch(f, out[-1][1], m.start()) \
                    and abs((h + 12) * 60 + mi - out[-1][2]) <= 180:
                h += 12  # a bare hour in the sentence of an afternoon or evening one, within three hours of it, is
                # in the same half of the day: "下午五点关门，四点半最后入场" is 16:30 ("晚上十点睡，六点起" stays 6:00)
            style = "zh"
        if h < 24 and mi < 60:
            out.append((m.start(), m.end(), h * 60 + mi, style))
    return out


def clock_as(minutes: int, like: str, style: str) -> str | None:
    """A time written the way `like` (a clock time of that style) writes one; None for a Chinese one."""
    h, mi = divmod(minutes, 60)
    if style == "24":
        return f"{h:02d}:{mi:02d}"
    if style == "24s":
        return f"{h}:{mi:02d}"
    if style == "en":
        ap = "pm" if h >= 12 else "am"
        if like.rstrip(".").upper().endswith("M") and like.rstrip(".")[-1].isupper():
            ap = ap.upper()
        sp = " " if re.search(r"\d\s+[aApP]", like) else ""
        return f"{h % 12 or 12}" + (f":{mi:02d}" if mi or ":" in like else "") + sp + ap
    return None


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


TIMELINE = compile_words(r"event|timeline|history|changelog|journal|大事|时间线|時間線|历史|歷史|日志", re.I)


_negated = lx.negated_at
