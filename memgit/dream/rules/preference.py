"""Refresh a standing preference the person restated in their own words."""
from __future__ import annotations

import difflib
import re

from memgit.memory import DATE_TAIL_RE as TAIL_DATE

from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.ops import Operation
from memgit.text import cjk_pairs, clauses, is_common_word, term_set
from memgit.dream.scoring import confidence
from memgit.dream.model import (
    _label, Candidate, CJK_IN, clause_at, clock_as, clocks, compose, Context, entry_evidence, fold, LABEL_RE
)


# -- refresh: preference restated ---------------------------------------------------------
def _pref_content(text: str, like: str) -> str:
    """What the user wants from now on: the statement's clauses without the refused old way
    (negated clauses, "instead of …") and without time markers, in the target entry's script."""
    parts = []
    for cl in clauses(text):
        f = fold(cl)
        m = lx.RATHER_THAN.search(f)
        if m:
            cl, f = cl[:m.start()], f[:m.start()]
        for sub in lx.AND_BUT.split(cl):
            fs = fold(sub)
            if lx.REFUSAL.search(fs):
                continue
            keep = [True] * len(sub)
            for tm in lx.TIME_MARKER.finditer(fold(sub)):
                for i in range(tm.start(), min(tm.end(), len(keep))):
                    keep[i] = False
            sub = "".join(c for c, k in zip(sub, keep) if k)
            sub = lx.ATTRIBUTION.sub("", sub.strip(), count=1)
            sub = lx.PARTICLE_END.sub("", lx.FILLER.sub("", sub.strip()).strip(" ,，.。;；:：")).strip()
            if sub and term_set(sub):
                parts.append(sub)
    want_cjk = bool(CJK_IN.search(like))
    same = [p for p in parts if bool(CJK_IN.search(p)) == want_cjk]
    parts = same or parts
    joiner = "，" if want_cjk else ", "
    out = joiner.join(dict.fromkeys(parts))
    return out[:1].upper() + out[1:] if out and out[0].isascii() else out


_CLAUSE_END = re.compile(r"[，,。.;；!！?？、\n]")
_CLOCK = re.compile(r"(?<!\d)\d{1,2}[:：]\d{2}(?!\d)")
_CLOCK_AFTER = re.compile(r"\s*\d{1,2}[:：]\d{2}(?!\d)")
# a few Chinese characters after the value's last digit, Latin letter or clock word: the verb of a request
# ("傳好了", "九點發啦")
_TAIL_AFTER_VALUE = re.compile(r"[0-9A-Za-z点點号號时時分半]\s*([\u4e00-\u9fff]{1,4})$")


def _moved_time(it, o: Observation, peers: list[Observation], asked: Observation | None = None
                ) -> tuple[int, int, str] | None:
    """The entry's clock time the person's statement moves: the statement gives the entry's time and a
    new one beside a change word ("at 8am instead of 7am", "从 7 点改到 8 点"), or only the new one right
    after a verb that moves a time ("改到 9 点", "move it to 9pm") for an entry that gives one time; it
    names the entry's subject, and no day the entry does not (a day moving too is `_changed_slot`'s). The
    new time is written as the entry writes times when a line of the same session says it so (an
    acknowledgement, among `peers`), else as the person wrote it. With `asked`, the turn before asking what the time
    should be ("改成几点？"), the statement is its answer: the new time first in it moves, the question's words name
    the subject too."""
    aligned = _folded_alike(it, o)
    if aligned is None:
        return None
    f, body, fb, _ = aligned
    said, have = clocks(f), clocks(fb)
    if not said or not have:
        return None
    # the entry's subject: a word of it besides its numbers (a Chinese content word, or a Latin-letter word
    # no common English one: function words are no terms at all)
    if not any(not any(c.isdigit() for c in t) and not t.startswith("~")
               and (len(t) >= 2 and CJK_IN.match(t) or len(t) >= 3 and not is_common_word(t))
               for t in (o.terms | (asked.terms if asked else frozenset())) & it.subject):
        return None
    # (one hour said bare and again with its part of the day, "改9点 晚上九点", is one time: the entry's half of the day)
    halves = {c[2] >= 720 for c in have}
    # (an hour said bare, no part of the day and no am/pm, is in the half of the day of the entry's time: "改 8 點半傳" of
    # "晚上 9 點")
    if halves == {True}:
        said = [(c[0], c[1], c[2] + 720, *c[3:])
                if c[2] < 720 and not lx.DAY_PART_BEFORE.search(f[max(0, c[0] - 4):c[0]])
                and not re.match(r"\s*(?:am|pm|a\.m|p\.m)", f[c[1]:]) and re.fullmatch(r"[\d\s:：点點半刻分]+", f[c[0]:c[1]])
                else c for c in said]
    twins = []
    if len(halves) == 1 and len({c[2] % 720 for c in said}) == 1 and len({c[2] for c in said}) == 2:
        twins = [c for c in said if (c[2] >= 720) not in halves]
        said = [c for c in said if (c[2] >= 720) in halves]
    if {m.group(0) for m in lx.WEEKDAY.finditer(f)} - {m.group(0) for m in lx.WEEKDAY.finditer(fb)}:
        return None
    values = {c[2] for c in said}
    olds = [c for c in have if c[2] in values]
    news = [c for c in said if c[2] not in {h[2] for h in have}]
    if len({c[2] for c in news}) != 1:
        return None
    new = news[0]
    after_verb = any(0 <= c[0] - m.end() <= 2 for m in lx.TIME_MOVED.finditer(f) for c in (new, *twins)) \
        or asked is not None and new is said[0]
    # the entry's times the statement says stay ("晚上 20:00 那条不变"): no old time of the move
    kept = {c[2] for c in said if c[2] != new[2] and lx.PREF_KEPT.search(clause_at(f, c[0], _CLAUSE_END))}
    if kept:
        # the one time the statement leaves unsaid moves, when the new one comes right after a time verb in the
        # same half of the day ("早上那条改到 07:45" of "每天 08:00 和 20:00 …")
        rest = [c for c in have if c[2] not in kept]
        if not after_verb or len(rest) != 1 or {c[2] for c in have} - kept - {rest[0][2]} \
                or values - kept - {new[2]} or (rest[0][2] < 720) != (new[2] < 720):
            return None
        old = rest[0]
    elif len(values) == 2 and len(olds) == 1 and (lx.PREFERENCE_CHANGE.search(f) or lx.TIME_MOVED.search(f)
                                                  or (_FROM_NOW_AT.search(f) or lx.TIME_MARKER.search(f))
                                                  and not _ALSO.search(f)):
        old = olds[0]  # (or the new one asked for from now on beside the old: "18:30 is too late. 17:45 from now on?",
        # "以后…晚上8点再发吧，6点半我还在车间")
    # the one new time right after a time verb, said with "instead", or said from now on with the rest kept
    # ("以后…晚上 22:00 前发我就行，还是用 LINE")
    elif len(values) == 1 and len(have) == 1 and (after_verb
                                                  or _INSTEAD_NEXT.match(f, new[1])
                                                  or lx.TIME_MARKER.search(f) and lx.PREF_KEPT.search(f)):
        old = have[0]
    else:
        return None
    as_said = o.text[new[0]:new[1]].strip()
    # (the part of the day the entry writes before its time stays when the person leaves it unsaid: "晚上 9 點" → "晚上 8 點半")
    day_part = _DAY_PART.match(fold(body[old[0]:old[1]]))
    if day_part and not _DAY_PART.match(fold(as_said)):
        with_part = body[old[0]:old[0] + day_part.end()] + as_said
        if (said_so := clocks(fold(with_part))) and said_so[0][2] == new[2]:
            as_said = with_part
    written = as_said if new[3] == old[3] else clock_as(new[2], body[old[0]:old[1]], old[3])
    if written is None:
        return None
    if written != as_said and not any(written in x.text for x in peers if x is not o):
        # no line says it the entry's way: the person's own form is grounded (or the entry's way unpadded, as an
        # acknowledgement writes it: "9:45" for "10:30")
        bare = written.lstrip("0")
        written = bare if written[:1] == "0" and any(re.search(rf"(?<![\d:]){re.escape(bare)}(?![\d])", x.text)
                                                     for x in peers if x is not o) else as_said
    return old[0], old[1], written


