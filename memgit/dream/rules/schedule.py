"""Refresh a schedule that moved to another day: an entry gives one weekday ("Monday 06:00", "每週三上午"),
a line says its subject moves to another day ("shift it to Sunday evenings", "改成每週四上午送，週三不再送了")
and another line confirms the new day with the subject (the agent's confirmation in the same session, or a
later log: "yes, Sunday 19:00", "週四送到"). The weekday is replaced, written as the entry writes days; a
clock time said with the move replaces the entry's one time, written as the entry writes times; the rest of
the entry stays as written."""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.dream.model import Candidate, clock_as, clocks, compose, Context, entry_evidence, fold, Item
from memgit.dream.rules.preference import _turned_down_kept
from memgit.dream.scoring import confidence
from memgit.text import term_set
from memgit.memory import ISO_DATE_RE as DATE_RE
from memgit.ops import Operation

_EN_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_DAYS = "一二三四五六日"


# a weekday as a schedule names one: a whole English name, a capitalised short one ("Tues", never "sun" or
# "wed"), or a Chinese one (周四, 星期天, 礼拜三; not 工作日 or 周末)
_SHORT = {"Mon": 0, "Tue": 1, "Tues": 1, "Wed": 2, "Thu": 3, "Thur": 3, "Thurs": 3, "Fri": 4, "Sat": 5, "Sun": 6}
_DAY_RE = re.compile(r"\b(?:(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
                     r"|(?:Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun)\b\.?)(?![\w'])"
                     r"|(?:周|週|星期|礼拜|禮拜)[一二三四五六日天]")


def _day(token: str) -> int | None:
    """The weekday a weekday word names, Monday = 0 ("Fridays", "Thu", "週四", "星期天")."""
    t = token.rstrip(".")
    if t[-1:] in _ZH_DAYS or t[-1:] == "天":
        return 6 if t[-1] == "天" else _ZH_DAYS.index(t[-1])
    if t in _SHORT:
        return _SHORT[t]
    low = t.lower().rstrip("s")
    return next((k for k, name in enumerate(_EN_DAYS) if low == name), None)


def _days(text: str) -> list[tuple[int, int, int]]:
    """The weekdays a text (as written, or folded: a short English name only as written) names:
    (start, end, weekday)."""
    out = []
    for m in _DAY_RE.finditer(text):
        d = _day(m.group(0))
        if d is not None:
            out.append((m.start(), m.end(), d))
    return out


@lru_cache(maxsize=4096)
def _weekdays(text: str) -> frozenset[int]:
    """The weekdays a text names (each line is asked about them by several tests)."""
    return frozenset(d for _, _, d in _days(text))


def _day_as(d: int, like: str) -> str:
    """Weekday `d` written the way `like` (a weekday word as written) writes one."""
    if like[-1:] in _ZH_DAYS or like[-1:] == "天":
        return like[:-1] + _ZH_DAYS[d]
    bare = like.rstrip(".")
    if bare in _SHORT:  # a short name: the usual short name of the day, as long as three letters or four
        short = [k for k, v in _SHORT.items() if v == d]
        return next((k for k in short if len(k) == len(bare)), short[0]) + like[len(bare):]
    word = _EN_DAYS[d] + ("s" if like.lower().endswith("s") else "")
    return word.capitalize() if like[:1].isupper() else word


def _about(ctx: Context, it: Item, o: Observation) -> bool:
    """The line names the entry's subject by a specific word that is no number or weekday."""
    return any(ctx.anchor(t) and not any(c.isdigit() for c in t) and not lx.WEEKDAY.search(t)
               for t in o.terms & it.subject)


def _as_written(ctx: Context) -> Iterator[tuple[Item, str, str]]:
    """The entries a rule may rewrite, with their body and the body folded, where folding keeps every
    character's position (a slot found in the folded body is cut from the body as written)."""
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        body, fb = it.entry.body, fold(it.entry.body)
        if len(fb) == len(body):
            yield it, body, fb


_SINCE = re.compile(r"(?:从|從|(?<![理自缘緣因经經来來])由)[^，,。；;：:]{0,8}?(?:起|开始|開始)|\b(?:from now on|starting|from)\b", re.I)


