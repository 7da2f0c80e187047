"""Refresh a status: one that moved on (待 push → 已上线, pending → live), or a state the newest
logs report ended (已连接 → 断连)."""
from __future__ import annotations

import re
from collections import Counter

from memgit.dream import lexicon as lx
from memgit.memory import DATE_TAIL_RE as TAIL_DATE
from memgit.ops import Operation
from memgit.text import STOP, cjk_share, is_common_word, is_traditional, stem, term_set
from memgit.dream.scoring import confidence
from memgit.dream.model import (
    _affirmed, _negated, _script, _subject, _version_clash, aside_name, Candidate, CJK_IN, compose, Context,
    entry_evidence, first_name_word, fold, Item, LABEL_RE, NUMBERED_RE, numbered_heads
)


# -- refresh: status moved ------------------------------------------------------------
def status_changes(ctx: Context) -> list[Candidate]:
    out = []
    # each entry's pending words, found once: what `_contrast` compares siblings by
    waits = {id(x): m.group(0) for x in ctx.items if (m := lx.PENDING.search(x.folded))}
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        pend = lx.PENDING.search(it.folded)
        todo = lx.TODO.search(it.folded)
        if not pend and not todo:
            continue
        if pend and _QUOTED.match(it.folded[max(0, pend.start() - 1):pend.start() + 1]):
            continue  # a state quoted as a value ("订单卡在“待确认”"): what a thing shows, not where the entry stands
        # (what its label names is the thing, not its state: "新品 Uber Eats 上架：送審中" waits for the listing)
        lab = LABEL_RE.match(it.folded)
        own = it.folded[lab.end():] if lab and pend and pend.start() >= lab.end() else it.folded
        # (the state it is in, said in its pending word's clause: a step passed before it is no state of the whole,
        # "现场核查过了，审核中" is under review)
        have = lx.done_state(lx.PENDING.sub(" ", _clause_of(own, pend.start() - (len(it.folded) - len(own)))
                                            if pend else own))  # "待上线" is not "上线"
        blocked = bool(pend and lx.BLOCKED.search(it.folded))
        heads = numbered_heads(it.entry.body[:pend.start()] if pend else it.entry.body)
        wait = _waited(it.folded, pend)
        waited_on = frozenset(t for t in term_set(wait) if t in it.subject)
        support, best = [], None
        said_outright = False  # a line of the support says pushed, merged, live, or the very word "unblocked"
        about = ctx.obs_about(it)
        # (and the line right after one about it in the same log, which may go on with its story naming nothing,
        # when it shares a word or a number with it: "把妈祖庙 40 盏送过去。" then "庙方点收完毕，40 盏全数交货。";
        # asked below whether it does)
        before = {(o.source, o.line + 1): o for o in about}
        nexts = {id(o) for o in ctx.obs if (p := before.get((o.source, o.line))) is not None and o not in about
                 and (o.terms & p.terms or set(_NUMBER.findall(o.text)) & set(_NUMBER.findall(p.text)))}
        if nexts:
            seen = {id(o) for o in about}
            about = [o for o in ctx.obs if id(o) in seen or id(o) in nexts]
        # what is in the state is named before its status word ("Offline sync … is on hold until Tarek
        # finishes the spec"): what it waits for is no part of its name
        lead = _subject(it.entry.body[:pend.start()]) if pend else frozenset()
        named = it.folded[:pend.start()] if pend else ""  # what is waiting, named before its status word
        # of "新官网的 ICP 备案" / "the venue's permit" what waits is the thing owned: a line must name it
        owned = frozenset(t for t in term_set(_OWNER.split(named)[-1]) if ctx.anchor(t)) if _OWNER.search(named) \
            else frozenset()
        mine, theirs = _contrast(ctx, it, pend, waits)
        if any(t.startswith(MARK) for t in mine):
            # (a line naming the entry by its mark and one of its words, however common: "A 批次正式通过验收")
            seen = {id(o) for o in about}
            more = {id(o) for o in ctx.obs if id(o) not in seen and o.terms & it.subject and _with_marks(o, mine) & mine}
            about = [o for o in ctx.obs if id(o) in seen or id(o) in more] if more else about  # (in window order)
        # (and a line naming it by two of the words that tell it from its siblings: "Salt Orchard is cleared" of
        # "Spring show "The Salt Orchard": … awaiting clearance" beside "Autumn show "Paper Lanterns": …")
        if len(mine) >= 2 and theirs:
            seen = {id(o) for o in about}
            more = {id(o) for o in ctx.obs if id(o) not in seen and len(o.terms & mine) >= 2 and not o.terms & theirs}
            about = [o for o in ctx.obs if id(o) in seen or id(o) in more] if more else about  # (in window order)
        # (and a numbered thing no other entry gives, written whole or by its initial: "L114" of "Lot 114")
        if short_refs := _short_refs(ctx, it, it.entry.body[:pend.start()] if pend else it.entry.body):
            seen = {id(o) for o in about}
            more = {id(o) for o in ctx.obs if id(o) not in seen and short_refs.search(o.text)}
            about = [o for o in ctx.obs if id(o) in seen or id(o) in more] if more else about  # (in window order)
        # (and an order's or a ticket's code no other entry gives: "A-5521" of "Order #A-5521")
        # (and an acronym in brackets after a name, which the lines write for it: "SC" of "食品生产许可证（SC）")
        # (or one written in capitals in it, in the name before its state: "SC" of "SC 食品生产许可证…审核中")
        acronyms = _acronyms(it.entry.body[:pend.start()] if pend else it.entry.body)
        aliases = _aliases(it.entry.body) | frozenset(t for a in acronyms for t in term_set(a))
        refs = frozenset(t for t in it.subject | aliases if (t.startswith("#") or _CODE.fullmatch(t) or t in aliases)
                         and not any(t in x.subject for x in ctx.items if x is not it))
        # (a line writing one names it, however short: "我们 SC 证批下来了")
        named_by = [re.compile(rf"(?<![a-z0-9]){re.escape(a)}(?![a-z0-9])") for a in acronyms
                    if term_set(a) and term_set(a) <= refs]
        if named_by:
            seen = {id(o) for o in about}
            more = {id(o) for o in ctx.obs if id(o) not in seen and any(n.search(fold(o.text)) for n in named_by)}
            about = [o for o in ctx.obs if id(o) in seen or id(o) in more] if more else about
        # the name before an aside saying what it is ("有机认证（某认证中心）：…") names it in a line that says it
        # all, when no other entry holds that whole name
        aside = aside_name(it.entry.body[:pend.start()] if pend else it.entry.body)
        if not any(ctx.anchor(t) for t in aside) or any(
                aside <= x.subject for x in ctx.items if x is not it):
            aside = frozenset()
        # the first word of a Chinese name no other entry writes ("周家" of "周家婚礼（6月21日）…") names it in any line
        short = first_name_word(it, ctx.items)
        # (or a run of three Chinese characters or more of its name, before its state, that no other entry writes and
        # the line writes whole however the segmenter cuts it: "科目二" of "驾照科目二已约考" in "科目二过了！")
        verbatim = _verbatim_runs(it, ctx.items, pend)
        # (the initials of three words of it or more, which a line writes for them: "LBC" of "listed building consent")
        initials = _initials(it.entry.body) - frozenset(t for x in ctx.items if x is not it for t in x.subject)
        if initials:
            seen = {id(o) for o in about}
            more = {id(o) for o in ctx.obs if id(o) not in seen and o.terms & initials}
            about = [o for o in ctx.obs if id(o) in seen or id(o) in more] if more else about
        told: set[tuple[str, int]] = set()  # lines told of the entry by their own words
        # the step it waits on said in the wait's own words, two of them, that no other entry writes ("现场核查过了" of
        # "等市监局现场核查"): the line is about this wait
        # (or one, no common word: "放榜" of "等放榜")
        awaited = frozenset(t for t in term_set(wait) if len(t) >= 2 and t in it.folded and not t.startswith("等"))
        own_wait = awaited
        if not own_wait or len(own_wait) == 1 and is_common_word(next(iter(own_wait))) or any(
                all(t in x.folded for t in own_wait) for x in ctx.items if x is not it):
            own_wait = frozenset()
        need = min(2, len(own_wait))
        # (a name in Latin letters the waiting part of the entry gives, and nothing else of it or memory: "Uber Eats" of
        # "Foodpanda 已上架；Uber Eats 上架申請送出去了，等審"; a line writing it whole is about the wait)
        waiting_name = _waiting_name(ctx, it, pend)
        if own_wait:
            seen = {id(o) for o in about}
            more = {id(o) for o in ctx.obs if id(o) not in seen and len(o.terms & own_wait) >= need}
            about = [o for o in ctx.obs if id(o) in seen or id(o) in more] if more else about
        for o in about:
            if o.role == "assistant":
                continue
            # a line about the entry by most of its subject, or, beside a sibling written on the same
            # template ("… iOS 2.3 審核中" / "… Android 2.3 審核中"), by what tells the two apart
            held = _with_marks(o, mine | theirs)
            named_apart = bool(held & mine) and not held & theirs
            if held & theirs and not held & mine:
                continue  # what tells a sibling apart, and nothing of this one: the line is the sibling's
            # (the entry's own number, "#412", names it whatever else the line says)
            by_words = ctx.mentions(o, it) >= 0.3 or len(lead) >= 2 and ctx.share(o, lead) >= 0.5 or named_apart \
                or bool(o.terms & refs) or bool(aside) and aside <= o.terms or bool(short) and short in fold(o.text) \
                or bool(short_refs) and bool(short_refs.search(o.text)) \
                or bool(own_wait) and len(o.terms & own_wait) >= need \
                or bool(o.terms & awaited) and len(o.terms & it.subject) >= 2 \
                or any(v in fold(o.text) for v in verbatim) \
                or bool(o.terms & initials) and len(o.terms & (it.subject | initials)) >= 2 \
                or bool(waiting_name) and waiting_name <= o.terms
            if by_words:
                told.add((o.source, o.line))
            # the next line of the same log goes on with its story when it names nothing else
            # ("iOS build 401 通過審核。" then "確認後手動發布，App Store 搜得到，正式上架。")
            goes_on = (o.source, o.line - 1) in told and not held & theirs and not _names_another(ctx, it, o)
            if not by_words and not goes_on:
                continue
            if _numbered_apart(heads, o.text):
                continue  # "3号楼 …验收通过" is not about 5号楼
            if _version_clash(it, o):
                continue
            f = fold(o.text)
            # (the entry's short forms the line writes are its words there: "OSTR is allowed")
            shorts = frozenset(t for m in short_refs.finditer(o.text) for t in term_set(m.group(0))) if short_refs \
                else frozenset()
            st = lx.done_state(f, wait, it.subject | it.head | shorts | initials, named)
            while st and _day_ahead(_lead_in(f, st[3]), o.day):
                # (a state planned for a day ahead; one said before it may be done: "合约签好，12 月起在超市上架")
                cut = st[3] - len(_lead_in(f, st[3]))
                st = lx.done_state(f[:cut], wait, it.subject | it.head | shorts | initials, named) if cut > 0 else None
            if blocked and (ub := _unblocked(f)) and (not st or _OPEN_AGAIN_ZH.search(ub[2]) and CJK_IN.match(ub[2])):
                st = ub  # (a thing closed while it waited, said open again: "检测通过，北坡步道今天重新开放" opens it)
            if not st or (have and st[0] <= have[0]):
                continue
            # (or beside who or what the entry waits on: "awaiting ruling from Judge Okoye" / "Judge Okoye ruled on
            # the motion to dismiss -> DENIED")
            if not ctx.near(f, st[3], (it.head or it.subject) | waited_on | own_wait | waiting_name) and not goes_on and not (
                    named_apart and (ctx.near(f, st[3], mine, 24, False) or _mark_near(o.text, st[3], mine))) and not (
                    short_refs and any(abs(m.start() - st[3]) <= 32 for m in short_refs.finditer(o.text))) and not (
                    named_by and any(abs(m.start() - st[3]) <= 24 for n in named_by for m in n.finditer(f))):
                continue  # the done word is about something else on a long line
            if st[1] == lx.ARRIVED and ctx.mentions(o, it) < 0.3 and _another_thing(
                    f, st[3], it.subject | it.head | waited_on | shorts):
                continue  # what arrived is another thing of the name's ("Hammerl order arrived" of its account application)
            if _THEIRS.search(_done_clause(f, st[3])) or _ours_not_yet(
                    f[st[4]:], fold(pend.group(0)) if pend else ""):
                continue  # another party's ("他们的摊位过审了", "their stall was approved"), or ours said not yet after it
            if lx.PENDING.search(_SENTENCE_END.split(f[st[3]:], maxsplit=1)[0]):  # "deployed to staging, prod pending"
                continue  # (in its sentence: "green light, put it in the Sept cat. → moved to the draft" is done)
            if lx.CONDITIONAL.search(_lead_in(f, st[3])):
                continue  # said on a condition ("If consent comes through Mon we start Tue")
            if _day_ahead(_lead_in(f, st[3]), o.day):
                continue  # a date still to come before it: planned ("確認 6/29 上線", said on 6/27)
            if st[1] == lx.ARRIVED and _part_arrived(f, st[3], wait, lead | it.head):
                continue  # a part it waits on arrived ("new gearbox arrived"): the entry's own state is still to come
            if owned and not o.terms & owned and not goes_on:
                continue  # "新官网正式上线" is the site's state, not its filing's
            support.append(o)
            said_outright = said_outright or st[0] >= 2 or st[0] == 0
            if best is None or st[0] > best[0][0] or (st[0] == best[0][0] and o.day > best[1].day):
                best = (st, o)
        if not best:
            continue
        # (a line telling a sibling apart, and nothing of this one, is the sibling's: "DL-2211 still parked at try-in")
        later = [o for o in about if o.day > best[1].day and o not in support and ctx.mentions(o, it) >= 0.3
                 and o.role != "assistant" and not ((held := _with_marks(o, mine | theirs)) & theirs and not held & mine)]
        # (a wait again: the entry's own, said of what it waits on or in its words; "interrogatories draft sent" is
        # another thing's draft)
        relapsed = [o for o in later if (_affirmed(lx.PENDING, fold(o.text)) or _affirmed(lx.ERROR, fold(o.text)))
                    and not _done_here(ctx, it, fold(o.text), wait)
                    and (not wait or o.terms & (term_set(wait) - it.head) or pend and pend.group(0) in fold(o.text)
                         or _affirmed(lx.ERROR, fold(o.text)))]
        days = len({o.day for o in support})
        confirm = len({o.day for o in later}) - len({o.day for o in relapsed})
        st, o = best
        # pushed, merged, live; or the very word "unblocked" (a blocked thing resumed, then done, says both)
        explicit = said_outright
        score = confidence("status", explicit=explicit, extra_days=days - 1, confirming_days=min(confirm, 2),
                           relapsed=bool(relapsed), recent=ctx.recency(support))
        feats = {"days": days, "explicit": explicit, "confirming_days": confirm, "contradicted": bool(relapsed)}
        if todo and not pend:
            op = Operation("prune", it.entry.file, (it.entry.text,), confidence=score,
                           reason=f"the to-do is done: {o.quote()[:80]}",
                           evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
            out.append(Candidate(op, "todo-done", score, feats))
            continue
        # (asked before the state is given in the line's own word, "denied", "granted"; the step waited on said done,
        # "现场核查过了" of "等…现场核查", decides nothing)
        said_at = fold(o.text)[max(0, st[3] - 4):st[4]]
        decided = st[1] in _DECIDED and not any(len(t) >= 2 and t in said_at for t in term_set(wait or ""))
        st = _as_said(st, o, it.entry.body)
        new_body = _numbered(_share(_restate(it.entry.body, st, decided), support), support)
        if not term_set(new_body) & frozenset(t for t in it.subject if ctx.anchor(t)):
            continue  # nothing left of what the entry is about ("已通过" alone): a person rewrites it
        if _STILL_STUCK.search(fold(new_body)):
            continue  # another clause still says it is stuck ("还卡在 …，payouts 已恢复"): a person rewrites it
        waits_at = pend.start() if pend else 0
        if (left := _NOT_YET_LEFT.search(fold(new_body))) and left.start() >= waits_at \
                and not _NOT_YET_LEFT.search(fold(it.entry.body), 0, waits_at):
            continue  # a step the entry says is still to come stands beside the new state ("已验过，还没挂牌")
        if (left := _NOT_YET_LEFT_EN.search(fold(new_body))) and left.start() >= waits_at:
            continue  # or says so in English ("account off hold, Sept invoice unpaid, no new bookings")
        text = compose(it, new_body, max(x.day for x in support))
        wait_word = pend.group(0) if pend else "pending"
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"status moved: {wait_word} → {_word(st, wait_word, it.entry.body)}",
                       evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
        out.append(Candidate(op, "status", score, feats))
    taken = {c.op.targets[0] for c in out}
    return out + [c for c in decided_choices(ctx) if c.op.targets[0] not in taken]


_QUOTED = re.compile(r"^[“\"「『'‘]")


def _part_arrived(f: str, at: int, wait: str, own: frozenset[str]) -> bool:
    """The arrival at `at` is said of a thing the entry waits on ("waiting on a replacement gearbox" / "gearbox
    arrived"), not of the entry's own subject: a part in, not the entry's state reached."""
    obj = lx.EN_OBJECT.search(wait) if wait else None  # (the thing an English wait names: "a replacement gearbox")
    if not obj:
        return False
    awaited = term_set(" ".join(g for g in obj.groups() if g)) - own
    # (what the clause names before the word: "Voith gearbox for 214 arrived")
    clause = re.split(r"[,;.!?，；。！？:：]", f[max(0, at - 40):at])[-1]
    return bool(term_set(clause) & awaited)


# the English word right before a state word, past a verb that only says when ("order arrived", "order has now arrived")
_WORD_BEFORE = re.compile(r"(?<![\w-])([a-z][a-z-]{2,})\s+(?:(?:is|was|are|were|has|have|been|got|just|now)\s+)*$")


def _another_thing(f: str, at: int, own: frozenset[str]) -> bool:
    """The word at `at` has a thing of its own right before it that the entry never names ("Hammerl order arrived" of
    "… trade account application pending"): it is that thing's."""
    m = _WORD_BEFORE.search(f[:at])
    if not m or m.group(1) in STOP or m.group(1).endswith("ly"):
        return False
    words = term_set(m.group(1))
    return bool(words) and not words & own


_CODE = re.compile(r"[a-z]{1,4}-\d{3,}|[a-z]{3,5}\d{1,2}")  # ("A-5521", a strain or a part code: "fli1")
_ALIAS = re.compile(r"[（(]([A-Z]{2,6})[）)]")


_ACRONYM = re.compile(r"(?<![A-Za-z0-9&.-])[A-Z]{2,6}(?![A-Za-z0-9&-])")


_DECIDED = frozenset(("approved", "accepted", "ruled", "signed"))  # (states that decide what was sent off; a step it
# waited on said done, "已核查过", leaves it sent off)
# the sending off of what waits, alone in its clause right before the wait's
_NOT_YET_ABLE = re.compile(r"(?:还|仍|暂时|暫時|仍然)(?:不能|不可以|没法|無法|无法)|\b(?:still|not yet)\s+(?:can(?:no|')t|unable)\b|"
                           r"\bcan(?:no|')t\s+(?:\w+\s+)?yet\b")
_STILL_BEFORE = re.compile(r"(?<![\w-])still\s+$")
_SENT_OFF = re.compile(r"(?:\s+(?:was\s+|been\s+)?(?:submitted|sent in|sent off|filed|lodged|applied)|(?<![a-z0-9])已?(?:送件|提交|送出|寄出|交件|递件|递交)"
                       r"|(?<![a-z0-9])(?:送|交|递|寄)出去了?)"
                       r"\s*[，,;；]?\s*$")


def _clause_of(text: str, at: int) -> str:
    """The clause of `text` holding position `at`, between marks that end one ("，", ";", "。")."""
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, max(at, 0))), default=0)
    end = m.start() if (m := _CLAUSE_END.search(text, max(at, 0))) else len(text)
    return text[start:end]