def _moved_channel(it, o: Observation, peers: list[Observation]) -> tuple[int, int, str] | None:
    """The entry's one channel the person moves to another and nothing else ("just Teams not email", "淨係轉 Signal，
    WhatsApp 唔使再 send"): the person's turns that day name one channel the entry does not, drop the entry's (refused,
    "not", "instead of") or move to the new one with a change word, and say the rest stays; the session names the
    entry's subject, and the agent's later turn names the new channel. The entry's channel is replaced, with the
    preposition before it when the new one is a chat ("by email" → "on Teams"), the new one as the person wrote it."""
    body = it.entry.body
    fb = fold(body)
    have = [m for m in lx.CHANNEL.finditer(fb)]
    if len({m.group(0).rstrip("s") for m in have}) != 1:
        return None
    old = have[0].group(0)
    mine = [x for x in peers if x.role == "user" and x.day == o.day and not x.sensitive]
    said = fold(" ".join(x.text for x in mine))
    # (asked as a question, "can move to the WhatsApp community instead?", it is the person's change once a later
    # turn of theirs says the rest stays: "Ya same same … Only change the channel")
    if not lx.PREF_KEPT.search(said) or lx.ASKED.search(fold(o.text)) and not lx.PREF_KEPT.search(fold(o.text)) \
            and not any(x.line > o.line and lx.PREF_KEPT.search(fold(x.text)) for x in mine):
        return None
    if {c[2] for c in clocks(said)} - {c[2] for c in clocks(fb)}:
        return None  # a new time said too: more than the channel moves (the whole restatement's, memgit.dream.rules.restated)
    new = {m.group(0) for m in lx.CHANNEL.finditer(said)} - {m.group(0) for m in have}
    new = {n for n in new if not n.startswith(old.rstrip("s")[:4])}
    if len(new) != 1:
        return None
    nw = new.pop()
    dropped = re.search(rf"(?:{lx.CHANNEL_DROPPED})\s*(?:\w+\s+)?{re.escape(old[:4])}", said) \
        or re.search(rf"(?:{lx.CHANNEL_MOVED})[^,，。.;；]{{0,12}}{re.escape(nw)}", said)
    if not dropped:
        return None
    own = frozenset(t for t in it.subject if not t.startswith("~") and not clocks(t)) - term_set(old)
    if not any(t in x.terms for x in mine for t in own if len(t) >= 3 or CJK_IN.match(t)):
        return None  # the person never names what the preference is about
    if not any(x.role == "assistant" and x.line > o.line and nw in fold(x.text) for x in peers):
        return None  # no acknowledgement of the new channel
    raw = next(m.group(0) for x in mine for m in re.finditer(re.escape(nw), x.text, re.I))
    m = have[0]
    a, b = m.start(), m.end()
    prep = re.search(r"\b(?:by|via|through|over)\s+$", fb[:a])
    if prep and not re.fullmatch(r"e-?mails?|sms|text messages?|phone call", nw):
        a = prep.start()
        raw = f"on {raw}"
    if a > 0 and fb[a - 1].isalnum() and raw[:1].isascii() or b < len(fb) and fb[b].isalnum() and raw[-1:].isascii():
        return None
    return a, b, raw


# the part of the day a time is written after ("晚上 9 點"), matched on folded text
_DAY_PART = re.compile(rf"^(?:{'|'.join((*lx.CLOCK_AM, *lx.CLOCK_PM))})\s*")
# a time asked for from now on ("can it come at 17:45 from now on", "以后 17:45 发"), not one more beside it ("also")
_FROM_NOW_AT = re.compile(r"\bat\s+\d{1,2}(?::\d{2})?\s*(?:am|pm)?\s+(?:from now on|from tomorrow(?: on)?|going forward)\b")
_ALSO = re.compile(r"\b(?:also|as well|another|extra|additional)\b|另外|再加|也")
# the new time said as the old one's replacement right after it ("send it at 7:30 instead")
_INSTEAD_NEXT = re.compile(r"\s*instead\b(?! of)")


def _moved_day(ctx: Context, it, o: Observation, peers: list[Observation]) -> tuple[int, int, str] | None:
    """The entry's weekday the person's statement moves ("sunday 18:00 from now on" for "send Monday
    18:00, …"): the statement names one day, the entry another, once; a clock the statement gives is the
    entry's own; the person names the old day in that session (why it moves: "the monday reminder is too
    late"); and the statement names two of the entry's specific words besides days and clocks. The new
    day is written as the entry writes its day."""
    from memgit.dream.rules.schedule import _day_as, _days

    body = it.entry.body
    said, have = _days(o.text), _days(body)
    if len({d for _, _, d in said}) != 1 or len(have) != 1 or said[0][2] == have[0][2]:
        return None
    if len(lx.WEEKDAY.findall(fold(o.text))) != len(said):
        return None  # a span besides the day ("weekends too"): more than the day moves
    if {c[2] for c in clocks(fold(o.text))} - {c[2] for c in clocks(fold(body))}:
        return None  # a new time as well: _moved_time's, or a person's rewrite
    old = have[0][2]
    users = [x for x in (*peers, o) if x.role == "user" and x.day == o.day]
    if not any(d == old for x in users for _, _, d in _days(x.text)):
        return None  # the person never speaks of the old day
    shared = {t for t in o.terms & it.subject if ctx.anchor(t) and not _days(t) and not clocks(t)
              and not t.startswith("~")}
    if len(shared) < 2:
        return None
    a, b, _ = have[0]
    return a, b, _day_as(said[0][2], body[a:b])


