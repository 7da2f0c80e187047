"""Prune what is over: an expired or fixed item, a secret, entries built around a retired tool."""
from __future__ import annotations

import re
from functools import lru_cache
from datetime import date, timedelta

from memgit import sensitive
from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.memory import DATE_TAIL_RE, ISO_DATE_RE
from memgit.ops import Operation
from memgit.text import (CJK_RUN_RE, CODE_SPAN_RE, cjk_cut, cjk_words, is_common_word, is_noun, stem as word_stem, STOP,
                         STOP_ZH, term_set, to_simplified)
from memgit.dream.scoring import confidence
from memgit.dream.model import (_negated, _subject, aside_name, Candidate, compose, Context, entry_evidence, fold,
                                first_name_word, numbered_heads,
                                LABEL_RE, NUMBERED_RE, TIMELINE)


# -- prune: stale ---------------------------------------------------------------------------
def stale_entries(ctx: Context) -> list[Candidate]:
    out = []
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        e = it.entry
        f = it.folded
        reason, feats, score, ev = None, {}, 0.0, []
        fact = ""  # (a fault said after a fact of its own sentence: the fact stays, the fault goes)
        if lx.TEMP.search(f) or lx.EXPIRES_IN.search(f):
            body_wo_tail = DATE_TAIL_RE.sub("", e.body)
            dates = [date(int(y), int(m), int(d)) for y, m, d in ISO_DATE_RE.findall(body_wo_tail)
                     if _valid(y, m, d)]
            ex = lx.EXPIRES_IN.search(f)
            expiry = None
            if ex and e.date:
                n = int(ex.group(1) or ex.group(3))
                unit = ex.group(2) or ex.group(4)
                days = n * lx.EXPIRY_DAYS.get(unit, 1)
                expiry = e.date + timedelta(days=days)
            past = [d for d in dates if d < ctx.now]
            if expiry and expiry < ctx.now:
                reason, feats = f"expired on {expiry.isoformat()}", {"expired": expiry.isoformat()}
            elif past and not [d for d in dates if d >= ctx.now]:
                reason, feats = f"temporary item whose date {max(past).isoformat()} has passed", \
                    {"date_passed": max(past).isoformat()}
            if reason:
                gone = [o for o in ctx.obs_about(it)
                        if ctx.mentions(o, it) >= 0.3 and lx.DONE_WITH.search(fold(o.text))]
                score = confidence("expired", reported_gone=bool(gone))
                ev = gone
        # (a preference of the person's, "沒事就一句「今日無異常」", is no fault however it names one)
        if not reason and e.file != ctx.user_file and lx.ERROR.search(f) and not lx.first_affirmed(lx.FIXED, f):  # ("还没修好": open)
            aliases = _log_names(ctx, it)
            fixed = said_fixed = _reported(ctx, it, lx.FIXED, aliases)
            if not lx.SUCCEEDED.search(f):
                # what failed now succeeds, said on two days after the entry: the error is over ("printed
                # fine" for "keeps failing to print"); beside a fix reported, each such day bears it out
                ok = _reported(ctx, it, _succeeded(f), aliases)
                ok = [o for o in ok if not _failing(fold(o.text))]
                runs = len({o.day for o in ok}) + any(lx.REPEATED.search(fold(o.text)) for o in ok)
                if fixed:
                    fixed = sorted({id(o): o for o in (*fixed, *ok)}.values(), key=lambda o: (o.day, o.line))
                else:
                    fixed = ok if runs >= 2 else []
            if not fixed:
                fixed = _outcome_reached(ctx, it)
            if fixed:
                last = max((o.day, o.line) for o in said_fixed or fixed)  # (after the fix said, when it is)
                # (and the state it kept falling into, "又掉线了", is its failure again)
                ended = [e.pattern for _, _, e in lx.STATE_PAIRS if e.search(f)]
                fails = re.compile("|".join([lx.ERROR.source, *ended])) if ended else lx.ERROR
                if any((o.day, o.line) > last and (_failing(fold(o.text)) or ended and fails.search(fold(o.text))
                                                   and not _succeeded(f).search(fold(o.text)))
                       for o in _reported(ctx, it, fails, aliases)):
                    fixed = []  # it failed again after the fix was reported
            if fixed:
                days = len({o.day for o in fixed})
                reason = "the recorded error was later reported fixed"
                feats = {"days": days}
                fact = _fact_before_fault(e.body)
                score = confidence("fixed", days=days, recent=ctx.recency(fixed))
                ev = fixed
        if reason:
            # ("Pager alerts go out through D4H; alerts keep arriving late…": a refresh to the fact)
            op = Operation("refresh" if fact else "prune", e.file, (e.text,),
                           text=compose(it, fact, max(o.day for o in ev)) if fact else None, confidence=score,
                           reason=reason + ("; the fact before it stays" if fact else ""),
                           evidence=(entry_evidence(it), *ctx.evidence(ev)), origin="offline")
            out.append(Candidate(op, "stale", score, feats))
    return out


def _fact_before_fault(body: str) -> str:
    """The sentences of an entry before the one its fault is told in, when they tell none of it: "Pager alerts go out
    through D4H" of "Pager alerts go out through D4H; alerts keep arriving 2–5 min late…, investigating"; or ""."""
    body = DATE_TAIL_RE.sub("", body).strip()
    parts = _FACT_CUT.split(body)
    kept = []
    for p in parts:
        f = fold(p)
        if lx.ERROR.search(f) or lx.PERSISTS.search(f) or lx.FIXED.search(f) or lx.PENDING.search(f):
            break
        kept.append(p.strip())
    if not kept or len(kept) == len(parts):
        return ""
    # (the fault's sentence names its own thing, one of the fact's: "alerts keep arriving late"; not a sentence going on
    # with the story before it, "Label printer loses its pairing …; reason not found yet")
    if not term_set(fold(parts[len(kept)])) & term_set(fold(" ".join(kept))):
        return ""
    return "；".join(kept) if CJK_RUN_RE.search(kept[0]) and not re.search(r"[A-Za-z]{3,}", kept[0]) else "; ".join(kept)


_FACT_CUT = re.compile(r"\s*[;；]\s*|(?<=[.。])\s+")