_CLAUSE_END = re.compile(r"[，,；;。！!？?]|\.(?=\s|$)")


def _acronyms(body: str) -> frozenset[str]:
    """Acronyms an entry writes in capitals ("SC", "MUIS"), lower case, as its terms hold them."""
    return frozenset(m.group(0).lower() for m in _ACRONYM.finditer(TAIL_DATE.sub("", body)))


def _aliases(body: str) -> frozenset[str]:
    """Acronyms an entry gives in brackets right after a name ("食品生产许可证（SC）", "Food Standards Agency (FSA)")."""
    return frozenset(m.group(1).lower() for m in _ALIAS.finditer(body))


# what another party owns, said before a state: theirs, not the entry's (lexicon `party_theirs_own`)
_THEIRS = lx.PARTY_THEIRS_OWN
# and ours said not yet after it ("；我们的还没消息", "ours, no news yet")
# ("ours: nothing, portal still "under review"")
_OURS_NOT_YET = re.compile(r"我们的?(?:还|都还|仍)(?:没|沒|未|在)|\bours?\b[^.;]{0,24}?\b(?:not yet|no news|nothing|still)\b")
_NUMBER = re.compile(r"(?<![\d.:])\d+(?![\d:])")


_PART_CUT = re.compile(r"[；;。]|(?<=[a-z\u4e00-\u9fff])\.\s")
_LATIN_NAME = re.compile(r"(?<![\w.-])[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*")