def _moved_thing(f: str, m: re.Match[str]) -> frozenset[str]:
    """The terms of what a time verb moves: the words between the verb and its "to" ("moved bin collection
    to"), else the words before the verb in its clause ("sprint demo 改到", "the digest moves to"), without
    the words that date the change ("从下周起")."""
    inner = re.sub(r"\bto\b(?:\s+at)?\s*$", "", f[m.start():m.end()])
    inner = re.sub(r"^\w+", "", inner, count=1) if inner[:1].isascii() else ""
    if term_set(inner):
        return term_set(inner)
    start = max((x.end() for x in re.finditer(r"[，,。；;：:!！?？]", f[:m.start()])), default=0)
    return term_set(_SINCE.sub(" ", f[start:m.start()]))


def _moves_it(ctx: Context, it: Item, f: str, pos: int) -> bool:
    """A time verb right before `pos` moves the entry's own thing: what it moves is named, all of it by the
    entry, and some of it by the entry's head alone ("demo" of "Sprint demo" beside "Sprint planning"); a
    thing the entry does not name ("bin collection" for "Bins out Tues night") is another one."""
    for m in lx.TIME_MOVED.finditer(f):
        if 0 <= pos - m.end() <= 12:
            thing = frozenset(t for t in _moved_thing(f, m) if not any(c.isdigit() for c in t))
            if thing and thing <= it.subject | it.head and thing & _own_head(ctx, it):
                return True
    return False


def _own_head(ctx: Context, it: Item) -> frozenset[str]:
    """What the entry's head names that no other entry's of its file does ("demo" of "Sprint demo" beside
    "Sprint planning"); identity and rules (frozen) are no rival: they name the ways of every job."""
    others = frozenset().union(*(x.head for x in ctx.items if x is not it and x.entry.file == it.entry.file
                                 and not x.frozen))
    return it.head - others


_AM_PM = re.compile("|".join(sorted((*lx.CLOCK_AM, *lx.CLOCK_PM), key=len, reverse=True)) + r"\s*$")


def period_clash(text: str) -> bool:
    """A clock time written after a part of the day it is not in ("早上 20:00", "晚上 9:00" read as 9 in the morning)."""
    f = fold(text)
    for c in clocks(f):
        m = _AM_PM.search(f, max(0, c[0] - 6), c[0])
        if m and (m.group(0).strip() in lx.CLOCK_AM) == (c[2] >= 720):
            return True
    return False


def schedule_moves(ctx: Context) -> list[Candidate]:
    return _day_moves(ctx) + _time_moves(ctx) + moved_numbers(ctx)


# a weekday that dates when a change starts ("从下周一起", "starting next Monday"), no day of the schedule
_DATED_DAY = re.compile(r"(?:从|從)?下(?:个|個)?(?:周|週|星期|礼拜|禮拜)[一二三四五六日天](?:起|开始|開始)?"
                        r"|(?i:\b(?:next|this|coming|from|starting)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day\b)"
                        # a weekday with its day of the month is a date ("from Mon 13th", "starting Tue 4 June")
                        r"|(?i:\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b(?![:：.]\d|\s*(?:am|pm|a\.m|p\.m)\b))")