_FAILED_TO = re.compile(r"\bfail(?:s|ed|ing)?\s+to\s+([a-z]{3,})\b")
# a failure said as what the thing keeps doing ("keeps rejecting valid fobs"): its verb's stem
_KEEPS = re.compile(r"\b(?:keeps?|kept|still)\s+([a-z]{4,})ing\b")
_WORKS = re.compile(r"\bworks?\b|\bworking\b|\bfine\b|\bok\b|正常|可以用")


# what an entry says did not happen, in Chinese: its object and verb ("人脸识别没跑起来", "消息发不出去")
_NOT_DONE = re.compile(r"([\u4e00-\u9fff]{2,6}?)(?:没有?|沒有?|未)\s*([\u4e00-\u9fff])(?:起来|出来|出去|成|好|完)"
                       r"|([\u4e00-\u9fff]{2,6}?)([\u4e00-\u9fff])不(?:出去|起来|出来|成|了|动)")


# what an entry says cannot be done ("一直 connect 不到 iPad", "后台登不上", "PDF 打不开"): the verb before 不到 / 不上 …
_CANNOT = re.compile(r"(?<![a-z])([a-z]{3,})\s*不(?:到|上|了|进去?|开)|([\u4e00-\u9fff])不(?:到|上|进去?|开)")


def _can_again(ctx: Context, it) -> list[Observation]:
    """What an entry says cannot be done ("connect 不到", "登不上"), said done later by a line about the same thing
    ("printer 可以 connect 了", "后台登上了", "can connect again"): the failure is over."""
    m = _CANNOT.search(it.folded)
    if not m:
        return []
    v = re.escape(m.group(1) or m.group(2))
    done = re.compile(rf"(?:可以|能|又能|已经能|终于)\s*{v}\s*(?:上|到|通|进|开)?\s*了|{v}\s*(?:上|到|通|进|开)了"
                      rf"|\bcan {v} (?:again|now)\b|\b{v}s? (?:again|fine)\b")
    lead = _subject(it.entry.body[:m.start()])
    out = []
    for o in ctx.obs_about(it):
        if o.role == "assistant" or o.sensitive or (it.entry.date and o.day < it.entry.date):
            continue
        f = fold(o.text)
        hit = done.search(f)
        about = ctx.mentions(o, it) >= 0.3 or len(o.terms & lead) >= 2
        if hit and not lx.ASKED.search(f) and not _failing(f) and not _negated(f, hit.start()) and about:
            out.append(o)
        elif out and about and (again := _CANNOT.search(f)) and (again.group(1) or again.group(2)) == (
                m.group(1) or m.group(2)):
            return []  # it could not again after that
    return out


def _outcome_reached(ctx: Context, it) -> list[Observation]:
    """A Chinese entry's outcome that did not happen ("人脸识别没跑起来", "消息发不出去"), said done later of the
    same thing with the same verb ("人脸识别全部跑完 ✅", "消息都发出去了"): the failure is over. The line must
    come after the entry, be nobody's question and say it without a negation or a word of failure."""
    m = _NOT_DONE.search(it.folded)
    if not m:
        return _can_again(ctx, it)
    thing, verb = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    thing = thing[-4:]
    done = re.compile(rf"{re.escape(thing)}[^，,。；;!！?？]{{0,6}}?{re.escape(verb)}"
                      r"(?:完|好了|好|起来了|出去了|出来了|成了|通了)")
    out = []
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or (it.entry.date and o.day < it.entry.date):
            continue
        f = fold(o.text)
        hit = done.search(f)
        lead = re.split(r"[，,。；;!！?？]", f[:hit.start()])[-1] if hit else ""
        if hit and not lx.ASKED.search(f) and not _failing(f) and not re.search(r"[没沒未不别]", lead) \
                and not re.search(r"[没沒未不]", f[hit.start():hit.end()]):
            out.append(o)
    return out


def _failing(f: str) -> bool:
    """The line (folded) says a failure that is not put in the past ("耗时 6 分钟（之前 30 分钟超时）",
    "previously timed out"): a word of the past a few characters before, in its clause, ends it."""
    for m in lx.ERROR.finditer(f):
        before = re.split(r"[，,；;。！!？?(（]", f[max(0, m.start() - 14):m.start()])[-1]
        if not lx.EARLIER.search(before) and not _negated(f, m.start()) and not _NONE_OF.search(f, 0, m.start()):
            return True  # ("没报错", "no errors", "no upload errors": no failure said)
    return False


# a count of none, a word or two before what is counted ("no upload errors all week")
_NONE_OF = re.compile(r"\b(?:no|zero|without)\s+(?:[a-z][\w-]*\s+){1,2}$")


_FAILS_FOR = re.compile(r"\s+(?:for|with|on|to|from)\s+([a-z][\w.-]*)")


