"""Refresh an entry a conversation restates whole with new values: the slots that differ, found by alignment.

A person changes a standing arrangement in a chat ("Saturday at 20:00 please. Everything else the same"), and
the turn that confirms it restates the arrangement whole ("Got it: from next week the meal plan goes out
Saturday at 20:00, by email, as a checklist grouped by aisle"). Aligned with the entry it restates, such a turn
shows what moved: a time, a weekday, a channel; everything else it says is the entry's own. Only what the person
said themselves in that conversation moves, and only where the entry holds one value of its kind, so the rest
of the entry stays as they wrote it.
"""
from __future__ import annotations

import dataclasses
import difflib
import re

from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.dream.model import Candidate, CJK_IN, clause_at, clock_as, clocks, compose, Context, entry_evidence, fold, Item
from memgit.dream.rules.schedule import _ASKS as _QUESTION, _DATED_DAY, _SINCE, _day_as, _days
from memgit.dream.scoring import confidence
from memgit.ops import Operation
from memgit.text import STOP, is_common_word, stem, term_set

# a text's tokens for aligning two wordings: a clock time, a word of Latin letters or digits, one Chinese
# character, or one mark
_TOKEN = re.compile(r"\d{1,2}[:：]\d{2}|[a-z0-9](?:[a-z0-9'._-]*[a-z0-9])?|[\u4e00-\u9fff]|[^\sa-z0-9\u4e00-\u9fff]")
# the words a conversation says a change with, besides the lexicon's preference words
# (and a way dropped, or the thing put on another: "drop email for that one, put it on WhatsApp")
_WAY_ASKED = re.compile(r"\b(?:drop|ditch)\s+(?:the\s+)?[a-z]+(?:\s+for\b|[.,;]|\s*$)|\bput (?:it|them) (?:on|in)\b")
_CHANGE_CUES = (lx.PREFERENCE, lx.PREFERENCE_CHANGE, lx.TIME_MOVED, lx.TIME_MARKER, lx.PREF_KEPT, lx.SUPERSEDE, _WAY_ASKED)
# (an English sentence ends at a full stop a space or the end follows: "v2.3" is no end)
_SENTENCE = re.compile(r"(?:[^。！？!?.]|\.(?!\s|$))+(?:[。！？!?]+|\.+(?=\s|$))?\s*")
# a sentence saying what happens once more, or once only: no standing arrangement ("今晚还按 8 点发最后一次", "one last
# time tonight at 8", "just this week")
_ONE_OFF = re.compile(f"{lx.EXCEPTION.pattern}|最后一次|最後一次|\\b(?:one )?last time\\b", re.I)
# a value said as what is no longer wanted ("No Monday report", "drop the Monday one", "不要周一发")
# (or said as the one replaced: "at 5pm from now on instead of 6:30pm", "而不是 8 点")
_DROPPED_BEFORE = re.compile(r"(?:\b(?:no|not|drop(?:ped)?|skip|cancel(?:led)?|without)\s+(?:the\s+)?|"
                             # (the old value a word or two after: "instead of Monday 8am", "rather than Sunday at 9")
                             r"\b(?:instead of|rather than)\s+(?:the\s+)?(?:[a-z]+\s+){0,2}|"
                             r"(?:不要|别|別|不用|取消|不再|而不是)\s*)$", re.I)


def _hedged(f: str) -> bool:
    """A plan, a wish or a condition ("maybe", "如果", "打算"), not a change decided; "以后" and "from now on"
    say when a decided change holds from."""
    marks = [(m.start(), m.end()) for p in (lx.TIME_MARKER, lx.PREFERENCE) for m in p.finditer(f)]
    return any(not any(a <= m.start() < b for a, b in marks) for m in lx.PLANNED.finditer(f))


def _without_cues(f: str) -> str:
    """A folded turn with the words that say a change or what stays blanked out."""
    chars = list(f)
    for p in (*_CHANGE_CUES, _SINCE):
        for m in p.finditer(f):
            chars[m.start():m.end()] = " " * (m.end() - m.start())
    return "".join(chars)


def _said_change(f: str) -> bool:
    f = _unadmonished(f)
    return any(p.search(f) for p in _CHANGE_CUES) or bool(_SINCE.search(f))


def _unadmonished(f: str) -> str:
    """A folded text with its refusals of a mistake blanked ("唔好搞亂", "don't mess it up"): they turn down no value."""
    return lx.ADMONITION.sub(lambda m: " " * len(m.group(0)), f)


def _slot_values(text: str) -> tuple[list[tuple[int, int, int, str]], list[tuple[int, int, int]]]:
    """The clock times (over the folded text) and the weekdays of a schedule (as written) a text gives: a
    weekday that dates when something starts or happens once ("从下周一起", "this Friday") is none."""
    f = fold(text)
    dated = [(m.start(), m.end()) for m in _DATED_DAY.finditer(f)]
    days = [d for d in _days(text) if not any(a <= d[0] < b for a, b in dated)
            and not re.search(r"(?:这|這|本|上|下|next|this|last|coming)\s*(?:个|個)?$", f[max(0, d[0] - 6):d[0]])]
    return clocks(f), days


# a stretch of time in whole units ("3 天", "2 hours", "48h"), its unit read alike in either language
_DURATION = re.compile(r"(?<![\d.:/,-])(\d{1,3})\s*(?:(天)|(小时|个钟|hours?\b|hrs?\b|h\b)|(分钟|minutes?\b|mins?\b)"
                       r"|(周|星期|个星期|weeks?\b|wks?\b)|(个月|months?\b))")
_UNITS = ("day", "hour", "min", "week", "month")