def _time_moves(ctx: Context) -> list[Candidate]:
    """A job's clock time moved ("从下周一起日报改成 07:30 推送", "the backup moves to 02:00"): an entry of
    memory (a standing preference is the preference rule's) gives one time; one line puts its subject, by
    what only that entry's head names, at a new time right after a verb that moves a time, and names no
    weekday; a later line says the new time of the subject again. The time is written as the entry writes
    times when a line says it so, and nothing later says the old time of the subject."""
    movers = []
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 300:
            continue
        f = fold(o.text)
        if not lx.TIME_MOVED.search(f) or lx.ASKED.search(f) or lx.EXCEPTION.search(f) or lx.STAND_IN.search(f):
            continue
        if _DAY_RE.search(_DATED_DAY.sub(" ", o.text)) or o.role != "user" and lx.PLANNED.search(f):
            continue
        news = {(c[2], c[0]) for c in clocks(f) if any(0 <= c[0] - m.end() <= 2 for m in lx.TIME_MOVED.finditer(f))}
        if len({t for t, _ in news}) == 1:
            movers.append((o, f, *min(news, key=lambda n: n[1])))
    out: list[Candidate] = []
    if not movers:
        return out
    for it, body, fb in _as_written(ctx):
        if it.entry.file == ctx.user_file or lx.PREFERENCE_TITLE.search(it.entry.section or ""):
            continue
        have = clocks(fb)
        if len(have) != 1:
            continue
        ta, tb, old_t, style = have[0]
        # what only this entry's head names, no number: a job named daily ("日报") is no anchor of the index
        own = frozenset(t for t in _own_head(ctx, it) if not any(c.isdigit() for c in t) and len(t) >= 2)
        moves = [(o, f, t) for o, f, t, at in movers if t != old_t and o.terms & own and _moves_it(ctx, it, f, at)]
        if not moves or len({t for _, _, t in moves}) != 1:
            continue
        o, f, new_t = max(moves, key=lambda m: (m[0].day, m[0].line))
        first = min(moves, key=lambda m: (m[0].day, m[0].line))[0]  # a later move confirms the first
        later = [x for x in ctx.obs if x is not first and (x.day, x.line) > (first.day, first.line)
                 and not x.sensitive and x.terms & own]
        again = [x for x in later if new_t in {c[2] for c in clocks(fold(x.text))}]
        if not again and lx.TIME_MARKER.search(fold(first.text)):
            # a move said to hold from now on ("cutoff 改成 13:00，长期都这样"): a later day naming what moved
            thing = frozenset(t for m in lx.TIME_MOVED.finditer(fold(first.text))
                              for t in _moved_thing(fold(first.text), m) if ctx.anchor(t) and t in it.subject)
            again = [x for x in ctx.obs if x.day > first.day and x.role != "assistant" and not x.sensitive
                     and x.terms & thing]
        if not again:
            continue  # no later line says the subject's new time
        if any(old_t in {c[2] for c in clocks(fold(x.text))} for x in later):
            continue  # the old time said of it after the move
        when = clock_as(new_t, body[ta:tb], style)
        evidence = [o, *again]
        if when is None or not any(when in x.text for x in evidence):
            m = next(c for c in clocks(f) if c[2] == new_t)
            when = o.text[m[0]:m[1]].strip()
        new_body = body[:ta] + when + body[tb:]
        days = len({x.day for x in again})
        score = confidence("slot", extra_days=min(days, 2), recent=ctx.recency(evidence))
        if period_clash(new_body):
            continue  # the new time beside the old one's part of the day ("早上 20:00"): a person words it
        text = compose(it, new_body, max(x.day for x in evidence))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"moved from {body[ta:tb]} to {when}",
                       evidence=(entry_evidence(it), *ctx.evidence(evidence, 4, first=o)), origin="offline")
        out.append(Candidate(op, "slot", score, {"confirming_days": days}))
    return out