def _succeeded(f: str) -> re.Pattern[str]:
    """The words of success for an entry's failure (folded text): the lexicon's, the failed verb done ("printed",
    "prints" for "fails to print"), the state a failure of a state pair ends ("在线" for "一直掉线", "online" for
    "keeps going offline"), and that failure said not to happen ("没掉过一次", "没再掉线")."""
    alts = [lx.SUCCEEDED.source]
    m = _FAILED_TO.search(f)
    if m and not _WORKS.search(f):  # (a way that works named beside the failure: doing it again fixes nothing)
        verb = m.group(1)
        base = verb[:-1] if verb.endswith("e") else verb
        alts.append(rf"\b{re.escape(base)}(?:e?d|e?s)\b")
    # what it keeps doing wrong said not to happen ("zero rejects", "no rejected fobs" for "keeps rejecting
    # valid fobs")
    if (k := _KEEPS.search(f)) is not None:
        stem = k.group(1)
        stem = stem[:-1] if len(stem) >= 5 and stem[-1] == stem[-2] else stem  # ("dropping" → "drop")
        # (its last consonant doubled before an ending: "no skipped cycles" of "keeps skipping")
        alts.append(rf"\b(?:no|zero|without)\s+(?:more\s+)?{re.escape(stem)}(?:{re.escape(stem[-1])}?(?:ed|ing)|s|ions?)?\b")
    # the fault's own word said of none ("no bounces", "bounces gone", "冇閃退", "零 fail", "没跳 E-07" for an entry
    # saying it bounces, 閃退, fails or 跳 E-07)
    if (err := lx.ERROR.search(f)) is not None:
        w = lx.OFTEN_LEAD.sub("", err.group(0)).strip()
        if w.isascii() and re.fullmatch(r"[a-z]+", w) and len(w) >= 4:
            base = word_stem(w)
            alts.append(rf"\b(?:no|zero|without)\s+(?:more\s+)?{re.escape(base)}\w*\b|\b{re.escape(base)}\w*\s+(?:gone|stopped)\b"
                        rf"|(?:没|沒|零|无|無)\s*(?:再)?\s*{re.escape(w)}\b")
        elif CJK_RUN_RE.search(w) or re.search(r"\d", w):
            alts.append(rf"(?:没|沒|零|无|無)\s*(?:再|有)?\s*{re.escape(w)}")
            if CJK_RUN_RE.fullmatch(w) and len(w) == 2 and w[1] in "液水油气电了":
                alts.append(rf"(?:没|沒|冇|零|无|無|(?<![\d.])0)\s*(?:再|有)?\s*{re.escape(w[0])}")  # ("0 漏" of "漏液")
            if CJK_RUN_RE.fullmatch(w) and len(w) == 2 and w[0] == "频":
                alts.append(rf"(?:没|沒|冇|不)\s*(?:再|有)?\s*{re.escape(w[1])}(?![电光])")  # ("没闪" of "频闪")
    for _, holds, ended in lx.STATE_PAIRS:
        if (e := ended.search(f)) is not None:
            alts.append(rf"(?<![不没沒未])(?:{holds.pattern})")
            w = e.group(0)
            if len(w) == 2 and CJK_RUN_RE.fullmatch(w):
                alts.append(rf"[没沒]有?再?{re.escape(w[0])}过?{re.escape(w[1])}?")
    return re.compile("|".join(alts)) if len(alts) > 1 else lx.SUCCEEDED


_IT_SAID = re.compile(r"(?:call|mark|consider)(?:ed|ing|s)?\s+(?:it|that|this)(?:\s+one)?\b"
                      r"|(?:it|that|this)(?:\s+one)?(?:'s| is)\s*$")
_ERROR_CLAUSE = re.compile(r"[，；。！？：（）]|[,;.!?:()](?=\s|$)")


def _clause_of(f: str, start: int, end: int) -> str:
    """The clause of `f` holding f[start:end]: from the clause mark before `start` to the one after `end`."""
    a = max((x.end() for x in _ERROR_CLAUSE.finditer(f, 0, start)), default=0)
    b = _ERROR_CLAUSE.search(f, end)
    return f[a:b.start() if b else len(f)]


def _log_names(ctx: Context, it) -> frozenset[str]:
    """What the logs call the thing an entry records as failing: a later line reporting the same failure
    (an error word, and two of the entry's specific terms or one no other entry names), fitting no other
    entry better, names it in the short clause of its error word by words the entry lacks ("夜间同步还是失败，
    S3 返回 403" for "相册同步到 S3 一直失败（403）" calls it 夜间同步; "Signing failure again on the nightly" calls
    the release build "the nightly")."""
    e = it.entry
    own = frozenset(t for t in it.subject if ctx.anchor(t))
    rare = ctx.distinctive(it)
    # (a name only this entry holds, its own error's, "UnicodeDecodeError", says whose failure it is, however
    # many words the line shares with another entry: "invoice_ocr 又挂了：UnicodeDecodeError")
    only_here = frozenset(t for t in rare if all(t not in x.subject for x in ctx.items if x is not it))
    out: set[str] = set()
    for o in ctx.obs_about(it):
        if o.role == "assistant" or o.sensitive or len(o.text) > 240 or (e.date and o.day < e.date):
            continue
        f = fold(o.text)
        m = lx.ERROR.search(f)
        if not m or _negated(f, m.start()):
            continue
        mine = ctx.mentions(o, it)
        if not o.terms & only_here and any(x is not it and ctx.mentions(o, x) > mine for x in ctx.items_about(o)):
            continue  # the line reports another entry's failure
        shared = (o.terms & own) - term_set(m.group(0))
        # (one shared term will do when no other entry of memory names it: "codesign")
        if len(shared) < 2 and not shared & rare and not any(
                not is_common_word(t) and all(t not in x.subject for x in ctx.items if x is not it) for t in shared):
            continue
        clause = lx.PERSISTS.sub(" ", _clause_of(f, m.start(), m.end()))
        if len(clause) > 48:
            continue  # a story, not a name for the thing
        said = {t for t in term_set(clause) - term_set(m.group(0))
                if not t.startswith("~") and not is_common_word(t) and not t.isdigit()}
        new = {t for t in said - it.subject - it.head if ctx.anchor(t)}
        # (the parts of one identifier are one name: "invoice_ocr" and its "invoice", "ocr")
        if len({t for t in new if not any(t != u and t in re.split(r"[-_.]", u) for u in new)}) <= 2:
            # (with none, the words of the entry's head the report names it by are the logs' name for it, however
            # often the logs say them: "Export failed again" for "The nightly sensor export … keeps failing")
            out |= new or said & it.head
    # (a numbered thing the logs call by its name's first letters and its number: "GH2" of "Glory hole #2")
    if (m := _NUMBERED_NAME.match(it.entry.body)) and len(words := m.group(1).split()) >= 2:
        short = "".join(w[0] for w in words).upper()
        said_so = re.compile(rf"(?<![\w-]){short}\s?#?{m.group(2)}(?![\w-])")
        if any(said_so.search(o.text) for o in ctx.obs if o.role != "assistant"):
            out |= term_set(f"{short}{m.group(2)}")
    return frozenset(out)


_NUMBERED_NAME = re.compile(r"\s*((?:[A-Za-z][a-z]+[ \t]+){2,3})#?[ \t]?(\d{1,3})(?![\w.,:/-])")