def _waiting_name(ctx: Context, it, pend: re.Match[str] | None) -> frozenset[str]:
    """The terms of a name in Latin letters in the part of the entry that waits (between ；, ; or 。), said in no
    other part of it nor in another entry: what waits, when the entry tells of two things."""
    if not pend:
        return frozenset()
    body = it.folded
    cuts = [0, *(m.end() for m in _PART_CUT.finditer(body)), len(body) + 1]
    part = next(((a, b) for a, b in zip(cuts, cuts[1:]) if a <= pend.start() < b), None)
    if part is None or part == (0, len(body) + 1):
        return frozenset()  # (one part only: the entry's subject says what waits)
    raw = it.entry.body[part[0]:part[1]] if len(it.entry.body) == len(body) else ""
    names = [term_set(m.group(0)) for m in _LATIN_NAME.finditer(raw)]
    names = [n for n in names if n and all(ctx.anchor(t) or len(t) >= 3 for t in n)]
    if len(names) != 1:
        return frozenset()
    rest = body[:part[0]] + " " + body[part[1]:]
    name = names[0]
    if name & term_set(rest) or any(name <= x.subject for x in ctx.items if x is not it):
        return frozenset()
    return name


def _done_clause(f: str, at: int) -> str:
    """The clause a done word at `at` ends, and the one before when it names nothing of its own ("upstairs got their CQC
    renewal letter today, approved": whose approval the clause before says)."""
    parts = re.split(r"[，,；;。！!？?]", f[:at])
    if len(parts) > 1 and not term_set(parts[-1]):
        return parts[-2] + "," + parts[-1]
    return parts[-1]


