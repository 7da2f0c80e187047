"""Refresh a name whose part another took over, told in the logs' own words rather than as "X → Y": a
line says the old name's part is over ("moving Ranger off Humble", "Square POS app removed from the
counter", "钉钉班级群这周内停用"); another name, said as the new one ("the new iTero scanner", "改用企业微信",
"Toast on both terminals now"), is what the logs then use with the entry's subject on two days; and no line
after the ending still uses the old one for it. The old name is replaced by the new one as the logs write
it; the rest of the entry stays as written."""
from __future__ import annotations

import os
from collections import Counter
import re
from datetime import timedelta

from memgit.dream import lexicon as lx
from memgit.memory import DATE_TAIL_RE
from memgit.dream.collect import Observation
from memgit.dream.glossary import glosses
from memgit.dream.model import (_label, Candidate, CJK_IN, clocks, compose, Context, entry_evidence, fold, Item, LABEL_RE,
                                 QUOTED_CJK)
from memgit.dream.scoring import confidence
from memgit.ops import Operation
from memgit.text import (STOP_ZH, cjk_cut, cjk_pairs, cjk_words, is_common_word, is_english_word, is_traditional, STOP, stem, term_set,
                         to_simplified, to_traditional)

# a Latin name: a word with a capital and a small letter ("Toast", "iTero", "Humble"); an all-capital
# word is a kind (POS, SSD, CI) more often than a name
# (or a model's code: "T310", "HN-20", "DS-7616NI"; or "W&B")
_LATIN = re.compile(r"(?<![\w.-])(?:(?=[a-z0-9]*[A-Z])(?=[A-Za-z0-9.-]*[a-z])[A-Za-z][A-Za-z0-9+]*(?:[.-][A-Za-z0-9+]+)*"
                    r"|\d?[A-Z]{1,4}(?:-\d{1,5}|\d{2,5})[A-Za-z]{0,2}|[A-Z]{1,3}&[A-Z]{1,3}"
                    # (a camera's or a phone's model code, letters and single digits in turn: "A7M3", "Z6II")
                    r"|[A-Z]{1,2}\d[A-Z]{1,3}\d?)(?![\w-])")
# what comes before a capitalised word that opens a sentence (then it is any word, not a name)
_OPENING = set(".!?;。！？；\"“”'‘’:：([*_—–")
_STAMP = re.compile(r"\s*(?:[-*]\s+)?\d{1,2}:\d{2}")


def _opens(text: str, pos: int, line: bool = False) -> bool:
    """What comes before `pos` opens a sentence (a capitalised word there is any word, not a name): the
    start, a sentence's or a quote's mark, a dash, a list marker, a log line's clock time (`line`: `text`
    holds many lines, and its start is where the line of `pos` starts)."""
    start = text.rfind("\n", max(0, pos - 200), pos) + 1 if line else 0
    if pos - start > 40:  # (a long line: what stands just before is enough, and costs no copy of it)
        before = text[pos - 40:pos].rstrip()
        return bool(before) and (before[-1] in _OPENING or before.endswith((" -", "\t-")))
    before = text[start:pos].rstrip()
    return not before or before[-1] in _OPENING or before.endswith((" -", "\t-")) or before in ("-", "*") \
        or bool(_STAMP.fullmatch(before))
_OPENS_ENTRY = re.compile(r"(?:^(?:\[[^\]]*\]\s*)?|[.!?。！？(\[*_—–\"“]\s*|\s-\s+)$")
_MONTH = re.compile(r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?"
                    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,10}")
_OLD_BEFORE = re.compile(r"(?<![\w-])(?:old|former|previous)\s+$|(?:旧|舊)(?:的|款)?\s*$", re.I)
_CAMEL = re.compile(r"(?<![\w.-])([A-Z][a-z]{3,})(?=[A-Z])[A-Za-z]*(?![\w-])")  # ("CorelDRAW": Corel + DRAW)
_RUN_BEFORE = re.compile(r"[\u4e00-\u9fff]{3,}(?=\s*$)")
_NEAR = 24      # characters between a name and the word said of it
_SUBJECT_SPAN = 4  # the characters an entry opens with: what it is about (a Chinese word starting there is no old name)
_BEFORE = 3     # days before the first ending a line may already use the new name ("the Toast guy comes monday")
_TRIAL = 7      # days before the first ending a line using the new name for the entry's work counts for it