def _moved_day_time(ctx: Context, it, o: Observation, peers: list[Observation]) -> tuple[int, int, str] | None:
    """The entry's weekday and clock time, written together, both moved by one statement ("每週摘要以後改成週六晚上
    8 點" of "每週日晚上 9 點用 LINE 傳…"): one new day and one new time said, the entry writing one of each side by
    side; two of its specific words said; and an assistant's turn that day saying the new day and time back. The span
    from the day to the time is rewritten, the new day as the entry writes days, the time as the person says it (or
    as the entry writes times)."""
    from memgit.dream.rules.schedule import _day_as, _days

    body = it.entry.body
    said, have = _days(o.text), _days(body)
    # (the old day may be said too, as the reason: "改成週六…，週日晚上我們都在阿嬤家")
    fresh = {d for _, _, d in said} - {d for _, _, d in have}
    if len(fresh) != 1 or len(have) != 1 or len({d for _, _, d in said} - fresh) > 1:
        return None
    if len(lx.WEEKDAY.findall(fold(o.text))) != len(said):
        return None
    told, held = clocks(fold(o.text)), clocks(fold(body))
    if len({c[2] for c in told}) != 1 or len(held) != 1 or told[0][2] == held[0][2]:
        return None
    shared = {t for t in o.terms & it.subject
              if ctx.anchor(t) and not _days(t) and not clocks(t) and not t.startswith("~")}
    if len(shared) < 2:
        return None
    day, minutes = fresh.pop(), told[0][2]
    if not any(x.role == "assistant" and x.day == o.day and any(d == day for _, _, d in _days(x.text))
               and any(c[2] == minutes for c in clocks(fold(x.text))) for x in peers):
        return None  # not said back: unsure the person was read right
    (da, db, _), (ta, tb) = have[0], held[0][:2]
    if not (db <= ta and len(body[db:ta].strip()) <= 2):
        return None  # the day and the time written apart
    new = told[0]
    written = o.text[new[0]:new[1]].strip() if new[3] == held[0][3] else clock_as(minutes, body[ta:tb], held[0][3])
    if not written:
        return None
    return da, tb, _day_as(day, body[da:db]) + body[db:ta] + written


# the last preposition before what a statement wants ("send them as text messages instead of email"):
# the new value is what follows it
# (and Malay's, as Singapore and Malaysia mix it in: "hantar kat Telegram")
_VALUE_AFTER = re.compile(r"(?:^|\s)(?:as|by|via|through|over|using|with|to|on|in|kat|ke|melalui|guna)\s+"
                          r"|(?:用|通过|改用|换成)\s*", re.I)


def _folded_alike(it, o: Observation, words=None) -> tuple[str, str, str, re.Match[str] | None] | None:
    """The statement folded, the entry's body and the body folded, when folding keeps every character's
    position in both (a slot found in the folded text is then cut from the text as written), and where
    the statement says `words` (None when it does not say them)."""
    f, body = fold(o.text), it.entry.body
    fb = fold(body)
    if len(fb) != len(body) or len(f) != len(o.text):
        return None
    m = words.search(f) if words is not None else None
    return None if words is not None and m is None else (f, body, fb, m)


def _rather_slot(it, o: Observation, about: bool = False) -> tuple[int, int, str] | None:
    """The slot a "NEW instead of OLD" statement moves ("send the reminders as text messages instead of
    email", "用短信发而不是邮件"): OLD is what follows the words and the entry holds it, once; NEW is what
    the statement wants after its last preposition before them, and the entry does not hold it."""
    aligned = _folded_alike(it, o, lx.RATHER_THAN)
    if aligned is None:
        return None
    f, body, fb, m = aligned
    start = max((x.end() for x in _CLAUSE_END.finditer(f, 0, m.start())), default=0)
    end = _CLAUSE_END.search(f, m.end())
    old = lx.PARTICLE_END.sub("", f[m.end():end.start() if end else len(f)]).strip(" ：:，,")
    if not old or len(old) > 24 or fb.count(old) != 1 or not term_set(old):
        return None
    pre = o.text[start:m.start()]
    cut = None
    for x in _VALUE_AFTER.finditer(pre):
        cut = x
    if cut is None:
        return None
    new = lx.PARTICLE_END.sub("", pre[cut.end():]).strip(" ：:，,")
    if not new or len(new) > 24 or fold(new) in fb or not term_set(new):
        return None
    # the statement is about this entry: what it says beside the two values names the entry's subject (or
    # `about`: another slot of the same statement was found in it)
    around = term_set(f[start:m.start()]) - term_set(fold(new))
    if not about and not around & it.subject:
        return None
    at = fb.index(old)
    # a name for a name: "our Signal group instead of Telegram" puts Signal where the entry writes Telegram
    # ("发到 Telegram 群"), the entry's own words around it staying
    written = body[at:at + len(old)]
    caps = _CAPITALISED.findall(new)
    if _CAPITALISED.fullmatch(written) and len(caps) == 1:
        new = caps[0]
    return at, at + len(old), new


_CAPITALISED = re.compile(r"(?<![\w-])[A-Z][\w-]*[a-z][\w-]*(?![\w-])")


_PREP_BEFORE = re.compile(r"\b(by|via|through|over|on|in|per|as)\s+$", re.I)
_INSTEAD_AT = re.compile(r"\s+instead\b(?! of)", re.I)