def _reported(ctx: Context, it, words: re.Pattern[str], aliases: frozenset[str] = frozenset()) -> list[Observation]:
    """Observations about the entry, since its date, saying `words` (not negated) of its subject, or of
    what the logs call it (`aliases`, _log_names) when the line fits no other entry better."""
    e = it.entry
    named = ctx.distinctive(it)
    # what failed is named before the words of its failure ("照片同步到 OSS 一直失败，…原因待查"): a line
    # naming most of that names the thing, in whatever words it gives the rest
    starts = [m.start() for p in (lx.ERROR, lx.PERSISTS) if (m := p.search(it.folded))]
    lead = _subject(e.body[:min(starts)]) if starts else frozenset()
    if len(lead) < 2:
        lead = frozenset()
    # a name it is given there in Latin capitals ("Zebra 标签打印机 keeps failing") names it in any line
    names = frozenset(t for w in re.findall(r"(?<![\w.-])[A-Z][\w-]{2,}", e.body[:min(starts)] if starts else "")
                      for t in term_set(w) if t in lead and ctx.anchor(t))
    # four Chinese characters of that name in a row ("夜间同步" of "NAS → B2 的夜间同步") name it too: a
    # daily line says the thing by its short name ("夜间同步成功。")
    runs = [r for r in CJK_RUN_RE.findall(fold(e.body[:min(starts)])) if len(r) >= 4] if starts else []
    grams = {r[k:k + 4] for r in runs for k in range(len(r) - 3)}
    # and two of its English words in a row that no other entry writes ("the offsite backup" of "Nightly offsite
    # backup from the NAS … keeps failing")
    lead_words = re.findall(r"[a-z][a-z0-9-]+", fold(e.body[:min(starts)])) if starts else []
    pairs = {f"{a} {b}" for a, b in zip(lead_words, lead_words[1:]) if a not in STOP and b not in STOP}
    if pairs:
        pairs = {p for p in pairs if not any(p in x.folded for x in ctx.items if x is not it)}
        pairs = {p for p in pairs if any(ctx.anchor(t) for t in term_set(p))}
    # (one pattern for the English pairs, found once: every line about the entry is asked)
    pairs_rx = re.compile(r"(?<![a-z0-9])(?:" + "|".join(map(re.escape, sorted(pairs))) + r")(?![a-z0-9])") \
        if pairs else None

    # the words before an aside saying what the thing is ("出單機（櫃台那台熱感印表機）") are its name: a line
    # naming them all names it
    named_aside = aside_name(e.body[:min(starts)]) if starts else frozenset()
    # and the first word of a Chinese name, what the thing is called for short ("北斗" of "北斗船载终端"), when it is
    # no common word and no other entry writes it
    first = first_name_word(it, ctx.items)
    # and any word of that name that is no common word and that no other entry writes ("磅秤" of "拍賣場電子磅秤跟拍賣
    # 系統的連線一直斷"): the thing, named for short
    lead_f = fold(e.body[:min(starts)]) if starts else ""
    shorts = frozenset(w for r in CJK_RUN_RE.findall(lead_f) for w in cjk_words(r)
                       if len(w) >= 2 and not is_common_word(w) and w != first
                       and not any(w in x.folded for x in ctx.items if x is not it)) \
        if first or CJK_RUN_RE.match(lead_f) and not re.search(r"\d", lead_f) else frozenset()
    # (or a short word opens it, "侧台 LED 追踪灯", and no number tells it from another: "四楼 402 …投影仪")
    # and, in English, a word of five letters or more of that name that no other entry writes as a word ("charger" of
    # "Resurfacer charger keeps tripping …" beside "Resurfacer is … charged overnight"): the thing, named for short
    # (of the name, before what says where or when it happens: "night" of "… keeps going off at night" is no name)
    name_f = _WHERE_WHEN.split(lead_f, 1)[0]
    words_en = {w for w in re.findall(r"(?<![\w-])[a-z][a-z-]{4,}(?![\w-])", name_f) if w not in STOP}
    # (and the word right before its failure, what fails, of four letters too: "sync" of "… Sheet sync keeps failing")
    if head := re.search(r"(?<![\w-])([a-z][a-z-]{3,})\s*$", lead_f):
        words_en |= {head.group(1)} - STOP
    # (and of what it fails for, right after its failure: "btinternet" of "Cert emails bouncing for btinternet.com
    # addresses")
    if (err := lx.ERROR.search(fold(e.body))) and (of := _FAILS_FOR.match(fold(e.body), err.end())):
        words_en |= {w for w in re.findall(r"(?<![\w-])[a-z][a-z]{4,}(?![\w-])", of.group(1)) if w not in STOP}
    if words_en:
        words_en -= {m.group(0) for x in ctx.items if x is not it for m in _any_word(words_en).finditer(x.folded)}
    short_rx = _any_word(words_en) if words_en else None

    # (and, in Chinese, the first word of its name beside the word of its fault right after its persisting, "冷藏库" and
    # "误响" of "冷藏库温度警报半夜一直误响", when no other entry writes that fault: "冷藏库整周都没再误响")
    head_fault = _head_and_fault(it, ctx.items, lead_f)

    def by_name(o: Observation) -> bool:
        if not (grams or pairs_rx or named_aside or first or shorts or short_rx or head_fault):
            return False
        f = fold(o.text)
        return bool(grams) and any(g in f for g in grams) or bool(pairs_rx and pairs_rx.search(f)) \
            or bool(named_aside) and named_aside <= o.terms or bool(first) and first in f or any(w in f for w in shorts) \
            or bool(short_rx and short_rx.search(f)) or bool(head_fault) and all(w in f for w in head_fault)

    # (only a line named by an alias is asked what else its clause names)
    others = frozenset().union(*(x.subject for x in ctx.items if x is not it)) - it.subject - it.head - aliases \
        if aliases else frozenset()

    def by_alias(o: Observation, f: str, pos: int) -> bool:
        """The line names the thing by the logs' name for it, and the clause of its words names nothing
        another entry holds and this one lacks ("Android nightly fine" is not the iOS build's)."""
        if not o.terms & aliases:
            return False
        if _it_said(f, pos):
            # (said of "it", the line naming it by the logs' name and nothing of another entry's: 'GH2 ran all day,
            # no lockouts. Dale: "call it fixed"')
            return not any(ctx.anchor(t) for t in o.terms & others)
        clause = term_set(_clause_of(f, pos, pos))
        if not clause & aliases:
            # the clause before may name it ("OCR 脚本正常，无报错")
            a = max((x.end() for x in _ERROR_CLAUSE.finditer(f, 0, pos)), default=0)
            clause = term_set(_clause_of(f, max(a - 2, 0), pos))
        return bool(clause & aliases) and not any(ctx.anchor(t) for t in clause & others)

    # a ticket, an order or a case number it gives ("#4471") names it in any line
    codes = frozenset(t for t in it.subject if t.startswith("#") and t[1:].isdigit() and len(t) >= 4)
    # read once: every line is asked whether it numbers the thing otherwise (what failed is named before the
    # words of its failure: "3 号冷柜温控偏高，…放 1 号冷柜" is about 3 号冷柜)
    numbered = _numbered(e.body[:min(starts)] if starts else e.body)
    near = (it.head or it.subject) | aliases
    about = ctx.obs_about(it)
    if short_rx:  # (a line naming it by its English word for short)
        seen = {id(o) for o in about}
        extra = {id(o) for o, f in zip(ctx.obs, _window_folded(ctx)) if id(o) not in seen
                 and any(w in f for w in words_en) and short_rx.search(f)}
        about = [o for o in ctx.obs if id(o) in seen or id(o) in extra] if extra else about
    if aliases:  # (a line naming the thing only by the logs' name for it shares no term with the entry)
        seen = {id(o) for o in about}
        about = [*about, *(o for o in ctx.obs if o.terms & aliases and id(o) not in seen)]
    if grams or first or shorts:
        # (nor need a line naming it by its Chinese name: a thing talked of every day is no anchor of the index,
        # and it is the one most likely to have changed; the window's lines holding the name's first two
        # characters are asked, from an index made once a run)
        seen = {id(o) for o in about}
        keys = {g[:2] for g in grams} | ({first[:2]} if first else set()) | {w[:2] for w in shorts}
        index = _pair_index(ctx)
        extra = {id(ctx.obs[i]) for k in keys for i in index.get(k, ()) if id(ctx.obs[i]) not in seen
                 and by_name(ctx.obs[i])}
        if extra:
            about = [o for o in ctx.obs if id(o) in seen or id(o) in extra]
    # a numbered thing only this entry names ("Lift 3") names it in any line, however common its kind's word
    # is here ("lift"), and what the line says of it anywhere ("load-tested lift 3 …: back in the rotation")
    own_numbers = frozenset(x for x in numbered if (len(x[0]) >= 3 or not x[0].isascii()) and x[0] not in STOP
                            and not any(x in _numbered(y.entry.body) for y in ctx.items if y is not it))
    # and a Chinese numbered thing said short, by its number and a character of its name right after 号 ("2 号位"
    # for "2 号挤奶位"), when no other entry numbers a thing so
    heads_in, bare_in = _numbers_in_memory(ctx)
    mine = numbered_heads(e.body)
    own_heads = frozenset(h for h in numbered_heads(e.body[:min(starts)] if starts else e.body)
                          if heads_in.get(h, 0) <= (h in mine))
    # and a room or unit named by a bare number before its Chinese name ("301 多媒体教室投影仪"): a line giving that
    # number and a pair of the name's characters ("301 投影正常") names it, when no other entry gives the number
    lead_text = e.body[:min(starts)] if starts else e.body
    mine_bare = _bare_numbered(e.body)
    own_bare = {n: pairs for n, pairs in _bare_numbered(lead_text).items() if bare_in.get(n, 0) <= (n in mine_bare)}
    # and said by its number and a word of its name further on ("2 号探头" for "2 号温湿度探头"), when no other entry
    # numbers a thing so with 号
    nums_here = {n for _, n in own_heads}
    head_words = _HEAD_WORDS.findall(fold(lead_text)) if nums_here else []
    own_words = {(n, w) for n, run in head_words if n in nums_here for w in cjk_words(run)
                 if len(w) >= 2 and w in run and not is_common_word(w)}
    # (or by its number and the character its name ends in, the kind of thing it is: "2 号锅" of "2 号高压灭菌锅", when
    # no other entry numbers a thing ending so)
    other_text = "\n".join(fold(x.entry.body) for x in ctx.items if x is not it) if head_words else ""
    for n, run in head_words:
        nouns = [w for w in cjk_cut(run)[1:] if is_noun(w)] if n in nums_here and len(run) >= 3 else []
        end = nouns[-1][-1] if nouns else ""  # (the last noun of its name: "锅" of 高压/灭菌/锅, "炉" of 电热/烘干炉)
        if end and end not in STOP_ZH and not re.search(rf"[号號]\s*[\u4e00-\u9fff]{{0,9}}{re.escape(end)}", other_text):
            own_words.add((n, end))
    words_rx = re.compile(r"(?<![\d.])(\d{1,4})\s*[号號]\s*(" + "|".join(sorted({re.escape(w) for _, w in own_words})) + ")") \
        if own_words else None
    # and said by its number and the very word of its fault ("2号机连续4天没跳闸" of "2号蒸粉机温控老是跳闸"), where
    # another entry numbers the thing too (its schedule: "1号、2号蒸粉机每天 6:00 开机") but none speaks of that fault
    fault = lx.ERROR.search(it.folded)
    fault_word = fault.group(0) if fault and len(fault.group(0)) >= 2 and CJK_RUN_RE.fullmatch(fault.group(0)) else ""
    if fault_word and any(fault_word in x.folded for x in ctx.items if x is not it):
        fault_word = ""
    fault_nums = {n for _, n in numbered_heads(lead_text)} if fault_word else set()
    by_number: set[int] = set()
    if fault_nums:
        for o, f in zip(ctx.obs, _window_folded(ctx)):
            if fault_word in f and {n for _, n in numbered_heads(o.text, 1)} & fault_nums:
                by_number.add(id(o))
    if own_numbers or own_heads or own_bare or by_number:
        seen = {id(o) for o in about}
        for o in ctx.obs:
            if _numbered(o.text) & own_numbers or _clipped(_numbered(o.text), own_numbers) \
                    or own_heads and numbered_heads(o.text, 1) & own_heads or own_bare and any(
                    n in own_bare and pairs & own_bare[n] for n, pairs in _bare_numbered(o.text).items()) \
                    or words_rx and any((m.group(1), m.group(2)) in own_words for m in words_rx.finditer(fold(o.text))):
                by_number.add(id(o))
        about = [o for o in ctx.obs if id(o) in seen or id(o) in by_number]  # (in window order)
    # what the other entries name that this one does not: a clause saying the words of it ("VPN fixed, Ricoh
    # waiting on the vendor") is about that one
    own_terms = it.subject | it.head | aliases
    others_named = _others_named(ctx)

    def said_of_another(f: str, m: re.Match[str]) -> bool:
        clause = term_set(_clause_of(f, m.start(), m.end()))
        return bool(clause & others_named - own_terms) and not clause & own_terms

    def said_of_it(o: Observation, f: str, m: re.Match[str]) -> bool:
        return not _negated(f, m.start()) \
            and (ctx.mentions(o, it) >= 0.3 or o.terms & names or by_name(o) or by_alias(o, f, m.start())
                 or id(o) in by_number) \
            and (ctx.near(f, m.start(), near) or bool(aliases) and ctx.near(f, m.start(), aliases, specific=False)
                 or id(o) in by_number or by_name(o) and ctx.near(f, m.start(), near, specific=False)
                 # (or said of "that one" on a line naming it by its name and nothing another entry names: "SwitchBot
                 # logged all night again. Calling that one fixed.")
                 or (o.terms & names or by_name(o)) and _it_said(f, m.start())
                 and not _names_other(o.text, it, ctx.items)) \
            and (id(o) in by_number or not said_of_another(f, m))

    # the cheap tests first: most lines about the entry name none of its distinctive terms
    # (any of the line's words may be the one said of it: "Quartix closed the ticket — …, tracker rock solid since Tue.
    # sorted")
    return [o for o in about if (o.terms & named or (lead and ctx.share(o, lead) >= 0.6)
                                 or o.terms & names or by_name(o) or o.terms & aliases or o.terms & codes
                                 or id(o) in by_number)
            and (not e.date or o.day >= e.date) and o.role != "assistant"
            and words.search(f := fold(o.text)) and not _numbered_otherwise(numbered, o.text)
            and any(said_of_it(o, f, m) for m in words.finditer(f))]