def _said(name: str, f: str) -> list[int]:
    """Where `name` (folded) stands in the folded text `f`, as a whole word when it is Latin."""
    if CJK_IN.match(name):
        return [m.start() for m in re.finditer(re.escape(name), f)]
    return [m.start() for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", f)]  # (not "mlflow.start_run")


def _marked(pattern: re.Pattern[str], f: str, positions: list[int], size: int, of=None) -> bool:
    """A word of `pattern` stands within _NEAR characters of the name at one of `positions`, no negation
    before it (and, with `of`, said of the name there: `of(match, position)`)."""
    for p in positions:
        # (a quoted title right after the name is the name's: 'Google Sheet "Ferment 2026" switched to read-only')
        title = _TITLE_AFTER.match(f, p + size)
        lo, hi = max(0, p - _NEAR), p + size + (len(title.group(0)) if title else 0) + _NEAR
        # (a word whose match reaches into the window: "moved every open ticket from" before "trello"; or begins in
        # it and ends past it: "Tattoodo booking page switched off")
        for m in pattern.finditer(f, max(0, lo - 60), hi + 40):
            if m.end() > lo and m.start() < hi and not lx.negated_at(f, m.start()) and (of is None or of(m, p)):
                return True
    return False


def _ended_in_sentence(f: str, positions: list[int]) -> bool:
    """The sentence holding the name at each of `positions` says, further on, that its part is over ("CR1000X if it
    ever comes back from repair goes on the spares shelf"): the line names it as the one gone, not as in use."""
    def ends(p: int) -> bool:
        stop = _SENTENCE_STOP.search(f, p)
        return any(not lx.negated_at(f, m.start()) for m in lx.DISPLACED.finditer(f, p, stop.start() if stop else len(f)))
    return bool(positions) and all(ends(p) for p in positions)


def _placed_apart(entry: str, old: str, new: str, lines: list[str]) -> bool:
    """The entry glues a word to the old Chinese name's front ("由上环和记纸行供": where it is) that no line writes,
    and a line glues another to the new one's ("深水埗广兴纸行"): the word is the old one's, not the new one's."""
    if not CJK_IN.match(old) or not CJK_IN.match(new):
        return False
    def glued(f: str, name: str) -> str:
        run = _CJK_RUN_BEFORE.search(f[:f.find(name)]) if name in f else None
        return re.split(_LINKING, run.group(0))[-1][-3:] if run else ""
    own = glued(entry, old)
    if len(own) < 2 or any(own in f for f in lines):
        return False
    return any(len(g := glued(f, new)) >= 2 and g != own for f in lines)


_LINKING = "[用由在跟从向和与是给到经靠找喺的于让交走咗了过]"  # (what links a name to the words before it: "由|上环和记")


def _compared_with(f: str, positions: list[int]) -> bool:
    """The name at each of `positions` is what another is compared with ("韧过和记", "比钉钉清爽", "better than
    Lalamove"): no use of it."""
    return bool(positions) and all(_COMPARED_BEFORE.search(f, max(0, p - 6), p) for p in positions)


_COMPARED_BEFORE = re.compile(r"(?:比|过|\bthan|\bvs\.?)\s*$")


def _imported_from(f: str, positions: list[int], size: int) -> bool:
    """The name at each of `positions` is where data was brought in from ("412 个品项从 Excel 汇入", "imported the
    list from Trello"): the source the new one was filled from, not in use beside it."""
    def source(p: int) -> bool:
        return bool(_FROM_BEFORE.search(f, max(0, p - 6), p) and _IMPORTED.search(f[p + size:p + size + 14])
                    or _IMPORTED_FROM.search(f[max(0, p - 40):p]))
    return bool(positions) and all(source(p) for p in positions)


_FROM_BEFORE = re.compile(r"(?:从|由|\bfrom)\s*$")
_IMPORTED = re.compile(r"^\s*(?:全部|都|一次)?(?:导入|汇入|导过来|汇过来|转入|导进|\b(?:imported|import)\b)")
_IMPORTED_FROM = re.compile(r"\bimport(?:ed|ing)?\s+(?:[\w-]+\s+){0,4}?from\s*$")
_SENTENCE_STOP = re.compile(r"[。！？!?；;\n]|\.(?:\s|$)")


def _actor(f: str, positions: list[int], size: int) -> bool:
    """The name at each of `positions` is who does the ending to something named after it ("giulia cancelled the
    acuity subscription"), not what is ended: an ending verb right after it, and a determiner after the verb."""
    return bool(positions) and all(_ACTS_ON.match(f, p + size) for p in positions)


_ACTS_ON = re.compile(r"\s+(?:just\s+|already\s+|finally\s+)?(?:[a-z]+ed|gave|took|threw|sold|got)"
                      r"(?:\s+(?:off|out|up|down|away|rid))?(?:\s+(?:on|of))?\s+"
                      r"(?:the|a|an|our|his|her|their|its|all|every|both)\s")


def _switches(f: str, names: "_Names") -> bool:
    """The line moves the work to a name said right after a switch word ("… switch to Bake King"), not negated."""
    return any(not lx.negated_at(f, m.start()) and _name_next(f, m.end(), names) for m in lx.SWITCH_TO.finditer(f))


def _switches_from(f: str, positions: list[int], old: str, olds: list[str], names: "_Names") -> bool:
    """After the old name at one of `positions`, the line moves the work to a name, with no other name of the entry's
    between the two."""
    return any(p < m.start() and not lx.negated_at(f, m.start()) and _name_next(f, m.end(), names)
               and not any(q != old and p < x < m.start() for q in olds for x in _said(q, f))
               for m in lx.SWITCH_TO.finditer(f) for p in positions)


def _ending_opens_clause(f: str, unnegated: bool = False) -> bool:
    """An ending word of the line opens a clause of it, nothing before it there but a mark or a speaker's colon
    ("周厂长：不修了"); with `unnegated`, one no negation stands before."""
    return any(_CLAUSE_OPENS.search(f, 0, m.start()) and not (unnegated and lx.negated_at(f, m.start()))
               for m in lx.DISPLACED.finditer(f))


def _speaker(f: str, positions: list[int], size: int) -> bool:
    """The name at one of `positions` is who speaks or decides, a colon or a word of saying right after it ("阿哲決定了：
    以後交件全部改用 Pixieset"): the one moving the work, not what the work moves from."""
    return any(lx.SPEAKS_AFTER.match(f, p + size) for p in positions)


def _stand_in(f: str, positions: list[int], size: int) -> bool:
    """The name at one of `positions` is said as a stand-in for a while, not the one taking the part ("with
    Toast instead of Square today", "临时改用…", "until the reader arrives")."""
    # (what is used for now is what follows its word: "符号库先用官方的" is not KiCad's stand-in)
    return _marked(lx.STAND_IN, f, positions, size,
                   of=lambda m, p: not m.group(0).endswith("用") or f[m.end():].lstrip().startswith(f[p:p + size]))


def _old_names(ctx: Context, it: Item, names: "_Names", around: str, ended: list[str] = ()) -> list[str]:
    """The names an entry holds that could be replaced (folded): Latin names said once, and Chinese words
    specific enough to name something (not common words), that stand near an ending word (`around`); and the
    longest end of the Chinese written right before an ending word (`ended`, "金数据" of "金数据停用") that the entry
    writes once, past its opening words, no common word (a name the segmenter cuts apart: 金 + 数据)."""
    f, body = it.folded, it.entry.body
    lab = LABEL_RE.match(body) if _label(body) else None
    out = []
    # a name of several capitalised words said whole near an ending ("Photo Mechanic I don't renew") is one name
    whole = []
    # (or its end, its maker before it aside: "2M Red" of "Ortofon 2M Red")
    for m in _NAME_RUN.finditer(body):
        words = m.group(0).split()
        for j in range(max(1, len(words) - 1)):
            if j and not any(c.isdigit() for c in words[j]):
                continue  # (only a model's number after the maker starts a name of its own: not "Sharp Chef Heron")
            n = " ".join(words[j:]).lower()
            at = m.start() + len(" ".join(m.group(0).split(" ")[:j])) + (1 if j else 0)
            if len(words) - j >= 2 and not any(w.isdigit() for w in words[j:]) and n in around \
                    and len(_said(n, f)) == 1 and not (lab and at < lab.end(1)) \
                    and all(w.lower() in names for w in words[j:]):
                out.append(n)
                whole.append((at, m.end()))
                break
    # (and an acronym opening a name of capitalised words, said alone near an ending: "OBS" of "OBS Studio")
    for m in (*_LATIN.finditer(body), *_ACRONYM_HEAD.finditer(body)):
        n = m.group(0).lower()
        if n in STOP or n not in around or lx.WEEKDAY.search(n) or len(n) < 3:
            continue
        if any(a <= m.start() < b for a, b in whole):
            continue  # (a word of a whole name found above)
        if lab and m.start() < lab.end(1) or _OPENS_ENTRY.search(body[:m.start()]) and m.group(0)[1:].islower():
            continue  # what the entry is about ("Till / POS: …"), or any word opening a sentence
        if re.match(r"['’]s\b", body[m.end():]):
            continue  # whose a thing is ("the app on Dean's phone"): an owner, not what does the work
        if len(_said(n, f)) == 1 and n in names:
            out.append(n)
    # a Chinese name the entry quotes (用「农博士」温控箱) is one name, however the segmenter cuts it
    quoted = [q for q in QUOTED_CJK.findall(f) if q in around and len(_said(q, f)) == 1]
    out += quoted
    for run in _CJK_RUN.findall(f):
        words = [w for w in cjk_words(run) if w in run]
        for k, w in enumerate(words):
            if any(w in q for q in quoted):
                continue
            if f.find(w) < _SUBJECT_SPAN and not re.search(r"(?:用|走|靠)$", f[:f.find(w)]):
                continue  # what the entry opens with is what it is about, not what does it ("巡检记录写在石墨文档里"),
                # unless a use verb stands before it ("烘乾用大同 8 盤烘箱")
            if len(w) >= 2 and w in around and ctx.anchor(w) and not is_common_word(w) and 1 <= len(_said(w, f)) <= 2:
                # (with the word after it, when the lines write the two as one name: "石墨" + "文档"; or with the
                # characters after it that end its word there: "石磨" + "机")
                at = run.find(w)
                longer = [x for x in (w + words[k + 1] if k + 1 < len(words) else "",
                                      run[at:] if 0 < len(run) - at - len(w) <= 2 else "") if x]
                out.append(next((x for x in longer if x in run and x in around and len(x) <= 8), w))
    for run in ([] if out else ended):  # (when no name is found above)
        x = next((run[k:] for k in range(max(0, len(run) - 8), len(run) - 2)
                  if len(_said(run[k:], f)) == 1 and f.find(run[k:]) >= _SUBJECT_SPAN and not is_common_word(run[k:])),
                 "")
        if x:
            out.append(x)
    out = list(dict.fromkeys(out))
    # (a Chinese word inside another name found is that name's part: "掌柜" of "易掌柜")
    return [w for w in out if not (CJK_IN.match(w) and any(w != x and w in x for x in out))]


class _Names:
    """Which Latin words memory and the window write as names (folded): capitalised inside a sentence
    ("leaving Square for", "off Humble") at least twice as often as in lower case, so a word opening a
    sentence is a name only when it is one elsewhere ("Replied", "Deterministic" are any words). Asked
    word by word (few words are ever asked), each answer kept."""

    def __init__(self, ctx: Context):
        memory = "\n".join(it.entry.body for it in ctx.items)
        self.text = "\n".join((memory, *(o.text for o in ctx.obs if len(o.text) <= 400)))
        self.low = self.text.lower()
        self.memory_end = len(memory)
        self.known: dict[str, bool] = {}
        self._small: frozenset[str] | None = None

    @property
    def small(self) -> frozenset[str]:
        """The words of six letters or more written twice or more, only ever in small letters, that no dictionary holds:
        a maker's name as terse lines write it ("igloohome"). Found once."""
        if self._small is None:
            said = Counter(m.group(0) for m in _SMALL_NAME.finditer(self.text))
            capital = {w.lower() for w in re.findall(r"(?<![\w.-])[A-Za-z]*[A-Z][A-Za-z]*(?![\w-])", self.text)}
            self._small = frozenset(w for w, n in said.items() if n >= 2 and w not in capital and not is_english_word(w))
        return self._small

    def __contains__(self, word: str) -> bool:
        v = self.known.get(word)
        if v is None:
            cap = low = mem_cap = mem_low = 0
            at = self.low.find(word)
            while at >= 0:
                end = at + len(word)
                edge = self.low[at - 1:at] if at else ""
                if not (edge and (edge.isalnum() or edge in "_.-")) and not (
                        end < len(self.low) and (self.low[end].isalnum() or self.low[end] in "_-")) and not (
                        self.low[end:end + 1] == "." and self.low[end + 1:end + 2].isalnum()):  # ("mlflow.start_run")
                    if self.text[at:end].islower():
                        low += 1
                        mem_low += at < self.memory_end
                    elif not _opens(self.text, at, line=True):
                        cap += 1
                        mem_cap += at < self.memory_end
                at = self.low.find(word, end)
            # (terse logs write names in lower case, "done with trello": memory, written with care, capitalising
            # it inside a sentence and never otherwise, and a line doing so too, names it)
            # (or a maker's word no dictionary holds, that every line writes in small letters, twice or more: "igloohome")
            v = self.known[word] = cap >= 1 and (cap >= 2 * low or mem_cap >= 1 and mem_low == 0 and cap >= 2) \
                or word in self.small
        return v


def _new_latin(o: Observation, f: str, ending: bool, names: "_Names", brands: frozenset[str] = frozenset()
                ) -> list[tuple[str, str]]:
    """Latin names a line gives as taking a part: (folded, as written), next to a word that says it is
    the new one (a name on an ending line may be anyone's: "Marco the driver took the crates"); and a maker's name in
    capitals that some line writes before a model (`brands`: "HOBO" of "HOBO U20L-04")."""
    out = []
    # (and a maker's word written in small letters that `names` holds for a name: "全棟換 igloohome")
    for m in (*_LATIN.finditer(o.text), *(m for m in _CAPITALS.finditer(o.text) if m.group(0).lower() in brands),
              *(m for m in _SMALL_NAME.finditer(o.text) if m.group(0) in names.small)):
        n = m.group(0).lower()
        if n in STOP or len(n) < 3 or lx.WEEKDAY.search(n) or _MONTH.fullmatch(n):
            continue
        if (_marked(lx.TAKING_PART, f, [m.start()], len(n)) or _pointed_back(o.text, f, m.end())) \
                and not _stand_in(f, [m.start()], len(n)) and n in names:
            out.append((n, m.group(0)))
    return out


_SMALL_NAME = re.compile(r"(?<![\w.-])[a-z]{6,}(?![\w-])")
# a word pointing back at a thing just named: "这个", "這套", "它", "this one", "it"
_POINTER = re.compile(r"\s*(?:[这這](?:个|個|套|款|台|部)?(?![\u4e00-\u9fff]{0,1}[里裡边邊样樣么麼])|它|(?:this|that)(?: one)?\b|it\b)", re.I)


def _pointed_back(text: str, f: str, end: int) -> bool:
    """Further on in the name's sentence, a word giving a part to what it points back at ("买了 Fiberworks PCW license
    already, 以后 motif 都用这个画"), no other name said between: the part is the name's."""
    stop = _SENTENCE_STOP.search(f, end)
    for m in lx.TAKING_PART.finditer(f, end, stop.start() if stop else len(f)):
        if _POINTER.match(f, m.end()) and not lx.negated_at(f, m.start()) \
                and not any(x.start() > end + 1 and x.start() < m.start() for x in _LATIN.finditer(text, end)
                            if not text[end:x.start()].strip() == "" and x.group(0)[:1].isupper()
                            and not _CAPITALS.fullmatch(x.group(0))):
            return True
    return False


def _as_others_write(n: str, raw: str, own: str, every: str) -> tuple[str, str]:
    """A Chinese name that no other line writes, as the longest start of it that one does: the verb and particle after
    it are the sentence's ("改用飞书多维表格记了" → 飞书多维表格, written bare on other days). `own` is the line's folded
    text, `every` all the lines' joined: another line writes x where `every` holds it more often than `own`."""
    def elsewhere(x: str) -> bool:
        return every.count(x) > own.count(x)

    if elsewhere(n):
        return n, raw
    k = next((k for k in range(len(n) - 1, 1, -1) if elsewhere(n[:k])), 0)
    # (a word of its own after it is the name's: "银豹收银" stays whole where other days write "银豹")
    if not k or any(len(w) >= 2 and glosses([w]) for w in cjk_cut(n[k:])):
        return n, raw
    return n[:k], raw[:k]


def _new_chinese(f: str, text: str) -> list[tuple[str, str]]:
    """Chinese names a line gives as taking a part: the run right after a word that says so ("改用企业微信")."""
    out = []
    for m in lx.TAKING_PART.finditer(f):
        run = _CJK_RUN.match(f, m.end() + len(f[m.end():]) - len(f[m.end():].lstrip(" \t「『“\"")))  # ("换成 海典", "改用「肚肚」")
        if _inside_word(f, m.start(), m.end()):
            continue  # (inside a word: the 新 of "小新上只留直播伴侣", a laptop's name)
        if m.group(0) == "新" and (w := _word_from(f, m.start())) and len(w) > 1 \
                and not (len(w) >= 3 and is_common_word(w[1:])):
            continue  # (or opening one whose rest is no word: the 新 of "新竹物流", a place's name; not "新电脑")
        if run and not lx.negated_at(f, m.start()) and not _stand_in(f, [run.start()], len(run.group(0))):
            # (a name ends before 的: "改看国家海洋台的小程序" takes 国家海洋台, what follows is its own thing)
            end = run.start() + cut if (cut := run.group(0).find("的")) >= 2 else run.end()
            out.append((f[run.start():end], text[run.start():end]))
    return out


def displacements(ctx: Context) -> list[Candidate]:
    told = [o for o in ctx.obs if o.role != "assistant" and not o.sensitive and len(o.text) <= 400
            and not lx.ASKED.search(fold(o.text))]
    if not told:
        return []
    folded = {id(o): fold(o.text) for o in told}
    # (and lines moving the work to another name further on, "Prima up another $2.40 … switch to Bake King": the names
    # before that word may be what it ends)
    names = _Names(ctx)
    switching = [o for o in told if _switches(folded[id(o)], names)]
    ending_lines = [o for o in told if lx.DISPLACED.search(folded[id(o)]) or o in switching]
    if not ending_lines:
        return []
    # the text around every ending word: an old name must stand in it (most entries' names do not)
    around = "\n".join(f[max(0, m.start() - _NEAR - 40):m.end() + _NEAR + 40]
                        for f in (folded[id(o)] for o in ending_lines) for m in lx.DISPLACED.finditer(f))
    around += "".join("\n" + folded[id(o)] for o in switching)
    # (and the line before one whose ending word opens a clause, which may be what it ends: "PAL-03S 摔了" then "不修了")
    by_line = {(o.source, o.line): folded[id(o)] for o in told if o.kind == "log"}
    around += "".join("\n" + by_line[(o.source, o.line - 1)] for o in ending_lines if (o.source, o.line - 1) in by_line
                      and _ending_opens_clause(folded[id(o)]))
    # (once a line; and never one naming a model of its own before its ending word, "3 号机 W100 …不修了": that one is
    # what it ends)
    opens_unnegated = {id(o) for o in ending_lines if _ending_opens_clause(folded[id(o)], unnegated=True)
                       and not any(m.start() < e.start() for e in lx.DISPLACED.finditer(folded[id(o)])
                                   for m in _LATIN.finditer(o.text) if any(c.isdigit() for c in m.group(0)))}
    around_terms = term_set(around)  # (and its words' stems: "pawdiari" is how an entry's subject holds "PawDiary")
    # the Chinese written right before an ending word, its subject ("金数据停用"): a name the segmenter may not know
    ended_runs = [m.group(0) for f in (folded[id(o)] for o in ending_lines) for e in lx.DISPLACED.finditer(f)
                  if (m := _RUN_BEFORE.search(f, max(0, e.start() - 12), e.start()))]
    # (an entry that only weighs a name as a plan, "Boss 话 maybe 试 Fresha，未决定", does not make it memory's: the
    # name may still take a part, and the plan is then carried out)
    plans = [it for it in ctx.items if _weighed(it)]
    memory = "\n".join(it.folded for it in ctx.items if it not in plans)
    every = "\n".join(folded[id(o)] for o in told)  # (every line's words, once: which new names other lines write)
    brands = frozenset(m.group(1).lower() for o in told for m in _BRAND_BEFORE_MODEL.finditer(o.text))
    out: list[Candidate] = []
    given_new: dict[tuple[int, bool], list[tuple[str, str]]] = {}
    fits: dict[tuple[str, str], list[tuple[float, Item]]] = {}
    found: dict[int, list[tuple[int, str, str, str, list[Observation], list[Observation]]]] = {}
    for k, it in enumerate(ctx.items):
        if not it.renamable or it.step:
            continue
        if not (it.subject & around_terms or any(w in around for w in it.subject if len(w) >= 2)):
            continue
        olds = _old_names(ctx, it, names, around, ended_runs)
        for old in olds:
            rest = frozenset(t for t in it.subject - term_set(old) if ctx.anchor(t))
            if not rest:
                continue
            # an ending said of the old name with the entry's subject, or of the old name alone when no
            # other entry names it ("达达上最后一单完成，之后不再用")
            alone = len(_said(old, memory)) == len(_said(old, it.folded))
            # (a name of several words is said by its first alone when memory writes that word nowhere else: "The
            # Roland I put on eBay" of "Roland GS-24")
            head = old.split()[0] if " " in old and len(old.split()[0]) >= 3 else ""
            head = head if head and len(_said(head, memory)) == 1 else ""
            # (a name written in camel case is said by its first part, when that is no English word and memory writes it
            # nowhere on its own: "Corel" of "CorelDRAW")
            camel = next((m for m in _CAMEL.finditer(it.entry.body) if m.group(0).lower() == old), None)
            if not head and camel and not is_english_word(camel.group(1)) and not _said(camel.group(1).lower(), memory):
                head = camel.group(1).lower()
            if CJK_IN.match(old) and len(old) >= 4:
                # (a Chinese one by its name without the word after it, "有赞" of "有赞店铺", when memory writes that
                # nowhere else: "有赞年费到期不续了")
                alone_around = around.replace(old, " ")
                head = next((old[:n] for n in range(len(old) - 1, 1, -1)
                             if old[:n] in alone_around and len(_said(old[:n], memory)) == 1), "")

            def said_old(f: str) -> list[int]:
                return _said(old, f) or (_said(head, f) if head else [])

            # (an ending word is said of the entry's name nearest it: "温湿度就看慧农 app，农博士那个账号注销了" ends 农博士)
            # (a name written right beside it is one with it: "Excel 共用表 停用")
            # (and an ending word after a thing the entry names, the old name only further on, is said of that thing:
            # "stopwatch app retired liao 👋 Mel happy" ends the app, not Mel)
            others = frozenset(t for t in it.subject if not t.startswith("~")) - term_set(old)

            def of_this(f: str):
                return lambda m, p: not any(
                    q != old and old not in q and any(a < x and x + len(q) <= b and f[a:x].strip() and f[x + len(q):b].strip()
                                                     for x in _said(q, f))
                    for q in olds for a, b in [(p + len(old), m.start()) if m.start() >= p else (m.end(), p)]) and not (
                    m.end() <= p and term_set(re.split(r"[，,。.;；!！?？]", f[max(0, _word_start(m) - 20):_word_start(m)])[-1])
                    & others) \
                    and not (m.end() <= p and CJK_IN.match(old) and _CLAUSE_MARK_ZH.search(f, m.end(), p))
                # (a Chinese name in a clause after the ending word's is that clause's: "Sephora 都话停产，之后主力转 Armani")

            # (never one the line says goes on: "…不修了，直接下单两台 Z3K2，58mm 小票机继续用")
            ends = [o for o in ending_lines if (pos := said_old(folded[id(o)]))
                    and _marked(lx.DISPLACED, folded[id(o)], pos, len(old), of=of_this(folded[id(o)]))
                    and (alone or o.terms & rest)
                    and not _actor(folded[id(o)], pos, len(old))
                    and not any(_GOES_ON_AFTER.match(folded[id(o)], p + len(old)) for p in pos)]
            # (or a line naming it that moves the work to another name further on, no name of the entry's between)
            ends += [o for o in switching if o not in ends and (pos := said_old(folded[id(o)]))
                     and (alone or o.terms & rest) and not _actor(folded[id(o)], pos, len(old)) and not _speaker(folded[id(o)], pos, len(old))
                     and _switches_from(folded[id(o)], pos, old, olds, names)]
            # (or the next line of a log after one naming it, when an ending word opens a clause of it with no name of
            # its own: "PAL-03S 摔了，屏幕裂了" and then "周厂长：不修了，直接买 HANNA HI96821")
            named_before = {(o.source, o.line + 1) for o in told if o.kind == "log" and said_old(folded[id(o)])}
            ends += [o for o in ending_lines if (o.source, o.line) in named_before and o not in ends
                     and not said_old(folded[id(o)]) and (alone or o.terms & rest or any(
                         (o.source, o.line - 1) == (x.source, x.line) and x.terms & rest for x in told))
                     and id(o) in opens_unnegated]
            if not ends:
                continue
            # only planned ("下周起进销存从管家婆换成海典"): done when a later line, itself no plan, gives the entry's
            # part to the new name (a taking-part word beside it: "今天起收银+进销存全部走海典")
            planned_only = all(lx.PLANNED.search(folded[id(o)]) for o in ends)
            first, last = min(o.day for o in ends), max(o.day for o in ends)
            start = first - timedelta(days=_BEFORE)  # a new name may be used from a few days before
            # told as done, not planned
            over = last if planned_only else min(o.day for o in ends if not lx.PLANNED.search(folded[id(o)]))
            # named for the entry's subject after its part was told over: still in use, unless the line
            # names the new one too ("企微比钉钉群清爽多了" compares the two)
            later = [o for o in told if o.day > last and (pos := _said(old, folded[id(o)])) and o.terms & rest
                     and not _marked(lx.DISPLACED, folded[id(o)], pos, len(old))
                     and not _ended_in_sentence(folded[id(o)], pos)]
            news: dict[str, str] = {}
            # (the next line or two of a log after one naming the old one speak of it: "SumUp dead AGAIN" and then
            # "ordered Zettle Reader 2", "X-Core 整台烧掉了" and then "直接换 Rain Bird")
            after_old = {(o.source, o.line + k) for o in told if o.kind == "log" and o.day >= start and said_old(folded[id(o)])
                         for k in (1, 2)}
            # (or any line giving a part to a name the line ending the old one writes: "Uncle try Dutch Lady …, Carnation stop
            # after this lot" and then "first kopi with Dutch Lady")
            end_text = "\n".join(folded[id(o)] for o in ends)
            for o in told:
                if o.day < start:
                    continue
                f = folded[id(o)]
                is_end = o in ends
                # (a line naming the old one beside the new, "Acuity is too expensive, we are passing to Bookwhen")
                about = is_end or o.terms & rest or said_old(f) or (o.source, o.line) in after_old
                key = (id(o), is_end)
                if key not in given_new:  # (what a line gives as new is the line's: asked once a run)
                    given_new[key] = _new_latin(o, f, is_end, names, brands) + [
                        _as_others_write(n, raw, f, every) for n, raw in _new_chinese(f, o.text)]
                for n, raw in given_new[key]:
                    if n != old and n not in news and not _said(n, memory) and not is_common_word(n) \
                            and (about or _said(n, end_text)):
                        news[n] = raw
            pairs = cjk_pairs(it.folded.replace(old, " "))  # the entry's Chinese character pairs, old name aside
            for new, raw in news.items():
                if any(not _said(new, folded[id(o)]) for o in later):
                    continue  # the old one still in use for it
                if len({o.day for o in told if o.day < start and _said(new, folded[id(o)])}) >= 2:
                    continue  # named on days long before the old one's part was over: no newcomer taking it (one
                    # day may be the day it was chosen or ordered: "I go for the Graphtec")
                own = rest - term_set(new)
                # a line names the subject besides the new name (which may share a word of it: "顺丰同城" for
                # "同城配送"), said apart from the name ("同城单全部走顺丰同城")
                # or in Chinese characters the segmenter cut otherwise ("同城配送" / "同城单": 同城)
                # (a Chinese name of a brand and a product is said by either part: "精斗云" of "金蝶精斗云", "银豹" of
                # "银豹收银"), a part no entry writes
                shorts = [x for x in ((new[:2] if len(new) >= 4 else ""), (new[-3:] if len(new) >= 5 else ""))
                          if x and CJK_IN.match(new) and not _said(x, memory)]
                # (a name in camel case by its first part, which memory writes nowhere and a line writes capitalised:
                # "Orca" of "OrcaSlicer")
                if (cm := _CAMEL.fullmatch(raw)) and not _said(cm.group(1).lower(), memory) and cm.group(1).lower() in names:
                    shorts.append(cm.group(1).lower())
                # (and a product's letters a line writes right after the maker's name, which memory writes nowhere: "PCW"
                # of "Fiberworks PCW", said alone on later days)
                if new.isascii():
                    shorts += [x for x in {m.group(1).lower() for o in told for m in re.finditer(
                        rf"(?<![\w-]){re.escape(raw)}\s+({_CAPITALS.pattern})", o.text)} if not _said(x, memory)]

                def said_new(f: str) -> list[int]:
                    return _said(new, f) or next((p for x in shorts if (p := _said(x, f))), [])

                def without_new(f: str) -> str:
                    for x in (new, *shorts):
                        f = f.replace(x, " ")
                    return f

                # (a line using the new one for the entry's work in the week before counts: a trial, "Mira trialled
                # Choreo Studio on the Torquay storyboard")
                # (and a line naming the old one beside it, when no other entry names the old one: "KennelBase acct set
                # up, it has an import-from-PawDiary tool")
                named = [(o, pos) for o in told if o.day >= first - timedelta(days=_TRIAL) and (pos := said_new(folded[id(o)]))
                         and (o.terms & own or term_set(rest_f := without_new(folded[id(o)])) & rest
                              or cjk_pairs(rest_f) & pairs or alone and o.day <= over and said_old(without_new(folded[id(o)]))
                              # (or, later, the old one said beside it given the part: "老 A7M3 挂闲鱼了…现在只有 A7M4")
                              or alone and said_old(without_new(folded[id(o)]))
                              and _marked(lx.TAKING_PART, folded[id(o)], pos, len(new)))]
                if any(_stand_in(folded[id(o)], pos, len(new)) for o, pos in named if o.day >= start):
                    continue  # said as a stand-in for it: no replacement
                # (and, beside those, a line right after one naming the old one that gives the new one the part)
                if named:
                    named += [(o, pos) for o in told if (o.source, o.line) in after_old and o.day >= start
                              and all(o is not x for x, _ in named) and (pos := said_new(folded[id(o)]))
                              and _marked(lx.TAKING_PART, folded[id(o)], pos, len(new))
                              and not _stand_in(folded[id(o)], pos, len(new))]
                    # (and a later line naming a new name of several words the line ending the old one gave its part,
                    # whatever else it says: "Armani Luminous Silk 6 支到" after "…停产，之后主力转 Armani Luminous Silk")
                    # (or a model code, letters and a number: "KD-18 到货" after "旧窑不修了，直接上 KD-18")
                    given = [(o, pos) for o, pos in named if _marked(lx.TAKING_PART, folded[id(o)], pos, len(new))]
                    wholes = {r.group(0).lower() for o, pos in given
                              for p in pos if len(o.text) == len(folded[id(o)]) and (r := _NAME_RUN.match(o.text, p))
                              and len(r.group(0).split()) >= 2}
                    if given and _MODEL_CODE.fullmatch(new):
                        wholes.add(new)
                    named += [(o, pos) for o in told if o.day > first and all(o is not x for x, _ in named)
                              and any(w in folded[id(o)] for w in wholes)
                              and (pos := said_new(folded[id(o)])) and not _stand_in(folded[id(o)], pos, len(new))]
                support = [o for o, _ in named]
                days = {o.day for o in support}
                if planned_only and not any(
                        o.day > last and not lx.PLANNED.search(folded[id(o)]) and o.terms & rest
                        and _marked(lx.TAKING_PART, folded[id(o)], pos, len(new)) for o, pos in named):
                    continue  # the switch only planned
                if len(days) < 2 or max(days) < first:
                    continue
                if any(o.day >= over and o not in ends and (pos := _said(old, folded[id(o)]))
                       and not _ended_in_sentence(folded[id(o)], pos) and not _imported_from(folded[id(o)], pos, len(old))
                       and not lx.PLANNED.search(folded[id(o)]) and not _compared_with(folded[id(o)], pos)
                       and not any(lx.EARLIER.search(folded[id(o)][max(0, p - 8):p]) for p in pos)
                       for o in support):
                    continue  # the old name still beside the new once its part was over: not the one replaced
                    # (a plan beside it, "cb Lalamove, tmr try GrabExpress", says no use of the old; nor the old said as
                    # what was before, "以前手搖一人才 80 顆")
                fit = sum(ctx.weight(o.terms & own) for o in support)
                fits.setdefault((old, new), []).append((fit, it))
                fits_in = _context(it.folded, old, [folded[id(o)] for o in support], new)
                said = sum(1 for o in told if _said(old, folded[id(o)]))
                found.setdefault(k, []).append(((len(days), fits_in, said), old, new, raw, ends, support))
    for k, cands in found.items():
        it = ctx.items[k]
        # (two words of one name the lines write whole, "Choreo Studio", are one candidate: the first)
        # (of a Chinese maker and its Latin model, "慧农 HN-20", the one in the old name's script, when the old one
        # stands without a model of its own: 「农博士」 → 「慧农」; "三丰 MX200" takes "德龙 DL-8" whole, below)
        def rank(k: int) -> tuple[bool, int]:
            c = cands[k]
            at = it.folded.find(c[1])
            bare = at >= 0 and not _MODEL_AFTER.match(it.entry.body, at + len(c[1]))
            return bare and bool(CJK_IN.match(c[2])) == bool(CJK_IN.match(c[1])), -k
        cands = [c for k, c in enumerate(cands) if not any(
            j != k and d[1] == c[1] and _one_name(d[3], c[3], d[5]) and rank(j) > rank(k) for j, d in enumerate(cands))]
        cands.sort(key=lambda c: c[0], reverse=True)
        if len(cands) > 1 and cands[1][0] == cands[0][0]:
            # (two cuts of one Chinese name the segmenter split, "二维" and "维火" of 二维火, given way to the same new
            # one: the name whole, when every line ending either writes it so)
            union = _joined(it.folded, cands[0][1], cands[1][1])
            if not (union and cands[0][2] == cands[1][2] and len(cands) == 2 and all(
                    union in folded[id(o)] for c in cands[:2] for o in c[4])):
                continue  # two names gave or took the part as often: which one did is unsure
            fits.setdefault((union, cands[0][2]), fits[(cands[0][1], cands[0][2])])
            cands[0] = (cands[0][0], union, *cands[0][2:])
        (n_days, _, _), old, new, raw, ends, support = cands[0]
        rivals = sorted(fits[(old, new)], key=lambda x: -x[0])
        if rivals[0][1] is not it or len(rivals) > 1 and rivals[1][0] == rivals[0][0]:
            continue  # another entry naming the old one fits the lines as well or better
        # (as every line naming it writes it: "new CORiTEC 350i unpacked" names it whole without the entry's work)
        since = min(o.day for o in ends) - timedelta(days=_TRIAL)
        raw = _whole_new(raw, old, [o.text for o in told if o.day >= since and _said(new, folded[id(o)])])
        replaced = _replaced(it, old, raw, [folded[id(o)] for o in ends], [folded[id(o)] for o in support])
        if replaced is None:
            continue
        text, old_raw = replaced
        text = _without_old_details(text, raw, old, [folded[id(o)] for o in ends], [folded[id(o)] for o in support])
        text = _not_twice(text, raw)
        text = _without_old_aside(text, raw, [folded[id(o)] for o in support])
        text = _fields_as_new(text, raw, [folded[id(o)] for o in support])
        if _placed_apart(it.folded, old, new, [folded[id(o)] for o in support]):
            continue  # the old one's place written before it ("由上环和记纸行供") and the new one's another ("深水埗广兴")
        if _detail_unsaid(it.entry.body, old, [folded[id(o)] for o in support],
                          [folded[id(o)] for o in support if o not in ends], whole=old_raw) \
                or _word_before_unsaid(it.folded, fold(old_raw), [folded[id(o)] for o in support]) \
                or _word_after_doubles(it.folded, fold(old_raw), raw):
            continue  # a detail the new one's lines never give ("USB 接在收银台电脑上"): it may be the old one's
        if _clock_otherwise(it.entry.body, [folded[id(o)] for o in support if o not in ends]):
            continue  # the new one's lines give another time than the entry's ("每天下午 4 點來收" of "下午 3 點前叫件"): the
            # old one's arrangement, left to a person
        text = _old_word_after(text, raw, it.entry.body, old_raw, every)
        day = max(o.day for o in support)
        score = confidence("slot", extra_days=min(n_days - 1, 2), recent=ctx.recency(support))
        ev = sorted({id(o): o for o in (*ends, *support)}.values(), key=lambda o: (o.day, o.line))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, text, day), confidence=score,
                       reason=f"{old_raw} gave its part to {raw} (said over; the new one named on {n_days} days)",
                       evidence=(entry_evidence(it), *ctx.evidence(ev, 4, first=ends[-1])), origin="offline")
        out.append(Candidate(op, "slot", score, {"days": n_days, "from": old_raw, "to": raw}))
        for p in plans:
            if _said(new, p.folded) and not p.frozen and not _said(old, p.folded) and p.entry.file == it.entry.file:
                # the plan to use the new one, now carried out: it goes with the swap
                op = Operation("prune", p.entry.file, (p.entry.text,), confidence=score,
                               reason=f"the plan to use {raw} was carried out: {old_raw} gave it its part",
                               evidence=(entry_evidence(p), *ctx.evidence(ev, 4, first=ends[-1])), origin="offline")
                out.append(Candidate(op, "stale", score, {"to": raw}))
    return out