def _instead_slot(it, o: Observation) -> tuple[int, int, str] | None:
    """The slot a "NEW instead" statement moves when another of its sentences names the old value and one says
    what stays ("Email keeps getting buried. From now on post the schedule in the band's Signal group instead.
    Still Sunday 18:00, still just a plain list"): the old value is the one word the entry shares with the
    sentences that neither change nor keep, once in the entry; the new one is what follows the change's last
    preposition, put in the old one's place with it ("by email" → "in the band's Signal group"). The change names
    the entry's subject, and what stays names only the entry's own times, days and numbers."""
    sents = [s for s, q in _sentences(o.text) if not q]
    change = [s for s in sents if _INSTEAD_AT.search(s)]
    kept = [s for s in sents if lx.PREF_KEPT.search(fold(s)) and s not in change]
    if len(change) != 1 or not kept:
        return None
    body = it.entry.body
    hard = set().union(*(_hard_details(s) for s in kept))
    if not hard or hard - _hard_details(body):
        return None  # what stays is not all the entry's: another entry, or more moved
    c = change[0]
    stop = _INSTEAD_AT.search(c).start()
    cut = None
    for x in _VALUE_AFTER.finditer(c, 0, stop + 1):
        cut = x
    if cut is None:
        return None
    new = c[cut.end():stop].strip(" ,，")
    prep = cut.group(0).strip()
    if not new or len(new) > 40 or fold(new) in fold(body) or not term_set(new):
        return None
    if not (term_set(c[:cut.start()]) - term_set(new)) & it.subject:
        return None  # the change is not said of this entry's subject
    rest = [s for s in sents if s not in change and s not in kept]
    olds = {w for s in rest for w in re.findall(r"[A-Za-z][\w-]+", s)
            if len(re.findall(rf"(?<![\w-]){re.escape(w)}(?![\w-])", body, re.I)) == 1
            and term_set(w) and term_set(w) <= it.subject}
    if len({w.lower() for w in olds}) != 1:
        return None  # no old value named, or several: which one changes is unsure
    old = olds.pop()
    at = re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", body, re.I)
    a, b = at.start(), at.end()
    before = _PREP_BEFORE.search(body[:a])
    if before and prep.isalpha():
        return before.start(), b, f"{prep} {new}"  # ("by email" → "in the band's Signal group")
    return a, b, new


def _changed_slot(it, o: Observation) -> tuple[int, int, str] | None:
    """The one slot of an entry the person's statement changes: the statement names a new value after a
    change word ("改成表格", "switch to tables") and, in another of its clauses, the entry's old value
    ("條列式太難掃了"); the entry's subject stands in the change's clause. (start, end) of the old value
    in the entry's body, and the new value as the person wrote it."""
    aligned = _folded_alike(it, o, lx.PREFERENCE_CHANGE)
    if aligned is None:
        return None
    f, body, fb, m = aligned
    end = _CLAUSE_END.search(f, m.end())
    new = o.text[m.end():end.start() if end else len(f)].strip(" ：:")
    # the value, not the sentence around it: "週六早上 09:00 傳好了" says 週六早上 09:00 ("send it then, ok")
    tail = _TAIL_AFTER_VALUE.search(new)
    if tail and lx.PARTICLE_END.search(tail.group(1)):
        new = new[:tail.start(1)].rstrip()
    new = lx.PARTICLE_END.sub("", new).rstrip()
    if not new or len(new) > 24 or fold(new) in fb:
        return None
    start = max((x.end() for x in _CLAUSE_END.finditer(f, 0, m.start())), default=0)
    change_clause = f[start:end.start() if end else len(f)]
    if not (term_set(change_clause) - term_set(fold(new))) & it.subject:
        return None  # the change is not said of this entry's subject
    rest = f[:start] + "\n" + f[end.start() if end else len(f):]
    sm = difflib.SequenceMatcher(None, rest, fb, autojunk=False)
    olds = []
    for blk in sm.get_matching_blocks():
        seg = fb[blk.b:blk.b + blk.size].strip(" ，,。.")
        cjk = CJK_IN.search(seg)
        if (cjk and len(seg) >= 2 or not cjk and len(seg) >= 3 and seg.isalnum()) and seg not in change_clause \
                and term_set(seg):
            olds.append((blk.b + fb[blk.b:blk.b + blk.size].index(seg), seg))
    if len(olds) != 1:
        return None  # no old value named, or several: which one changes is unsure
    at, seg = olds[0]
    # the clause naming the old value says it is not wanted ("條列式太難掃了", "不要表格", "too long"): a word named
    # only as the topic ("跟你说下提醒的事") is no value the person gives up
    said_at = [m.start() for m in re.finditer(re.escape(seg), rest)]
    if not any(_UNWANTED.search(clause_at(rest, p, _CLAUSE_END)) for p in said_at):
        return None
    # a time said with the new day replaces the time the old day is given with ("週日 20:00" → "週六 09:00")
    clock = _CLOCK_AFTER.match(fb, at + len(seg))
    if clock and _CLOCK.search(new) and not _CLOCK.search(seg):
        seg = fb[at:clock.end()]
    # the new value as a slot: what it shares with the entry around the old value stays the entry's
    # ("改成周日晚上发" for "每周五晚上发" moves 周五 to 周日, not to 周日晚上发晚上发)
    nf, stop = fold(new), at + len(seg)
    suffix = next((j for j in range(len(nf), 0, -1) if fb.startswith(nf[len(nf) - j:], stop)), 0)
    new = new[:len(new) - suffix].rstrip() if suffix else new
    nf = fold(new)
    prefix = next((j for j in range(len(nf), 0, -1) if fb[:at].endswith(nf[:j])), 0)
    new = new[prefix:].lstrip()
    if not new or fold(new) == seg:
        return None
    return at, stop, new


# what says a way is not wanted: a refusal, a complaint, or that it is too much or too hard
_UNWANTED = re.compile(rf"{lx.REFUSAL.source}|{lx.COMPLAINT.source}|太|难|難|麻烦|麻煩|不|没|沒|"
                       r"\btoo\b|\bhard to\b|\bhate\b|\bannoying\b|\bpain\b|\bno longer\b|\bnot\b|n't\b|\bmiss\b")


_DETAIL = re.compile(r"(?<![\w.])\d+(?:[.:：]\d+)*|\b[A-Za-z]*[A-Z][A-Za-z0-9]*\b")


def _details(text: str) -> set[str]:
    """What a whole-entry rewrite may not lose: its numbers and times, and its words holding a capital
    (a name, "CSV"), the opening word and the tags and date aside."""
    body = re.sub(r"^\s*(?:\[P\d\]\s*)?", "", TAIL_DATE.sub("", text))
    words = [m.group(0) for m in _DETAIL.finditer(body) if m.start() > 0 or m.group(0).isdigit()]
    return {w.lower() for w in words}


# -- refresh: one part replaced, the parts the person said stay kept -----------------------------
_SENTENCE = re.compile(r"(?<=[.!?])\s+|[。！？；;!?\n]")
_PART_SEP = re.compile(r"[,，;；]")
_CHANNEL = re.compile(r"#[\w-]+")
_NUMBER = re.compile(r"(?<![\w.:])\d+(?:\.\d+)?(?![\w:])")
_NAME = re.compile(r"\b[A-Za-z]*[A-Z][A-Za-z0-9]*\b")
# what an entry's parts are of: a few words before a colon ("Weekly sales recap:", "每日菜單：")
_PART_LABEL = re.compile(r"^((?:[^\s:：,，]+\s+){0,4}[^\s:：,，]+)\s*[:：]\s*")