def _ours_not_yet(rest: str, own: str) -> bool:
    """What a line says after its done word says ours is not done: "；我们的还没消息", "ours, no news yet", or the
    entry's own wait `own` affirmed again ("…的新执法艇交付了；咱们的申请…还在等批复" of an entry "…，等批复"):
    the done word was another thing's."""
    if _OURS_NOT_YET.search(rest):
        return True
    m = lx.first_affirmed(lx.PENDING, rest) if own else None
    return m is not None and (own in m.group(0) or m.group(0) in own)


def _numbered_apart(heads: frozenset[tuple[str, str]], text: str) -> bool:
    """The line numbers the entry's numbered thing otherwise: "3号楼" for an entry about 5号楼 (the same character
    after 号, another number, and never the entry's own)."""
    if not heads:
        return False
    said = numbered_heads(text, 1)
    kinds = {c for c, _ in heads}
    mine = {x for x in said if x[0] in kinds}
    return bool(mine) and not mine & heads


_NOT_YET_ADVERB = re.compile(r"(?:尚|还|仍|都还)\s*$")
_OWNER = re.compile(r"的|['’]s\b")
_STILL_STUCK = re.compile(rf"(?:还|仍|依然|一直|\bstill\b)\s*(?:(?:is|are|being)\s+)?(?:{lx.BLOCKED.pattern})")
# or a step still not done ("已验过，还没挂牌", "已到铺，未出货"), or still in progress ("已到货补文件中"): whether the
# new state settles it too is for a person to say
_NOT_YET_LEFT_EN = re.compile(r"\b(?:unpaid|overdue|outstanding|not yet|no new|still (?:not|no|waiting|pending|unpaid))\b")
_NOT_YET_LEFT = re.compile(r"(?:还没|还未|尚未|仍未|仲未|未)\s*[\u4e00-\u9fff]{1,3}(?=\s*(?:[，,。；;)）]|$))"
                           r"|[\u4e00-\u9fff]{2}中(?=\s*(?:[，,。；;)）]|$))")
_OPTION_SPLIT = re.compile(r"\s*(?:/|、|\bor\b|或|，|,)\s*")


def _verbatim_runs(it: Item, items: list[Item], pend: re.Match[str] | None) -> list[str]:
    """Runs of three to six Chinese characters of the entry's first clause before its state word, no state word in
    them, ending in a Chinese numeral, that no other entry writes: a numbered thing's name as written ("科目二", "二期"),
    whatever words the segmenter cuts it into ("科目|二过|了"); a run of plain words ("许可证") names any licence."""
    if not pend:
        return []
    first = re.split(r"[，,；;。：:（(]", it.folded[:pend.start()])[0]
    found = []
    for run in re.findall(r"[\u4e00-\u9fff]{3,}", first):
        for n in range(min(6, len(run)), 2, -1):
            for i in range(len(run) - n + 1):
                v = run[i:i + n]
                if not _STATE_CHAR.search(v) and v not in found and v[-1] in _CJK_NUMERAL \
                        and not any(v in x.folded for x in items if x is not it):
                    found.append(v)
    return found


_STATE_CHAR = re.compile(r"[已等待在了未没还正]")
_CJK_NUMERAL = "一二三四五六七八九十两"