def _weighed(it: Item) -> bool:
    """An entry that weighs a choice not yet made ("maybe 试 Fresha，未决定", "considering Xero, not decided")."""
    return bool(lx.UNDECIDED.search(it.folded)) and bool(lx.PLANNED.search(it.folded))




def _joined(f: str, a: str, b: str) -> str:
    """The run of `f` two Chinese words said once each there cover together, overlapping or side by side ("二维" and
    "维火" of "二维火"); "" when they stand apart."""
    if not (CJK_IN.match(a) and CJK_IN.match(b)) or f.count(a) != 1 or f.count(b) != 1:
        return ""
    (x, y), (u, v) = sorted([(f.find(a), f.find(a) + len(a)), (f.find(b), f.find(b) + len(b))])
    return f[x:max(y, v)] if u <= y else ""


def _one_name(a: str, b: str, lines: list[Observation]) -> bool:
    """`a` and `b`, two capitalised words, stand side by side as one name in a line ("Choreo Studio")."""
    # (a Latin word's edge only: a Chinese maker stands right after the verb before it, "换慧农 HN-20")
    pair = re.compile(rf"(?<![A-Za-z0-9_-])(?:{re.escape(a)}[ \t]+{re.escape(b)}|{re.escape(b)}[ \t]+{re.escape(a)})"
                      rf"(?![A-Za-z0-9_-])", re.I)
    return a != b and any(pair.search(o.text) for o in lines)