def _durations(f: str) -> list[tuple[int, int, str, str]]:
    """The stretches of time a folded text gives: (start, end, the number as written, its unit)."""
    return [(m.start(), m.end(), m.group(1), next(u for u, g in zip(_UNITS, m.groups()[1:]) if g))
            for m in _DURATION.finditer(f)]


def _clause(f: str, at: int) -> str:
    """The clause of `f` holding f[at]."""
    return clause_at(f, at, _CLAUSE_MARK)


def _kept(f: str, start: int) -> bool:
    """A value not said as the one dropped ("No Monday report")."""
    return not _DROPPED_BEFORE.search(f[max(0, start - 30):start]) and not lx.negated_at(f, start)


_PERIODS = frozenset((*lx.CLOCK_AM, *lx.CLOCK_PM))
_MERIDIEM = frozenset(("am", "pm"))  # (the "pm" of "6pm", which the segmenter may cut off the time)
_PERIOD_BEFORE = re.compile(rf"(?:{'|'.join(sorted(_PERIODS, key=len, reverse=True))})\s*$")


# a part of the day written right before a time, a single character too ("周日晚 20:00"), and which are the evening's
_HALF_BEFORE = re.compile(rf"({'|'.join(sorted(_PERIODS, key=len, reverse=True))}|早|晚|夜)\s*$")
_EVENING = frozenset((*lx.CLOCK_PM, "晚", "夜"))
_PERIOD_OPENS = re.compile(rf"(?:{'|'.join(sorted(_PERIODS, key=len, reverse=True))})")


def _with_period(text: str, a: int, b: int) -> str:
    """The time at text[a:b] with the part of the day said right before it ("早上 7:30")."""
    m = _PERIOD_BEFORE.search(text[max(0, a - 6):a])
    return text[a - len(m.group(0)) if m else a:b].strip()


def _adds(entry: str, uf: str) -> bool:
    """The person's turn (folded) asks for something added to the arrangement (`entry`, folded): a word of adding
    ("加一行", "也要") in a clause naming what the entry lacks ("最后加一行当天总量"); a clause naming only what the
    entry has already ("喂料量也要附上") keeps it."""
    for m in lx.PREF_ADDED.finditer(uf):
        a = max((x.end() for x in _CLAUSE_MARK.finditer(uf, 0, m.start())), default=0)
        b = _CLAUSE_MARK.search(uf, m.end())
        # (what is added stands after the word, "再加一行总量"; what is wanted as well, before it: "喂料量也要")
        said_of = uf[a:m.start()] if m.group(0).startswith("也") else uf[m.end():b.start() if b else len(uf)]
        said = [t for t in term_set(said_of) if not t.startswith("~") and _placeable(t)]
        if said and any(t in entry for t in said) and _DENIES.search(said_of):
            continue  # ("Also the girls don't read SMS anymore": what the entry has, turned down; nothing added)
        if not said or not all(t in entry for t in said):
            return True
    return False


_DENIES = re.compile(r"\b(?:not|never|no|without|dont|doesnt|cant|wont|isnt|anymore)\b|n[’']t\b|不|没|沒|别|別", re.I)


# a clause saying a thing is not to change ("都不用动", "不用改", "leave it as is")
_UNCHANGED = re.compile(r"不(?:用|要|必)(?:动|改|变)|别(?:动|改)|\bleave (?:it|them|that) (?:as is|alone)\b|\bdon'?t change\b")
_KEPT_CUT = re.compile(r"[，,。；;！!？?、:：]|\.(?=\s|$)")  # (a clause, or an English sentence: "… instead of email. Everything else stays")
_CLAUSE_MARK = re.compile(r"[，,。；;！!？?、]")


def _one(values: set) -> object | None:
    return next(iter(values)) if len(values) == 1 else None


def _tokens(text: str) -> list[tuple[int, int, str]]:
    f = fold(text)
    return [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(f)]


def _placeable(term: str) -> bool:
    """A term that can be a value put in another's place: no number, weekday, function or common word."""
    return not any(c.isdigit() for c in term) and not _days(term) and not lx.WEEKDAY.fullmatch(term) \
        and term not in STOP and not is_common_word(term) and len(term) >= 2


def _content(tok: str) -> bool:
    """A token that says something: a word no function word, or a Chinese character."""
    return bool(CJK_IN.match(tok)) or tok[0].isalnum() and tok not in STOP


class _Aligned:
    """An entry's body and a restatement, token by token: what the restatement says in the place of what."""

    def __init__(self, body: str, said: str):
        self.body, self.said = body, said
        self.tb, self.ts = _tokens(body), _tokens(said)
        sm = difflib.SequenceMatcher(None, [t[2] for t in self.tb], [t[2] for t in self.ts], autojunk=False)
        ops = sm.get_opcodes()
        # two replacements one function word apart are one ("grouped by client" → "sorted by due date")
        merged: list[tuple[str, int, int, int, int]] = []
        for op in ops:
            if (len(merged) >= 2 and op[0] == "replace" and merged[-2][0] == "replace" and merged[-1][0] == "equal"
                    and merged[-1][2] - merged[-1][1] == 1 and self.tb[merged[-1][1]][2] in STOP):
                merged[-2:] = [("replace", merged[-2][1], op[2], merged[-2][3], op[4])]
            else:
                merged.append(op)
        self.ops = merged