def _head_and_fault(it, items, lead_f: str) -> tuple[str, str] | None:
    """The first word of a Chinese entry's name and the word of its fault right after its persisting word ("冷藏库",
    "误响" of "冷藏库温度警报半夜一直误响"), when that fault word is no common word and no other entry writes it."""
    run = CJK_RUN_RE.match(lead_f)
    per = lx.PERSISTS.search(it.folded)
    after = CJK_RUN_RE.match(it.folded, per.end()) if per else None
    if not run or not after:
        return None
    head = next((w for w in cjk_cut(run.group(0)) if len(w) >= 2), "")
    fault = next(iter(cjk_cut(after.group(0))), "")
    if len(head) < 2 or len(fault) < 2 or is_common_word(fault) or any(fault in x.folded for x in items if x is not it):
        return None
    return head, fault


def _names_other(text: str, it, items) -> bool:
    """A capitalised word of the line is a term of another entry that this one lacks (its name: "Ricoh", not the
    "logged" of a "log")."""
    said = {t for w in re.findall(r"(?<![\w-])[A-Z][\w-]+", text) for t in term_set(w)} - it.subject - it.head
    return any(said & x.subject for x in items if x is not it)


def _it_said(f: str, pos: int) -> bool:
    """The words at `pos` are said of "it" or "that one" ("call it fixed", "that one's fixed")."""
    return bool(_IT_SAID.match(f, pos) or _IT_SAID.search(f[max(0, pos - 18):pos]))