def _context(entry: str, old: str, lines: list[str], new: str, span: int = 6) -> int:
    """How many characters around the old name in the entry stand around the new one in a line ("走钉钉班级群"
    and "发企业微信班级群" share "班级群" after the name): the name that fits the words around it best is the
    one replaced ("钉钉", not "钉班")."""
    a = _said(old, entry)[0]
    left, right = entry[max(0, a - span):a], entry[a + len(old):a + len(old) + span]
    best = 0
    for f in lines:
        for b in _said(new, f):
            lf, rf = f[max(0, b - span):b], f[b + len(new):b + len(new) + span]
            n = next((k for k in range(min(len(left), len(lf)), 0, -1) if left[-k:] == lf[-k:]), 0)
            n += next((k for k in range(min(len(right), len(rf)), 0, -1) if right[:k] == rf[:k]), 0)
            best = max(best, n)
    return best


# capitalised words right after a name, of the same name ("Square Register")
_TITLE_AFTER = re.compile(r"[ \t]+[\"“「]([^\"”」]{1,40})[\"”」]")  # (the old one's own file: 'Google Sheet "Weights 2026"')
_NUMBER_AFTER = re.compile(r"[ \t]+(\d[\w.+-]*)(?![\w-])")  # (a model's number after the name: "AutoStrobe 590")
_MORE_NAME = re.compile(r"(?:[ \t]+[A-Z][A-Za-z0-9+]*)+")
# a model's code after a brand ("迈瑞 BC-5000Vet"): letters and a number, one word
_MODEL_AFTER = re.compile(r"[ \t]*[A-Za-z][A-Za-z0-9.+-]*\d[A-Za-z0-9.+-]*(?![\w-])")
# a run of capitalised words and numbers: a product's whole name ("IDEXX ProCyte One")
# (a model's number may end in a small letter: "CORiTEC 350i")
# what stands before a word opening a clause: nothing, a mark ending the last one, or a speaker's colon (and a quote)
_CLAUSE_OPENS = re.compile(r"(?:^|[，,。;；!！:：]|\.\s)\s*[\"“「]?\s*$")
_CLAUSE_ENDS = re.compile(r"\s*(?:[，,;；。（(]|$)")
_CAPITALS = re.compile(r"(?<![\w.-])[A-Z]{3,6}(?![\w-])")
# a maker's name in capitals right before a model ("HOBO U20L-04", "IDEXX SNAP"): a name, not an acronym of a thing
_BRAND_BEFORE_MODEL = re.compile(r"(?<![\w.-])([A-Z]{3,6})[ \t]+(?=[A-Z0-9][A-Za-z0-9-]*\d)")
_ACRONYM_HEAD = re.compile(r"(?<![\w.-])[A-Z]{2,5}(?=[ \t]+[A-Z][a-z])")
_NAME_RUN = re.compile(r"(?<![\w.-])(?:[A-Z][\w+-]*|\d+[a-zA-Z]?)(?:[ \t]+(?:[A-Z][\w+-]*|\d+[a-zA-Z]?))*(?![\w-])")