def decided_choices(ctx: Context) -> list[Candidate]:
    """A choice the entry leaves open among named candidates ("发布会场地待定，候选：798 艺术区 / 西岸艺术中心",
    "Venue TBD, options: the Foundry or Hall 3") that a line closes on one of them ("发布会场地已确认，定在
    西岸艺术中心"): the line names the entry's subject before the open word and, in the clause saying it is
    decided, exactly one candidate. The open word and the candidates give way to the decision in the
    line's word and the candidate as the entry writes it ("发布会场地已确认：西岸艺术中心")."""
    out = []
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        f = it.folded
        und = lx.UNDECIDED.search(f)
        opt = lx.OPTIONS.search(f, und.end()) if und else None
        if not und or not opt:
            continue
        body = TAIL_DATE.sub("", it.entry.body).rstrip()
        listed = re.sub(r"^\s*[:：]\s*", "", body[opt.end():])
        options = [x.strip(" 。.") for x in _OPTION_SPLIT.split(listed) if x.strip(" 。.")]
        if len(options) < 2 or any(len(x) > 40 for x in options):
            continue
        subject = term_set(body[:und.start()])
        if not subject:
            continue
        found = []
        for o in ctx.obs_about(it):
            if o.role == "assistant" or o.sensitive:
                continue
            fo = fold(o.text)
            if lx.ASKED.search(fo) or not subject <= o.terms | frozenset(t for t in subject if t.isdigit()):
                continue  # (the line must name what is to be chosen: all of its words)
            for sm in re.finditer(r"[^。！!？?；;]+", fo):
                cl = sm.group(0)
                m = lx.DECIDED.search(cl)
                if not m or _negated(cl, m.start()) or lx.PLANNED.search(cl):
                    continue
                named = [x for x in options if fold(x) in cl]
                if len(named) == 1:  # the deciding word as the line writes it (folding keeps positions)
                    found.append((o, named[0], o.text[sm.start() + m.start():sm.start() + m.end()]))
                    break
        if not found or len({x[1] for x in found}) != 1:
            continue
        o, choice, word = max(found, key=lambda x: (x[0].day, x[0].line))
        if CJK_IN.search(word) and not word.startswith("已"):
            word = "已" + word.rstrip("了")
        sep = "：" if CJK_IN.search(body) else ": "
        new_body = body[:und.start()].rstrip(" ，,") + ("" if CJK_IN.search(word) else " ") + word + sep + choice
        days = len({x[0].day for x in found})
        score = confidence("status", explicit=True, extra_days=days - 1, recent=ctx.recency([x[0] for x in found]))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, new_body, o.day),
                       confidence=score, reason=f"decided: {choice}",
                       evidence=(entry_evidence(it), *ctx.evidence([x[0] for x in found])), origin="offline")
        out.append(Candidate(op, "status", score, {"days": days, "explicit": True}))
    return out


def _contrast(ctx: Context, it, pend: re.Match[str] | None, waits: dict[int, str]
              ) -> tuple[frozenset[str], frozenset[str]]:
    """What tells an entry from its siblings (entries of its file written on the same template, sharing
    most of their words and their pending words, `waits`), and what tells the siblings from it; nothing
    when it has none."""
    if not pend:
        return frozenset(), frozenset()
    own = _plain(it.subject)
    sibs = [x for x in ctx.items if x is not it and x.entry.file == it.entry.file
            and waits.get(id(x)) == pend.group(0)
            and _alike(own, _plain(x.subject), set(it.versions) & set(x.versions))]
    if not sibs:
        return frozenset(), frozenset()
    other = frozenset().union(*(_plain(x.subject) for x in sibs))
    # a common word ("同步") tells nothing apart: names and rare words do
    mine = frozenset(t for t in own - other if not is_common_word(t) and ctx.anchor(t) or t.isascii())
    # and by their marks: a letter, a number or a numbered thing the one writes and the other does not ("A 批次
    # （1950–1979 年卷）" / "B 批次（1980–1999 年卷）", "Ep 58 (…)" / "Ep 59 (…)")
    have = _marks(it.entry.body)
    others = frozenset().union(*(_marks(x.entry.body) for x in sibs))
    if have - others and others - have:
        return (mine | frozenset(MARK + t for t in have - others),
                other - own | frozenset(MARK + t for t in others - have))
    return mine, other - own


MARK = "#mark:"  # (a mark is no term: a line holds it when `_marks` finds it in the line's text)
# (a number of a clock, a date or a decimal is no mark: "14:20", "2026-06-10", "3.5")
_MARK = re.compile(r"(?<![A-Za-z0-9])(?<!\d[:./-])(?:[A-Z]|\d+)(?![A-Za-z0-9])(?![:./-]\d)")


def _marks(text: str) -> frozenset[str]:
    """The capital letters and numbers that stand alone in a text, and its numbered things ("ep#58" of "Ep 58"
    and "ep58"), its date tail aside."""
    text = TAIL_DATE.sub("", text)
    return frozenset(_MARK.findall(text)) | frozenset(
        f"{m.group(1).lower()}#{m.group(2)}" for m in NUMBERED_RE.finditer(text))


def _with_marks(o, terms: frozenset[str]) -> frozenset[str]:
    """The line's terms, and its marks when `terms` holds marks."""
    if not any(t.startswith(MARK) for t in terms):
        return o.terms
    return o.terms | frozenset(MARK + t for t in _marks(o.text))


def _mark_near(text: str, pos: int, marks: frozenset[str], span: int = 24) -> bool:
    """One of the marks stands alone within `span` characters of `pos` in `text`."""
    window = _marks(text[max(0, pos - span):pos + span])
    return any(t[len(MARK):] in window for t in marks if t.startswith(MARK))


def _names_another(ctx: Context, it, o) -> bool:
    """The line names a specific term of another entry that this one lacks (rules and identity aside:
    they name the people and ways of every story)."""
    return any(x is not it and not x.frozen
               and any(ctx.anchor(t) for t in (o.terms & (x.subject | x.head)) - it.subject)
               for x in ctx.items_about(o))


def _alike(a: frozenset[str], b: frozenset[str], same_versions: set[str]) -> bool:
    """Two entries on one template: they share two of their words, or a word and a version, and at least
    two fifths of the shorter's words and versions."""
    shared = len(a & b) + len(same_versions)
    return len(a & b) >= 1 and shared >= max(2, 0.4 * (min(len(a), len(b)) + len(same_versions)))


def _plain(terms: frozenset[str]) -> frozenset[str]:
    return frozenset(t for t in terms if not t.startswith("~"))


def _waited(f: str, pend: re.Match[str] | None) -> str:
    """What an entry waits for: its pending words and the object their clause gives them ("awaiting
    signature from the council"), which say which done states can end the wait."""
    if not pend:
        return ""
    end = pend.end() + len(_CLAUSE_REST.match(f, pend.end()).group(0))
    wait = (pend.group(0) + f[pend.end():end][:60]).strip()
    # (and, after a Chinese step in progress, the wait of the clause right after, which says what it waits on:
    # "运输证办理中，等交通局审核"; never after a state of its own, "draft sent, awaiting legal review", nor a block)
    if pend.group(0).endswith("中") and (more := _NEXT_WAIT.match(f, end)) and (
            again := lx.PENDING.match(f, more.end())):
        wait += " " + (again.group(0) + _CLAUSE_REST.match(f, again.end()).group(0)[:60]).strip()
    return wait


_NEXT_WAIT = re.compile(r"\s*[，,；;]\s*(?:还在|正在|在)?")