def _sentences(text: str) -> list[tuple[str, bool]]:
    """A turn's sentences, each with whether it asks something."""
    out, at = [], 0
    for m in [*_SENTENCE.finditer(text), None]:
        end = m.start() if m else len(text)
        sent = text[at:end].strip(" .。")
        if sent:
            out.append((sent, bool(m and "?" in m.group(0) or m and "？" in m.group(0))))
        at = m.end() if m else len(text)
    return out


def _hard_details(text: str) -> set[tuple[str, object]]:
    """The values a sentence names that a preference entry either gives or contradicts: clock times (as
    minutes, however written), days of the week, channels and other numbers."""
    f = fold(text)
    # the days first: "礼拜五五点" is Friday at five, not a clock time of 55
    days = list(lx.WEEKDAY.finditer(f))
    out: set[tuple[str, object]] = {("day", _WEEK_WORD.sub("周", m.group(0)).rstrip("s")) for m in days}
    rest = list(f)
    for m in days:
        rest[m.start():m.end()] = " " * (m.end() - m.start())
    ticks = clocks("".join(rest))
    # every clock time also as a time of the half day; a Chinese hour said with no part of the day ("五点前"
    # for "17:00 前") only as that: it names either
    out |= {("half-day", c[2] % 720) for c in ticks}
    out |= {("clock", c[2]) for c in ticks if not _unmarked(f, c)}
    for a, b, _, _ in ticks:
        rest[a:b] = " " * (b - a)
    rest_s = "".join(rest)
    out |= {("channel", m.group(0)) for m in _CHANNEL.finditer(rest_s)}
    out |= {("number", m.group(0)) for m in _NUMBER.finditer(_CHANNEL.sub(" ", rest_s))}
    return out


_WEEK_WORD = re.compile(r"^(?:星期|礼拜)")  # 礼拜五, 星期五: 周五


def _unmarked(f: str, tick: tuple[int, int, int, str]) -> bool:
    """A Chinese clock time said with no part of the day ("五点", not "下午五点"): morning or afternoon."""
    a, b, minutes, style = tick
    return style == "zh" and minutes < 720 and not any(w in f[max(0, a - 2):b] for w in (*lx.CLOCK_AM, *lx.CLOCK_PM))


def _names(text: str) -> set[str]:
    """Names a sentence gives (a word holding a capital that is no common word: "LINE", "Slack"); a word
    that opens the sentence with a capital only is no name."""
    text = text.strip()
    return {m.group(0).lower() for m in _NAME.finditer(text) if not is_common_word(m.group(0).lower())
            and not (m.start() == 0 and m.group(0).istitle())}


def _parts(body: str) -> list[tuple[int, int]]:
    """The spans of an entry's parts: its body after the label, cut at commas and semicolons outside
    brackets and code."""
    m = _PART_LABEL.match(body)
    start = m.end() if m else 0
    spans, depth, at = [], 0, start
    for i in range(start, len(body) + 1):
        ch = body[i] if i < len(body) else ","
        if ch in "([（【`":
            depth += 1 if ch != "`" or depth == 0 else -1
        elif ch in ")]）】":
            depth = max(0, depth - 1)
        elif depth == 0 and _PART_SEP.match(ch):
            a, b = at, i
            while a < b and body[a] == " ":
                a += 1
            while b > a and body[b - 1] == " ":
                b -= 1
            if a < b:
                spans.append((a, b))
            at = i + 1
    return spans


def _share(a: str, b: str) -> bool:
    """Two texts speak of the same thing: a term in common, or a pair of Chinese characters."""
    return bool(term_set(a) & term_set(b) or cjk_pairs(fold(a)) & cjk_pairs(fold(b)))


# a reply's opening yes ("行，", "好，", "OK, "): no part of what it asks for
_LEADING_ACK = re.compile(r"^(?:行|好|好的|嗯|可以|ok|okay|yes|yeah|sure)\s*[,，!！]\s*", re.I)
_LIST_AFTER = re.compile(r"^([^:：]{2,40}?)\s*[:：]\s*([^:：()（）]+)$")
_IT = re.compile(r"^(\w+)\s+(?:it|them|this|that)\s+(?=\w)", re.I)


def _as_part(sentence: str) -> str:
    """A sentence as a part of an entry: without its time marker ("Going forward, …"), the pronoun of
    an imperative ("group it by aisle" → "group by aisle"), and a list after a colon in brackets, so the
    entry's parts stay apart ("group by aisle (produce, dairy, tins)")."""
    s = lx.TIME_MARKER.sub("", _LEADING_ACK.sub("", sentence.strip())).strip(" ,，:：")
    s = re.sub(r"^(?:就|都|也)(?=\S)", "", s)  # "以后就发 PDF": the adverb went with its time marker
    if s != sentence.strip():
        s = s[:1].lower() + s[1:] if s[:2].istitle() else s
    s = _IT.sub(lambda m: m.group(1) + " ", s)
    m = _LIST_AFTER.match(s)
    if m and _PART_SEP.search(m.group(2)):
        s = f"{m.group(1)} ({m.group(2).strip()})" if s.isascii() else f"{m.group(1)}（{m.group(2).strip()}）"
    return s


_REFUSED_NEAR = 12  # characters between a refusal and what it refuses


_PERIOD_WORD = re.compile(r"(?:每天|每日)?(?:早上|早晨|清晨|上午|中午|下午|傍晚|晚上|夜里|凌晨)|每晚|每早|"
                          r"\b(?:every|each|in the) (?:morning|afternoon|evening|night)\b|\btonight\b", re.I)
_PM_WORD = re.compile(r"中午|下午|傍晚|晚|夜|afternoon|evening|night", re.I)


def _period_before(text: str, at_text: str) -> str:
    """The part of the day said right before the clock time `at_text` in `text` ("早上 "), or ""."""
    i = text.find(at_text)
    m = next((m for m in _PERIOD_WORD.finditer(text, 0, max(i, 0)) if 0 <= i - m.end() <= 1), None) if i > 0 else None
    return text[m.start():i] if m else ""