def _whole_new(raw: str, old: str, lines: list[str]) -> str:
    """The new name as the lines write it whole: the longest run of capitalised words holding it that two lines
    or more write ("ProCyte One" for "ProCyte"; not "Stockbridge Zettle", a shop's name before it once); else as
    found."""
    seen: dict[str, int] = {}
    for t in lines:
        for r in {m.group(0) for m in _NAME_RUN.finditer(t)}:
            words = r.split()
            for a in range(len(words)):
                for b in range(a + 1, len(words) + 1):
                    run = " ".join(words[a:b])
                    if raw in words[a:b] and old not in run.lower():
                        seen[run] = seen.get(run, 0) + 1
    best = [r for r, n in seen.items() if n >= 2 and len(r) <= 40]
    whole = max(best, key=lambda r: (len(r.split()), seen[r])) if best else raw
    if tail := _chinese_after(whole, lines):
        sep = " " if f"{whole} {tail}" in "\n".join(lines) else ""
        whole = f"{whole}{sep}{tail}"
    elif maker := _chinese_before(whole, lines):
        sep = " " if f"{maker} {whole}" in "\n".join(lines) else ""
        whole = f"{maker}{sep}{whole}"
    return whole


def _chinese_before(whole: str, lines: list[str]) -> str:
    """The Chinese name every line naming the Latin `whole` writes right before it, in two lines or more: its maker
    ("德龙 DL-8"), the characters all of them end with, a word no common one; or ""."""
    if not whole[:1].isascii():
        return ""
    before = re.compile(r"([\u4e00-\u9fff]*)[ \t]?" + re.escape(whole) + r"(?![\w-])")
    runs = [m.group(1) for t in lines for m in before.finditer(t)]
    if len(runs) < 2 or not all(runs):
        return ""
    common = os.path.commonprefix([r[::-1] for r in runs])[::-1]
    if len(common) < 2:
        return ""
    word = cjk_cut(common)[-1]
    return word if len(word) >= 2 and not is_common_word(word) and word not in STOP_ZH else ""


def _chinese_after(whole: str, lines: list[str]) -> str:
    """The Chinese word every line naming `whole` writes right after it, in two lines or more ("Google 日曆"):
    the characters all of them start with ("日曆" of "日曆", "日曆共用"), or "" when the lines differ."""
    after = [m.group(1) for t in lines for m in re.finditer(re.escape(whole) + r"[ \t]?([\u4e00-\u9fff]{2,4})", t)]
    common = os.path.commonprefix(after) if after else ""
    if len(common) >= 2:
        after = [common] * len(after)
    if len(after) < 2 or len(set(after)) != 1:
        return ""
    each = re.compile(re.escape(whole) + r"[ \t]?" + re.escape(after[0]))
    return after[0] if all(each.search(t) for t in lines if whole in t) else ""