def _done_here(ctx: Context, it, f: str, wait: str) -> bool:
    """The line says the entry's own thing is done, next to its subject ("oil received and in stock,
    boxes still in transit"): a wait it also names is another thing's."""
    st = lx.done_state(f, wait)
    return st is not None and ctx.near(f, st[3], it.head or it.subject)


PERCENT = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d+)?\s?%")


def _share(body: str, support: list) -> str:
    """A rollout share the entry states ("10% 用户") that the newest supporting line stating a share gives
    anew, as its one share ("100% 放量"): the share is part of the status that moved."""
    have = PERCENT.findall(body)
    if len(have) != 1:
        return body
    stating = [o for o in support if PERCENT.search(o.text)]
    if not stating:
        return body
    newest = max(stating, key=lambda o: (o.day, o.line))
    said = {p.replace(" ", "") for p in PERCENT.findall(newest.text)}
    if len(said) != 1 or have[0].replace(" ", "") in said:
        return body
    return body.replace(have[0], said.pop(), 1)




def _numbered(body: str, support: list) -> str:
    """A numbered item the entry names ("build 398") that the newest supporting line naming that kind
    numbers anew, with one number ("build 401 通過審核"): the item that reached the state is that one."""
    have = [m for m in NUMBERED_RE.finditer(body) if m.group(1).lower() in lx.ORDINAL]
    if len(have) != 1:
        return body
    word = have[0].group(1).lower()
    stating = [(o, nums) for o in support
               if (nums := {m.group(2) for m in NUMBERED_RE.finditer(o.text) if m.group(1).lower() == word})]
    if not stating:
        return body
    _, nums = max(stating, key=lambda x: (x[0].day, x[0].line))
    if len(nums) != 1 or have[0].group(2) in nums:
        return body
    return body[:have[0].start(2)] + nums.pop() + body[have[0].end(2):]


def _unblocked(f: str) -> tuple[int, str, str, int] | None:
    """A blocked thing reported moving again ("unblocked", "kicked off"): short of done, it ends only a
    wait (rank 0, below every done state)."""
    m = lx.first_affirmed(lx.UNBLOCKED, f)
    if not m:
        return None
    # an English entry takes the line's own word ("resumed", "kicked off") when the line is English
    word = re.sub(r"^(?:is|are|was|were|got|gates?)\s+", "", m.group(0).strip())
    # (a Chinese one opened again is said in the line's words: "重新开放", not "已解除阻塞")
    zh = word if _OPEN_AGAIN_ZH.search(word) else "已解除阻塞"
    return (0, word if word.isascii() else "unblocked", zh, m.start(), m.end())


_OPEN_AGAIN_ZH = re.compile(r"开放|开门|解封")


# a closed state right before a wait ("closed, waiting on …", "封闭，等…")
_CLOSED_BEFORE = re.compile(r"(?:\b(?:closed|shut)\b|封闭|关闭|暂停开放)\s*[,，;；]?\s*$")
# (or a wait that takes what it waits on with no word between: "waiting LCSD", "awaiting Marcus")
_TAKES_OBJECT = re.compile(rf"\b(?:{lx.OBJECT_PREPOSITION})(?:\s+\S+)?$|\ba?waiting$")
_OBJECT_NEXT = re.compile(rf"\s+(?:{lx.OBJECT_PREPOSITION})\b")  # "blocked until the inspection passes"
def _short_refs(ctx: Context, it, named: str) -> re.Pattern[str] | None:
    """The entry's numbered things no other entry numbers alike ("Lot 114"), as a pattern for a line writing one
    whole or by its initial and number ("L114", "L 114"); and the names of what waits (`named`, the entry before
    its status word) that a line writes by their first letters in capitals, as a docket or a ticket board does
    ("OSTR" of "Ostrander Mills"), when no other entry has a word opening with those letters and none is a word
    of its own."""
    clips, numbered, lower = _short_counts(ctx)
    alts = [rf"(?-i:{re.escape(w[:k].upper())})" for w in _CAPITALISED.findall(named) if w.lower() not in lower
            for k in range(3, len(w) - 1) if clips[w[:k].lower()] == 1 and w[:k].lower() not in lower]
    alts += [rf"{re.escape(m.group(1))}[ \t#]*{m.group(2)}|{m.group(1)[0]}[ \t]?{m.group(2)}"
             for m in NUMBERED_RE.finditer(TAIL_DATE.sub("", it.entry.body))
             if numbered[(m.group(1)[0].lower(), m.group(2))] == 1 and len(m.group(2)) >= 2]
    # (and a model named by its numbers, "24-70" of "Sony FE 24-70 GM II", that no other entry writes)
    alts += [re.escape(m.group(0)) for m in _MODEL_NUMBERS.finditer(named)
             if not any(m.group(0) in x.entry.body for x in ctx.items if x is not it)]
    # (and the day a trip or an event is named by, opening the entry, that no other entry writes: "12/13" of
    # "12/13–12/14 玉山主峰團（12 人）：…等抽籤結果", which a line writes for it, "12/13 那團抽中啦")
    if (day := _MONTH_DAY.match(it.entry.body)) and not day.group(1) and "/" in day.group(0) \
            and not any(day.group(0) in x.entry.body for x in ctx.items if x is not it):
        alts.append(re.escape(day.group(0)))
    return re.compile(rf"(?<![\w-])(?:{'|'.join(alts)})(?![\w.:/-])", re.I) if alts else None


_MODEL_NUMBERS = re.compile(r"(?<![\w./:-])\d{2,4}-\d{2,4}(?![\w./:-])")


_CAPITALISED = re.compile(r"(?<![\w-])[A-Z][a-z]{5,}(?![\w-])")
_SMALL = re.compile(r"(?<![\w-])[a-z]{3,}(?![\w-])")


def _short_counts(ctx: Context) -> tuple[Counter, Counter, frozenset[str]]:
    """Counted once a run: how many entries have a word of six letters or more opening with each run of its first
    letters (three up to all but two); how many number a thing by each initial and number; and every word memory or
    a line writes in small letters (a word of the language, not a name: "printer")."""
    got = ctx.__dict__.get("_status_short")
    if got is None:
        clips = Counter(p for x in ctx.items for p in {w[:k].lower() for w in re.findall(r"[A-Za-z]{6,}", x.entry.body)
                                                        for k in range(3, len(w) - 1)})
        numbered = Counter(k for x in ctx.items for k in {(m.group(1)[0].lower(), m.group(2))
                                                          for m in NUMBERED_RE.finditer(TAIL_DATE.sub("", x.entry.body))})
        lower = frozenset(w for t in (*(x.entry.body for x in ctx.items), *(o.text for o in ctx.obs))
                          for w in _SMALL.findall(t))
        got = ctx.__dict__["_status_short"] = (clips, numbered, lower)
    return got