def _own_words(new: str, said: str) -> bool:
    """Every word of `new` (folded) is one the person said, in some form ("sorted by due date" of "sort it by due
    date"), or, with Chinese in it, every one of its few tokens in another order ("LINE 传" of "直接传 LINE 给我")."""
    if CJK_IN.search(new):
        toks = [t for _, _, t in _tokens(new) if t.strip()]
        return 0 < len(toks) <= 4 and set(toks) <= {t for _, _, t in _tokens(said)}
    words = re.findall(r"[a-z0-9]+", new)
    if not words:
        return False
    theirs = {stem(w) for w in re.findall(r"[a-z0-9]+", said)}
    return all(stem(w) in theirs for w in words)


def _phrase(text: str) -> bool:
    """A run of words that opens and ends with a content word (no "is …", "from today …")."""
    words = re.findall(r"[a-z0-9]+", text)
    return bool(words) and words[0] not in STOP and words[-1] not in STOP and not (
        set(words) & {"is", "are", "was", "were", "from", "today", "now"})


# a question that asks for a change, not about one ("can it come sunday evening instead?", "能不能改到周日晚上？")
# (whatever is asked to come: "can the Sunday availability thing come at 6pm instead of 8?"; or Cantonese 得唔得)
_REQUEST = re.compile(r"\b(?:can|could|would)\b[^?？.!]{0,40}?\b(?:come|go|be sent|be moved|send|move|post|switch|do|run|have|make|change)\b"
                      r"[^?？]*\b(?:instead|from now on|going forward|in future)\b|(?:能不能|可不可以|可否)\s*(?:改|换|转|早|晚|提前|推迟|延后)|可以改(?:成|到|为)|得不得"
                      # (or a request tagged as a question, as Singapore writes it: "Send next morning 8am can?")
                      r"|(?:^|[\s,，])(?:can|boleh)\s*[?？]"
                      # (or "ok?", "好吗?" after what is asked: "from tomorrow send me the list at 7pm ok?")
                      r"|(?:^|[\s,，])(?:ok|okay|好吗|好不好|行吗|行不行)\s*[?？]")


def _user_said(value_check, users: list[Observation]) -> Observation | None:
    """The person's turn of the conversation that says the new value, as a statement."""
    for u in reversed(users):
        f = fold(u.text)
        if _QUESTION.search(f) and not _REQUEST.search(f) or lx.EXCEPTION.search(f):
            continue  # (a question asking for it is said: "can it come sunday evening instead? 19:00 say.")
        if not value_check(u.text, f):
            continue
        # (a plan or a wish hedges its own clause, not the value said in another: "…以后改到每周六上午10点吧，周日晚上
        # 可可要准备周一的课")
        if _hedged(f) and all(_hedged(fold(c)) or not value_check(c, fold(c)) for c in _CLAUSE_MARK.split(u.text)):
            continue
        return u
    return None


def _content_terms(ctx: Context, it: Item) -> frozenset[str]:
    return frozenset(t for t in it.subject if not t.startswith("~") and not any(c.isdigit() for c in t)
                     and not _days(t) and not lx.WEEKDAY.fullmatch(t))


def _restates(ctx: Context, it: Item, r: Observation, talk: frozenset[str] = frozenset(), talk_only: bool = False
              ) -> float:
    """How many of the entry's own words (numbers and weekdays aside) the conversation up to the turn says (`talk`,
    the turn's terms with it), as a share: 0 when the turn names none of them or the conversation none specific to
    it. (A count, not a weight: the words a restatement leaves out are the moved value's, which a small window may
    make the rarest; and a short confirmation, "Got it: Tuesday 12:00, …", restates what the turns before it
    named: "about the weekly reminder".) `talk_only`: the turn may name none of them, the conversation naming them."""
    own = _content_terms(ctx, it)
    said = r.terms | talk
    shared = own & said
    if not (talk_only or own & r.terms) or len(shared) < min(2, len(own)) or not any(ctx.anchor(t) for t in shared):
        return 0.0
    return len(shared) / len(own)