def _day_moves(ctx: Context) -> list[Candidate]:
    out: list[Candidate] = []
    movers = []  # lines that say a schedule moves: the person's, or a log's; no question unless answered
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 300:
            continue
        f = fold(o.text)
        if not (lx.TIME_MOVED.search(f) or lx.PREFERENCE_CHANGE.search(f) or lx.RATHER_THAN.search(f)
                or lx.PREFERENCE.search(f)) or lx.EXCEPTION.search(f) or o.role != "user" and lx.PLANNED.search(f):
            continue
        if _days(o.text) and not lx.ADDED_DAY.search(f) and not lx.STAND_IN.search(f):
            movers.append((o, f))
    if not movers:
        return out
    for it, body, _ in _as_written(ctx):
        have = _days(body)
        if len({d for _, _, d in have}) != 1 or len(have) != 1:
            continue  # no day, or several: which one moves is unsure
        a, b, old_day = have[0]
        moves = []
        for o, f in movers:
            said = _weekdays(o.text)
            new = set(said - {old_day})
            if len(new) != 1 or not _about(ctx, it, o):
                continue
            if lx.ASKED.search(f) and o.role != "user":
                continue
            nd = new.pop()
            # "改到周三", "moves to Wednesdays": the verb puts the new day in the old one's place
            moved = any(_moves_it(ctx, it, f, da) for da, _, d in _days(o.text) if d == nd)
            moves.append((o, f, nd, old_day in said or moved))
        if not moves or len({m[2] for m in moves}) != 1:
            continue
        o, f, new_day, names_old = max(moves, key=lambda m: (m[0].day, m[0].line))
        # confirmed: the agent says the new day back in the same session, or a later line says it with
        # the subject; a question the person asked is a request only once it is confirmed
        session = [x for x in ctx.obs if o.session and x.session == o.session]
        # (a later line may say the move again: it confirms the first one)
        first = min(moves, key=lambda m: (m[0].day, m[0].line))[0]
        later = [x for x in ctx.obs if x is not first and (x.day, x.line) > (first.day, first.line)
                 and not x.sensitive and new_day in _weekdays(x.text) and _about(ctx, it, x)]
        acks = [x for x in session if x.role == "assistant" and (x.day, x.line) > (o.day, o.line)
                and new_day in _weekdays(x.text)]
        # the old day is said to be left, by the move (naming it, or moving the thing to the new day) or by
        # its confirmation ("instead of Monday 06:00", "週三不再送了"): a new day alone may be one more day
        # ("also on Fridays")
        if not names_old and not any(old_day in _weekdays(x.text) for x in acks):
            continue
        if not acks and not [x for x in later if x.role != "assistant"] and not (
                o.role == "user" and _rest_kept(session, o)):
            continue
        if any(x.role == "user" and (x.day, x.line) > (o.day, o.line) and old_day in (ds := _weekdays(x.text))
               and new_day not in ds for x in session):
            continue  # the person came back to the old day
        written = _day_as(new_day, body[a:b])
        new_body = body[:a] + written + body[b:]
        # a clock time said with the move: the person's own (their later turns in the session included),
        # else the agent's confirmation of it
        users = [o] + [x for x in session if x.role == "user" and (x.day, x.line) > (o.day, o.line)]
        said = {c[2] for x in users for c in clocks(fold(x.text))}
        have_t = clocks(fold(new_body))
        evidence = [o, *acks, *later]
        if said:
            new_t = said - {c[2] for c in have_t}
            if len(new_t) > 1 or len(have_t) != 1 and new_t:
                continue  # two new times, or no one time of the entry to move
            if new_t:
                ta, tb, _, style = have_t[0]
                when = clock_as(next(iter(new_t)), new_body[ta:tb], style)
                if when is None:
                    continue
                if not any(when in x.text for x in evidence):
                    continue  # the time as the entry would write it is said by no line: unsure
                new_body = new_body[:ta] + when + new_body[tb:]
        if o.session and _turned_down_kept(ctx, o, new_body, written):
            continue  # the person turned down more than the day ("唔好发微信群了"): a person rewrites it
        day = max(x.day for x in evidence)
        user_pref = it.entry.file == ctx.user_file or bool(lx.PREFERENCE_TITLE.search(it.entry.section or ""))
        confirm_days = len({x.day for x in later})
        if user_pref:
            score = confidence("preference", negates_old=True, acknowledged=bool(acks),
                               in_their_words=o.role == "user", change_verb=True, recent=ctx.recency(evidence))
        else:
            score = confidence("slot", extra_days=min(confirm_days, 2), recent=ctx.recency(evidence))
        if period_clash(new_body):
            continue  # the new time beside the old one's part of the day ("每週日早上 20:00"): a person words it
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, new_body, day),
                       confidence=score, reason=f"moved from {body[a:b]} to {written}",
                       evidence=(entry_evidence(it), *ctx.evidence(evidence, 4, first=o)), origin="offline")
        out.append(Candidate(op, "preference" if user_pref else "slot", score,
                             {"acknowledged": bool(acks), "confirming_days": confirm_days}))
    return out


def _rest_kept(session: list[Observation], o: Observation) -> bool:
    """The agent's next turn after the person's move asks whether the rest stays, and the person's next one
    says it does ("对，这些都不变，只改时间"), moving, turning down or excepting nothing more."""
    after = [x for x in session if (x.day, x.line) > (o.day, o.line)]
    ask = next((k for k, x in enumerate(after) if x.role == "assistant"), None)
    if ask is None or not _ASKS.search(after[ask].text) or any(x.role == "user" for x in after[:ask]):
        return False
    reply = next((x for x in after[ask + 1:] if x.role == "user"), None)
    if reply is None:
        return False
    rf = fold(reply.text)
    return bool(lx.PREF_KEPT.search(rf)) and not clocks(rf) and not _days(reply.text) and not any(
        p.search(rf) for p in (lx.REFUSAL, lx.PREFERENCE_CHANGE, lx.EXCEPTION, lx.ASKED))


# a turn that asks (a question mark, or 吗 / 呢 where its sentence ends): restated's reading of a question too
_ASKS = re.compile(r"[?？]|[吗嗎呢](?=\s*(?:[。.!！]|$))")


# a number naming a place or a slot (room 301, gate 12, 502 教室): two digits or more, no clock time,
# date, version or amount; and the floor a Chinese room number may be given with ("三樓 301")
_NUMBER = re.compile(r"(?<![\w.:/-])(?<!\d：)\d{2,5}(?![\w.:：/%-])")  # a full-width colon after a word labels it
_FLOOR = re.compile(r"([零一二两三四五六七八九十\d]{1,3})\s*(楼|层)\s*$")
_BEFORE_WORD = re.compile(r"([a-z]+|[\u4e00-\u9fff]{1,2})\s*#?$")
_AFTER_WORD = re.compile(r"\s*([a-z]+|[\u4e00-\u9fff]{1,2})")