def _not_twice(text: str, new: str) -> str:
    """The word after the new name that the name already ends its words with is said once: the entry's "SumUp Air reader"
    becomes "Zettle Reader 2", not "Zettle Reader 2 reader"."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", new)}
    text = re.sub(re.escape(new) + r"\s+([A-Za-z]{3,})\b(?!-)",
                  lambda m: new if m.group(1).lower() in words else m.group(0), text, count=1)
    # (and in Chinese, the noun after it the name's last characters hold: "Excel 表" → "钉钉表格", not "钉钉表格表")
    if len(new) < 3 or not CJK_IN.match(new[-2]) or not CJK_IN.match(new[-1]):
        return text
    return re.sub(re.escape(new) + r"\s*([\u4e00-\u9fff]{1,2})",
                  lambda m: new if new[-2:].startswith(m.group(1)) else m.group(0), text, count=1)


def _replaced(it: Item, old: str, new_raw: str, ending: list[str] = (), support: list[str] = ()
              ) -> tuple[str, str] | None:
    """The entry's body with its one `old` name replaced by `new_raw` (in the entry's script), and the old
    name as the entry writes it: the whole of it, with the capitalised words after it that a line saying its
    part is over writes with it too ("Square Register unplugged")."""
    body = it.entry.body
    simple = to_simplified(body)
    if len(simple) != len(body):
        return None
    pos = _said(old, simple.lower())
    if len(pos) == 2 and CJK_IN.match(old):
        # (a Chinese name the entry says twice, "网店开在有赞，商品链接都从有赞后台复制": each one replaced as it stands)
        new = to_traditional(new_raw) if CJK_IN.match(new_raw) and is_traditional(body) else new_raw
        out = body
        for p in reversed(pos):
            out = out[:p] + new + out[p + len(old):]
        return out, body[pos[0]:pos[0] + len(old)]
    if len(pos) != 1:
        return None
    a = pos[0]
    b = a + len(old)
    if CJK_IN.match(old) and ending:
        # the whole Chinese name the lines ending it write, where the segmenter cut its head off ("易掌柜", not "掌柜"):
        # the character before it in the entry stands before it in every line that says it (what follows it may be
        # the new one's too: "钉钉班级群" → "企业微信班级群")
        low = simple.lower()
        said = [(f, p) for f in ending for p in _said(old, f)]
        nf = to_simplified(new_raw).lower()
        # (a character that stands next to the new name too is the sentence's, no part of either name: the 用 of
        # "弃用问卷星" and "改用金数据")
        beside_new = {f[q - 1] for f in support for q in _said(nf, f) if q > 0} | {
            f[q + len(nf)] for f in support for q in _said(nf, f) if q + len(nf) < len(f)}
        while a > 0 and CJK_IN.match(low[a - 1]) and said and low[a - 1] not in beside_new \
                and all(p > 0 and f[p - 1] == low[a - 1] for f, p in said):
            said = [(f, p - 1) for f, p in said]
            a -= 1
        # (and the characters after it every line ending it writes with it, that never follow the new one: the 星 of
        # "问卷星", not the 班级群 of "钉钉班级群" / "企业微信班级群")
        ends = [(f, p + b - a) for f, p in said]
        while b < len(low) and CJK_IN.match(low[b]) and ends and low[b] not in beside_new \
                and all(q < len(f) and f[q] == low[b] for f, q in ends):
            ends = [(f, q + 1) for f, q in ends]
            b += 1
        # (a word the entry writes right before it that says what the old one is made of, said in a clause ending it and
        # never of the new one, goes with it: "纸质登记本" when "纸本不再用了" → "写在飞书多维表格上")
        run = _CJK_RUN_BEFORE.search(low[:a])
        wb = cjk_cut(run.group(0))[-1] if run else ""
        # (a word the dictionary holds: not "知走", the segmenter's cut of "通知走")
        if len(wb) >= 2 and not any(c in STOP_ZH for c in wb) and glosses([wb]):
            clauses_ending = [c for f in ending for c in re.split(r"[，,；;。！!？?]", f) if lx.DISPLACED.search(c)]
            fresh = [f for f in support if f not in ending]
            if any(c in cl for cl in clauses_ending for c in wb) and not any(c in f for f in fresh for c in wb):
                a -= len(wb)
        # (a Latin word the entry writes right before it that every line ending it writes with it goes with it too:
        # "LINE 記事本" when "LINE 記事本那篇不再更新")
        lat = re.search(r"(?<![\w.-])([A-Za-z][\w-]*)[ \t]?$", simple[:a])  # (a whole word: not the unit of "58mm")
        if lat and said and all(re.search(re.escape(lat.group(1).lower()) + r"[ \t]?$", f[:p]) for f, p in said):
            a = lat.start(1)
        # (what the entry writes after the old name the new one's words may end with: "金数据表单" in "问卷星表单")
        for n in range(min(4, len(new_raw) - 2), 0, -1):
            if to_simplified(new_raw[-n:]).lower() == low[b:b + n]:
                new_raw = new_raw[:-n]
                break
    maker = _MAKER_BEFORE.search(body[:a]) if not CJK_IN.match(old) else None
    if maker and maker.group(1).lower() not in STOP and not _OPENS_ENTRY.search(body[:maker.start(1)]):
        # (the old one's maker written before it goes with it, "ChamSys MagicQ" → "ETC Eos", unless the lines write
        # it before the new one too: "Medit T310" → "Medit T710")
        w = maker.group(1).lower()
        if not any(p >= len(w) + 1 and f[p - len(w) - 1:p].strip() == w
                   for f in support for p in _said(new_raw.lower(), f)):
            a = maker.start(1)
            # (a maker's name of several capitalised words goes whole: "Make Up For Ever HD Skin" → "Armani Luminous
            # Silk", never "Make Up For Ever Armani …"; its words written before the new one in no line)
            for _ in range(4):
                more = _MAKER_BEFORE.search(body[:a])
                if not more or more.group(1).lower() in STOP and more.group(1) != more.group(1).title() \
                        or _OPENS_ENTRY.search(body[:more.start(1)]) or any(
                            more.group(1).lower() in f for f in support):
                    break
                a = more.start(1)
    if not CJK_IN.match(old) and ending:
        # (a Chinese maker's name written right before a Latin model, which every line ending it writes before it too,
        # goes with it: "元征 X431" when "元征 X431 彻底歇菜")
        low = simple.lower()
        gap = len(low[:a]) - len(low[:a].rstrip(" \t"))
        run = _CJK_RUN_BEFORE.search(low[:a - gap])
        wb = cjk_cut(run.group(0))[-1] if run else ""
        said = [(f, p) for f in ending for p in _said(old, f)]
        if len(wb) >= 2 and wb not in STOP_ZH and said \
                and all(re.search(re.escape(wb) + r"[ \t]?$", f[:p]) for f, p in said):
            a -= gap + len(wb)
    model = _MODEL_AFTER.match(body, b)
    if model and CJK_IN.match(old):
        b = model.end()  # (the old brand's model goes with it: "迈瑞 BC-5000Vet")
    more = _MORE_NAME.match(body, b)
    if more and not CJK_IN.match(old):
        own = b - len(old)  # (the name's own start, its maker aside: "Levelogger Edge" of "Solinst Levelogger Edge")
        whole = body[own:more.end()].lower()
        for k in range(len(more.group(0).split()), 0, -1):
            name = " ".join(whole.split()[:k + 1])
            # ("Tattoodo Pro put its fees up again"; or its plural, "off Google Sheets" of "Google Sheet")
            if any(_said(name, f) or _said(name + "s", f) for f in (*ending, *support)):
                b = own + len(" ".join(body[own:more.end()].split()[:k + 1]))
                break
        else:
            # (or words no line writes at all, no day's name: "Aurora Solar" of "cancel Aurora")
            tail = more.group(0).split()
            if not any(lx.WEEKDAY.search(w.lower()) for w in tail) and not any(
                    _said(w.lower(), f) for w in tail for f in (*ending, *support)):
                b = more.end()
    # (and a plain word after it that every line ending it writes with it, and no line writes after the new one: "Excel
    # grid" when "Excel grid file archived")
    # (or two, the last the one the lines write: "Rothwell hand-pump rig" when "Rothwell rig boxed up for scrap")
    said = [f[p + len(old):] for f in ending for p in _said(old, f)] if not CJK_IN.match(old) and not more else []
    for pattern in (r"[ \t][a-z][a-z-]{2,}[ \t]([a-z][a-z-]{2,})\b", r"[ \t]([a-z][a-z-]{2,})\b"):
        word = re.match(pattern, body[b:]) if said else None
        if not word or word.group(1) in STOP:
            continue
        kind = stem(word.group(1))  # (in any form: "Zettle reader" keeps "SumUp readers")
        if all(re.match(r"[ \t]" + re.escape(word.group(1)) + r"\b", x) for x in said) and not any(
                stem(m.group(1)) == kind for f in support
                for m in re.finditer(re.escape(new_raw.lower()) + r"[ \t]([a-z][a-z-]*)", f)):
            b += word.end()
            break
    # (a Latin name's Chinese words after it go with it where a line ending it writes them with it: "Excel 共用表 停用"
    # of "用 Excel 共用表")
    # (not what is its own after 的: "PriceHub 的批发价")
    if not CJK_IN.match(old) and ending and (run := _CJK_AFTER.match(simple.lower(), b)) and run.group(1)[0] not in "的之":
        for n in range(len(run.group(1)), 1, -1):
            pre = run.group(1)[:n]
            if any(re.match(r"[ \t]?" + re.escape(pre), f[p + len(old):]) for f in ending for p in _said(old, f)):
                b = run.start(1) + n
                break
    # (its version goes with it, unless a line writes it after the new one too: "Hoof Ledger v3" → "FarrierPro")
    if (ver := _OWN_VERSION.match(body, b)) and not any(
            re.search(re.escape(new_raw.lower()) + r"\s?" + re.escape(ver.group(0).strip().lower()), f) for f in support):
        b = ver.end()
    # (a quoted name the old one opens is its whole name: "「速达云ERP」" goes whole)
    if a > 0 and body[a - 1] in _OPENING and (close := _CLOSING_AFTER.match(body, b)):
        b = close.end(1)
    # (a count right after it, "東亞 12 層", is the old one's size: the new one's in the same measure where the lines
    # write it after the new name, "金鼎 16 層"; else the old one's, left to a person)
    if (size := _SIZE_AFTER.match(body, b)) and (sizes := _sizes_of(new_raw, size.group(2), support)):
        if len(sizes) != 1:
            return None
        gap, space = size.group(0)[:size.start(1) - b], body[size.end(1):size.start(2)]
        new_raw = f"{new_raw}{gap}{sizes.pop()}{space}{size.group(2)}"
        b = size.end()
    elif size and CJK_IN.match(size.group(2)) and not any(size.group(1) in f for f in support):
        return None
    title = _TITLE_AFTER.match(body, b)
    number = _NUMBER_AFTER.match(body, b) or title
    unsaid = number and not CJK_IN.match(old) and not any(number.group(1).lower() in f for f in (*ending, *support))
    if unsaid and not title and b > a + len(old) and _CLAUSE_ENDS.match(body, number.end()):
        b = number.end()  # (the number of a model the old one's name ends with, its clause over: "Seaforce 90，紅色")
    elif unsaid:
        return None  # the old one's model number or its own file's title, written by no line ("AutoStrobe 590 hardware
        # strobe tuner", 'Google Sheet "Weights 2026"'): the entry describes the old one itself, a person rewrites it
    if title and not CJK_IN.match(old) and any(title.group(1).lower() in f for f in ending):
        b = title.end()  # (its own file's title, written where its part ends: 'Google Sheet "Ferment 2026" read-only')
    if CJK_IN.match(old) and (_cuts_word(simple, b) or _cuts_word(simple, a)):
        return None  # the old name ends inside a word the entry writes ("纸质表" of "纸质表格"): unsure what it replaces
    # (the word calling it old goes with it: "on the old Myford ML7" → "on the Boxford", "旧的管家婆" → "海典")
    if (aged := _OLD_BEFORE.search(body[:a])) and aged.start() > 0:
        a = aged.start()
    new = to_traditional(new_raw) if CJK_IN.match(new_raw) and is_traditional(body) else new_raw
    # (a Latin name beside Chinese stands a space apart: "用迈瑞" → "用 IDEXX ProCyte One")
    if new[:1].isascii() and new[:1].isalnum() and a > 0 and CJK_IN.match(body[a - 1]):
        new = " " + new
    if new[-1:].isascii() and new[-1:].isalnum() and b < len(body) and CJK_IN.match(body[b]):
        new = new + " "
    head, tail = body[:a], body[b:]
    # (and a Chinese one in a Latin one's place stands beside Chinese as it: "看 Windy 的" → "看国家海洋台的"; the
    # spaces the entry writes around a Chinese name are its own: "用 管家婆，")
    latin_old = body[a:a + 1].isascii() and body[b - 1:b].isascii()
    if latin_old and CJK_IN.match(new[:1]) and head.endswith(" ") and CJK_IN.match(head.rstrip()[-1:]):
        head = head.rstrip(" ")
    if latin_old and CJK_IN.match(new[-1:]) and tail.startswith(" ") and CJK_IN.match(tail.lstrip()[:1]):
        tail = tail.lstrip(" ")
    # (the English article before it agrees with the new name's first letter: "runs a Furuno" → "runs an Axiom")
    if (art := _ARTICLE_END.search(head)) and new[:1].isascii() and new[:1].isalpha():
        an = new[:1].lower() in "aeiou"
        word = art.group(1)
        if an != (word.lower() == "an"):
            head = head[:art.start(1)] + (("An" if an else "A") if word[0].isupper() else ("an" if an else "a")) \
                + head[art.end(1):]
    return head + new + tail, body[a:b]


_ARTICLE_END = re.compile(r"(?<![\w'-])(a|an|A|An)\s+$")


_CJK_RUN_BEFORE = re.compile(r"[\u4e00-\u9fff]{2,}$")
# a count and its measure right after a name ("東亞 12 層", "Dell 24 inch"): its size
_SIZE_AFTER = re.compile(r"[ \t]?(\d+(?:\.\d+)?)[ \t]?([\u4e00-\u9fff]|[A-Za-z]+\b)")


def _sizes_of(new: str, measure: str, lines: list[str]) -> set[str]:
    """The counts the lines write right after the new name in `measure` ("金鼎 16 層" → {"16"})."""
    unit = re.escape(to_simplified(measure).lower())
    name = re.escape(to_simplified(new).lower())
    sized = re.compile(name + r"[ \t]?(\d+(?:\.\d+)?)[ \t]?" + unit + r"(?![a-z])")
    return {m.group(1) for f in lines for m in sized.finditer(f)}
_CJK_AFTER = re.compile(r"[ \t]?([\u4e00-\u9fff]{2,8})")
_OWN_VERSION = re.compile(r"[ \t]?(?:v\d+(?:\.\d+)*|\d+\.\d+(?:\.\d+)*)(?![\w.])", re.I)  # ("v3", "5.7")
_OPENING = "「『“"
_CLOSING_AFTER = re.compile(r"([^「」『』“”\s]{0,16})[」』”]")


def _name_next(f: str, at: int, names: "_Names") -> bool:
    """A name stands right after `at` in the folded line: a Latin word written as a name, or Chinese words no common
    one ("换成金蝶", not "换成新的")."""
    nxt = re.match(r"[ \t「『“\"]*([a-z][\w-]*|[\u4e00-\u9fff]+)", f[at:])
    if not nxt:
        return False
    w = nxt.group(1)
    if not CJK_IN.match(w):
        return w in names
    first = cjk_cut(w)[0]
    return len(first) >= 2 and not is_common_word(first)


def _word_start(m: re.Match[str]) -> int:
    """Where an ending word's match starts past the mark it may open with ("old" of ". old Furuno pulled out")."""
    return m.start() + len(m.group(0)) - len(m.group(0).lstrip(".;:!。；：！ \t"))