def _moves(it: Item, r: Observation, users: list[Observation], confirmed: bool = False,
           answers: frozenset[int] = frozenset()) -> tuple[list[tuple[int, int, str]], list[Observation]] | None:
    """The entry's slots the restatement `r` moves, as (start, end, new text) in the entry's body, and the
    person's turns that said the new values; None when it changes what cannot be placed. `confirmed`: the
    person's next turn says the rest stays, so what they asked for before it was a change, in whatever words
    ("… is too late. Send it at 08:00 on WhatsApp please")."""
    body = it.entry.body
    fb = fold(body)
    if len(fb) != len(body):
        return None
    f = fold(r.text)
    said_clocks, said_days = _slot_values(r.text)
    have_clocks, have_days = _slot_values(body)
    edits: list[tuple[int, int, str]] = []
    grounds: list[Observation] = []
    if any(_adds(fb, fold(u.text)) for u in users):
        return None  # something added ("最后加一行当天总量"): no slot of the entry's holds it, a person writes it in
    # a time: the entry gives one, the turn one other (besides one it says is dropped)
    # (not a time said once, in a clause of its own: "今晚 10pm send 一次，聽日開始每晚 8pm")
    new_clocks = {c[2] for c in said_clocks if _kept(f, c[0]) and not _ONE_OFF.search(_clause(f, c[0]))}
    if new_clocks:
        if len({c[2] for c in have_clocks}) != 1 or len(have_clocks) != 1 or len(new_clocks) != 1:
            return None  # a time the entry has no place for, or several: unsure which moves
        new = _one(new_clocks)
        old = have_clocks[0]
        if new != old[2]:
            # (a bare "4:30" said of a time moving within the afternoon or evening is the agent's 16:30)
            # (and a bare "9点" so said, or "6.30" as many write half past six: never a price or a version, "6.30 a month")
            u = _user_said(lambda t, uf: any(c[2] == new or c[3] in ("24s", "zh") and not _PERIOD_OPENS.match(uf, c[0])
                                             and old[2] >= 720 and c[2] + 720 == new for c in clocks(uf))
                           or any(_dotted(m) in (new, new - 720 if old[2] >= 720 else -1) for m in _DOTTED.finditer(uf)),
                           users)
            if u is None:
                return None  # the person never said the new time
            written = clock_as(new, body[old[0]:old[1]], old[3])
            if written is None or written not in r.text and written not in u.text:
                # written as someone in the conversation wrote it, so the new value is grounded: in the entry's style
                # when they wrote it so ("5pm" for "6:30pm", not "5:00pm"), else as the turn writes it
                alike = [t[c[0]:c[1]] for t in (r.text, u.text) for c in clocks(fold(t)) if c[2] == new and c[3] == old[3]]
                written = alike[0] if alike else next((_with_period(r.text, c[0], c[1]) for c in said_clocks
                                                       if c[2] == new), None)
            if not written:
                return None
            # (the entry's part of the day before its time, in the other half of the day than the new one: the new time
            # said with its own part goes in its place, "周日晚 20:00" → "周一早上 8:00"; a "每晚" is left to a person)
            start = old[0]
            if (half := _HALF_BEFORE.search(fb[:old[0]])) and (half.group(1) in _EVENING) != (new >= 720):
                if half.start() > 0 and fb[half.start() - 1] == "每" or not _PERIOD_OPENS.match(fold(written)):
                    return None
                start = half.start()
            # (a time in digits next to Chinese stands a space apart from it: "早上 7:30 发微信")
            if written[-1:].isdigit() and CJK_IN.match(body[old[1]:old[1] + 1]):
                written += " "
            if written[:1].isdigit() and old[0] > 0 and CJK_IN.match(body[old[0] - 1]):
                written = " " + written  # (and after it: "每周一早上 8 点" → "每周日 19:30")
            edits.append((start, old[1], written))
            grounds.append(u)
    new_days = {d[2] for d in said_days if _kept(f, d[0])}
    if new_days:
        if len(have_days) != 1 or len(new_days) != 1:
            return None
        new = _one(new_days)
        old = have_days[0]
        if new != old[2]:
            u = _user_said(lambda t, uf: any(d[2] == new for d in _slot_values(t)[1]), users)
            if u is None:
                return None
            edits.append((old[0], old[1], _day_as(new, body[old[0]:old[1]])))
            grounds.append(u)
    # a stretch of time the entry gives ("出發前 3 天", "2 hours before"), the turn one other of the same unit the person
    # said ("改出發前 5 天發"): the number moves, its unit stays
    have_spans = _durations(fb)
    said_spans = [d for d in _durations(f) if _kept(f, d[0]) and not _ONE_OFF.search(_clause(f, d[0]))]
    for unit in {d[3] for d in said_spans}:
        mine = [d for d in have_spans if d[3] == unit]
        theirs = {d[2] for d in said_spans if d[3] == unit}
        if not mine or theirs <= {d[2] for d in mine}:
            continue  # (a stretch the entry has no place for, or as it was: no move of the entry's)
        if len(mine) != 1 or len(theirs) != 1:
            return None  # several: unsure what moves
        old, new_n = mine[0], _one(theirs)  # (another than the entry's: the check above)
        u = _user_said(lambda t, uf: any(d[2] == new_n and d[3] == unit for d in _durations(uf)), users)
        if u is None:
            return None  # the person never said the new length
        edits.append((old[0], old[0] + len(old[2]), new_n))
        grounds.append(u)
    # what else the person asked for that the turn confirms (a channel, a tool: "改发钉钉群吧"), each put in the
    # place of the entry's words the turn says it instead of; the turn's other words are its own phrasing
    # (the words that say it, "改发", "这个不变", are no value)
    # (a clause saying what stays asks for nothing: "表格和那四列都不用动")
    asked = frozenset().union(*(term_set(_without_cues(" ".join(
        c for c in _KEPT_CUT.split(_unadmonished(fold(u.text))) if not lx.PREF_KEPT.search(c) and not _UNCHANGED.search(c))))
        for u in users if confirmed or _said_change(fold(u.text)) or id(u) in answers))
    wanted = {t for t in asked & r.terms if not t.startswith("~") and t not in it.subject and _placeable(t)
              and t not in _PERIODS and t not in _MERIDIEM and t != "instead"}  # ("早上", "pm" are the time's, moved with it;
    # "instead" says it replaces)
    # (and a common word the person said that the turn puts where the entry has another, "发当天的" for "第二天的": a
    # value like any, put in place if it can be; never one the rest must place)
    said_too = {t for t in asked & r.terms if not t.startswith("~") and t not in it.subject and t not in _PERIODS
                and t not in _MERIDIEM
                and t != "instead" and len(t) >= 2 and t not in STOP and not any(c.isdigit() for c in t)} - wanted
    al = _Aligned(body, r.text)
    slot_spans = [(a, b) for a, b, *_ in have_clocks] + [(a, b) for a, b, _ in have_days] + [
        (a, b) for a, b, *_ in have_spans]
    said_slots = [(a, b) for a, b, *_ in said_clocks] + [(a, b) for a, b, _ in said_days] + [
        (a, b) for a, b, *_ in said_spans]
    inserts: list[tuple[tuple[int, int, str], Observation, frozenset[str]]] = []
    for tag, i1, i2, j1, j2 in al.ops:
        if tag == "insert" and 0 < i1 < len(al.tb) and j2 - j1 <= 4:
            # (words the turn puts between two of the entry's it keeps, all asked for: "发 Excel 出货汇总" adds the form
            # in front of what is sent)
            ins = r.text[al.ts[j1][0]:al.ts[j2 - 1][1]].strip()
            nf = fold(ins)
            # (unless the entry says a value of the same kind the person turned down: that one gives way, below)
            if ins and term_set(nf) and term_set(nf) <= wanted and not any(c.isdigit() for c in ins) and (
                    u := _user_said(lambda t, uf: nf in uf and (confirmed or _said_change(uf)), users)):
                at = al.tb[i1][0]
                inserts.append(((at, at, _gap(body[at - 1:at], ins[0]) + ins + _gap(ins[-1], body[at:at + 1])), u,
                                term_set(nf)))
            continue
        if tag != "replace":
            continue
        # (a slot moved above that the same stretch holds, "07:00 发到她的邮箱" / "06:30，企业微信", is no part of it:
        # what stands after it on both sides is)
        while i1 < i2 and any(a <= al.tb[i1][0] < b for a, b in slot_spans):
            i1 += 1
        while j1 < j2 and (any(a <= al.ts[j1][0] < b for a, b in said_slots) or not al.ts[j1][2][0].isalnum()
                           and not CJK_IN.match(al.ts[j1][2])):
            j1 += 1
        if i1 >= i2 or j1 >= j2:
            continue
        if confirmed and (i2 - i1 > 8 or j2 - j1 > 8):
            # (a long stretch: the agent restates the change and leaves the rest to the person's "the rest stays";
            # what replaces what is each side's first clause, the turn's words of when it holds aside: "by email" →
            # "on Signal", of "18:30 by email, one row per aisle, …" / "07:15 on Signal from tomorrow.")
            i2 = next((k for k in range(i1 + 1, i2) if al.tb[k][2] in _CLAUSE_TOKENS), i2)
            j2 = next((k for k in range(j1 + 1, j2) if al.ts[k][2] in _CLAUSE_TOKENS
                       or _SINCE.match(f, al.ts[k][0]) or lx.TIME_MARKER.match(f, al.ts[k][0])), j2)
        ns, ne = al.ts[j1][0], al.ts[j2 - 1][1]
        theirs_text = r.text[ns:ne]
        # (a term of the turn's words overlapping the span: Chinese terms run across a span's edges)
        placed = {t for t in wanted | said_too if any(m.start() < ne and ns < m.end() for m in re.finditer(re.escape(t), f))}
        if not placed:
            continue
        optional = not placed & wanted  # (only a common word the person said: left as it was when it cannot be placed)
        old_span = (al.tb[i1][0], al.tb[i2 - 1][1])
        if any(a < old_span[1] and old_span[0] < b for a, b in slot_spans):
            continue  # a value beside a slot: unsure what it replaces here (what the person turned down may say)
        old_text = fb[old_span[0]:old_span[1]]
        # (at most eight words a side; a Chinese character is a token of its own, and what the turn puts in place may
        # be sixteen of them: "飞书群「卷饼车后厨」")
        if not any(_content(t[2]) for t in al.tb[i1:i2]) and any(
                _BARE_INSTEAD.search(u.text) or _RATHER.search(u.text) for u in users):
            continue  # (no word of the entry's there, "as", beside a way said "instead of": that says what it replaces)
        if not any(_content(t[2]) for t in al.tb[i1:i2]) or j2 - j1 > _span_limit(theirs_text) \
                or i2 - i1 > 8 or old_text.strip() in f:
            if any((bare := _BARE_INSTEAD.search(u.text)) and placed <= term_set(bare.group(1)) for u in users):
                continue  # (a way said "instead", "send them on WhatsApp instead": its old one is the entry's way)
            if (rather := _RATHER.search(r.text)) and rather.start() < ne and ns < rather.end():
                continue  # (the turn says what it replaces, "on WhatsApp instead of email": what it asks for is placed
                # in the old one's place below)
            if placed & wanted and _instead(body, r, users, placed & wanted, edits) is not None:
                continue  # (the person turned the entry's way down, "唔好再 email": what they ask for takes its place
                # below, however the turn orders its words)
            if optional:
                continue
            return None
        if any(c.isdigit() for c in old_text) and not any(c.isdigit() for c in theirs_text):
            if optional:
                continue
            return None  # a number of the entry's ("语速 1.1x") is no word to put another in place of
        new_text = theirs_text.strip(" ，,、;；。.")
        nf = fold(new_text)
        if _WAY_ASKED.search(nf) or re.search(r"[.!?](?=\s)|[。！？]", new_text) or lx.PREF_KEPT.search(nf) \
                or _DENIES.search(nf) or _FIRST_PERSON.match(nf):
            if optional:
                continue
            return None  # the person's asking words ("put it in Telegram"), past a sentence's end, what says "no" or
            # "the same" ("不用，一樣"), or what the person says of themselves ("我成日 miss 咗", "I never see it"): no value
        # (as they stand, or every word of them the person's own: "sorted by due date" of "sort it by due date")
        # (the person's words in another form only for a phrase in the place of one: "sorted by due date" for
        # "grouped by client", never a clause with its verb, "is grouped by aisle", for ": flat checklist")
        phrase = old_text[:1].isalnum() and old_text[-1:].isalnum() and (bool(CJK_IN.search(nf)) or _phrase(nf))
        u = _user_said(lambda t, uf: (nf in uf or phrase and _own_words(nf, uf)) and (confirmed or _said_change(uf)),
                       users) or _user_said(lambda t, uf: nf in uf, [x for x in users if id(x) in answers])
        if u is None:
            if optional:
                continue
            return None  # the person never asked for these words
        # the verb the entry's words open with, when the person says it before the new value too ("发到她的邮箱" →
        # "发企业微信", from "发企业微信给我")
        uf = fold(u.text)
        at = uf.find(nf)
        lead = next((old_text[:k] for k in range(min(3, len(old_text)), 0, -1)
                     if CJK_IN.match(old_text[0]) and uf[max(0, at - k):at] == old_text[:k]), "")
        new_text = lead + new_text
        edits.append((old_span[0], old_span[1], new_text))
        grounds.append(u)
        wanted -= placed
    if wanted:
        # the person said what it replaces ("post it in Slack, the #frontdesk channel, instead of email"): the old
        # value the entry says once, with the preposition before it, gives way to the new one as the turn writes it
        swap = _instead(body, r, users, wanted, edits)
        if swap is not None:
            edits.append(swap[0])
            grounds.append(swap[1])
            wanted = set()
        for edit, u, terms in inserts:
            if terms <= wanted:
                edits.append(edit)
                grounds.append(u)
                wanted -= terms
        if wanted:
            return None  # the person asked for more than the turn puts in the entry's place: unsure
    if not edits:
        return None
    edits.sort()
    if any(a[1] > b[0] for a, b in zip(edits, edits[1:])):
        return None
    return edits, grounds


