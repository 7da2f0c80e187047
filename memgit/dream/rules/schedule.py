"""Refresh a schedule that moved to another day: an entry gives one weekday ("Monday 06:00", "每週三上午"),
a line says its subject moves to another day ("shift it to Sunday evenings", "改成每週四上午送，週三不再送了")
and another line confirms the new day with the subject (the agent's confirmation in the same session, or a
later log: "yes, Sunday 19:00", "週四送到"). The weekday is replaced, written as the entry writes days; a
clock time said with the move replaces the entry's one time, written as the entry writes times; the rest of
the entry stays as written."""
from __future__ import annotations

from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.dream.model import Candidate, clock_as, clocks, compose, Context, entry_evidence, fold, Item
from memgit.dream.scoring import confidence
from memgit.ops import Operation

_EN_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_DAYS = "一二三四五六日"


def _day(token: str) -> int | None:
    """The weekday a weekday word names, Monday = 0 ("Fridays", "thu", "週四", "星期天")."""
    t = token.lower()
    if t[-1:] in _ZH_DAYS or t[-1:] == "天":
        return 6 if t[-1] == "天" else _ZH_DAYS.index(t[-1])
    for k, name in enumerate(_EN_DAYS):
        if t.startswith(name[:3]):
            return k
    return None


def _days(f: str) -> list[tuple[int, int, int]]:
    """The weekdays a folded text names: (start, end, weekday)."""
    out = []
    for m in lx.WEEKDAY.finditer(f):
        d = _day(m.group(0))
        if d is not None:
            out.append((m.start(), m.end(), d))
    return out


def _day_as(d: int, like: str) -> str:
    """Weekday `d` written the way `like` (a weekday word as written) writes one."""
    if like[-1:] in _ZH_DAYS or like[-1:] == "天":
        return like[:-1] + _ZH_DAYS[d]
    name = _EN_DAYS[d]
    low = like.lower()
    full = next((n for n in _EN_DAYS if low.startswith(n)), None)
    word = name if full else name[:len(low.rstrip("s"))] if len(low.rstrip("s")) <= 4 else name
    if low.endswith("s") and (not full or low == full + "s"):
        word += "s"
    return word.capitalize() if like[:1].isupper() else word


def _about(ctx: Context, it: Item, o: Observation) -> bool:
    """The line names the entry's subject by a specific word that is no number or weekday."""
    return any(ctx.anchor(t) and not any(c.isdigit() for c in t) and not lx.WEEKDAY.search(t)
               for t in o.terms & it.subject)


def schedule_moves(ctx: Context) -> list[Candidate]:
    out: list[Candidate] = []
    movers = []  # lines that say a schedule moves: the person's, or a log's; no question unless answered
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 300:
            continue
        f = fold(o.text)
        if not (lx.TIME_MOVED.search(f) or lx.PREFERENCE_CHANGE.search(f) or lx.RATHER_THAN.search(f)
                or lx.PREFERENCE.search(f)) or lx.EXCEPTION.search(f) or o.role != "user" and lx.PLANNED.search(f):
            continue
        if _days(f):
            movers.append((o, f))
    if not movers:
        return out
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        body, fb = it.entry.body, fold(it.entry.body)
        if len(fb) != len(body):
            continue
        have = _days(fb)
        if len({d for _, _, d in have}) != 1 or len(have) != 1:
            continue  # no day, or several: which one moves is unsure
        a, b, old_day = have[0]
        moves = []
        for o, f in movers:
            said = {d for _, _, d in _days(f)}
            new = said - {old_day}
            if len(new) != 1 or not _about(ctx, it, o):
                continue
            if lx.ASKED.search(f) and o.role != "user":
                continue
            moves.append((o, f, new.pop()))
        if not moves or len({d for _, _, d in moves}) != 1:
            continue
        o, f, new_day = max(moves, key=lambda m: (m[0].day, m[0].line))
        # confirmed: the agent says the new day back in the same session, or a later line says it with
        # the subject; a question the person asked is a request only once it is confirmed
        session = [x for x in ctx.obs if o.session and x.session == o.session]
        later = [x for x in ctx.obs if x is not o and (x.day, x.line) > (o.day, o.line) and not x.sensitive
                 and new_day in {d for _, _, d in _days(fold(x.text))} and _about(ctx, it, x)]
        acks = [x for x in session if x.role == "assistant" and (x.day, x.line) > (o.day, o.line)
                and new_day in {d for _, _, d in _days(fold(x.text))}]
        if not acks and not [x for x in later if x.role != "assistant"]:
            continue
        if any(x.role == "user" and (x.day, x.line) > (o.day, o.line) and old_day in (ds := {d for _, _, d in
               _days(fold(x.text))}) and new_day not in ds for x in session):
            continue  # the person came back to the old day
        new_body = body[:a] + _day_as(new_day, body[a:b]) + body[b:]
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
        day = max(x.day for x in evidence)
        user_pref = it.entry.file == ctx.user_file or bool(lx.PREFERENCE_TITLE.search(it.entry.section or ""))
        confirm_days = len({x.day for x in later})
        if user_pref:
            score = confidence("preference", negates_old=True, acknowledged=bool(acks),
                               in_their_words=o.role == "user", change_verb=True, recent=ctx.recency(evidence))
        else:
            score = confidence("slot", extra_days=min(confirm_days, 2), recent=ctx.recency(evidence))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, new_body, day),
                       confidence=score, reason=f"moved from {body[a:b]} to {_day_as(new_day, body[a:b])}",
                       evidence=(entry_evidence(it), *ctx.evidence(evidence, 4, first=o)), origin="offline")
        out.append(Candidate(op, "preference" if user_pref else "slot", score,
                             {"acknowledged": bool(acks), "confirming_days": confirm_days}))
    return out

