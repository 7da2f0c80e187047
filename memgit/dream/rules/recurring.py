"""Consolidate a lesson that recurs, in its rule form, on distinct days and that memory lacks."""
from __future__ import annotations

import re
from collections import Counter
from datetime import date
from functools import lru_cache
from itertools import chain

from memgit import sensitive
from memgit.dream import lexicon as lx
from memgit.wordlists import words
from memgit.dream.collect import Observation
from memgit.memory import TAG_RE, Document
from memgit.ops import Operation
from memgit.text import (CJK_RE, CJK_RUN_RE, STOP, STOP_ZH, cjk_cut, cjk_share, is_common_word, is_english_word,
                         is_traditional, stem, term_set, to_simplified, to_traditional, verb_stem, WORD_RE)
from memgit.dream.scoring import confidence
from memgit.dream.model import Candidate, Context, DisjointSets, fold, TIMELINE


# -- consolidate: recurring ------------------------------------------------------------------
BUCKET_TERMS = 5   # an observation is filed under each pair of 5 of its recurring specific terms


BUCKET_CAP = 16    # a bucket larger than this is linked along a chain, not pairwise


LISTED = re.compile(r"^\s*(?:\d+[.)]|#+)\s")  # "1. replied to …", "## heading": an activity list, not a lesson


LESSON_CHARS = 320


# searched one by one: each is quick on its own (memgit.text.compile_words), their union is not
NOT_LESSON = (lx.EXCEPTION, lx.CHATTER)