_CLAUSE_TOKENS = frozenset(",，;；.。、")
_FIRST_PERSON = re.compile(r"(?:我|i\b|i'm\b|i’m\b|we\b|we're\b)")


def _span_limit(text: str) -> int:
    return 16 if CJK_IN.search(text) else 8


def _whole(word: str) -> str:
    """A pattern of `word` as a whole word (a Chinese one anywhere: it has no spaces around it)."""
    return re.escape(word) if CJK_IN.match(word) else rf"(?<![\w-]){re.escape(word)}(?![\w-])"


# the way an arrangement goes, after its preposition ("by email", "via SMS", "on WhatsApp")
_BY_WAY = re.compile(r"\b(?:by|via|through|over|on)\s+([A-Za-z][\w-]{2,})\b")
# and in Chinese, after the verb that sends it ("发微信", "用邮件", "走钉钉群"), where its clause ends
_BY_WAY_ZH = re.compile(r"(?:发|用|走|通过)\s*([\u4e00-\u9fff]{2,4})(?=\s*(?:[，,。；;]|$))")
# a way asked for in place of the entry's, "instead" with no "of" ("send them on WhatsApp instead")
_BARE_INSTEAD = re.compile(r"\b(?:on|by|via|through|over|in)\s+((?:[A-Z][\w-]*)(?:\s+[A-Z][\w-]*)?)\s+instead\b(?!\s+of)")
_RATHER = re.compile(r"\binstead of\s+([a-z][\w-]*(?:\s+[a-z][\w-]*)?)|而不是\s*([\u4e00-\u9fffA-Za-z]{2,8})", re.I)
_PUT_ON = re.compile(r"\bput (?:it|them) (?:on|in|into)\s+[A-Z#]")
_PREP = re.compile(r"\b(by|via|through|over|on|in|to)\s+$", re.I)