def _word_at(text: str, at: int) -> tuple[int, str] | None:
    """The word the segmenter cuts around `at` inside the Chinese run holding it, begun before `at` and going on after
    it, with where it starts; None when `at` is no such cut's inside."""
    if not (0 < at < len(text) and CJK_IN.match(text[at - 1]) and CJK_IN.match(text[at])):
        return None
    before = _CJK_RUN_BEFORE.search(text[:at])
    start = before.start() if before else at - 1
    end = at + len(re.match(r"[\u4e00-\u9fff]*", text[at:]).group(0))
    pos = start
    for w in cjk_cut(text[start:end]):
        if pos < at < pos + len(w):
            return pos, w
        pos += len(w)
    return None


def _clock_otherwise(body: str, support: list[str]) -> bool:
    """The entry gives a clock time (its date aside) that no line about the new one writes, and those lines write
    another."""
    fb = fold(DATE_TAIL_RE.sub("", body))
    have = {c[2] for c in clocks(fb)}
    said = {c[2] for f in support for c in clocks(f)}
    return bool(have) and bool(said) and not have & said


def _old_word_after(text: str, new: str, body: str, old: str, every: str) -> str:
    """The replaced entry without the Chinese word that stood right after the old name, as part of its whole name, when
    no line writes any two characters of it: "黑貓宅急便" → "新竹物流", not "新竹物流宅急便"."""
    at = body.find(old)
    if at < 0 or not CJK_IN.match(old[-1:]):
        return text
    # (or its name in Latin letters after it, to the clause's end, when no line writes a word of it: "肚肚 Dudoo POS" →
    # "iCHEF")
    latin = _LATIN_AFTER.match(body, at + len(old))
    if latin and _CLAUSE_END.match(body, latin.end()) and not any(
            re.search(rf"(?<![a-z]){re.escape(w.lower())}(?![a-z])", every) for w in latin.group(1).split()):
        k = text.find(new)
        if k >= 0 and text[k + len(new):].startswith(latin.group(0)):
            return text[:k + len(new)] + text[k + len(new) + len(latin.group(0)):]
    # (what stands after it to the clause's end, three characters at most: "宅急便", however the segmenter cuts it)
    run = re.match(r"[\u4e00-\u9fff]+", fold(body)[at + len(old):])
    w = run.group(0) if run and len(run.group(0)) <= 3 and _CLAUSE_END.match(fold(body), at + len(old) + run.end()) \
        else ""
    if len(w) < 2 or any(w[k:k + 2] in every for k in range(len(w) - 1)) or fold(new + w) not in fold(text):
        return text  # (a word the lines write any part of is the entry's own: "收银机" of "收银试了 3 单")
    k = fold(text).find(fold(new + w)) + len(new)
    return text[:k] + text[k + len(w):]


_LATIN_AFTER = re.compile(r"\s*([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2})")
_CLAUSE_END = re.compile(r"\s*(?:[，,。；;：:（(]|$)")


def _word_from(text: str, at: int) -> str:
    """The word the segmenter cuts starting at `at` inside the Chinese run holding it, or ""."""
    if not (0 <= at < len(text) and CJK_IN.match(text[at])):
        return ""
    before = _CJK_RUN_BEFORE.search(text[:at])
    start = before.start() if before else at
    end = at + len(re.match(r"[\u4e00-\u9fff]*", text[at:]).group(0))
    pos = start
    for w in cjk_cut(text[start:end]):
        if pos == at:
            return w
        pos += len(w)
    return ""


def _inside_word(text: str, a: int, b: int) -> bool:
    """Whether the Chinese `text[a:b]` lies inside a word the segmenter cuts, begun before it and going on after it
    (the 新 of "小新上", a name no dictionary holds)."""
    word = _word_at(text, a)
    return bool(word) and b < word[0] + len(word[1])  # (a verb ending the word is the segmenter's cut, "说换" of "老板说换问卷星")


def _cuts_word(text: str, at: int) -> bool:
    """Whether `at` falls inside a dictionary word of the Chinese run around it ("纸质表|格" of 表格)."""
    word = _word_at(text, at)
    return bool(word) and len(word[1]) >= 2 and bool(glosses([word[1]]))


_MAKER_BEFORE = re.compile(r"(?<![\w.&-])([A-Z][\w+&-]*)[ \t]$")  # (one capitalised word right before the old name: "ChamSys", "F&N")
_DETAIL_CLAUSE = re.compile(r"[，,；;。]")
_HOST = re.compile(r"(?<![\w./-])[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?![\w-])")  # ("ci.orchardloop.dev")
_FILE_TYPE = re.compile(r"(?<![\w/])\.[a-z][a-z0-9]{1,5}(?![\w.])")  # (".lpx", ".csv")
_COMPOUND = re.compile(r"(?<![\w-])[a-z]{3,}-[a-z]{3,}(?![\w-])")
_LATIN_DETAIL = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9](?![\w-])")


# what a line says is over now ("no more copying by hand", "no longer keyed in"), to the clause's end
_OVER_NOW = re.compile(r"\b(?:no more|no longer|not any ?more)\s+([^,;.，；。\n]{3,40})"  # (in its line)
                       # (or in Chinese, the clause around it: "本子不用再记溶氧了")
                       r"|([^,;，；。\n]{0,12}(?:不用再|不必再|无需再|不再|唔使再|唔再)[^,;，；。\n]{1,20})")