def _others_named(ctx: Context) -> frozenset[str]:
    """The specific terms memory's entries name (what a clause may name instead of the entry asked about), once a run."""
    got = ctx.__dict__.get("_prune_named")
    if got is None:
        got = ctx.__dict__["_prune_named"] = frozenset(
            t for x in ctx.items for t in x.head or x.subject if ctx.anchor(t) and not t.startswith("~"))
    return got


# a preposition or conjunction after a thing's name, saying where, when or how its fault happens
_WHERE_WHEN = re.compile(r"(?<![\w-])(?:at|in|on|during|after|before|from|to|with|by|for|when|while|whenever|since|every|"
                         r"each|overnight|around|under|over|into|onto)(?![\w-])")


def _any_word(words: set[str]) -> re.Pattern[str]:
    """A pattern of any of `words` as a whole word."""
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, sorted(words))) + r")(?![\w-])")


_HEAD_WORDS = re.compile(r"(?<![\d.])(\d{1,4})\s*[号號]\s*([\u4e00-\u9fff]{2,10})")


def _numbers_in_memory(ctx: Context) -> tuple[dict[tuple[str, str], int], dict[str, int]]:
    """How many entries give each numbered head ("2 号" with 位) and each bare number ("301"), counted once a run."""
    got = ctx.__dict__.get("_prune_numbers")
    if got is None:
        heads: dict[tuple[str, str], int] = {}
        bare: dict[str, int] = {}
        for y in ctx.items:
            for h in numbered_heads(y.entry.body):
                heads[h] = heads.get(h, 0) + 1
            for n in _bare_numbered(y.entry.body):
                bare[n] = bare.get(n, 0) + 1
        got = ctx.__dict__["_prune_numbers"] = (heads, bare)
    return got


def _window_folded(ctx: Context) -> list[str]:
    """The window's lines folded, in order, made once a run."""
    got = ctx.__dict__.get("_prune_folded")
    if got is None:
        got = ctx.__dict__["_prune_folded"] = [fold(o.text) for o in ctx.obs]
    return got


def _pair_index(ctx: Context) -> dict[str, list[int]]:
    """The window's lines by each pair of Chinese characters they hold (folded), made once a run."""
    index = ctx.__dict__.get("_prune_pairs")
    if index is None:
        index = {}
        for i, f in enumerate(_window_folded(ctx)):
            for run in CJK_RUN_RE.findall(f):
                for k in range(len(run) - 1):
                    index.setdefault(run[k:k + 2], []).append(i)
        ctx.__dict__["_prune_pairs"] = index
    return index