# a time written with a dot, "6.30 please": never inside a number or version ("v6.30", "6.30.1") nor before a unit or
# price word ("6.30 a month", "6.30%")
_DOTTED = re.compile(r"(?<![\w.$€£¥])(\d{1,2})\.([0-5]\d)(?![\w.%])(?!\s*(?:a |an |per |each|/|元|块|塊|刀|蚊|%))")


def _dotted(m: re.Match[str]) -> int:
    return int(m.group(1)) * 60 + int(m.group(2)) if int(m.group(1)) < 24 else -1


def _gap(a: str, b: str) -> str:
    """The space written between characters `a` and `b` when words meet: none beside a space, a mark or between two
    Chinese characters, one where Latin letters or digits meet anything written ("发 Excel 出货汇总")."""
    if not a or not b or not (a.isalnum() and b.isalnum()) or CJK_IN.match(a) and CJK_IN.match(b):
        return ""
    return " "


def _with_plain_words(text: str, a: int, b: int, wanted: set[str]) -> str:
    """The run of names text[a:b] with the plain words next to it that are asked for ("staff WhatsApp group")."""
    def plain(w: str) -> bool:  # (a word asked for)
        return bool(term_set(w)) and term_set(w) <= wanted

    while (m := re.search(r"([a-z][\w-]*)\s+$", text[:a])) and plain(m.group(1)):
        a = m.start(1)
    while (m := re.match(r"\s+([a-z][\w-]*)(?![\w-])", text[b:])) and plain(m.group(1)):
        b += m.end(1)
    return text[a:b]


_SWITCH_WAY = re.compile(r"(?:转|换|改|\bswitch(?:ing|ed)?|\bchang(?:e|ing|ed))\s*(?:个|下|一下)?\s*(?:the\s+)?"
                         r"(?:channel|渠道|平台|app)\b", re.I)