def _period_moved(body: str, a: int, said: str, new: str) -> int | None:
    """Where the moved time's slot starts: at the part of the day the entry says right before its old time
    ("每晚 21:30"), when the new time lies in the other half of the day and the person says its own part ("早上
    07:45"), so both move; at the time itself when the entry says none or the same half; None when the halves
    differ and the person names no part of the day (the entry's "每晚" would be left beside a morning time)."""
    m = next((m for m in _PERIOD_WORD.finditer(body, 0, a) if 0 <= a - m.end() <= 1), None)
    if m is None:
        return a
    minutes = clocks(fold(new))[0][2]
    if bool(_PM_WORD.search(m.group(0))) == (minutes >= 12 * 60):
        return a
    return m.start() if _period_before(said, new) else None


def _turned_down_kept(ctx: Context, o: Observation, new_body: str, new: str, old: str = "") -> bool:
    """A clause of the person's, in the statement or another turn of its conversation that day, turns down a word
    the refreshed entry still says, not turned down there ("微信就别发了" beside "06:45 发微信"): more changed than
    the one slot moved."""
    nb, nf = fold(new_body), fold(new)
    turns = [x for x in ctx.obs if x.session == o.session and x.day == o.day and x.role == "user"] if o.session else [o]
    for x in turns:
        for cl in clauses(x.text):
            fc = fold(cl)
            if old and (ow := fold(old).strip()) and ow in fc:
                continue  # (the old value turned down is the slot that moves: "don't email me, post in Teams")
            # (not a "no" answering whether to change more, the rest said to stay right after it: "不用 一樣週日 21:00")
            refusals = [m.start() for m in lx.REFUSAL.finditer(fc)
                        if not lx.PREF_KEPT.match(fc, len(fc) - len(fc[m.end():].lstrip(" ，,")))]
            if not refusals:
                continue
            for w in term_set(fc):
                if len(w) < 2 or w.startswith("~") or w in nf or any(c.isdigit() for c in w):
                    continue
                # (what the refusal is said of stands next to it: "微信就别发了", "no email"; not "parents … never")
                if not any(abs(m.start() - r) <= _REFUSED_NEAR for m in re.finditer(re.escape(w), fc) for r in refusals):
                    continue
                at = [m.start() for m in re.finditer(re.escape(w), nb)]
                if at and any(not lx.negated_at(nb, p) for p in at):
                    return True
    return False


def kept_part_changes(ctx: Context, items: list) -> dict[int, Candidate]:
    """A person who changes one part of a preference and says the rest stays ("one line per alert, no
    excerpts. Same time, 07:45, same channel"; "按菜色分。時間跟 LINE 都照舊"): in one turn, a sentence saying
    what stays names values of exactly one entry, every hard value it names is the entry's, and every part
    of the entry but one is named by it; the other sentence of that turn is the new part. The session names
    the entry's subject and speaks of the old part outside what stays, the agent acknowledges the new part,
    and nothing in it reads as an addition. Keyed by the entry's index in `items`."""
    by_session: dict[str, list[Observation]] = {}
    for o in ctx.obs:
        if o.session:
            by_session.setdefault(o.session, []).append(o)
    found: dict[int, list[tuple[Observation, int, int, str, list[Observation]]]] = {}
    for turns in by_session.values():
        for o in turns:
            if o.role != "user" or o.sensitive or len(o.text) > 400:
                continue
            sents = _sentences(o.text)
            kept = [s for s, q in sents if not q and lx.PREF_KEPT.search(fold(s))
                    and not lx.PREFERENCE_CHANGE.search(fold(s)) and not lx.RATHER_THAN.search(fold(s))]
            if not kept:
                continue
            said = [s for s, q in sents if s not in kept and not q and term_set(s)]
            if not said:
                continue
            hard = set().union(*(_hard_details(s) for s in kept))
            names = set().union(*(_names(s) for s in kept))
            if not hard and not names:
                continue
            # a clause of what stays that says so itself names the part it shares words with ("王姐那边也照样抄一份"
            # for "同时抄送王姐")
            # (and each one of a list of what stays after the word saying so: "其他照舊：WhatsApp，Google Sheet link，千祈唔好
            # send 截圖")
            listed = [c for s in kept for m in [_KEPT_LIST.search(s)] if m and lx.PREF_KEPT.search(fold(m.group(1)))
                      for c in _PART_SEP.split(m.group(2))]
            kept_clauses = [c for s in kept for c in _PART_SEP.split(s) if lx.PREF_KEPT.search(fold(c))
                            and not lx.WEEKDAY.search(fold(c)) and not clocks(fold(c))] + [
                c for c in listed if term_set(c) and not lx.WEEKDAY.search(fold(c)) and not clocks(fold(c))]
            others = [x for x in turns if x.day == o.day]
            hits = []
            for k, it in enumerate(items):
                body = TAIL_DATE.sub("", it.entry.body).rstrip()
                spans = _parts(body)
                if len(spans) < 2:
                    continue
                if hard - _hard_details(body) or names - _names(body):
                    continue  # a value said to stay that the entry does not give: not this entry, or it moved
                unnamed = [(a, b) for a, b in spans
                           if not (_hard_details(body[a:b]) & hard or _names(body[a:b]) & names
                                   or any(_share(body[a:b], c) for c in kept_clauses))]
                if len(unnamed) != 1 or (unnamed[0] == spans[0] and not _PART_LABEL.match(body)):
                    continue  # (without a label, the first part carries the subject)
                a, b = unnamed[0]
                # the new part: the one other sentence the agent acknowledges (the rest is why it changes:
                # "the flat list is a pain in the shop"), else the one that does not speak of the old part
                replies = [x for x in others if x.role == "assistant" and x.line > o.line]
                new = [x for x in said if any(len(term_set(r.text) & term_set(x)) >= 2 for r in replies)]
                if len(new) != 1:
                    new = [x for x in said if not _share(body[a:b], x)]
                if len(new) != 1:
                    continue
                new_s = _as_part(new[0])
                nf = fold(new_s)
                if (clocks(nf) or lx.WEEKDAY.search(nf)) and not (clocks(fold(body[a:b])) or lx.WEEKDAY.search(
                        fold(body[a:b]))) and (clocks(fold(body)) or lx.WEEKDAY.search(fold(body))):
                    continue  # a new time or day, the entry's in another part: not the part that changes
                # (two words at least; in Chinese, a verb of one character and its object: "发 PDF")
                need = 1 if CJK_IN.search(new_s) else 2
                if (len(term_set(new_s)) < need or len(new_s) > 120 or lx.PREF_ADDED.search(nf)
                        or lx.COMPLAINT.search(nf)):
                    continue
                lm = _PART_LABEL.match(body)
                subject = lm.group(1) if lm else body[spans[0][0]:spans[0][1]]
                if not any(_share(subject, s) for x in others if x.role == "user"
                           for s, _ in _sentences(x.text) if s not in kept):
                    continue  # the person never names what the preference is about
                if not any(_share(body[a:b], s) for x in others for s, _ in _sentences(x.text) if s not in kept):
                    continue  # the person never spoke of the part that changes
                acks = [x for x in others if x.role == "assistant" and x.line > o.line
                        and len(term_set(x.text) & term_set(new_s)) >= min(need, len(term_set(new_s)))]
                if not acks:
                    continue
                hits.append((k, a, b, acks, new_s))
            if len(hits) == 1:
                k, a, b, acks, new_s = hits[0]
                found.setdefault(k, []).append((o, a, b, new_s, acks))
    out = {}
    for k, said in found.items():
        if len({x[3] for x in said}) != 1:
            continue  # two new parts: unsure
        o, a, b, new, acks = max(said, key=lambda x: (x[0].day, x[0].line))
        it = items[k]
        body = TAIL_DATE.sub("", it.entry.body).rstrip()
        if a > 0 and len(new) > 1 and new[0].isupper() and new[1].islower():
            new = new[0].lower() + new[1:]
        if _two_ways(body, a, b, new):
            continue
        score = confidence("preference", negates_old=True, acknowledged=True, restated=len(said) > 1,
                           in_their_words=True, recent=ctx.recency([o]))
        text = compose(it, body[:a] + new + body[b:], o.day)
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"the person replaced '{body[a:b]}' with '{new}' and said the rest stays",
                       evidence=(entry_evidence(it), *ctx.evidence([o, *acks])), origin="offline")
        out[k] = Candidate(op, "preference", score, {"slot": True, "acknowledged": True, "kept": True})
    return out