_WHEN_AFTER = re.compile(r"\s*(?:起|开始|開始|就|会|會|要|再|才|正式|on|to)?\s*")
_MONTH_DAY = re.compile(r"(?<![\d/.:-])(?:(\d{4})[-/.年])?(\d{1,2})\s*(?:/|月)\s*(\d{1,2})\s*(?:日|号)?(?![\d/:])")


def _day_ahead(text: str, day) -> bool:
    """`text` ends with a date (6/29, 6月29日, 2026-06-29), maybe a word of when after it, later than `day`, the
    day it was said: what follows happens then ("確認 6/29 上線"; not "12/20 借禮堂的申請已經核准了")."""
    for m in _MONTH_DAY.finditer(text):
        if not _WHEN_AFTER.fullmatch(text[m.end():]):
            continue
        try:
            d = day.replace(year=int(m.group(1)) if m.group(1) else day.year, month=int(m.group(2)), day=int(m.group(3)))
            if not m.group(1) and (day - d).days > 183:
                d = d.replace(year=day.year + 1)  # (no year, said late in the year: early next year's, "1/8 上線" in December)
        except ValueError:
            continue
        if d > day:
            return True
    # (or a later month it starts from: "12 月起在农会超市上架", said in October; "1 月起", said in December)
    return any(day.month < int(m.group(1)) <= 12 or 0 < (int(m.group(1)) - day.month) % 12 <= _WRAP_MONTHS
               for m in _MONTH_FROM.finditer(text))


def _initials(body: str) -> frozenset[str]:
    """The initials of each run of three to five English words the entry writes in a row, lower case ("lbc" of
    "listed building consent"): how a line may write the thing they name."""
    out = set()
    # (a joining word between them has no initial: "SBB" of "Soil Biology & Biochemistry")
    for run in re.findall(r"[A-Za-z]+(?:[ \t]+(?:(?:&|and|of|the|for)[ \t]+)?[A-Za-z]+)+", TAIL_DATE.sub("", body)):
        w = [x for x in run.split() if x.lower() not in ("&", "and", "of", "the", "for")]
        out.update("".join(x[0] for x in w[i:i + n]).lower() for n in (3, 4, 5) for i in range(len(w) - n + 1))
    return frozenset(out)


_WRAP_MONTHS = 4  # (a month early next year said to start from, at most this many months on)
_MONTH_FROM = re.compile(r"(?<!\d)(\d{1,2})\s*月(?:份)?\s*(?:起|开始|以后|后)")


_SENTENCE_END = re.compile(r"[。；;！!？?→]|\.(?=\s|$)")
_LEAD_MARK = re.compile(r"[，,；;。！!？?:：—]|\.(?=\s|$)")


def _lead_in(f: str, pos: int) -> str:
    """The words of `f`'s clause before `pos`."""
    return f[max((m.end() for m in _LEAD_MARK.finditer(f, 0, pos)), default=0):pos]


_CLAUSE_REST = re.compile(r"[^，,；;。:：()（）—\n]*")


_PARTICIPLE = re.compile(r"\b([a-z]{3,}ed)\b")
_ZH_STATE = re.compile(r"^(?:已经|已)?\s*([\u4e00-\u9fff]{1,4}?)了?$")


_BROUGHT = re.compile(r"(?:已)?送(?:过)?(?:来|到)")
# a figure of speech or a dialect's word for it, which the canonical word says plainly ("亮绿灯", "搞掂": 已批准)
_FIGURATIVE = re.compile(r"(?:亮|开|给)了?绿灯|搞掂")


def _as_said(st: tuple, o, body: str) -> tuple:
    """The done state in the line's own word when it has one ("shipped", "已上架", "核准了" → 已核准), in
    place of the canonical one ("released", 已上线), as a sixth field: the word as the entry will read,
    or None. A phrase ("went live", "100% 放量"), a thing back from repair (its canonical word says more
    than "拿回來了"), or a line in another script than the entry keeps the canonical word."""
    if len(st) < 5 or st[0] == 0 or st[1] == lx.REPAIRED:
        return (*st[:5], None)
    raw = o.text[st[3]:st[4]]
    if CJK_IN.search(raw):
        if is_traditional(o.text) != is_traditional(body) or cjk_share(body) < 0.3 and not CJK_IN.search(body):
            return (*st[:5], None)
        if not st[2].startswith("已"):
            return (*st[:5], None)  # (a thing awaited come out, "报告出了": its canonical word, 报告已出, says it whole)
        if _BROUGHT.match(fold(raw)) or _FIGURATIVE.match(fold(raw)):
            return (*st[:5], None)  # "送来了", "送到她家": the motion, not the state; 已到货 says it (and "亮绿灯": 已批准)
        if st[3] and o.text[st[3] - 1] == "已":
            raw = "已" + raw
        m = _ZH_STATE.match(raw.strip())
        if m and m.group(1) in "过過" and st[3] and (prev := o.text[st[3] - 1]) in _EXAMINING:
            m = _ZH_STATE.match(prev + raw.strip())  # (passed, with the verb of what it passed: "審過了" → 已審過)
        # (a verb of one character says too little alone: "批了" reads as the canonical 已批准)
        word = "已" + m.group(1) if m and len(m.group(1)) >= 2 and not lx.PENDING.search(fold(m.group(1))) else None
        if m and not word and m.group(1) in "过過":
            word = "已通過" if is_traditional(body) else "已通过"  # (passed, said bare: "科目二过了！")
        return (*st[:5], word)
    m = _PARTICIPLE.findall(raw.lower())
    if not m or raw.lower().rstrip().endswith((" to", " from")) or _HANDED_OVER.search(raw.lower()):
        return (*st[:5], None)  # (nor a thing handed over, "coughed up the licence": its canonical word, approved)
    if stem(m[-1]) in {stem(w) for w in re.findall(r"[a-z]+", fold(body))} - {stem(st[1])}:
        return (*st[:5], None)  # (nor the entry's own noun again: "licence renewal renewed" says "renewal approved")
    # (with its particle: "signed off", not "signed")
    ph = re.search(rf"\b{re.escape(m[-1])}\s+(off|out|through)\b", raw.lower())
    return (st[0], f"{m[-1]} {ph.group(1)}" if ph else m[-1], *st[2:5], None)


# what a line says was handed over, the thing asked for itself ("got our permit"): no state word of its own
_HANDED_OVER = re.compile(r"\b(?:licen[cs]e|permit|certificate|consent)\b")
# a verb of examining, which "过了" after it says was passed ("審過了" → 已審過; not "科目二过了": 二 is the thing's)
_EXAMINING = "审審验驗考查检檢核评評测測"


def _word(st: tuple, like: str, body: str) -> str:
    """The state's word in the entry's script: the line's own Chinese word when it has one."""
    said = st[5] if len(st) > 5 else None
    if said and (CJK_IN.search(like) or cjk_share(like) >= 0.3):
        return said
    return _script(st[2], st[1], like, body)