def _instead(body: str, r: Observation, users: list[Observation], wanted: set[str],
             edits: list[tuple[int, int, str]]) -> tuple[tuple[int, int, str], Observation] | None:
    """The entry's old value the person said the new one replaces ("… instead of email"), found once in the entry
    (with its preposition, "by email"), and the new one as the restatement writes it: the run of names there holding
    every word asked for ("Slack #frontdesk"), after the preposition the person put before it ("post it in Slack")."""
    for u in users:
        m = _RATHER.search(u.text)
        olds = [(m.group(1) or m.group(2)).strip()] if m else []
        # or what the entry sends it by, that the person says they do not use ("I am not opening email when I drive")
        fb = fold(body)  # (the same length: memgit.dream.rules.restated._moves asks)
        # (or, with no preposition before any, the one way the entry names bare: "digest: email at 06:30")
        bare = [m.group(0) for m in lx.CHANNEL.finditer(fb)]
        ways = _BY_WAY.findall(fb) or (bare if len(bare) == 1 else [])
        # (never one the restatement still says as it is: "出货汇总以后别打一大段字了" turns down the long text, and "发 Excel
        # 出货汇总" keeps what is sent)
        olds += [w for w in (*ways, *_BY_WAY_ZH.findall(fb)) if any(
            re.search(_whole(w), cl, re.I) and _DENIES.search(cl) for cl in _CLAUSE_MARK.split(fold(u.text)))
            and not any(re.search(_whole(w), cl, re.I) and not _DENIES.search(cl) and not _RATHER.search(cl)
                        for cl in _CLAUSE_MARK.split(fold(r.text)))]
        # or the entry's way the person drops for another they put it on ("drop email for that one, put it on WhatsApp")
        if _PUT_ON.search(u.text):
            olds += [w for w in ways if re.search(rf"\b(?:drop|ditch|scrap)\s+(?:the\s+)?{re.escape(w)}\b", u.text, re.I)]
        # or the entry's one way, when the person asks for another "instead" ("send them on WhatsApp instead")
        if (bare := _BARE_INSTEAD.search(u.text)) and len(ways) == 1 and wanted <= term_set(bare.group(1)):
            olds.append(ways[0])
        # or the entry's one channel, when what is asked for is one channel too, said in the person's turn ("send 去
        # Signal" for "WhatsApp 俾佢"), and the person says the channel is switched ("淨係轉 channel"; asked for alone,
        # the old one may stay beside it)
        chans = [m.group(0) for m in lx.CHANNEL.finditer(fb)]
        if len(chans) == 1 and len(wanted) == 1 and lx.CHANNEL.fullmatch(w := next(iter(wanted))) \
                and w in fold(u.text) and w != chans[0] and any(_SWITCH_WAY.search(fold(v.text)) for v in users):
            olds.append(chans[0])
        for old in olds:
            hits = [x for x in re.finditer(_whole(old), fb, re.I)]
            if len(hits) == 1:
                break
        else:
            continue
        a, b = hits[0].span()
        if any(x < b and a < y for x, y, _ in edits):
            continue
        runs = [_with_plain_words(r.text, x.start(), x.end(), wanted) for x in re.finditer(
            r"(?:#?[A-Z][\w-]*|#[\w-]+)(?:\s+(?:#?[A-Z][\w-]*|#[\w-]+))*", r.text)]
        new = [x for x in runs if all(t in term_set(x) or t in x.lower() for t in wanted)]
        if not new and CJK_IN.match(old) and len(wanted) == 1 and CJK_IN.match(w := next(iter(wanted))) \
                and w in fold(r.text):
            # (a Chinese way put in the Chinese one's place as the turn writes it: "发微信" → "发飞书")
            at = fold(r.text).index(w)
            return (a, b, r.text[at:at + len(w)]), u
        if len(new) != 1:
            continue
        said = next((x for t in (u.text, *(v.text for v in users), r.text) if (x := re.search(
            rf"\b(by|via|through|over|on|in|to)\s+(the\s+)?{re.escape(new[0].split()[0])}", t, re.I))), None)
        prep = _PREP.search(body[:a])
        if prep and said:
            # (with "the" as the person said it before a name of plain words too: "in the staff WhatsApp group")
            the = "the " if said.group(2) and not new[0][:1].isupper() else ""
            return (prep.start(1), b, f"{said.group(1).lower()} {the}{new[0]}"), u
        return (a, b, new[0]), u
    return None


# the agent's own name, as memory's identity line gives it ("I am Shutter, …", "我是小鳶，…")
_IDENTITY_NAME = re.compile(r"^(?:\*\*|__)?\s*(?:I am|I'm|I’m|My name is|我是|我叫)\s*([A-Z][\w'’-]+|[\u4e00-\u9fff]{1,4}(?=[，,。（(、：:\s]))")


def _vocative(ctx: Context) -> re.Pattern[str] | None:
    """A turn's opening that calls the agent by its name ("Shutter, …", "小鳶，…")."""
    names = {m.group(1) for it in ctx.items if (m := _IDENTITY_NAME.match(it.entry.body))}
    if not names:
        return None
    return re.compile(r"^\s*(?:(?:hi|hey|ok|okay)\s+)?(?:" + "|".join(map(re.escape, sorted(names))) + r")\s*[,，:：!！]\s*",
                      re.I)