def _place_words(f: str, m: re.Match[str]) -> set[str]:
    """The words a number stands between in a folded text ("room" of "room 214", "教室" of "502 教室"):
    what kind of place it numbers."""
    out = set()
    if b := _BEFORE_WORD.search(f[max(0, m.start() - 12):m.start()]):
        out.add(b.group(1))
    if a := _AFTER_WORD.match(f, m.end()):
        out.add(a.group(1))
    return out


def _numbers(text: str) -> list[re.Match[str]]:
    return [m for m in _NUMBER.finditer(text) if not DATE_RE.search(text[max(0, m.start() - 5):m.end() + 6])]


@lru_cache(maxsize=4096)
def _place_numbers(text: str) -> frozenset[str]:
    """The place numbers a line (as written) names."""
    return frozenset(n.group(0) for n in _numbers(fold(text)))


def moved_numbers(ctx: Context) -> list[Candidate]:
    """A numbered place moved: an entry gives one number of a place ("在三樓 301"), a line says its subject
    moves to another number of as many digits ("改到五樓 502 教室", "moved to room 214"), and a line on a
    later day names the new number with the subject and none names the old one after the move. The number
    is replaced, and the floor said right before it when the line gives a new one the same way."""
    out: list[Candidate] = []
    movers = []
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 300:
            continue
        f = fold(o.text)
        if (m := lx.PLACE_MOVED.search(f)) and not lx.ASKED.search(f) and not lx.EXCEPTION.search(f) \
                and not (o.role != "user" and lx.PLANNED.search(f[:m.start()])):
            movers.append((o, f, m))
    if not movers:
        return out
    found: list[tuple[float, tuple[str, int, str], Candidate]] = []
    for it, body, fb in _as_written(ctx):
        have = _numbers(fb)
        if len(have) != 1:
            continue
        old = have[0]
        kind = _place_words(fb, old)
        hits = []
        for o, f, m in movers:
            if not _about(ctx, it, o):
                continue
            # a number of the same place word, or said where the line names the old one too ("201 修好後也不
            # 搬回去了，…以後固定在 402"): the same kind of number
            olds = [n for n in _numbers(f) if n.group(0) == old.group(0)]
            new = [n for n in _numbers(f) if n.start() > m.start() and len(n.group(0)) == len(old.group(0))
                   and n.group(0) != old.group(0) and (kind & _place_words(f, n) or olds)]
            if len({n.group(0) for n in new}) == 1:
                hits.append((o, f, new[0]))
        if not hits or len({n.group(0) for _, _, n in hits}) != 1:
            continue
        o, f, new = min(hits, key=lambda h: (h[0].day, h[0].line))
        num = new.group(0)
        after = [x for x in ctx.obs if (x.day, x.line) > (o.day, o.line) and not x.sensitive
                 and x.role != "assistant" and _about(ctx, it, x)]
        said_new = [x for x in after if num in _place_numbers(x.text)]
        if not [x for x in said_new if x.day > o.day]:
            continue  # no later day names it there
        if any(old.group(0) in _place_numbers(x.text) for x in after):
            continue  # the old place still named after the move
        a, b = old.span()
        new_body = body[:a] + num + body[b:]
        was, now = _FLOOR.search(fb[:a]), _FLOOR.search(f[:new.start()])
        if was and now and was.group(2) == now.group(2) and was.group(1) != now.group(1):
            raw = o.text[now.start(1):now.end(1)]
            new_body = new_body[:was.start(1)] + raw + new_body[was.end(1):]
        ev = [o, *said_new]
        days = len({x.day for x in said_new})
        score = confidence("slot", extra_days=min(days, 2), recent=ctx.recency(ev))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, new_body, max(x.day for x in ev)),
                       confidence=score, reason=f"moved from {body[a:b]} to {num}",
                       evidence=(entry_evidence(it), *ctx.evidence(ev, 4, first=o)), origin="offline")
        fit = ctx.weight(frozenset(t for t in o.terms & it.subject if not any(c.isdigit() for c in t)))
        found.append((fit, (o.source, o.line, num), Candidate(op, "slot", score, {"days": days})))
    # one move names one entry: the one its line names most of, none when two fit as well
    for key in {k for _, k, _ in found}:
        fits = sorted(((f, c) for f, k, c in found if k == key), key=lambda x: -x[0])
        if len(fits) == 1 or fits[0][0] > fits[1][0]:
            out.append(fits[0][1])
    return out