def recurring(ctx: Context) -> list[Candidate]:
    # a lesson is a line, not a paragraph: long log lines are reports, never written into memory whole
    obs = [o for o in ctx.obs if len(o.text) <= LESSON_CHARS and len(o.terms) >= 2]
    if len(obs) > 4000:
        obs = obs[-4000:]
    # Candidate pairs by buckets, not all pairs: two observations can only link when they share two
    # specific terms, so each is filed under every pair of its rarest specific terms; only members of
    # one bucket are compared, and a bucket as large as a template's is compared along a chain.
    # A term seen once in the window cannot recur, so only terms on two or more lines are filed.
    terms = [o.terms for o in obs]
    seen = Counter(chain.from_iterable(terms))
    anchor = ctx._anchor  # memo dict: a term's anchor verdict, computed once
    filed = {t for t, n in seen.items() if n >= 2 and anchor[t]}
    # each filed term's place when ordered rarest first (ties by the term): a line's terms sort by it
    rank = {t: r for r, t in enumerate(sorted(filed, key=lambda t: (seen[t], t)))}
    buckets: dict[tuple[str, str], list[int]] = {}
    for i, ts in enumerate(terms):
        rec = sorted(ts & filed, key=rank.__getitem__)
        # its rarest recurring terms (what only a few lines share) and its most recurring ones (what a
        # lesson's lines share however each is worded)
        rare = sorted(set(rec[:BUCKET_TERMS // 2] + rec[::-1][:BUCKET_TERMS - BUCKET_TERMS // 2]))
        for a in range(len(rare)):
            for b in range(a + 1, len(rare)):
                buckets.setdefault((rare[a], rare[b]), []).append(i)
        # and under pairs of what no script owns (Latin names, concepts): all a line in Chinese and one in
        # English can share, however many words of its own either has
        bare = [t for t in rec if t.isascii()][:BUCKET_TERMS - 1]
        for a in range(len(bare)):
            for b in range(a + 1, len(bare)):
                key = (bare[a], bare[b]) if bare[a] < bare[b] else (bare[b], bare[a])
                got = buckets.setdefault(key, [])
                if not got or got[-1] != i:
                    got.append(i)
    pairs: set[tuple[int, int]] = set()
    for members in buckets.values():
        if len(members) < 2:
            continue
        if len(members) > BUCKET_CAP:
            pairs.update(zip(members, members[1:]))
            continue
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                pairs.add((members[x], members[y]))
    sets = DisjointSets(len(obs))
    weights: dict[int, float] = {}

    def weight(i: int) -> float:
        w = weights.get(i)
        if w is None:
            w = weights[i] = ctx.weight(obs[i].terms)
        return w

    # each paired observation's specific terms: a link needs two of them shared
    specific = {i: frozenset(t for t in terms[i] if anchor[t]) for i in {i for p in pairs for i in p}}
    for i, j in sorted(pairs):
        if sets.find(i) == sets.find(j):
            continue  # already linked through another pair
        if len(specific[i] & specific[j]) < 2:
            continue
        shared = terms[i] & terms[j]
        # recurring terms are frequent in the window by definition, so the idf-weighted
        # overlap undervalues them: either measure may link two observations
        both = len(specific[i] & specific[j])
        w = ctx.weight(shared) / max(min(weight(i), weight(j)), 1e-9)
        # two long lines telling one lesson each in their own story share many specific words, though
        # a small part of either's: five of them, and a fifth of the lighter line's weight
        # a line that itself says it happened again ("电池又没充", "got stung again") is a recurrence of what it
        # shares two specific things with, however few of either line's words those are
        if len(shared) / min(len(terms[i]), len(terms[j])) >= 0.5 or w >= 0.45 or both >= 5 and w >= 0.2 \
                or (_recurs(obs[i]) or _recurs(obs[j])) or _across_scripts(ctx, obs[i], obs[j], shared) \
                or _named_alike(ctx, obs[i], obs[j], shared):
            sets.union(i, j)
    # two specific words that go together on three days and seldom apart ("导出" and "筛选") are one subject
    # however long the story around them: their lines link (what they say is asked below, as any group's)
    paired = []  # the lines of each such pair: each is one lesson's line however else it is worded
    for ids in _together(terms, seen, filed, obs):
        paired.append({id(obs[i]) for i in ids})
        for i in ids[1:]:
            sets.union(ids[0], i)
    groups: dict[int, list[Observation]] = {}
    for i, o in enumerate(obs):
        groups.setdefault(sets.find(i), []).append(o)
    out = []
    primary = ctx.col.docs.get(ctx.primary)
    for members in groups.values():
        if len({o.day for o in members}) < 2 or len(_shared_by_days(ctx, members)[1]) < 2:
            continue
        # chatter, one-off exceptions and "nothing new" lines recur but are not lessons (checked only
        # here, on groups that could be lessons at all: the patterns are costly to run over every line)
        # (a line stating a rule is none of them: "以后所有到货都先过秤…定成规矩" is no one-off for "这周的事")
        members = [o for o in members if _rule_said(o.text)
                   or not any(p.search(fold(o.text)) for p in NOT_LESSON)]
        days = sorted({o.day for o in members})
        if len(days) < 2:
            continue
        core, anchors = _shared_by_days(ctx, members)
        if len(anchors) < 2:
            continue
        # a remedy done again counts as the rule's recurrence once one line states the rule (or the
        # remedy recurs on three days)
        # a question states no rule, whatever words it asks with ("要不要先…", "should we always…")
        told = [o for o in members if not LISTED.match(o.text) and not lx.ASKED.search(fold(o.text))]
        # (a skipped step about what recurs states its rule too: "又忘了跑迁移之前先手动打快照")
        rules_said = {id(o) for o in told if _rule_said(o.text)
                      or (ms := _missed_step(o.text)) and term_set(ms) & core}
        # "before A, first B" about what recurs ("跑 migration 之前先 pg_dump") states it too, more weakly
        ordered = {id(o) for o in told if id(o) not in rules_said and (bf := _before_first(o.text))
                   and term_set(bf) & core}
        rules_said |= ordered
        if not rules_said:
            # no line states it: a step a line says was forgotten again is the lesson
            # ("又忘了先开排风扇就启动激光切割机")
            rules_said = {id(o) for o in told if _recurs(o) and _missed_step(o.text)}
        stated = bool(rules_said)
        ruled = [o for o in told if id(o) in rules_said or _remedy(o, stated or (len(days) >= 3), core, stated)]
        # what recurs is worth remembering as a lesson only in a rule's form (a workaround, "always",
        # "每次"): activity that recurs is the log's business, not memory's
        if not ruled or (len(days) < 3 and len({o.day for o in ruled}) < 2):
            continue
        if _routine(ctx, members, core):
            continue  # the same report night after night: a job that runs, not a lesson
        near_items = {i for t in core for i in ctx._items_by_term.get(t, ())}
        wcore = max(ctx.weight(core), 1e-9)
        coverage = max((ctx.weight(core & ctx.items[i].subject) / wcore for i in near_items), default=0.0)
        if coverage >= 0.6:
            continue  # memory already holds it
        sessions = len({o.session for o in members if o.session})
        score = confidence("recurring", extra_days=len(days) - 2, rule_form=bool(ruled), sessions=min(sessions, 2),
                           recent=ctx.recency(members), covered_beyond=max(0.0, coverage - 0.35))
        clean = [o for o in members if not o.sensitive]
        if not clean:
            continue
        in_rule = {id(o) for o in ruled}  # (members are distinct lines: identity is equality here)
        clean = [o for o in clean if id(o) in in_rule] or clean
        # (a line still telling its story, or the rule followed one day, is no rule's words when another is)
        # (its rule's words: "第三次：…。規則：…" says the rule after its label)
        clean = [o for o in clean if not _still_story(_rule_form(o.text))] or clean
        # a line stating the rule outranks one that only did the remedy again ("restart … 之前先跑"): the
        # entry is written in the rule's words
        if rules_said:
            # (a line saying the rule outright first, then one saying what comes first, then a step a complaint
            # says was skipped: "又來了，helm upgrade 之前沒確認 context" is the story, "先跑 … 再動手" the rule)
            rep = max(clean, key=lambda o: (bool(_rule_said(o.text)), id(o) in ordered, id(o) in rules_said,
                                            ctx.weight(core & o.terms) - 0.002 * len(o.text), o.day))
        else:
            # only the remedy done again: the line whose remedy, as written down, says most of what recurs
            forms = {id(o): _rule_form(o.text) for o in clean}
            rep = max(clean, key=lambda o: (ctx.weight(core & term_set(forms[id(o)])) - 0.002 * len(forms[id(o)]),
                                            o.day))
        if _reports_an_entrys_fault(ctx, rep):
            continue  # "Ricoh still fails on large PDFs; workaround …": the state of a fault memory records, no lesson
        # what the new entry says must itself recur: the lines that share most of its specific terms,
        # on enough days (a cluster chained through different topics has no one lesson)
        rep_anchor = frozenset(t for t in rep.terms & core if ctx.anchor(t))
        support = [o for o in members if o is rep or (rep_anchor and ctx.weight(o.terms & rep_anchor)
                                                        >= 0.6 * ctx.weight(rep_anchor))
                   or _across_scripts(ctx, o, rep, o.terms & rep.terms & core)
                   or any(id(o) in pair and id(rep) in pair for pair in paired)
                   or _recurs(o) and len({t for t in o.terms & rep.terms if ctx.anchor(t)}) >= 2]
        s_days = sorted({o.day for o in support})
        if len(rep_anchor) < 2 or len(s_days) < 2 or (len(s_days) < 3 and len({o.day for o in support
                                                                            if id(o) in in_rule}) < 2):
            continue
        members, days = support, s_days
        text = _in_script(_clean(_without_otherwise(_own_words(_rule_form(rep.text)))), ctx, primary)
        if not text or sensitive.has_sensitive(text):
            continue
        if _still_story(text):
            continue  # no rule in its own form: a stated one may follow
        if lx.CHANNEL.search(fold(text)) and _SENT.search(fold(text)):
            continue  # how the agent is to send a thing ("don't send Telegram anymore"): a preference's, no lesson
        if _moves_when(fold(text)):
            continue  # when a thing is done, moved ("…以后改到每周六上午10点吧"): a schedule's change, no lesson
        if _done_on_new(ctx, text):
            continue  # what an entry's work is done on, a new one ("every leak test goes on the Kegworth from now"): a
            # tool swap, the entry's refresh, no lesson
        section, prio = _pick_section(ctx, primary, core)
        tag = "P1" if ruled else prio
        new = f"[{tag}] {text} ({days[-1].isoformat()})"
        op = Operation("consolidate", ctx.primary, (), text=new, section=section, confidence=score,
                       reason=f"recurs on {len(days)} distinct days and memory lacks it",
                       evidence=ctx.evidence(members, 5, first=rep), origin="offline")
        out.append(Candidate(op, "recurring", score, {"days": len(days), "rule": bool(ruled),
                                                       "coverage": round(coverage, 2), "sessions": sessions}))
    taken = {e.source for c in out for e in c.op.evidence}
    stated = _stated_lessons(ctx, primary, taken)
    # a cluster's text that prescribes nothing ("blackout again 1am, … no sound half day") gives way to a rule someone
    # stated about the same lines ("from now on … check all 3 amp timers"): the lesson in its own form
    if any(not _PRESCRIBES.search(fold(c.op.text)) for c in out):
        for s in _stated_lessons(ctx, primary, set()):
            said = {e.source for e in s.op.evidence}
            gone = [c for c in out if not _PRESCRIBES.search(fold(c.op.text)) and said & {e.source for e in c.op.evidence}]
            if gone:
                out = [c for c in out if c not in gone]
                stated = [x for x in stated if x.op.text != s.op.text] + [s]
    return _one_per_story(out + stated)


def _rule_said(text: str) -> bool:
    """The line says a rule in a rule's words, not only how often a thing is done ("… for editing as always"); a
    word asking to keep something in mind ("记住", "remember") says one only before a way of doing a thing ("记住：每次
    开炉前先…", not "順便記住金滿庭 credit limit 加到 …", a fact to note)."""
    f = lx.HABITUAL.sub(" ", fold(text))
    found = list(lx.RULE.finditer(f))
    return any(not _NOTE_WORD.fullmatch(m.group(0)) or _PRESCRIBES.search(f, m.end()) for m in found)


_NOTE_WORD = re.compile(r"记住|remember")


def _reports_an_entrys_fault(ctx: Context, o: Observation) -> bool:
    """The line says a fault memory already records still holds ("Ricoh still fails on large PDFs"): a failure
    word, not denied, and the specific words of an entry that records a failure (its head, or two of its words)."""
    f = fold(o.text)
    failing = bool(lx.first_affirmed(lx.ERROR, f))
    for it in ctx.items_about(o):
        if err := lx.ERROR.search(it.folded):
            # (or the entry's own word of its fault, said again: "timer 又 reset 咗" of "timer 成日自己 reset")
            own = lx.OFTEN_LEAD.sub("", err.group(0)).strip()
            if not failing and not (len(own) >= 2 and any(not lx.negated_at(f, m.start())
                                                          for m in re.finditer(re.escape(own), f))):
                continue
            shared = {t for t in o.terms & it.subject if ctx.anchor(t) and not t.startswith("~")}
            if shared & it.head or len(shared) >= 2:
                return True
    return False


# -- consolidate: a rule someone states, that the days before or after bear out -----------------------------
STATED_DAYS = 3  # the rule's day and the days of the lines it answers or that follow it


def _units(o: Observation) -> list[frozenset[str]]:
    """What a line speaks of, one set a word: an English word's stem, or the English a Chinese word translates to
    (memgit.dream.glossary), so lines in two scripts about one thing meet ("rinse" / "沖", "nozzle" / "噴頭")."""
    from memgit.dream.glossary import glosses

    f = fold(o.text)
    # (an irregular form speaks of its verb too: "frozen solid" of 冷冻 "to freeze")
    irregular = {stem(w): v for w in WORD_RE.findall(o.text) if (v := verb_stem(w))}
    # (a stem cut short of its verb stands for the verb: "glu" of "glued" speaks of "glue")
    out = [frozenset((t, irregular[t]) if t in irregular else (t,)) for t in o.terms
           if t.isascii() and t.isalpha() and t not in STOP
           and (len(t) > 3 or len(irregular.get(t, "")) > 3 or len(t) == 3 and is_english_word(t))]  # ("run", "lid")
    cut = [w for run in CJK_RUN_RE.findall(f) for w in cjk_cut(run) if w not in STOP_ZH]
    words = [w for w in cut if not is_common_word(w)]
    known = glosses(words)
    # (a single character of one meaning only is a thing said plainly: 鱼 fish; 肉 "meat, flesh, pulp" is not)
    known.update({w: g for w, g in glosses(w for w in cut if len(w) == 1).items() if len(g) == 1})
    # (a compound no dictionary holds, "窑门", "窑温", speaks of what its characters do: 窑 kiln, 门 door)
    parts = glosses(c for w in words if w not in known and len(w) <= 3 for c in w)
    return list(dict.fromkeys([*out, *(frozenset(s) for s in known.values()), *(frozenset(s) for s in parts.values())]))


def _speak_of(ctx: Context, a: Observation, b: Observation, ua: list[frozenset[str]], ub: list[frozenset[str]]) -> int:
    """How many things two lines both speak of: specific terms they share, and words of one whose English the
    other says (each word once)."""
    shared = {t for t in a.terms & b.terms if ctx.anchor(t) and not t.startswith("~")}
    said_b = frozenset().union(*ub) if ub else frozenset()
    glossed = sum(1 for u in ua if u & said_b and not u & shared)
    # (and one concept both hold in words of their own, no shared word saying it: "charger" / "没电")
    concepts = {t for t in a.terms & b.terms if t.startswith("~")} - {f"~{lx.concept(t)}" for t in shared}
    return len(shared) + min(glossed, sum(1 for u in ub if u & (frozenset().union(*ua) if ua else frozenset()))) \
        + (1 if concepts and not glossed else 0)


def _stated_sentence(text: str) -> str | None:
    """The sentence of a line that states a standing rule: said from now on ("From now on: calibrate…",
    "以后录成绩前…"), under a rule's label ("規矩：", "Rule:"), or in a rule's words; its own words, without who
    said it or when it starts."""
    parts = _sentences(text)
    for test in (lambda p: lx.TIME_MARKER.search(fold(p)) or _MADE_RULE.search(fold(p)) or _DECIDED.search(fold(p))
                 or _WITHOUT_FAIL.search(fold(p)),
                 lambda p: lx.RULE_LABEL.match(_after_speaker(p))):
        hits = [p for p in parts if test(p)]
        if len(hits) == 1:
            # (the rule said as following what is quoted before it: 「…不准開窯門。」宋老师说以后就照这个执行)
            back = _POINTS_BACK.search(fold(text)) if _POINTS_BACK.search(fold(hits[0])) else None
            quoted = [q.group(1).strip() for q in _QUOTED_RULE.finditer(text) if back and q.end() <= back.start()]
            if len(quoted) == 1 and len(quoted[0]) >= 8:
                return quoted[0]
            rule = _own_words(lx.RULE_LABEL.sub("", _after_speaker(hits[0]), count=1).strip())
            return rule if len(rule) >= 8 and not lx.TIME_MARKER.match(fold(rule)) else None
    # a rule written up where everyone reads it, quoted ('wrote it on the slipway whiteboard: "BUNGS IN … before any
    # hull touches the water."', "贴在门上：「…」"): the one quote, when it prescribes
    if _POSTED.search(fold(text)):
        quoted = [q.group(1).strip() for q in _QUOTED_RULE.finditer(text)]
        if len(quoted) == 1 and len(quoted[0]) >= 8 and _PRESCRIBES.search(fold(quoted[0])):
            return _own_words(quoted[0])
    # a rule said to admit no exception ("every hire set is counted … before the box gets sealed. no exceptions"):
    # the sentence it follows, when that one prescribes
    for k, p in enumerate(parts):
        if ((m := _NO_EXCEPTION.search(fold(p))) and k and len(_NO_EXCEPTION.sub("", fold(p)).split()) <= 2
                or k and _said_again(parts[k - 1:k + 1])) and _PRESCRIBES.search(fold(parts[k - 1])):
            rule = _own_words(parts[k - 1])
            return rule if len(rule) >= 8 else None
    return None


def _said_again(parts: list[str]) -> bool:
    """A sentence of three words at most repeats, for emphasis, how often the one before says a thing is done
    ("… before the first board of every pack. Every pack."): the rule said to admit no exception."""
    return any(len(w := re.findall(r"[a-z]+", fold(b))) <= 3 and w and _PRESCRIBES.search(fold(b))
               and all(x in fold(a) for x in w) for a, b in zip(parts, parts[1:]))


def _still_story(text: str) -> bool:
    """A lesson's text that still tells what went wrong ("…锦鲤浮头，赶紧开大增氧。忘了井水要先曝气"), or what was
    done by the rule one day ("按规矩今天不下苗绳"): a forgetting, a mishap, the rule followed, or how many times it
    has happened ("这周已经第三回了")."""
    f = fold(text)
    # (not "again": "then it works again" tells the workaround's outcome)
    return bool(re.search(lx.FORGOT, f) or lx.MISHAP.search(f) or _ONE_DAY.search(f) or _TIMES_OVER.search(f)
                or _FRUSTRATED.search(f))


# a story's frustration: its emoji, or the trouble found out late ("no sound until 11am 😩 only found out when …")
_FRUSTRATED = re.compile(r"[\U0001F629\U0001F624\U0001F621\U0001F620\U0001F62D\U0001F926\U0001F62B\U0001F616\U0001F623]"
                         r"|\bonly found out\b|\bfound out (?:only )?when\b|才发现|才知道")


# how many times a thing has happened ("第三回了", "已经第 4 次", "the third time this week")
_TIMES_OVER = re.compile(r"第\s*(?:[二三四五六七八九十两]|\d+)\s*(?:回|次|遍)|"
                         r"\b(?:second|third|fourth|fifth|\d+(?:nd|rd|th))\s+time\b")
# a day's report of following the rule, not the rule ("按规矩今天不下苗绳，已发群", "held the boats as per the rule")
_ONE_DAY = re.compile(r"[按照依](?:新)?(?:规矩|规定|规则)|\b(?:as )?per (?:the|our|new) rules?\b|\b(?:following|followed) the rules?\b"
                      # (or as someone said to: "Mei checked timers at 8am like boss said", "照老板说的")
                      r"|\b(?:like|as) (?:the |my |our )?\w+ (?:said|told (?:us|me|her|him)|asked)\b|照\S{1,4}(?:说|讲)的")


def _stated_lessons(ctx: Context, primary: Document | None, taken: set[str]) -> list[Candidate]:
    """A rule someone states ("秀娟訂規矩：以後每次噴完藥…先沖乾淨再收機", "From now on: calibrate … before every
    titration session") about what went wrong on other days: lines on two other days at least (one telling
    trouble: an error, a complaint, a step not done) speak of two things the rule speaks of, in any script.
    The rule is consolidated in its own words; memory must not hold it already."""
    out = []
    told = [o for o in ctx.obs if o.role != "assistant" and not o.sensitive and len(o.text) <= LESSON_CHARS
            and f"{o.source}:{o.line}" not in taken]
    if len(told) < 3:
        return []
    units: dict[int, list[frozenset[str]]] = {}
    stories: list[tuple[str, date, set[str], bool]] = []  # each rule's line, day, support's lines, said as decided

    def units_of(o: Observation) -> list[frozenset[str]]:
        if id(o) not in units:
            units[id(o)] = _units(o)
        return units[id(o)]

    for r in told:
        f = fold(r.text)
        # (cheapest first: most lines state nothing from now on, under no rule's label)
        if not (lx.TIME_MARKER.search(f) or "规矩" in f or lx.RULE_LABEL.search(r.text) or _DECIDED.search(f) or _POSTED.search(f)
                or _WITHOUT_FAIL.search(f)
                or _said_again(_sentences(r.text))
                or " rule" in f and _MADE_RULE.search(f) or _NO_EXCEPTION.search(f)
                or "rule" in f and any(lx.RULE_LABEL.match(_after_speaker(p)) for p in _sentences(r.text))):
            continue
        if lx.ASKED.search(f) or any(p.search(f) for p in NOT_LESSON) or LISTED.match(r.text):
            continue
        rule = _stated_sentence(r.text)
        # (its own "from now on" is when the rule holds, no switch of tool: blanked before the switches are asked)
        bare = lx.TIME_MARKER.sub(lambda m: " " * len(m.group(0)), fold(rule)) if rule else ""
        if rule is None or not _PRESCRIBES.search(fold(rule)) or any(p.search(bare) for p in _SWITCHES) \
                or _NO_LONGER_NEEDED.search(fold(rule)) or lx.CHANNEL.search(fold(rule)) and _SENT.search(fold(rule)) \
                or _moves_when(fold(rule)) or _done_on_new(ctx, rule):
            # (or the way the agent is to send something, "daily report don't send Telegram anymore": a preference's)
            # (or a workaround no longer needed, the fault behind it fixed: "之前就是線的問題，這樣就好了，以後不用人工開")
            continue  # no way of doing a thing ("permanently non-Goodhartable"), or a switch of tool or party
            # ("以後交件全部改用 …", "moving Ranger off Humble"): a refresh's, not a lesson
        # what the rule itself names, not the line around it: a rule that says what it is about only there
        # ("以后都这样，先回温 2 小时" after the story) is no entry of its own; the sentences after it give its reason
        # ("… count the vehicles against the paper manifest. Sailbook's export leaves out motorbikes.")
        at = r.text.find(rule)
        # (a rule quoted, "「…不准開窯門。」宋老师说以后就照这个执行", is its own words alone)
        tail = r.text[at:] if at >= 0 and not (at and r.text[at - 1] in "「『“\"") else rule
        said = Observation(r.source, r.line, r.day, tail, tail, r.kind, r.role, r.session)
        ur = _units(said)
        days: dict[date, list[Observation]] = {}
        trouble = False
        for o in told:
            if o is r:
                continue
            if (n := _speak_of(ctx, said, o, ur, units_of(o))) < 2:
                continue
            fo = fold(o.text)
            bad = bool(lx.ERROR.search(fo) or lx.COMPLAINT.search(fo) or lx.AGAIN.search(fo) or lx.MISHAP.search(fo)
                       or re.search(lx.FORGOT, fo) or _NOT_DONE_RE.search(fo))
            if o.day == r.day:
                # (the trouble that made it a rule the same day, "欸又來了…沒熱模就倒錫": trouble, though no day of its own)
                trouble = trouble or bad and o.line < r.line and o.source == r.source
                continue
            if (o.day > r.day or n >= 3) and not bad and not lx.PERSISTS.search(fo):
                # done by the rule since ("calibration done before run"), or done its way before it was made one,
                # saying three things it says ("went through the rest against the inventory list part by part")
                days.setdefault(o.day, []).append(o)
            elif bad:
                days.setdefault(o.day, []).append(o)
                trouble = True
        if not trouble or len(days) + 1 < STATED_DAYS:
            continue
        keys = {f"{o.source}:{o.line}" for ls in days.values() for o in ls}
        if keys <= taken and not keys <= set().union(*(st[2] | {st[0]} for st in stories)):
            continue  # the same story's lesson, told by a cluster: one lesson
        # (a rule of this story stated before: one rule, the one said last, below)
        core = r.terms & frozenset().union(*(o.terms for ls in days.values() for o in ls))
        near_items = {i for t in r.terms for i in ctx._items_by_term.get(t, ())}
        wr = max(ctx.weight(r.terms), 1e-9)
        if any(ctx.weight(r.terms & ctx.items[i].subject) / wr >= 0.6 for i in near_items):
            continue  # memory already holds it
        text = _in_script(_clean(_without_otherwise(rule)), ctx, primary)
        if not text or sensitive.has_sensitive(text):
            continue
        first = re.match(r"[a-z]+(?=\s)", text)
        if first and stem(first.group(0)) != first.group(0):
            text = text[0].upper() + text[1:]  # a sentence cut from after "From now on:" starts as one ("Calibrate …")
        section, _ = _pick_section(ctx, primary, core or r.terms)
        support = [o for ls in days.values() for o in ls]
        all_days = sorted({r.day, *days})
        score = confidence("recurring", extra_days=len(all_days) - 2, rule_form=True,
                           sessions=min(len({o.session for o in (r, *support) if o.session}), 2),
                           recent=ctx.recency([r, *support]))
        op = Operation("consolidate", ctx.primary, (), text=f"[P1] {text} ({all_days[-1].isoformat()})",
                       section=section, confidence=score,
                       reason=f"a rule stated on {r.day.isoformat()} that {len(days)} other day(s) bear out; memory lacks it",
                       evidence=ctx.evidence(support, 5, first=r), origin="offline")
        out.append(Candidate(op, "recurring", score, {"days": len(all_days), "rule": True, "stated": True}))
        fr = fold(r.text)
        stories.append((f"{r.source}:{r.line}", r.day, {f"{o.source}:{o.line}" for o in support},
                        bool(_DECIDED.search(fr) or _MADE_RULE.search(fr) or "规矩" in fr)))
        taken |= {f"{o.source}:{o.line}" for o in (r, *support)}
    # (a rule said again of the same story, one bearing the other out or both borne out by the same lines: "以后试驾前
    # 得先看驾照" one day, "早会拍板：以后谁带客户试驾，先拍客户驾驶证…" two days on, is one rule: the one said as decided,
    # else the first; a chat confirming the rule set in the log adds none)
    def same(a, b) -> bool:
        ka, kb = a[2] | {a[0]}, b[2] | {b[0]}
        return a[0] in b[2] or b[0] in a[2] or len(ka & kb) * 2 >= min(len(ka), len(kb))

    def beats(b, a) -> bool:
        return (b[3], -b[1].toordinal()) > (a[3], -a[1].toordinal())

    superseded = [any(b is not a and same(a, b) and beats(b, a) for b in stories) for a in stories]
    return [c for c, gone in zip(out, superseded) if not gone]


def _after_speaker(p: str) -> str:
    """A sentence without who says it by title before a colon ("Dr. Wong: house rule: …")."""
    m = _TITLED_SPEAKER.match(p)
    return p[m.end():] if m else p


# what says a rule admits no exception ("no exceptions", "没有例外")
# a rule said to hold every time, in its own words ("浆糊一律当天现调当天用")
_WITHOUT_FAIL = re.compile(r"一律|一概")
_SENT = re.compile(r"\b(?:send|sent|post|message|text|forward)\b|发|传|傳|寄")
_NO_LONGER_NEEDED = re.compile(r"(?:以后|今后|往后)(?:就)?(?:不用|不必|不需要|无需|毋须)(?:再)?|\bno (?:longer )?need(?:ed)? to\b|"
                               r"\bdon'?t (?:need|have) to\b[^.;]*\b(?:any ?more|now)\b")
# a move to a new day or time: a word of moving, then within a few words a clock time or a weekday ("改到每周六上午
# 10点", "move the summary to Saturdays at 10am", "push it to Friday")
_MOVED_TO = re.compile(r"(?:改|挪|推|移|换|換|调|調)(?:到|成|为|為|去|在)|"
                       r"\b(?:mov|push|chang|switch|shift|reschedul)(?:e|es|ed|ing)?\b[^.;,!?]{0,30}?\b(?:to|for)\b")


# the thing a piece of work is done on, through or with, named ("goes on the Kegworth", "都用 HighScore", "走顺丰")
_DONE_ON = re.compile(r"\b(?:goes?|going|done|runs?|run|happens?|gets? done|is done)\s+(?:on|through|in|via|with)\s+(?:the\s+)?"
                      r"([A-Z][\w-]+(?:\s+[A-Z0-9][\w-]*)*)|(?:都用|改用|全用|一律用|都走|全走)\s*([A-Za-z][\w-]+|「[^」]+」)")


def _done_on_new(ctx: Context, text: str) -> bool:
    """A rule naming what a piece of work is done on, a name memory writes nowhere, where an entry is about that work
    (two of its specific words): the entry's tool swapped, not a lesson."""
    for m in _DONE_ON.finditer(text):
        name = (m.group(1) or m.group(2)).strip("「」").lower()
        if any(name in it.folded for it in ctx.items):
            continue
        rest = {t for t in term_set(fold(text[:m.start()] + " " + text[m.end():])) if ctx.anchor(t)}
        if any(len(rest & terms) >= 2 for terms in _unfrozen_terms(ctx)):
            return True
    return False


def _unfrozen_terms(ctx: Context) -> list[frozenset[str]]:
    """Every entry's terms but a frozen one's, found once a run."""
    got = ctx.__dict__.get("_recurring_unfrozen_terms")
    if got is None:
        got = ctx.__dict__["_recurring_unfrozen_terms"] = [term_set(it.folded) for it in ctx.items if not it.frozen]
    return got


def _moves_when(f: str) -> bool:
    """A rule that moves when a thing is done to a new day or time ("以后改到每周六上午10点吧", "from now on move the
    summary to Saturdays at 10am"): a schedule's change, a preference's or an entry's refresh, never a lesson."""
    from memgit.dream.model import clocks
    from memgit.dream.rules.schedule import _weekdays

    for m in _MOVED_TO.finditer(f):
        after = f[m.end():m.end() + 16]
        if clocks(after) or _weekdays(after):
            return True
    return False


_NO_EXCEPTION = re.compile(r"\bno exceptions?\b|\bwithout exception\b|没有例外|没得例外|不得例外|无一例外|不能例外|不例外")
# how a rule prescribes: when, in what order, how often ("before every titration session", "先…再收機", "每次")
# (or says when it is done: "… goes on its dock when we close", "at closing")
_PRESCRIBES = re.compile(r"\b(?:every|each|always|before|after|never|must|whenever|only after)\b|"
                         r"\bwhen (?:we|you|i|they|everyone|staff)\b|\bat (?:closing|close|lock-?up|the (?:end|start) of)\b|"
                         r"每次|每回|每一[次回个個]|之前|"
                         r"以前|前先|先.{0,16}再|一律|务必|必须|一定要|都要|之后再|完再|都这样|都这么做|照这样|"
                         r"每[天日晚早周场單单班批轮輪局](?!都没)|后才(?:能|可以|可|准)|先(?:可以|可|能)(?=[\u4e00-\u9fff])|"
                         r"不准|不许|不許|不得|禁止|严禁|嚴禁|"  # (or forbids: "誰都不准開窯門")
                         r"只要.{1,20}就|"  # (or says whenever: "只要看到刺青，就先讲清楚")
                         r"谁.{1,12}[，,]\s*谁|"  # (or whoever: "谁调课表，谁当场去后台改掉")
                         # (or before a doing, or the night before: "出发前看绿灯", "开场前 30 分钟", "前一晚全部充电"; not "两周前",
                         # a time ago)
                         r"[\u4e00-\u9fff](?<![天周週月年点點时時分秒钟鐘以之])前(?=\s*[\u4e00-\u9fffA-Za-z\d])|前一(?:晚|天|日|夜)")
# a change of tool or party, said as from now on: the refresh rules' business (memgit.dream.rules.displaced, …)
_SWITCHES = (lx.SUPERSEDE, lx.PREFERENCE_CHANGE, lx.DISPLACED, lx.RETIRED, lx.HANDED_OVER, lx.TOOK_OVER,
             re.compile(f"{lx.CHANGE_ZH}|\\b(?:{lx.CHANGE_EN})\\b"))


# a step not done, said of the thing ("nobody calibrated", "hadn't been calibrated", "沒用清水沖", "没 rinse")
_NOT_DONE_RE = re.compile(r"\b(?:nobody|no one|never|hadn't|hasn't|didn't|wasn't|not)\b|[没沒冇]\s*\S|未")


@lru_cache(maxsize=8192)
def _recurs_text(text: str) -> bool:
    f = fold(text)
    return bool(lx.AGAIN.search(f) or re.search(lx.FORGOT, f))


def _recurs(o: Observation) -> bool:
    """The line says what it tells happened again, or was forgotten again ("又忘了", "AGAIN", "第三次")."""
    return _recurs_text(o.text)


def _together(terms: list[frozenset[str]], seen: Counter, filed: set[str], obs: list[Observation]
              ) -> list[list[int]]:
    """The lines of each pair of specific terms that recur together: each on three to twelve lines, both on
    lines of three or more days, and on at most one line apart."""
    few = {t for t in filed if 3 <= seen[t] <= 12}
    if not few:
        return []
    with_both: dict[tuple[str, str], list[int]] = {}
    for i, ts in enumerate(terms):
        if obs[i].sensitive:
            continue
        mine = sorted(ts & few)
        if len(mine) > 12:
            continue
        for a in range(len(mine)):
            for b in range(a + 1, len(mine)):
                with_both.setdefault((mine[a], mine[b]), []).append(i)
    out = []
    for (a, b), ids in with_both.items():
        if a in b or b in a:
            continue  # one word and a part of it ("韩老板", "老板") go together by themselves
        if a.startswith("~") and a in lx.concept_terms(b) or b.startswith("~") and b in lx.concept_terms(a):
            continue  # and a word and its concept ("有雨", "~rain"): one word twice
        if len({obs[i].day for i in ids}) >= 3 and seen[a] + seen[b] - 2 * len(ids) <= 1:
            out.append(ids)
    return out


def _places(c: Candidate) -> dict[str, list[int]]:
    """A candidate's evidence lines, by file."""
    out: dict[str, list[int]] = {}
    for e in c.op.evidence:
        path, _, line = e.source.rpartition(":")
        if line.isdigit():
            out.setdefault(path, []).append(int(line))
    return out


def _one_per_story(cands: list[Candidate]) -> list[Candidate]:
    """Two lessons told by neighbouring lines of the same logs (each day's complaint and, a line or two on,
    its rule: "又是 context 没切…" then "以后动手前先 `kubectl config current-context`") are one lesson told twice:
    the surer one stays."""
    kept: list[tuple[Candidate, dict[str, list[int]]]] = []
    for c in sorted(cands, key=lambda c: -c.score):
        mine = _places(c)
        if any(set(mine) == set(theirs) and all(any(abs(a - b) <= 2 for b in theirs[f]) for f in mine for a in mine[f])
               for _, theirs in kept):
            continue
        kept.append((c, mine))
    return [c for c in cands if any(c is k for k, _ in kept)]


def _in_script(text: str, ctx: Context, doc: Document | None) -> str:
    """A rule taken from a line in the other Chinese script, written in the script memory is kept in
    (two thirds of its Chinese entries or more): a 简体 memory gets "喷药前…", not "噴藥前…"."""
    if doc is None or not CJK_RE.search(text):
        return text
    cjk = [it.entry.body for it in ctx.items if it.entry.file == doc.name and CJK_RE.search(it.entry.body)]
    trad = sum(1 for b in cjk if is_traditional(b))
    if len(cjk) < 3:
        return text
    if trad * 3 <= len(cjk) and is_traditional(text):
        return to_simplified(text)
    if trad * 3 >= 2 * len(cjk) and not is_traditional(text):
        return to_traditional(text)
    return text


def _routine(ctx: Context, members: list[Observation], core: frozenset[str]) -> bool:
    """A cluster that recurs without change: each day's lines name nothing the other days do not (no
    new host, file, number or English word; a day in another language is a translation, not a
    change), none reports trouble, and none states a rule (a rule's words, "as always" aside). Such
    lines report a job that ran as it always does ("cron restarted the worker as always", "备份正常完成"),
    however often, whatever the words."""
    texts = [fold(o.text) for o in members]
    if any(lx.ERROR.search(t) or lx.COMPLAINT.search(t) or lx.AGAIN.search(t) for t in texts):
        return False
    # "as always" says how often, not what to do
    if any(lx.RULE.search(lx.HABITUAL.sub(" ", t)) for t in texts):
        return False
    # `core`: the members' terms on two or more of their days (_shared_by_days)
    return len({o.day for o in members}) >= 2 and all(
        t in core for o in members for t in o.terms if ctx.anchor(t) and t.isascii() and not t.startswith("~"))


@lru_cache(maxsize=65536)
def _chinese(text: str) -> bool:
    return cjk_share(text) >= 0.3


def _across_scripts(ctx: Context, a: Observation, b: Observation, shared: frozenset[str]) -> bool:
    """Two lines in different scripts (one mostly Chinese, one not) that share what no script owns: a
    name written in Latin letters and two concepts of the bilingual lexicon ("alembic", "~migrate",
    "~snapshot"), two names and a concept, or three concepts. Their words cannot overlap, so word overlap
    says nothing about them."""
    concepts = [t for t in shared if t.startswith("~")]
    if not concepts:
        return False
    if _chinese(a.text) == _chinese(b.text):
        # a mixed line ("drone spray：先 check 了 forecast") and a Chinese one ("喷药前先查预报") in one
        # script by share: the same action on the same things, two of them spelled in the other language
        return len(concepts) >= 3 and len(_spelled_apart(a.text, b.text) & set(concepts)) >= 2
    names = [t for t in shared if t.isascii() and not t.startswith("~") and ctx.anchor(t) and len(t) >= 3]
    # with no name in common, the same action on the same things: three concepts ("test", "send", "list");
    # with two names in common ("cooler", "ice pack"), one ("~check")
    return len(names) >= 2 or len(concepts) >= 2 and len(names) >= 1 or len(concepts) >= 3


@lru_cache(maxsize=4096)
def _spelled_apart(a: str, b: str) -> frozenset[str]:
    """The concepts one line spells in Latin letters and the other in Chinese."""
    a_en, a_zh = lx.concept_terms(_LATIN_PARTS.sub(" ", a)), lx.concept_terms(_CJK_PARTS.sub(" ", a))
    b_en, b_zh = lx.concept_terms(_LATIN_PARTS.sub(" ", b)), lx.concept_terms(_CJK_PARTS.sub(" ", b))
    return frozenset((a_zh & b_en) | (a_en & b_zh))


_LATIN_PARTS = re.compile(r"[A-Za-z]+")  # taken out: what is left is a line's Chinese
_CJK_PARTS = re.compile(r"[\u3400-\u9fff]+")  # taken out: what is left is its Latin words


def _named_alike(ctx: Context, a: Observation, b: Observation, shared: frozenset[str]) -> bool:
    """Two lines naming the same command or path and doing the same two things with it, whatever their
    words ("跑迁移之前先 pg_dump" and "跑 migration 之前先 pg_dump": `pg_dump`, ~migrate, ~backup); or, in
    different scripts, three specific things alike in Latin letters, one of them a command or a path
    ("nginx", "reload", "nginx -t"): what they are about no translation changes."""
    names = [t for t in shared if t.isascii() and not t.startswith("~") and ctx.anchor(t) and len(t) >= 3]
    command = [t for t in names if re.search(r"[ /_]", t)]
    if command and len([t for t in shared if t.startswith("~")]) >= 2:
        return True
    if _chinese(a.text) == _chinese(b.text):
        return False
    return len(names) >= 3 and bool(command)


def _shared_by_days(ctx: Context, members: list[Observation]) -> tuple[frozenset[str], list[str]]:
    """The terms found on two or more of the members' days, and the specific ones among them."""
    by_day: dict[date, set[str]] = {}
    for o in members:
        by_day.setdefault(o.day, set()).update(o.terms)
    counts: dict[str, int] = {}
    for ts in by_day.values():
        for t in ts:
            counts[t] = counts.get(t, 0) + 1
    core = frozenset(t for t, c in counts.items() if c >= 2)
    return core, [t for t in core if ctx.anchor(t)]


def _remedy(o: Observation, may: bool, core: frozenset[str], stated: bool) -> bool:
    """A remedy ("re-created the symlink", "重新…") that is itself what recurs, or one beside a stated rule."""
    if not may:
        return False
    # (a remedy said not to be needed is none: "timer 成晚冇 reset", a quiet night, no remedy done)
    f = fold(o.text)
    m = next((m for m in lx.REMEDY.finditer(f) if not lx.negated_at(f, m.start())), None)
    return bool(m) and (stated or bool(term_set(m.group(0)) & core))


# (a title's dot ends no sentence: "Dr. Zhou", "Mr. Lee")
_SENTENCE = re.compile(r"(?<=[。！？!?；;])\s*"
                       r"|(?<=\.)(?<!\b(?:Dr|Mr|Ms|St|Jr|Sr)\.)(?<!\b(?:Mrs|Drs)\.)(?<!\bProf\.)\s+")


def _rule_form(text: str) -> str:
    """A lesson's line as its rule: the sentences that only complain that it happened again ("又是…",
    "forgot to purge…", "浪费半小时") are dropped when another states what to do (a rule's words: "记住",
    "always", "make sure"), and a leading "记住：" / "Remember:" goes; a sentence saying what the
    problem is ("`gws` not found after an upgrade") stays beside its workaround."""
    # a rule someone lays down after the story in one breath ("又差点忘了灌液氮，17:10 才想起来 🙃 林老师发话：以后一律…"):
    # what follows the speaker's colon, the story before it dropped
    for m in reversed(list(_SPOKEN.finditer(text))):
        before, after = text[:m.start(1)], text[m.end():]
        if (lx.RULE.search(fold(after)) or lx.TIME_MARKER.search(fold(after))) and len(after) >= 8 and (
                lx.AGAIN.search(fold(before)) or lx.COMPLAINT.search(fold(before)) or re.search(lx.FORGOT, fold(before))):
            return after.strip()
        break
    parts = _sentences(text)
    # a sentence the line labels as its lesson ("教訓：…", "Lesson: …") is the rule; the others tell
    # what happened that day ("核心退件：3 個 library 濃度不夠")
    labelled = [lx.RULE_LABEL.sub("", p, count=1).strip() for p in parts if lx.RULE_LABEL.match(p)]
    if len(parts) >= 2 and labelled and len(" ".join(labelled)) >= 8:
        return " ".join(labelled)
    if len(parts) == 1 and (lab := lx.RULE_LABEL.match(parts[0])) and len(parts[0]) - lab.end() >= 8:
        return parts[0][lab.end():]  # "記一下：噴藥前一定要先查預報": the label goes
    ruled = any(lx.RULE.search(fold(p)) for p in parts)
    if not ruled and (missed := _missed_step(text)):
        return missed  # the step a complaint says was skipped is what to do
    if not ruled and (ordered := _before_first(text)):
        return ordered  # the sentence saying what comes first
    if len(parts) >= 2 and not ruled:
        # no rule said: the sentences of the remedy that worked ("重新 export 成 UTF-8 之后 OK"), the
        # complaint that it happened again dropped
        fixes = [p for p in parts if lx.REMEDY.search(fold(p))
                 and not (lx.AGAIN.search(fold(p)) or lx.COMPLAINT.search(fold(p)))]
        said = " ".join(fixes)
        if fixes and len(fixes) < len(parts) and len(said) >= 8:
            return said
    if len(parts) < 2 or not ruled:
        return text
    kept = [p for p in parts if lx.RULE.search(fold(p))
            or not (lx.AGAIN.search(fold(p)) or lx.COMPLAINT.search(fold(p)))]
    if len(kept) == len(parts):
        return text
    said = " ".join(_own_words(lx.RULE_LABEL.sub("", p, count=1).strip()) if lx.RULE.search(fold(p)) else p
                    for p in kept)
    return said if len(said) >= 8 else text


_CLAUSE_MARK = re.compile(r"\s*[，,；;—]\s*")
# a speaker's short label before a colon, after a clause's or a sentence's break or an emoji ("… 🙃 林老师发话：")
_SPOKEN = re.compile(r"(?:^|[，,。.!！?？;；\s])([^\s，,。.!！?？;；:：\d][^\s，,。.!！?？;；:：]{0,9})[:：](?!\d)\s*")


def _without_otherwise(rule: str) -> str:
    """A rule without what it says happens when it is broken ("…一致，不然就白白浪费料", "…, otherwise the
    print fails"): the rule is what to do; that is the story of the day it was broken."""
    f = fold(rule)
    if len(f) != len(rule):
        return rule
    for m in _CLAUSE_MARK.finditer(f):
        if lx.OTHERWISE.match(f, m.end()) and len(rule[:m.start()].strip()) >= 8:
            return rule[:m.start()].rstrip()
    return rule


def _sentences(text: str) -> list[str]:
    """A line's sentences (a part holding no word is no sentence: the "!" of "!421 …", a merge request's
    number)."""
    return [p.strip() for p in _SENTENCE.split(text.strip()) if p and re.search(r"[^\W\d_]", p)]


def _before_first(text: str) -> str | None:
    """The one sentence of a line saying what comes first ("跑 migration 之前先 pg_dump 到 /backups/"), in its own
    words, the story around it dropped; None when none does or several do."""
    hits = [p for p in _sentences(text) if lx.BEFORE_FIRST.search(fold(p))]
    if len(hits) != 1:
        return None
    clauses_ = [c for c in _CLAUSE.split(hits[0]) if c.strip()]
    # the clause holding the order and the ones before it: what follows is how it went ("结果…直接 restore")
    at = next(k for k, c in enumerate(clauses_) if lx.BEFORE_FIRST.search(fold(c)))
    head = "，".join(c.strip() for c in clauses_[:at + 1]) if CJK_RE.search(hits[0]) else \
        ", ".join(c.strip() for c in clauses_[:at + 1])
    rule = _own_words(head.strip(" ，,"))
    return rule if len(rule) >= 6 else None


_SAID_THEN = re.compile(r"^[^:：]{0,32}?(?:(?:讲明|講明|说明|說明|讲清楚|講清楚|说清楚|說清楚)了?(?:规则|規則|规矩|規矩)?|说|說|提醒|强调|強調|交代|叮嘱|叮囑|确认|確認|说好|說好|商定|约定|約定|开会|開會|发话|發話|"
                        r"宣布|宣佈|规定|規定|\bsaid|\bsays|\breminded|\bagreed|\bannounced)"
                        r"\s*[:：]\s*(?=\S)", re.I)
# (a name in Latin letters may hold a space and a title: "Dr. Zhou 说以后…")
_SPEAKER = re.compile(r"^(?:[^\s，,。:：;；]{1,8}?|(?:[A-Z][\w'’-]*\.?[ \t]){0,2}[A-Z][\w'’-]*[ \t]?)"
                      r"(?=(?:说|說)[:：，,]?\s*\S)")


# a short label of where or when a thing was said, before its colon ("朝会：", "Standup:")
_OCCASION = re.compile(r"^[^\s，,。:：;；\d]{1,6}[:：]\s*|^[A-Z][a-z]+(?: [a-z]+)?:\s+")


# who said it, by a title ("陳老師：", "王姐：", "Dr. Zhou:"), before a colon
_TITLED_SPEAKER = re.compile(r"^(?:[\u4e00-\u9fff]{1,3}"
                             r"(?:老师|老師|师傅|師傅|哥|姐|总|總|经理|經理|医生|醫生|主任|老板|老闆)"
                             # (and where they said it: "王老师早会：")
                             r"(?:在?(?:早会|晨会|晨會|早會|例会|例會|周会|週會|会上|會上|群里|群裡))?"
                             r"|(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+[A-Z][\w'’-]*)\s*[:：]\s*(?=\S)")
# who said it, by name, before a colon ("Priya:"), or that they decided it ("林老师定了：")
_DECIDING = r"(?:定了|定下(?:了|来|來)?|[决決]定了?|[规規]定|拍板了?|拍了板)"  # (that someone decided it: "林老师定了")
_NAMED_SPEAKER = re.compile(rf"^(?:(?:[A-Z][\w'’.-]*[ \t]?){{1,3}}|[\u4e00-\u9fff]{{1,4}}?{_DECIDING}"
                            r"|[\u4e00-\u9fff]{2,3}(?=\s*[:：]\s*(?:以后|以後|今后|今後|从现在|從現在|从今|從今)))"
                            r"\s*[:：]\s*(?=\S)")
# who said it and where ("Mina at the librarians' meeting: …")
_WHO_WHERE = re.compile(r"^[A-Z][\w'’.-]*(?:[ \t]+[A-Z][\w'’.-]*)?[ \t]+(?:at|in|during|on|from)[ \t]+[^:：.!?]{1,40}[:：]\s*(?=\S)")
# (who, by a Chinese name or a capitalised one, and maybe where: "Mei 在 #dome-ops 定了：")
_DECIDED = re.compile(rf"^(?:[\u4e00-\u9fff]{{1,4}}?|[a-z][\w'’-]*\s*)(?:在\s*[^\s:：，,。]{{1,20}}\s*(?:上|里|裡)?\s*)?"
                      rf"{_DECIDING}\s*[:：]")
_RULE_WORD = re.compile(r"^(?:new\s+)?rule\b\s*(?=from now|going forward|starting)", re.I)
# a clause saying only that what follows is now a rule ("定成规矩，", "立个规矩：")
_MADE_RULE = re.compile(r"^(?:[^，,:：]{1,12}?\s*(?:订|訂|定|立)(?:了)?(?:个|個)?|定成|定个|定為|定为|立个|立個)?\s*规矩(?:是)?\s*[，,:：]\s*"
                        # (or in English, after who and where: "morning meeting: Kwok set the rule — …")
                        r"|^[^.!?]{0,48}?\b(?:set|made|laid down|gave|announced)\s+(?:the|a|new|a new)\s+rule"
                        r"(?:\s+for\s+[^.!?:：—–-]{1,24}?)?\s*[—–:：-]+\s*")  # (for whom: "… for the crew:")


def _own_words(rule: str) -> str:
    """A rule as what to do, without who said it or when it starts ("磊哥说以后跑迁移之前先 pg_dump" → 跑迁移之前先
    pg_dump)."""
    out = rule
    # (where it was said, before who said it: "朝会：店长说以后…", "Standup: Ana said …")
    if (at := _OCCASION.match(rule)) and (_SPEAKER.match(rule[at.end():]) or _SAID_THEN.match(rule[at.end():])):
        rule = out = rule[at.end():]
    # (who says from when it holds says the rule whole: "店长说以后…时，就先讲清楚：…" is no "讲清楚：" said)
    spoke = _SPEAKER.match(rule)
    from_now = spoke and lx.TIME_MARKER.match(fold(re.sub(r"^(?:说|說)[:：，,]?\s*", "", rule[spoke.end():])))
    if not from_now and (said := _SAID_THEN.match(rule)):
        out = rule[said.end():]  # ("跟韩老板说了这周的事，他说：以后…", "慧敏提醒：…": who said it, and when)
    elif m := spoke:
        out = re.sub(r"^(?:说|說)[:：，,]?\s*", "", rule[m.end():])
    elif m := _TITLED_SPEAKER.match(rule):
        out = rule[m.end():]  # ("陳老師：…", "Dr. Zhou: …": who said it)
    elif m := _NAMED_SPEAKER.match(rule) or _WHO_WHERE.match(rule) or _DECIDED.match(fold(rule)):
        out = rule[m.end():].lstrip()  # ("Priya: rule from now on — …", "林老师定了：…", "Mina at the meeting: …",
        # "Mei 在 #ops 定了：…": who said it)
    # (asking the agent to note it, "ribbon 那条规矩你也记一下，", and who is to be told, "提醒大家：": no part of the rule;
    # what the first clause names stays: "ribbon 那条规矩，")
    out = _TELL_ALL.sub("", _NOTE_THIS.sub("", out, count=1), count=1)
    if q := _OPEN_QUOTE.match(out):
        out = _CLOSE_QUOTE.sub("", out[q.end():])  # (what they said, quoted: 'Ines: "From today, …"')
    out = _RULE_WORD.sub("", out, count=1)  # ("rule from now — …": that it is a rule)
    if m := _MADE_RULE.match(fold(out)):
        out = out[m.end():]  # ("定成規矩，以後…": that it is a rule, not what it says)
        if q := _OPEN_QUOTE.match(out):
            out = _CLOSE_QUOTE.sub("", out[q.end():])  # (the rule it made, quoted: "定了规矩：「每次交班前…」")
    # (who and when, before a colon the rule's "from now on" follows: "Coach Dele, before warm-up: from now on …")
    if (lead := _LEAD_COLON.match(out)) and lx.TIME_MARKER.match(fold(out[lead.end():])):
        out = out[lead.end():]
    # (a word of assent before it: "right — from now on …", "好，以后…")
    if (f := lx.FILLER.match(out)) and lx.TIME_MARKER.match(fold(out[f.end():])):
        out = out[f.end():]
    # (where and who, then a colon or a dash and maybe a quote, before its "from now on":
    # 'lab mtg: Priya — "from now on …"')
    if (t := lx.TIME_MARKER.search(fold(out))) and 0 < t.start() <= 60 and _SAID_BEFORE.match(out[:t.start()]):
        quoted = bool(_OPENS_QUOTE_AT_END.search(out[:t.start()]))
        out = out[t.start():]
        if quoted:
            out = _CLOSE_QUOTE.sub("", out)
    t = lx.TIME_MARKER.match(fold(out))
    if t:
        out = out[t.end():].lstrip(" ,，:：—–-")
    return out if len(out) >= 6 else rule


_SAID_BEFORE = re.compile(r"^[^.!?。！？\"“「『]{1,56}(?:[:：]|\s[—–-])\s*[\"“「『]?\s*$")
_OPENS_QUOTE_AT_END = re.compile(r"[\"“「『]\s*$")


_LEAD_COLON = re.compile(r"^[^:：。.!?！？]{1,48}[:：]\s*(?=\S)")


# a rule said by pointing back at what is quoted ("就照这个执行", "照這樣做", "that's the rule now")
_POINTS_BACK = re.compile(r"照(?:这|這)(?:个|個|样|樣)|按(?:这|這)(?:个|個|样|樣)|就(?:这|這)么办|就(?:这|這)麼辦|照此|照做|照办|照辦|"
                          r"\b(?:that|this)(?:'s| is) (?:the|our) (?:rule|way)\b|\bgo(?:ing)? by (?:that|this)\b")
# written up where all read it: a board, a sign, a checklist ("wrote it on the slipway whiteboard", "贴在门上")
_POSTED = re.compile(r"\b(?:wrote|written|put|pinned|posted|stuck|taped|chalked)\b[^.!?]{0,40}?\b(?:on|up on|onto|to)\s+"
                     r"(?:the|a|our)\s+(?:[\w-]+\s+){0,2}?(?:whiteboard|noticeboard|board|sign|checklist|wall|door|poster)\b"
                     r"|(?:写|貼|贴|挂|掛|钉|釘)(?:在|到|上)[^，,。；;]{0,10}?(?:白板|黑板|墙上|牆上|门上|門上|公告栏|公告欄|告示|清单|清單|检查表|檢查表)")
_QUOTED_RULE = re.compile(r"[「『“\"]([^「」『』“”\"]{4,120})[」』”\"]")
_NOTE_THIS = re.compile(r"(?<=[^，,。:：\s])\s*(?:你|您)?也?(?:记一下|记下来|记下|记住|记着|記一下|記下來|記下|記住|記著)(?=\s*[，,:：])")
_TELL_ALL = re.compile(r"(?:提醒|告诉|告訴|通知)(?:一下)?(?:大家|所有人|各位)\s*[:：，,]\s*")
_OPEN_QUOTE = re.compile(r"\s*[\"“「『]\s*")
_CLOSE_QUOTE = re.compile(r"\s*[\"”」』]\s*$")
_FORGOT_ZH = re.compile(rf"(?:又)?(?:{lx.FORGOT})(?:要)?\s*(?=\S)")
# (longest word first, by the word itself, what may follow it aside: "没有" before "没")
_NEGATION_ZH = "|".join(sorted(words("negation", "zh"), key=lambda w: len(w.split("(?")[0]), reverse=True))
_SKIPPED_BEFORE = re.compile(rf"^(.{{1,24}}?(?:之前|以前|前))\s*(?:{_NEGATION_ZH})\s*(?=\S)")
_FORGOT_EN = re.compile(r"\bforgot to\s+([^,.;!?]*?\b(?:before|first)\b[^,.;!?]*)", re.I)
_CLAUSE = re.compile(r"[，,。！!？?；;]")


def _missed_step(text: str) -> str | None:
    """What a line says was skipped, as the rule it makes ("又忘了跑迁移之前先手动打快照" → 跑迁移之前先手动打快照,
    "遷移前沒有先手動建快照" → 遷移前先手動建快照, "forgot to purge the cache before deploying" → Purge the cache
    before deploying): a clause saying what had to come first, in the line's own words and script."""
    for cl in _CLAUSE.split(text):
        cl = re.split(r"[:：]", cl)[-1].strip()  # (who said it, "第三次了：")
        f = fold(cl)
        m = _FORGOT_ZH.search(f)
        if m and "先" in f[m.end():]:
            rule = re.sub(r"(先[^再就]{1,16})就", r"\1再", cl[m.end():])  # 先 A 就 B → 先 A 再 B
            return rule.strip() if len(rule) >= 5 else None
        m = _SKIPPED_BEFORE.match(f)
        if m and len(f) - m.end() >= 2:
            act = cl[m.end():].lstrip("先")
            return f"{cl[:m.end(1)]}先{act}".strip()
        m = _FORGOT_EN.search(cl)
        if m:
            rule = m.group(1).strip()
            return rule[:1].upper() + rule[1:] if len(rule) >= 8 else None
    return None


def _clean(text: str) -> str:
    t = lx.DAY_NOISE.sub("", text.strip()).strip()
    t = TAG_RE.sub("", t).strip()
    # (a word of assent opening the person's answer is no part of the rule: "Yes. After every game, …")
    if (assent := _ASSENT_LEAD.match(t)) and len(t) - assent.end() >= 8:
        t = t[assent.end():]
    if len(t) > 220:
        # (at a sentence's end when one falls late enough, else at a clause's: never "…. All three rooms")
        cut = max(t.rfind(c, 0, 220) for c in "。.;；")
        if cut <= 60:
            cut = max(t.rfind(c, 0, 220) for c in "。.;；，,")
        t = t[:cut] if cut > 60 else t[:220]
    t = t.strip()
    # closing words of emphasis say nothing of what to do ("…every Wed before 12:00, no excuses")
    if (tail := lx.EMPHASIS_TAIL.search(fold(t))) and tail.start() >= 12:
        t = t[:tail.start()].rstrip()
    # a rule cut from inside a sentence ("Lesson: when pickup plans change, call …") starts as a sentence does
    # (only a word of the language's grammar, "when", "before", "always": "gws not found …" names a command)
    first = re.match(r"[a-z]+(?=[\s,;:]|$)", t)
    if first and cjk_share(t) < 0.3 and first.group(0) in STOP:
        t = t[0].upper() + t[1:]
    return t


_ASSENT_LEAD = re.compile(r"(?:yes|yeah|yep|yup|ok|okay|sure|right|好的?|对|對|係|是的?|嗯)\s*[.,!。，！]\s*", re.I)


def _pick_section(ctx: Context, doc: Document | None, core: frozenset[str]) -> tuple[str, str]:
    if doc is None or doc.hermes:
        return "", "P1"
    best, best_s = None, -1.0
    for s in doc.sections:
        if s.priority == "P0" or s.protected or s.level == 1 and len(doc.sections) > 1:
            continue
        if TIMELINE.search(s.title):
            continue
        items = [it for it in ctx.items if it.entry.file == doc.name and s.line < it.entry.start < s.end]
        s_terms: set[str] = set()
        for it in items:
            s_terms |= it.subject
        sc = ctx.weight(core & s_terms) + (0.5 if lx.LESSON_TITLE.search(s.title) else 0.0) + 0.01 * s.line / 1000
        if sc > best_s:
            best, best_s = s, sc
    if best is None:
        return "Notes", "P1"
    return best.title, best.priority if best.priority != "P0" else "P1"