def _restate(body: str, st: tuple, decided: bool | None = None) -> str:
    """The entry with its pending status replaced by the new one; clauses that only described
    what was still to happen before the change are dropped."""
    f = fold(body)
    m = lx.PENDING.search(f)
    word = _word(st, body[m.start():m.end()] if m else body, body)
    if not m:
        return f"{body} — {word}"
    end, begin = m.end(), m.start()
    # (a Chinese wait's 中 after it is its own: "还在审核中" → "已上线", not "已上线中")
    if CJK_IN.match(f[begin:end][-1:]) and re.match(r"中(?=\s*(?:[，,。；;）)]|$))", f[end:]):
        end += 1
    # what was closed while it waited goes once it is open again ("gates: closed, waiting on …" → "gates: opened")
    if st[0] == 0 and (shut := _CLOSED_BEFORE.search(f, 0, begin)):
        begin = shut.start()
    # the adverb of a Chinese "not yet" goes with it ("尚未上線" → "已上線", not "尚已上線")
    if (adv := _NOT_YET_ADVERB.search(f, 0, begin)) and CJK_IN.match(f[begin:end]):
        begin = adv.start()
    if _TAKES_OBJECT.search(f[m.start():end]) or _OBJECT_NEXT.match(f, end):
        # "blocked on legal sign-off for the new DPA": the state's object runs to the end of its clause,
        # and what the work waited for is over once it is done; replacing only "blocked on legal" would
        # leave "… live sign-off for the new DPA"
        end += len(_CLAUSE_REST.match(body, end).group(0).rstrip())
    # (the step of sending it off, said right before the wait, is over once it is decided: "renewal submitted, waiting
    # for …" → "renewal approved", "已送件，等…審" → "已批准")
    # (and "still" before it: "still waiting" is over, never "still approved")
    if still := _STILL_BEFORE.search(f, 0, begin):
        begin = still.start()
    gap = ""
    if (st[1] in _DECIDED if decided is None else decided) and (sent := _SENT_OFF.search(f, 0, begin)):
        begin, gap = sent.start(), " " if sent.group(0)[:1].isspace() else ""
    new = body[:begin] + gap + word + body[end:]
    parts = _split_outside_brackets(new)
    kept, pos = [], 0
    for k in range(0, len(parts), 2):
        cl = parts[k]
        sep = parts[k + 1] if k + 1 < len(parts) else ""
        holds_state = pos <= begin + len(word) and begin <= pos + len(cl)
        # what it waited for is over, and any other state it was still in ("等上门评估，评估中"); once it is repaired, so
        # is the fault it was away for
        fc = fold(cl)
        # (a state word read as its clause's own, after the mark that opens it: "评估中"; its place is the clause's)
        still = m.start() if (m := lx.PENDING.search(fc)) else m.start() - 1 if (m := lx.PENDING.search("，" + fc, 1)) \
            else None
        # (and, once it is decided, what it was blocked at and what could not be done yet: "卡在…複驗", "今年還不能出日本")
        waiting = lx.WAITING.search(fc) or st[0] >= 2 and (lx.BLOCKED.search(fc) or _NOT_YET_ABLE.search(fc))
        fault = st[1] == lx.REPAIRED and lx.ERROR.search(fc)
        over = waiting.start() if waiting else still if still is not None else fault.start() if fault else None
        # (a word of waiting inside a quoted name is the name's: "「言語治療服務計劃」")
        if over is not None and still is None and any(q.start() < over < q.end() for q in _QUOTED_NAME.finditer(fc)):
            over = None
        if holds_state or over is None:
            kept.append(cl + sep)
        elif cl[:over].rstrip().endswith(("-", "—", "–", ":", "：")) and cl[:over].strip(" -—–:："):
            kept.append(cl[:over])  # (what the entry names before the stage stays: "Ep 58 (…) - in final mix")
        elif not kept and (lab := LABEL_RE.match(cl)):
            kept.append(lab.group(0))  # (the entry's label stays: "LINE 訂餐機器人：" of "…：還在內部測試")
        pos += len(cl) + len(sep)
    out = "".join(kept).strip().rstrip("，,；;")
    return re.sub(r"\s{2,}", " ", out).strip()


_QUOTED_NAME = re.compile(r"「[^」]*」|“[^”]*”|『[^』]*』|\"[^\"]*\"")


def _split_outside_brackets(text: str) -> list[str]:
    """`re.split(r"([，,；;。])", text)`, a separator inside brackets aside ("(guest: Hana Sato, urban foraging)" is
    one clause's part)."""
    parts, depth, at = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "(（[【":
            depth += 1
        elif ch in ")）]】":
            depth = max(0, depth - 1)
        elif ch in "，,；;。" and depth == 0:
            parts += [text[at:k], ch]
            at = k + 1
    return parts + [text[at:]]


def state_regressions(ctx: Context) -> list[Candidate]:
    """An entry says a state holds ("Signal 已连接", "the NAS is online"); the newest lines about
    its subject report it ended ("仍断连", "offline"), on two days or as persisting, and no later line
    says it holds again: the state word is refreshed from those lines, the rest kept as written."""
    out = []
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        for name, holds, ended in lx.STATE_PAIRS:
            m = holds.search(it.folded)
            if not m or ended.search(it.folded) or _negated(it.folded, m.start()):
                continue
            about = [o for o in ctx.obs_about(it) if o.role != "assistant"]
            events = []  # (day, line, ended?, observation, match)
            for o in about:
                f = fold(o.text)
                for pat, is_end in ((ended, True), (holds, False)):
                    hit = pat.search(f)
                    if hit and not _negated(f, hit.start()) and ctx.near(f, hit.start(), it.head or it.subject, 24):
                        events.append((o.day, o.line, is_end, o, hit))
                        break
            if not events:
                continue
            events.sort(key=lambda e: (e[0], e[1]))
            if not events[-1][2]:
                continue  # the newest word about it says the state holds
            last_hold = max((e[0] for e in events if not e[2]), default=None)
            ends = [e for e in events if e[2] and (last_hold is None or e[0] > last_hold)]
            days = {e[0] for e in ends}
            persists = any(lx.PERSISTS.search(fold(e[3].text)) for e in ends)
            if len(days) < 2 and not persists:
                continue
            day, _, _, o, hit = ends[-1]
            word = o.text[hit.start():hit.end()]
            body = it.entry.body
            new_body = body[:m.start()] + word + body[m.end():]
            score = confidence("state", extra_days=min(len(days) - 1, 2), persists=persists, recent=ctx.recency([o]))
            op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, new_body, day),
                           confidence=score, reason=f"{name} ended: the newest logs report it {word}",
                           evidence=(entry_evidence(it), *ctx.evidence([e[3] for e in ends], 3, first=o)),
                           origin="offline")
            out.append(Candidate(op, "state", score, {"days": len(days), "persists": persists}))
            break
    return out