def _only_as_old(word: str, old: str, lines: list[str]) -> bool:
    """`word` is in the lines, every time right after the old name ("the Audacity spectrum view")."""
    at = [(f, m.start()) for f in lines for m in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", f)]
    return bool(at) and all(old in f[max(0, p - len(old) - 12):p] for f, p in at)


def _word_after_doubles(f: str, old: str, new: str) -> bool:
    """A Chinese word the entry writes right after a Chinese old name shares a character with the new one ("熏蒸" of
    "用硫磺熏蒸" when the new one is "蒸煮"): how the old one was used, which the new name says otherwise; the swap would
    read doubled ("用蒸煮熏蒸")."""
    at = f.find(old)
    if not CJK_IN.match(old) or at < 0 or not CJK_IN.match(f[at + len(old):at + len(old) + 1]):
        return False
    w = cjk_cut(re.match(r"[\u4e00-\u9fff]+", f[at + len(old):]).group(0))[0]
    # (the new one's own end aside: "金数据表单" in the place of "问卷星表单" is written once, memgit.dream.rules.displaced._replaced)
    return len(w) >= 2 and bool(set(w) & set(fold(new))) and w not in fold(new)


def _word_before_unsaid(f: str, old: str, lines: list[str]) -> bool:
    """A Chinese word the entry writes right before a Chinese old name (as the swap replaces it whole), no common word,
    that no line about the new one writes ("埔里" of "用埔里長春紙廠的棉紙"): where or what the old one is, which the new
    one may not be."""
    at = f.find(old)
    run = _CJK_RUN_BEFORE.search(f[:at]) if CJK_IN.match(old) and at > 0 else None
    if not run:
        return False
    w = cjk_cut(run.group(0))[-1]
    # (no cut ending in the verb or the word of place before the name: not "通知走" of "家校通知走钉钉班级群")
    return len(w) >= 2 and w not in STOP_ZH and not is_common_word(w) and not _LEADS_TO_NAME.search(w) \
        and not any(w in x for x in lines)


_MODEL_CODE = re.compile(r"(?=[a-z0-9-]*\d)(?=[a-z0-9-]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)*")  # (folded: "kd-18", "pf-3")
_CLAUSE_MARK_ZH = re.compile(r"[，,。；;！!？?]")
_GOES_ON = re.compile(r"(?:继续|照旧|照常|还用|留着|不变|\bkeep(?:s|ing)?\b|\bstill\b|\bstays?\b)")
_GOES_ON_AFTER = re.compile(r"\s*" + _GOES_ON.pattern)  # (right after a name: "…，58mm 小票机继续用")
_LEADS_TO_NAME = re.compile(r"[用走靠在给由从到是跟向找叫]$")
# words before a name that say when it served, not what it is ("the old Dell", "our current POS")
_NO_KIND = frozenset({"old", "current", "existing", "usual", "same", "main", "previous"})


def _detail_unsaid(body: str, old: str, lines: list[str], fresh: list[str], whole: str = "") -> bool:
    """A clause of the entry besides the old name's holds a name, code or kind in Latin letters ("USB", "VLAN 20",
    "ranger_bringup") that no line about the new one writes: what the entry says of the old one there may not hold
    of the new one, so the swap is left to a person (as a tool swap is, memgit.dream.rules.versions)."""
    said = "\n".join(lines)
    # a figure the entry gives of the old one ("desktop cutter (max 584 mm media)") that no line about the new one
    # gives: a spec of the old one, maybe not of the new
    rest = fold(DATE_TAIL_RE.sub("", body)).replace(old, " ")
    # (a number ending a quoted title is no size in inches: 'base "Intake 2025"')
    if any(n not in said for n in _SPEC.findall(re.sub(r"[\"“][^\"”]*[\"”]", " ", rest))):
        return True
    # a count the entry gives of it in some unit ("一窑最多装 40 把") that a line about the new one gives otherwise
    # ("一窑能放 60 把"): the old one's, the new one's is another
    for n, unit in _COUNTED.findall(rest):
        if any(m.group(1) != n for m in re.finditer(rf"(?<![\d.])(\d+(?:\.\d+)?)\s*{re.escape(unit)}", said)) \
                and not re.search(rf"(?<![\d.]){re.escape(n)}\s*{re.escape(unit)}", said):
            return True
    # a file type the entry gives (".lpx") that the new one's lines never give, or give only as gone ("no .lpx step")
    for ext in _FILE_TYPE.findall(rest):
        if not any(not lx.negated_at(said, m.start()) and not said[max(0, m.start() - 3):m.start()].endswith("no ")
                   for m in re.finditer(re.escape(ext) + r"(?![\w])", said)):
            return True
    stems = {stem(x) for x in re.findall(r"[a-z][a-z0-9_-]*", said)}  # (in any form: "PINs carried over" of "PIN")
    # a step of the entry a line says is over ("no more copying by hand" of "partials copied into the ledger by hand")
    over = [term_set(m.group(1)) for m in _OVER_NOW.finditer(said) if m.group(1)]
    # (or the one word of its doing, "no more copy paste" of "I copy them into the calendar")
    if any(len(shared := term_set(fold(c)) & o - STOP) >= 2 or len(o - STOP) <= 2 and any(len(t) >= 4 for t in shared)
           for c in _DETAIL_CLAUSE.split(rest) for o in over):
        return True
    # (in Chinese, two words of the entry's anywhere: "本子不用再记溶氧了" of "溶氧用…手持溶氧仪，每 2 小时…记本子"; not
    # the old one's own ending, "LINE 記事本那篇不再更新")
    if any(len(term_set(m.group(2)) & term_set(rest) - STOP) >= 2 for m in _OVER_NOW.finditer(said)
           if m.group(2) and old not in m.group(2)):
        return True
    for clause in _DETAIL_CLAUSE.split(body):
        if old in fold(clause):
            # a Chinese name written apart beside the old one ("老款 旭众 石磨机": its maker) that no line about the
            # new one writes: the old one's, and what else the entry says may be too
            # (by its words: the maker in "用海康" is said as "换部海康")
            if any(w not in old and any(x not in said for x in [x for x in cjk_cut(w) if len(x) >= 2] or [w])
                   for w in _APART_CJK.findall(fold(clause))):
                return True
            # and a host beside it ("a self-hosted Jenkins box at ci.orchardloop.dev") that only a line ending the old
            # one writes (`fresh`: the new one's lines that end nothing): the old one's
            if any(h not in old and not any(h in f for f in fresh) for h in _HOST.findall(fold(clause))):
                return True
            # and the machine or place it runs on or at, by a capitalised name after it ("Harlequin workflow on the old
            # Dell tower"), that no line about the new one writes: where the old one ran, the new one may not
            # (past the old name as the entry writes it whole: "Edge" of "Levelogger Edge" is its name, no detail)
            wf = fold(whole)
            after = clause[fold(clause).find(wf) + len(wf):] if wf and wf in fold(clause) \
                else clause[fold(clause).find(old) + len(old):]
            # and a word between "a" and it ("a shared Google Sheet") that no line about the new one writes in any form:
            # one of a kind of thing, which the new one may not be ("a shared Local Line")
            at = fold(clause).find(wf) if wf and wf in fold(clause) else fold(clause).find(old)
            mod = re.search(r"(?<![\w-])(?:a|an)\s+((?:[a-z][a-z-]+\s+){1,2})$", fold(clause)[:at])
            if mod and any(w not in STOP and w not in _NO_KIND and stem(w) not in stems for w in mod.group(1).split()):
                return True
            # and a count of things after it in its clause, how it is worked ("CPCe 4.1 人手點 50 random points per
            # frame"), that no line about the new one gives: how the old one was used, the new one may be used otherwise
            # (a model's number ends its name instead: "Osmo Polyx 3032, clear")
            if any(n not in said for n in _COUNT_AFTER.findall(fold(after))):
                return True
            # and a compound of plain words right after it ("Van Son rubber-based") that no line about the new one
            # writes: what the old one is, the new one may not be
            if any(w not in said for w in _COMPOUND.findall(fold(after))):
                return True
            # and the parts it worked with that a line ending it takes away too ("pulled the cloud controller and the
            # Wi-Fi bridge") and no line about the new one names: the old one's
            gone = "\n".join(c for x in lines if x not in fresh for c in _ENDING_CLAUSE.split(x)
                             if _said(old, c) and lx.DISPLACED.search(c))
            fresh_stems = {stem(x) for f in fresh for x in re.findall(r"[a-z][a-z0-9_-]*", f)}
            # (a quoted title is the name's own, and goes with it: 'Google Sheet "Cellar 2026"')
            unquoted = re.sub(r"[\"“「『][^\"”」』]*[\"”」』]", " ", fold(after))
            if any(_said(w, gone) and stem(w) not in fresh_stems
                   for w in re.findall(r"(?<![\w-])[a-z][a-z-]{3,}(?![\w-])", unquoted) if w not in STOP):
                return True
            # and a feature it is used with that lines name only as the old one's ("with the spectrum view" / "the
            # Audacity spectrum view"): the new one may have none
            feature = re.search(r"\bwith\s+(.+)", fold(after))
            if feature and any(_only_as_old(w, old, lines) for w in re.findall(
                    r"(?<![\w-])[a-z][a-z-]{3,}(?![\w-])", feature.group(1)) if w not in STOP):
                return True
            if any((w := m.group(1).lower()) not in STOP and not _said(w, said) and stem(w) not in stems
                   for m in _RUNS_ON.finditer(after)):
                return True
            continue
        # (a clause a line says stays, by a number of it beside a word of going on: "85 头继续用" of "人像头 85mm F1.8")
        if any(re.search(rf"(?<![\d.]){n}(?![\d.])[^，,。；;]{{0,8}}?{_GOES_ON.pattern}", x)
               for n in re.findall(r"(?<![\d.])\d{2,}(?![\d.])", fold(clause)) for x in lines):
            continue
        # (a name of several words is said by one of them: "Lightroom" of "Lightroom Classic")
        named = [x.span() for x in _NAME_RUN.finditer(clause) if len(x.group(0).split()) >= 2 and any(
            len(w) >= 3 and _said(w.lower(), said) for w in x.group(0).split())]
        for m in _LATIN_DETAIL.finditer(clause):
            w = m.group(0).lower()
            if m.group(0).islower() and m.group(0).isalpha():
                continue  # a plain word of an English entry ("the online calendar clients use") is no name
                # (a compound of plain words, "rubber-based", may say what the old one is: it is asked)
            if any(a <= m.start() < b for a, b in named) or lx.WEEKDAY.fullmatch(w):
                continue  # (a day of the week is when, not what: "sent every Friday")
            if w not in STOP and not _said(w, said) and stem(w) not in stems:
                return True
    return False


# a count of two digits or more, no part of a version, a time or a date ("50 random points"; not "4.1", "10:00", "9 点")
_COUNT_AFTER = re.compile(r"(?<![\d.:/-])(\d{2,})(?![\d.:/-])(?!\s*(?:点|點|时|時|号|號|日|月|年|am\b|pm\b|h\b))"
                          r"(?=\s*(?:[a-z]{2,}|[\u4e00-\u9fff]))")
# what a thing runs on or at, named ("on the old Dell tower", "at the Mill Road shop")
_RUNS_ON = re.compile(r"\b(?:on|at)\s+(?:(?:the|a|an|our|its|their|my|old|new|shared|back|front)\s+){0,3}([A-Z][\w-]+)")
# a figure of a machine's size or power ("584 mm", "1.5 kW", "32 GB", "55 寸")
# a capacity in some unit ("最多装 40 把", "holds up to 12 trays")
_COUNTED = re.compile(r"(?:最多|最大|至多|能放|可放|能装|可装|容量|max(?:imum)?|up to|capacity(?: of)?|holds?)\s*[\u4e00-\u9fff]?\s*"
                      r"(\d+(?:\.\d+)?)\s*([\u4e00-\u9fff]|[a-z]{2,}(?![a-z]))")
_SPEC = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s*(?:mm|cm|kg|gb|tb|mb|kw|w|v|inch(?:es)?|\"|ml|寸|英寸|公斤|斤|瓦|伏|毫米|厘米)(?![a-z])")
# a Chinese word written apart, spaces around it, inside a clause: a name ("老款 旭众 石磨机")
_APART_CJK = re.compile(r"(?<=\s)[\u4e00-\u9fff]{2,6}(?=\s)")
_CLAUSE_CUT = re.compile(r"[，,；;]\s*")
_ENDING_CLAUSE = re.compile(r"[，,；;。！？!?]|(?<=[a-z0-9])\.\s")


def _fields_as_new(text: str, new: str, support: list[str]) -> str:
    """The replaced entry with a figure of the old one's that the lines about the new one give otherwise, the same field
    and unit around it: theirs ("交期 10 個工作天" → "交期 9 個工作天" of "大樹報價單回來，…交期 9 個工作天")."""
    if len(fold(text)) != len(text):
        return text
    f = fold(text)
    skip = f.find(fold(new))
    edits = []
    for m in _FIELD_FIGURE.finditer(f):
        if skip >= 0 and skip <= m.start() < skip + len(new):
            continue
        field, unit = m.group(1), m.group(3)
        said = {x.group(1) for line in support
                for x in re.finditer(rf"{re.escape(field)}\s*(?:[^\d，,。；;]{{0,6}}?)(\d+(?:\.\d+)?)\s*{re.escape(unit)}", line)}
        if len(said) == 1 and (value := next(iter(said))) != m.group(2):
            edits.append((m.start(2), m.end(2), value))
    for a, b, value in reversed(edits):
        text = text[:a] + value + text[b:]
    return text


# a field, its figure and the figure's unit ("交期 10 個工作天", "lead time 10 working days")
_FIELD_FIGURE = re.compile(r"([\u4e00-\u9fff]{2}|[a-z]{3,}(?: [a-z]{3,})?)\s*(\d+(?:\.\d+)?)\s*"
                           r"([\u4e00-\u9fff]{1,4}|[a-z]{2,}(?: [a-z]{3,})?)")


def _without_old_aside(text: str, new: str, support: list[str]) -> str:
    """The replaced entry without the aside in brackets that stood right after the old name, when it says what no line
    about the new one writes: the old one's file or place ("共享 Excel 台账（理化室-样品登记.xlsx）" → "飞书多维表格")."""
    at = text.find(new)
    m = _ASIDE_AFTER.match(text, at + len(new)) if at >= 0 else None
    if m is None:
        return text
    said = frozenset().union(*(term_set(x) for x in support))
    if term_set(fold(m.group(1))) <= said:
        return text
    return text[:m.start()] + text[m.end():]


_ASIDE_AFTER = re.compile(r"\s*[（(]([^（()）]{1,60})[）)]")


def _without_old_details(text: str, new: str, old: str, ending: list[str], support: list[str]) -> str:
    """The replaced entry without a clause of it that a line ending the old one's part speaks of ("装在前台那台电脑上"
    beside "前台电脑上的管家婆已卸载"): that was the old one's place or setting, not the new one's. What the first
    clause says (the entry's subject) ties nothing to the old one, and the clause naming the new one stays."""
    parts = _CLAUSE_CUT.split(text)
    if len(parts) < 2:
        return text
    seps = _CLAUSE_CUT.findall(text)
    subject = term_set(fold(parts[0])) | cjk_pairs(fold(parts[0]))
    # (only what a line's clause naming the old one says: "Invoices now come out of ezyVet" is the new one's)
    ending = [c for e in ending for c in _ENDING_CLAUSE.split(e) if old in c]
    kept, k_seps = [parts[0]], []
    for sep, part in zip(seps, parts[1:]):
        f = fold(part)
        mine = {t for t in term_set(f) | cjk_pairs(f) if t not in STOP and not is_common_word(t)} - subject
        # (unless a line about the new one speaks of it too: "Toast on both terminals now" keeps "two terminals at
        # the counter" that "removed from the counter" speaks of)
        if new not in part and any(mine & (term_set(e) | cjk_pairs(e)) for e in ending) and not any(
                mine & (term_set(x) | cjk_pairs(x)) for x in support):
            continue
        kept.append(part)
        k_seps.append(sep)
    return kept[0] + "".join(s + p for s, p in zip(k_seps, kept[1:]))