def _clipped(said: frozenset[tuple[str, str]], own: frozenset[tuple[str, str]]) -> bool:
    """A numbered thing said by the first letters of its kind's word ("inc #2" of "incubator #2"), three or more of
    them, and its number."""
    return any(n == m and len(k) >= 3 and k != w and w.startswith(k) and k.isascii()
               for k, n in said for w, m in own)


@lru_cache(maxsize=65536)
def _numbered(text: str) -> frozenset[tuple[str, str]]:
    """The numbered items a text names, as (kind, number): "Dock 3", and "2 号烤箱" (its kind the two characters
    after 号)."""
    latin = ((m.group(1).lower(), m.group(2)) for m in NUMBERED_RE.finditer(text))
    if "号" not in text and "號" not in text:
        return frozenset(latin)
    return frozenset(latin) | frozenset((to_simplified(m.group(2)), m.group(1)) for m in _NUMBERED_ZH.finditer(text))


_NUMBERED_ZH = re.compile(r"(?<![\d.])(\d{1,4})\s*[号號]\s*([\u4e00-\u9fff]{2})")
# a bare number of two to five digits naming a room or unit, then Chinese ("301 多媒体教室", "301 早读投影"): no
# amount (元, 台, 次, 分钟…), no time, no date
_BARE_NUMBERED = re.compile(r"(?<![\d.:/-])(\d{2,5})\s*(?![\d.:/%-])(?![元块個个台次天分秒小时時人张張件箱斤克米度℃号號楼樓层層年月日周週])"
                            r"([\u4e00-\u9fff][^，,。；;]{0,16})")


@lru_cache(maxsize=65536)
def _bare_numbered(text: str) -> dict[str, set[str]]:
    """Each bare number naming a thing in a text, with the pairs of Chinese characters of what follows it."""
    out: dict[str, set[str]] = {}
    for m in _BARE_NUMBERED.finditer(to_simplified(text)):
        run = "".join(re.findall(r"[\u4e00-\u9fff]+", m.group(2)))
        out.setdefault(m.group(1), set()).update(run[k:k + 2] for k in range(len(run) - 1))
    return out


def _numbered_otherwise(have: frozenset[tuple[str, str]], text: str) -> bool:
    """The line numbers the entry's numbered thing (`have`, _numbered of its body) otherwise, never as the
    entry does: "Dock 3 printer has been fine" is not about "Dock 1 roller door sensor"."""
    kinds = {w for w, _ in have}
    # (a Chinese one by the character right after 号 too: "2 号位一整天没报警" numbers another bay than "1 号位烘干机")
    heads = {w[0] for w in kinds if CJK_RUN_RE.match(w)}
    said = {x for x in _numbered(text) if x[0] in kinds or x[0][:1] in heads} if kinds else set()
    return bool(said) and not said & have and not {n for _, n in said} & {n for w, n in have if w[:1] in heads}


def _valid(y: str, m: str, d: str) -> bool:
    try:
        date(int(y), int(m), int(d))
        return True
    except ValueError:
        return False


def secret_entries(ctx: Context) -> list[Candidate]:
    out = []
    for it in ctx.items:
        if not it.secret or it.entry.frozen:
            continue
        found = sensitive.scan(it.entry.text)
        kinds = ", ".join(sorted({f.kind for f in found})) or "a value git stores redacted"
        safe = sensitive.redact(it.entry.text.split("\n")[0]).split("[REDACTED]")[0].rstrip(" :：=")
        op = Operation("prune", it.entry.file, (it.entry.text,), confidence=0.99,
                       reason=f"holds sensitive data ({kinds}); keep it in a password manager, not in memory",
                       evidence=(entry_evidence(it, safe),), origin="offline")
        out.append(Candidate(op, "secret", 0.99, {"kinds": kinds}))
    return out


TICKED = re.compile(r"`([A-Za-z][\w.@/+-]{2,60})`")


DATED_TITLE = re.compile(r"^\s*\d{4}-\d{2}(?:-\d{2})?\b")


RETIRED_PER_RUN = 3


LINK_RE = re.compile(r"\]\([^)]+\)")


def _retired_tools(ctx: Context) -> dict[str, Observation]:
    """The tools the person retired, named as code beside the words that retire them, with the line
    that says so (the newest wins)."""
    retired: dict[str, Observation] = {}
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or "`" not in o.text:
            continue  # (the tool is named as code)
        f = fold(o.text)
        if not lx.RETIRED.search(f) or (o.role != "user" and not lx.PERSON_SAID.search(f)):
            continue
        for m in lx.RETIRED.finditer(f):
            if _negated(f, m.start()):
                continue
            near = [t for t in TICKED.finditer(o.text)
                    if abs(t.end() - m.start()) <= 40 or abs(t.start() - m.end()) <= 40]
            if near:
                tool = min(near, key=lambda t: min(abs(t.end() - m.start()), abs(t.start() - m.end()))).group(1)
                retired[tool.lower()] = o
    return retired


def retired_subjects(ctx: Context) -> list[Candidate]:
    """The person retired a tool ("`mcporter` is not required anymore", "不再使用 `foo`"): entries
    built around it — it is their label or among their first words — are out of date. Past records
    (dated or timeline sections) and entries already saying it is retired are left alone."""
    out = []
    for tool, o in _retired_tools(ctx).items():
        hits = []
        for it in ctx.items:
            if it.frozen or it.step or it.entry.file != ctx.primary and it.entry.file != ctx.user_file:
                continue
            title = it.entry.section or ""
            if DATED_TITLE.match(title) or TIMELINE.search(title) or lx.RETIRED.search(it.folded):
                continue
            if it.entry.date and it.entry.date > o.day:
                continue  # written after the person retired it
            if LINK_RE.search(it.entry.text):
                continue  # an index line pointing to a topic file is structure, not a claim
            body = it.folded
            m = LABEL_RE.match(body)
            label_hit = bool(m and tool in m.group(1))
            words = re.sub(r"[*_`]", " ", body).split()[:6]
            # a labelled entry is about its label: "Omada MCP: … via mcporter" is about Omada
            lead_hit = not m and any(tool == w.strip(".,:;()→").lower() for w in words)
            if label_hit or lead_hit:
                hits.append((not label_hit, it.entry.start, it))
        for _, _, it in sorted(hits, key=lambda h: (h[0], h[1]))[:RETIRED_PER_RUN]:
            score = confidence("retired", typed_by_person=o.role == "user", recent=ctx.recency([o]))
            op = Operation("prune", it.entry.file, (it.entry.text,), confidence=score,
                           reason=f"`{tool}` was retired ({o.day.isoformat()}); this entry is built around it",
                           evidence=(entry_evidence(it), *ctx.evidence([o], 1)), origin="offline")
            out.append(Candidate(op, "retired", score, {"tool": tool}))
    return out


SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def _names(span: str, tool: str) -> bool:
    s = span.strip().lower()
    return s == tool or s.endswith("/" + tool)


def _names_as_code(text: str, tool: str) -> bool:
    """The text writes the tool as code."""
    return any(_names(t.group(1), tool) for t in CODE_SPAN_RE.finditer(text))


def _drop_asides(sentence: str, name: str) -> str:
    """The sentence without its parenthetical asides that name `name` ("(NOT bare `gh`)")."""
    return re.sub(r"\s*\([^()]*\)", lambda p: "" if name.lower() in p.group(0).lower() else p.group(0), sentence)


def superseded_tools(ctx: Context) -> list[Candidate]:
    """The person retired a tool and said what takes its place ("`gh-vader` should not be restored; use
    plain `gh` only"): an entry telling the agent to use the retired tool — a standing rule included, since
    the person's newer words are the rule now — is rewritten with the new tool in its place. Only the
    sentence that names the tool changes (an aside naming the new tool, "(not bare `gh`)", goes with it,
    and so does a next sentence that only points back at it, "This ensures …"); the rest is kept as written.
    An entry naming the tool in more than one sentence, or not as what to use, is left to a person."""
    out = []
    for tool, o in _retired_tools(ctx).items():
        new = [m.group(1) for m in lx.REPLACE_WITH.finditer(o.text) if m.group(1).strip().lower() != tool]
        if len({n.lower() for n in new}) != 1 or sensitive.has_sensitive(new[0]):
            continue
        new_tool = new[0].strip()
        for it in ctx.items:
            if it.entry.frozen or it.secret or it.step or it.entry.file not in (ctx.primary, ctx.user_file):
                continue
            title = it.entry.section or ""
            if DATED_TITLE.match(title) or TIMELINE.search(title) or lx.RETIRED.search(it.folded):
                continue
            if it.entry.date and it.entry.date > o.day:
                continue
            body = it.entry.body
            if "\n" in body or not _names_as_code(body, tool):
                continue
            m = LABEL_RE.match(body)
            head, rest = (body[:m.end()], body[m.end():]) if m else ("", body)
            closing = re.match(r"(?:\*\*|__)?\s*", rest).group(0)
            head, rest = head + closing, rest[len(closing):]
            sentences = SENTENCE_END.split(rest)
            naming = [i for i, x in enumerate(sentences) if _names_as_code(x, tool)]
            if len(naming) != 1:
                continue
            i = naming[0]
            sent = sentences[i]
            span = next(t for t in CODE_SPAN_RE.finditer(sent) if _names(t.group(1), tool))
            if not lx.USE_VERB.search(fold(sent[:span.start()])[-24:]):
                continue  # named, not prescribed
            rewritten = sent[:span.start()] + f"`{new_tool}`" + sent[span.end():]
            rewritten = _drop_asides(rewritten, new_tool)
            rewritten = re.sub(r"\s+([.,;:!?])", r"\1", rewritten)
            if _names_as_code(rewritten, tool):
                continue
            kept = [*sentences[:i], rewritten]
            tail = sentences[i + 1:]
            if tail and lx.ANAPHOR.match(fold(tail[0])):
                tail = tail[1:]
            new_body = (head + " ".join([*kept, *tail])).strip()
            score = confidence("retired", typed_by_person=o.role == "user", recent=ctx.recency([o]))
            op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, new_body, o.day),
                           confidence=score,
                           reason=f"`{tool}` was retired ({o.day.isoformat()}); the person said to use `{new_tool}`",
                           evidence=(entry_evidence(it), *ctx.evidence([o], 1)), origin="offline")
            out.append(Candidate(op, "superseded", score, {"tool": tool}))
    return out[:RETIRED_PER_RUN]


TRANSIENT_QUIET_DAYS = 3   # the window's newest days that must not report the condition again
TRANSIENT_LOG_DAYS = 3     # days of logs the window must hold for their silence to mean something


def passed_conditions(ctx: Context) -> list[Candidate]:
    """A passing condition stated for "these days" ("这两天非常忙", "busy this week, travelling") in an
    undated or older entry, while the window holds logs on several days and none of its newest days
    reports the condition again: it has passed. Past records (dated or timeline sections) stay."""
    log_days = sorted({o.day for o in ctx.obs})
    if len(log_days) < TRANSIENT_LOG_DAYS:
        return []
    recent = {d for d in log_days if (ctx.now - d).days <= TRANSIENT_QUIET_DAYS}
    out = []
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        title = it.entry.section or ""
        if DATED_TITLE.match(title) or TIMELINE.search(title):
            continue
        span, state = lx.TRANSIENT_SPAN.search(it.folded), lx.TRANSIENT_STATE.search(it.folded)
        if not span or not state or abs(span.start() - state.start()) > 16:
            continue
        if it.entry.date and (ctx.now - it.entry.date).days <= TRANSIENT_QUIET_DAYS:
            continue
        # the assistant's small talk ("still busy at 3 am?") reports nothing about the person
        again = [o for o in ctx.obs if o.day in recent and o.role != "assistant"
                 and lx.TRANSIENT_STATE.search(fold(o.text))]
        if again:
            continue
        score = confidence("passed", extra_log_days=min(len(log_days) - TRANSIENT_LOG_DAYS, 3))
        op = Operation("prune", it.entry.file, (it.entry.text,), confidence=score,
                       reason=f"a passing condition ('{it.entry.body[span.start():span.end()]}'); the logs of "
                              f"{len(log_days)} days, the last {TRANSIENT_QUIET_DAYS} included, no longer report it",
                       evidence=(entry_evidence(it),), origin="offline")
        out.append(Candidate(op, "passed", score, {"log_days": len(log_days)}))
    return out[:2]