# a sentence saying what stays, then the list of it after a colon ("其他照舊：WhatsApp，Google Sheet link", "rest as
# before: Teams, one line each")
_KEPT_LIST = re.compile(r"^(.{0,24}?)[:：]\s*(.+)$", re.S)


def _two_ways(body: str, a: int, b: int, new: str) -> bool:
    """Putting `new` in body[a:b] would name a channel beside another the entry keeps elsewhere ("…WhatsApp …，轉 Signal
    啦" in the place of "廣東話"): the slot the person's words replace was another, so the rewrite is left to a person."""
    return bool(lx.CHANNEL.search(fold(new))) and any(
        m.group(0) not in fold(new) for m in lx.CHANNEL.finditer(fold(body[:a] + " " + body[b:])))


def _asks_another_way(body: str, text: str) -> bool:
    """The statement names a way a message goes (email, Signal, 微信…) that the entry, naming another, does not."""
    have = {m.group(0) for m in lx.CHANNEL.finditer(fold(body))}
    said = {m.group(0) for m in lx.CHANNEL.finditer(fold(text))}
    return bool(have) and bool(said - have)


def preference_changes(ctx: Context) -> list[Candidate]:
    """A preference the user restated ("from now on…", "以后…", "不要再…") refreshes the entry it replaces."""
    by_target: dict[int, list[tuple[Observation, float]]] = {}
    # only a standing preference is refreshed: an entry of the user file or of a preferences section
    items = [it for it in ctx.items if not it.frozen and (it.entry.file == ctx.user_file
                                                          or lx.PREFERENCE_TITLE.search(it.entry.section or ""))]
    index = {id(it): k for k, it in enumerate(items)}
    changed: dict[int, list[tuple[Observation, tuple[int, int, str]]]] = {}
    timed: dict[int, list[tuple[Observation, tuple[int, int, str]]]] = {}  # a time moved, no other change said
    # a channel moved, the rest said to stay: the whole change, before any rewrite of the entry from the same talk
    channeled: dict[int, list[tuple[Observation, tuple[int, int, str]]]] = {}
    by_session: dict[str, list[Observation]] = {}  # a session's lines: where its acknowledgements are
    for o in ctx.obs:
        if o.session:
            by_session.setdefault(o.session, []).append(o)
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 240:
            continue  # (a paragraph of a log is not a statement of preference)
        f = fold(o.text)
        # the person's own words: what they typed, or a log line reporting what they said
        if o.role != "user" and not lx.PREFERENCE_SAID.search(f):
            continue
        if lx.EXCEPTION.search(f):
            continue
        if not lx.PREFERENCE.search(f):
            # the person moving one time and saying the rest stays ("早上那条改到 07:45。晚上 20:00 那条不变"): a
            # moved time, and nothing else, is read from their words
            # (or the time alone, answering the question of the turn before: "改成几点？" / "9点45 传，其他都一样")
            peers = by_session.get(o.session, []) if o.session else []
            prev = max((p for p in peers if p.line < o.line), key=lambda p: p.line, default=None)
            asked_time = bool(prev and prev.role == "assistant" and lx.TIME_MOVED.search(fold(prev.text))
                              and lx.ASKED.search(fold(prev.text)))
            if o.role == "user" and not lx.ASKED.search(f) and (lx.TIME_MOVED.search(f) or asked_time) \
                    and lx.PREF_KEPT.search(f):
                answer = prev if asked_time and not lx.TIME_MOVED.search(f) else None
                slots = [(k, sl) for k, it in enumerate(items) if (sl := _moved_time(it, o, peers, answer))]
                if len(slots) == 1:
                    timed.setdefault(slots[0][0], []).append((o, slots[0][1]))
            # (or a channel moved and the rest said to stay: "just Teams not email"; the rest may be said to stay in a
            # later turn, which _moved_channel reads)
            if o.role == "user" and o.session and lx.CHANNEL.search(f):
                slots = [(k, sl) for k, it in enumerate(items) if (sl := _moved_channel(it, o, peers))]
                if len(slots) == 1:
                    channeled.setdefault(slots[0][0], []).append((o, slots[0][1]))
            continue
        slots = [(k, sl) for it in ctx.items_about(o) if (k := index.get(id(it))) is not None
                 and (sl := _rather_slot(it, o) or _changed_slot(it, o) or _instead_slot(it, o))]
        if not slots:
            # a time moved: what it is for is often a word the logs repeat every day ("the digest", not
            # specific in the window), so every standing preference is asked
            peers = by_session.get(o.session, []) if o.session else []
            slots = [(k, sl) for k, it in enumerate(items) if (sl := _moved_time(it, o, peers))]
            if not slots:
                slots = [(k, sl) for k, it in enumerate(items) if (sl := _moved_day(ctx, it, o, peers))]
            if not slots:
                slots = [(k, sl) for k, it in enumerate(items) if (sl := _moved_day_time(ctx, it, o, peers))]
            if not slots and o.role == "user" and o.session and lx.CHANNEL.search(f):
                slots = [(k, sl) for k, it in enumerate(items) if (sl := _moved_channel(it, o, peers))]
        if len(slots) == 1:
            changed.setdefault(slots[0][0], []).append((o, slots[0][1]))
            continue
        markers = term_set(" ".join(m.group(0) for m in lx.PREFERENCE.finditer(f)))
        stmt = frozenset(t for t in o.terms if t not in markers)
        best, best_s = None, 0.0
        for it in ctx.items_about(o):
            k = index.get(id(it))
            if k is None:
                continue
            shared = stmt & it.subject
            # a log's report of what someone said rewrites a whole entry only with more than one word in
            # common ("有没有" is no subject); the person's own words may name it by one
            if not shared or not any(ctx.anchor(t) for t in shared) or (o.role != "user" and len(shared) < 2):
                continue
            sc = ctx.weight(shared) / max(ctx.weight(it.subject), 1e-9)
            # a person restating a preference names its value, seldom the field it fills
            label = _label(it.entry.body)
            value = it.subject - term_set(label) if label else frozenset()
            if value and shared & value:
                sc = max(sc, ctx.weight(shared & value) / ctx.weight(value))
            if it.entry.file == ctx.user_file:
                sc *= 1.2
            if sc > best_s:
                best, best_s = k, sc
        if best is not None and best_s >= 0.3:
            by_target.setdefault(best, []).append((o, best_s))
    # (a statement of preference about the same entry says more than a moved time alone: it goes first)
    timed = {k: v for k, v in timed.items() if k not in changed and k not in by_target}
    changed.update(timed)
    changed.update({k: v for k, v in channeled.items() if k not in changed})
    kept = kept_part_changes(ctx, items)
    out = list(kept.values())
    for k, said_slots in changed.items():
        if k in kept:
            continue
        it = items[k]
        said_slots.sort(key=lambda x: (x[0].role == "user", x[0].day, x[0].line), reverse=True)
        o, (a, b, new) = said_slots[0]
        if any(sl[2] != new for x, sl in said_slots if x.day == o.day and x.role == o.role):
            continue  # two new values the same day: unsure
        body = it.entry.body
        if clocks(fold(new)):
            period = _period_moved(body, a, o.text, new)
            if period is None:
                continue  # the entry says the old time's part of the day, the new time is in the other: unsure
            a = period
            if a != said_slots[0][1][0]:
                new = _period_before(o.text, new) + new
        # another slot the same statement moves ("改成早上 07:45 发, and put it in our Signal group instead of
        # Telegram"): both, or the entry would keep what the person turned away from
        other = _rather_slot(it, o, about=True) if o.role == "user" and k not in timed else None
        if other and (other[1] <= a or other[0] >= b):
            body = body[:other[0]] + other[2] + body[other[1]:]
            if other[1] <= a:  # (before the time: the time's slot moves with the new length)
                shift = len(other[2]) - (other[1] - other[0])
                a, b = a + shift, b + shift
        if other is None and not lx.CHANNEL.search(fold(new)) and _asks_another_way(it.entry.body, o.text):
            continue  # it asks for another way too ("post it to the Signal group at 06:00 instead"): the time alone
            # would keep the way the person left (the restatement of it places both: memgit.dream.rules.restated)
        if _two_ways(body, a, b, new):
            continue
        gone = body[a:b].split()[-1] if body[a:b].split() and lx.CHANNEL.search(fold(new)) else ""
        if _turned_down_kept(ctx, o, body[:a] + new + body[b:], new, gone):
            continue  # the person turned down more than the slot ("改成 06:45，…微信就别发了"): a person rewrites it
        acks = [x for x in ctx.obs if x is not o and x.session == o.session and o.session and x.day == o.day
                and x.role == "assistant" and fold(said_slots[0][1][2]) in fold(x.text)]
        # (a time moved is said of the old one without turning it down: "早上那条改到 07:45")
        score = confidence("preference", negates_old=k not in timed, acknowledged=bool(acks), restated=len(said_slots) > 1,
                           again_days=len({x.day for x, _ in said_slots}) > 1, in_their_words=o.role == "user",
                           change_verb=True, recent=ctx.recency([o]))
        text = compose(it, body[:a] + new + body[b:], o.day)
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"the person changed '{body[a:b]}' to '{new}'; the rest stays as written",
                       evidence=(entry_evidence(it), *ctx.evidence([o, *acks])), origin="offline")
        out.append(Candidate(op, "preference", score, {"slot": True, "acknowledged": bool(acks)}))
    for k, stated in by_target.items():
        if k in changed or k in kept:
            continue
        it = items[k]
        # the user's own words first, then the newest
        stated.sort(key=lambda x: (x[0].role == "user", x[0].day, x[1]), reverse=True)
        o = stated[0][0]
        content = _pref_content(o.text, it.entry.body)
        if not content or len(content) < 4 or len(content) > max(120, 2 * len(it.entry.body)):
            continue
        if _details(it.entry.body) - _details(content):
            continue  # the rewrite would lose a time, a number or a name the entry gives: a person rewrites it
        stmt = o.terms
        negates = any(lx.REFUSAL.search(fold(cl)) and (term_set(cl) & it.subject) for cl in clauses(o.text))
        acks = [x for x in ctx.obs if x is not o and x.session == o.session and o.session and x.day == o.day
                and x.role == "assistant" and (len(x.terms & stmt) >= 2 or lx.ACK.search(fold(x.text).strip()))]
        others = [x for x, _ in stated[1:]]
        again_days = {x.day for x in others} - {o.day}
        f = fold(o.text)
        # the person's own words: a user turn, or a log line that reports what they said
        said = o.role == "user" or bool(lx.PREFERENCE_SAID.search(f))
        change = bool(lx.PREFERENCE_CHANGE.search(f))
        score = confidence("preference", negates_old=negates, acknowledged=bool(acks), restated=bool(others),
                           again_days=bool(again_days), in_their_words=said, change_verb=change,
                           recent=ctx.recency([o]))
        m = LABEL_RE.match(it.entry.body)
        label = m.group(1).strip() if m and _label(it.entry.body) else ""
        sep = "：" if CJK_IN.search(it.entry.body) else ": "
        body = f"{label}{sep}{content}" if label and not content.startswith(label) else content
        text = compose(it, body, o.day)
        ev = (entry_evidence(it), *ctx.evidence([o, *acks, *others]))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason="the user restated this preference", evidence=ev, origin="offline")
        out.append(Candidate(op, "preference", score, {"negates_old": bool(negates), "acknowledged": bool(acks),
                                                       "statements": len(stated),
                                                       "days": len(again_days | {o.day})}))
    return out