def restated_slots(ctx: Context) -> list[Candidate]:
    """An entry whose arrangement a conversation restates whole with a new time, weekday or named value
    the person asked for: those slots refreshed in place."""
    by_session: dict[str, list[Observation]] = {}
    vocative = _vocative(ctx)
    for o in ctx.obs:
        if o.session and not o.sensitive:
            if vocative and (v := vocative.match(o.text)) and v.end() < len(o.text):
                o = dataclasses.replace(o, text=o.text[v.end():])  # ("Shutter, …": whom the turn speaks to, no value)
            by_session.setdefault(o.session, []).append(o)
    found: dict[int, list[tuple[Observation, str, list[Observation], float]]] = {}
    for turns in by_session.values():
        users = [o for o in turns if o.role == "user"]
        if not users:
            continue
        for k, r in enumerate(turns):
            whole = r  # (the turn as said: the question the person's next turn may confirm restates the rest)
            asks = r.role == "assistant" and bool(_QUESTION.search(fold(r.text)))
            if asks or r.role == "assistant" and _ONE_OFF.search(fold(r.text)):
                # an acknowledgement that ends by asking whether the rest stays ("…，不再寄 email。表格…照舊嗎？"), or
                # by saying what happens once more the old way ("今晚还按 8 点发最后一次。"): its statement of the
                # change, the question and the one-off aside (the person's answer is theirs to give)
                said = "".join(x for x in _SENTENCE.findall(r.text)
                               if not _QUESTION.search(fold(x)) and not _ONE_OFF.search(fold(x))).strip()
                r = dataclasses.replace(r, text=said) if said else r
                if _ONE_OFF.search(fold(r.text)):
                    # (or its clause: "今晚 10pm send 一次，聽日開始每晚 8pm WhatsApp")
                    kept = [x for x in re.split(r"(?<=[，,；;])", r.text) if not _ONE_OFF.search(fold(x))]
                    said = "".join(kept).strip().lstrip("，,；; ")
                    r = dataclasses.replace(r, text=said) if said and kept else r
            f = fold(r.text)
            if len(r.text) > 400 or _QUESTION.search(f) or (r.role == "user" and _hedged(f)):
                continue
            earlier = [u for u in users if (u.day, u.line) <= (r.day, r.line) and u.day == r.day]
            # (the person's next turn answering the agent's question on its reading: "Yes, the rest stays — …", and
            # changing nothing more: no value turned down, moved or asked for there)
            reply = next((u for u in users if (u.day, u.line) > (r.day, r.line) and u.day == r.day), None)
            # (its "no need to change" turns down no value: "ya rest all same, 不用改")
            confirmed = asks and reply is not None and bool(
                lx.PREF_KEPT.search(rf := fold(reply.text)) or _UNCHANGED.search(rf)) \
                and not _QUESTION.search(rf) and not _hedged(rf) and not clocks(rf) and not any(
                    p.search(_UNCHANGED.sub(" ", rf)) for p in (lx.EXCEPTION, lx.REFUSAL, lx.PREFERENCE,
                                                                lx.PREFERENCE_CHANGE, lx.TIME_MOVED, lx.SUPERSEDE))
            if not earlier or not (_said_change(f) or confirmed or any(_said_change(fold(u.text)) for u in earlier)):
                continue
            index = {id(x): n for n, x in enumerate(ctx.items)}
            talk = frozenset().union(*(t.terms for t in turns if t.day == r.day and (t.line <= r.line)))
            talk |= reply.terms if confirmed else frozenset()  # (what the person said stays, the agent's reading left out)
            # (what the agent asks is as it was, the person saying yes to it, restates the rest: "改成每天 21:00 傳。值班摘要
            # 一樣每床一行…嗎？" → "對對，其他都一樣")
            about = whole if confirmed else r
            near = ctx.items_about(about)
            # (a short restatement keeping the rest, "由聽日起 8pm Signal，內容照舊", naming none of the entry's words: the
            # entry the conversation named before it, when the person's words moved something)
            talk_only = not near and r.role == "assistant" and bool(lx.PREF_KEPT.search(f))
            if talk_only:
                near = list({id(it): it for t in turns if t.day == r.day and t.line < r.line
                             for it in ctx.items_about(t)}.values())
            rated = sorted(((_restates(ctx, it, about, talk, talk_only), index[id(it)]) for it in near
                            if not it.frozen and not it.step), reverse=True)
            if not rated or rated[0][0] < 0.5 or len(rated) > 1 and rated[1][0] >= rated[0][0] - 0.1:
                continue  # the turn restates no entry, or two alike
            cover, i = rated[0]
            it = ctx.items[i]
            if any(m.group(0) not in it.folded for m in lx.EXCEPTION.finditer(f)):
                continue  # a one-off ("just this week"), but for the entry's own words ("附本周曲目")
            # (the person's turns answering the agent's question what to change, "那改几点发合适？" → "早上7:30吧，发当天的"):
            # what they say there is asked for, in whatever words
            answers = frozenset(id(u) for prev, u in zip(turns, turns[1:]) if u.role == "user" and u in earlier
                                and prev.role == "assistant" and _QUESTION.search(fold(prev.text)))
            moved = _moves(it, r, earlier, confirmed, answers)
            if moved is None:
                continue
            edits, grounds = moved
            body = it.entry.body
            for a, b, new in reversed(edits):
                body = body[:a] + new + body[b:]
            found.setdefault(i, []).append((r, body, grounds, cover, frozenset(edits)))
    out = []
    for i, said in found.items():
        if len({body for _, body, *_ in said}) != 1:
            # (one holding every change of the others, which say less of it: "晚上9點" of the person's answer and "週日
            # 21:00" of the agent's reading, the day said in the person's turn before)
            most = [x for x in said if all(y[4] <= x[4] for y in said)]
            if not most:
                continue  # two restatements that disagree: unsure
            said = [x for x in said if x[1] == most[0][1]]
        r, body, grounds, cover, _ = max(said, key=lambda x: (x[0].day, x[0].line))
        it = ctx.items[i]
        acknowledged = any(x[0].role == "assistant" for x in said)
        score = confidence("preference", negates_old=True, acknowledged=acknowledged, restated=len(said) > 1,
                           in_their_words=True, change_verb=True, recent=ctx.recency([r]))
        text = compose(it, body, r.day)
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason="the person changed this in a conversation that restated the rest as it was",
                       evidence=(entry_evidence(it), *ctx.evidence([r, *grounds])), origin="offline")
        out.append(Candidate(op, "preference", score, {"restated": True, "cover": round(cover, 2),
                                                       "slots": body != it.entry.body}))
    return out
