"""Merge duplicates (one section, one label, the same fact) and prune an entry a newer one supersedes."""
from __future__ import annotations

import difflib
import re
from datetime import date
from functools import lru_cache

from memgit.dream import lexicon as lx
from memgit.dream.glossary import glosses
from memgit.memory import DATE_TAIL_RE as _DATE_TAIL
from memgit.ops import Operation
from memgit.text import CJK_RUN_RE, STOP, STOP_ZH, cjk_cut, never_a_noun, cjk_share, stem, term_set
from memgit.dream.scoring import confidence
from memgit.dream.model import (
    _label, _overlap, _values, zh_numbers, Candidate, CJK_IN, clocks, compose, Context, DisjointSets, entry_evidence,
    fold, Item, LABEL_RE
)


# A term more than this many entries of one file share names a topic, not a fact: it makes no
# pairs (entries alike share rarer terms too). Without the cap a large file's pairs grow with the
# square of its entries; with it they are at most MAX_POSTING per term an entry has. A file of up to
# 4 × MAX_POSTING entries is unaffected: an anchor term is in at most a quarter of them.
MAX_POSTING = 64


# the same labels and values are compared in many pairs: their terms are computed once
_terms = lru_cache(maxsize=65536)(term_set)


@lru_cache(maxsize=65536)
def _value_terms(body: str) -> frozenset[str]:
    """The terms after an entry's label ("Shell: bash" → {bash})."""
    return term_set(LABEL_RE.sub("", body, count=1))


def _value_jaccard(a: str, b: str) -> float:
    """How alike the values after two entries' shared label are ("Shell: bash" vs "Shell: fish": 0)."""
    va, vb = _value_terms(a), _value_terms(b)
    return len(va & vb) / len(va | vb) if va and vb else 1.0


def duplicates_and_contradictions(ctx: Context) -> list[Candidate]:
    out = []
    by_file: dict[str, list[Item]] = {}
    ruled: dict[str, list[Item]] = {}  # …and the marked rules beside them, for a rule's unmarked twin
    for it in ctx.items:
        if not it.frozen and not it.step:
            by_file.setdefault(it.entry.file, []).append(it)
        if not (it.entry.frozen or it.secret or it.step):
            ruled.setdefault(it.entry.file, []).append(it)
    for file, items in by_file.items():
        sets = DisjointSets(len(items))
        sims: dict[tuple[int, int], float] = {}
        # only entries sharing a specific term can be duplicates or contradict: pairs from postings
        postings: dict[str, list[int]] = {}
        for i, it in enumerate(items):
            for t in it.subject:
                if ctx.anchor(t):
                    postings.setdefault(t, []).append(i)
        pairs = sorted({(x[p], x[q]) for x in postings.values() if len(x) <= MAX_POSTING
                        for p in range(len(x)) for q in range(p + 1, len(x))})
        vals = [_values(it.entry.body) for it in items]
        has_cjk = [bool(CJK_IN.search(it.entry.body)) for it in items]
        zh = [cjk_share(it.entry.body) >= 0.3 for it in items]
        labels = [_label(it.entry.body) for it in items]
        wsub = [ctx.weight(it.subject) for it in items]
        sups = [lx.SUPERSEDE.search(it.folded) for it in items]  # once per entry, not once per pair
        for i, j in pairs:
            a, b = items[i], items[j]
            if a.entry.section != b.entry.section:
                continue  # per-section fields ("Telegram:" under each agent) are different facts
            shared = a.subject & b.subject
            if not shared or not any(ctx.anchor(t) for t in shared):
                continue
            newer, older = (b, a) if _newer(b, a) else (a, b)
            sup = sups[j] if newer is b else sups[i]
            va, vb = vals[i], vals[j]
            jac = len(shared) / len(a.subject | b.subject)
            ov = ctx.weight(shared) / max(min(wsub[i], wsub[j]), 1e-9)
            la, lb = labels[i], labels[j]
            if sup and not (sups[i] if newer is b else sups[j]) and ov >= 0.3 and _names_retired(newer, older, sup):
                named = bool((older.subject - newer.subject) & newer.subject) or ov >= 0.3
                used = [o for o in ctx.obs_about(newer) if (o.terms & (newer.subject - older.subject))
                        and any(ctx.anchor(t) for t in o.terms & (newer.subject - older.subject))]
                score = confidence("superseded", named=named, newer_used=bool(used))
                op = Operation("prune", file, (older.entry.text,), confidence=score,
                               reason=f"superseded by the newer entry at line {newer.entry.line}",
                               evidence=(entry_evidence(newer), entry_evidence(older),
                                         *ctx.evidence(used, 2)), origin="offline")
                out.append(Candidate(op, "contradiction", score, {"overlap": round(ov, 2)}))
                continue
            dated = a.entry.date and b.entry.date and a.entry.date != b.entry.date
            if la and la == lb and dated and _value_jaccard(a.entry.body, b.entry.body) < 0.5:
                # one label, two values: a setting that changed — or a list of things under one
                # name ("Repo: blog", "Repo: memgit"). Only the window's use of the newer value
                # and not the older, or short setting-like values, make it a contradiction.
                new_only, old_only = newer.subject - older.subject, older.subject - newer.subject
                used = [o for o in ctx.obs_about(newer) if o.terms & new_only]
                stale = [o for o in ctx.obs_about(older) if o.terms & old_only]
                short = max(len(_value_terms(x.entry.body)) for x in (a, b)) <= 3
                score = confidence("label-conflict", only_newer_used=bool(used) and not stale, short=short)
                op = Operation("prune", file, (older.entry.text,), confidence=score,
                               reason=f"'{la}' now has a newer value (line {newer.entry.line})",
                               evidence=(entry_evidence(newer), entry_evidence(older), *ctx.evidence(used, 2)),
                               origin="offline")
                out.append(Candidate(op, "contradiction", score, {"label": la, "newer_used": bool(used),
                                                                  "older_used": bool(stale)}))
                continue
            if va != vb and (va or vb):
                continue  # same words, different numbers: not a duplicate
            n_anchor = len([t for t in shared if ctx.anchor(t)])
            cross = has_cjk[i] != has_cjk[j] or zh[i] != zh[j]
            if la != lb and not cross and (la is None or lb is None or _overlap(_terms(la), _terms(lb)) < 0.6):
                continue  # two labels are two fields (across languages a label is translated)
            # Chinese is segmented less surely than English is split: a lower bar for CJK text
            cjk = zh[i] and zh[j]
            if len(shared) < 2:
                continue  # one word in common is not enough to call two entries the same
            if zh[i] != zh[j] and _translated(items[j] if zh[j] else items[i], items[i] if zh[j] else items[j]):
                sims[(i, j)] = 0.8
                continue
            if not cross and _one_template(a.entry.body, b.entry.body):
                continue  # one thing named differently in the same words ("周医生的…" / "林医生的…"): two things
            if not _same_fact(ctx, newer, older, cross):
                continue
            if (jac >= (0.45 if cjk else 0.6) or (ov >= (0.7 if cjk else 0.8) and n_anchor >= 3)
                    or (cross and ov >= 0.55 and n_anchor >= 4)):
                sims[(i, j)] = max(jac, ov * 0.8)
        # complete linkage: every pair in a group must be near-duplicates (no chaining)
        members_of = {i: {i} for i in range(len(items))}
        for (i, j), _ in sorted(sims.items(), key=lambda kv: -kv[1]):
            gi, gj = sets.find(i), sets.find(j)
            if gi == gj:
                continue
            if all((min(x, y), max(x, y)) in sims for x in members_of[gi] for y in members_of[gj]):
                sets.union(gi, gj)
                members_of[gj] |= members_of.pop(gi)
        groups: dict[int, list[int]] = {}
        for i in range(len(items)):
            groups.setdefault(sets.find(i), []).append(i)
        for members in groups.values():
            if len(members) < 2:
                continue
            its = [items[i] for i in members]
            # the kept wording must hold every fact of the others: the newest entry that says all they say
            # (a Chinese word only one member has may be a segmentation accident: not a fact)
            seen_in: dict[str, int] = {}
            for x in its:
                for t in x.subject:
                    seen_in[t] = seen_in.get(t, 0) + 1
            # across languages only what no translation changes must survive: names, paths, numbers
            mixed = len({bool(CJK_IN.search(x.entry.body)) for x in its}) > 1
            # (and a capitalised word inside an entry is a name, "Anand", which no translation changes)
            proper = frozenset(t for x in its for w in _PROPER.findall(x.entry.body) for t in _terms(w)) \
                if mixed else frozenset()
            union = frozenset(t for t, c in seen_in.items() if not t.startswith("~")  # (a concept is a spelling)
                              and (c >= 2 or (not CJK_IN.search(t) and (not mixed or not t.isalpha() or t in proper))))
            complete = [x for x in its if x.subject >= union]
            if not complete:
                continue
            newest = max(complete, key=lambda x: (x.entry.date or date.min, x.entry.start))
            sim = min(sims.get((min(i, j), max(i, j)), 1.0) for i in members for j in members if i < j
                      and (min(i, j), max(i, j)) in sims) if sims else 0.6
            score = confidence("duplicate", similarity=sim, extra_entries=len(its) - 2)
            text = compose(newest, newest.entry.body, newest.entry.date)
            ordered = sorted(its, key=lambda x: x.entry.start)
            op = Operation("merge", file, tuple(x.entry.text for x in ordered), text=text, confidence=score,
                           reason=f"{len(its)} entries say the same thing; keep the newest wording that says all of it",
                           evidence=tuple(entry_evidence(x) for x in ordered), origin="offline")
            out.append(Candidate(op, "duplicate", score, {"entries": len(its), "similarity": round(sim, 2)}))
        taken = {x for c in out for x in c.op.targets}
        out += _bilingual_merges(ctx, [it for it in ruled[file] if it.entry.text not in taken])
    return out


# what no translation changes in an entry: clock times, room and item codes ("4B", "B214"), numbers, and
# the names written in Latin letters (capitalised in an English entry, any in a Chinese one)
_CODE_ID = re.compile(r"(?<![\w.-])(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]{2,8}(?![\w-])")
# a quantity written with its unit glued on ("5mg", "250ml", "10GB") is the number and its unit ("5 mg"), no code
_GLUED_UNIT = re.compile(r"(?<![\w.-])(\d+(?:\.\d+)?)(mcg|mg|ml|kg|km|cm|mm|g|l|kb|mb|gb|tb|ms|min|hrs?|h|kwh|kw)"
                         r"(?![\w-])")
_CJK_WORD = re.compile(r"[\u4e00-\u9fff]{2}")
_CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
_ORDINAL = re.compile(r"(?<![\w.-])(\d{1,4})(?:st|nd|rd|th)(?![\w-])")
_PLAIN_NUM = re.compile(r"(?<![\w.:-])\d+(?:\.\d+)?(?![\w:]|\.\d)")
_LATIN_WORD = re.compile(r"(?<![\w'’-])([A-Za-z][A-Za-z-]*[A-Za-z])(?:['’]s|(?<=s)['’])?(?![\w'’-])")  # ("Members'")
_MULTI_NAME = re.compile(r"(?<=[\w,;:)] )[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")  # "Main Street", not at the start
_CLAUSE_CUT = re.compile(r"(?:,(?!\d{3}(?!\d))|[，;；。])\s*")  # (not a thousands separator: "8,000")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


_FLOOR = re.compile(r"(?<![\w-])(\d{1,3})\s?/?f(?![\w-])|(?<![\w.-])(\d{1,3})\s*(?:楼|层)")


def _invariants(body: str, chinese: bool, clock: frozenset | None = None) -> dict[str, frozenset]:
    """What a fact holds whatever its language: clock times, ids, numbers, names, weekdays, floors. `clock`,
    when given, is the clock times as a longer text around `body` reads them (a clause of an entry)."""
    from memgit.dream.model import clocks
    from memgit.dream.rules.schedule import _weekdays

    f = fold(body)
    ticks = clocks(f)
    rest = list(f)
    for a, b, _, _ in ticks:
        rest[a:b] = " " * (b - a)
    rest_s = _ORDINAL.sub(r"\1", "".join(rest))  # "the 25th" is the number the Chinese writes "25 号"
    rest_s = _GLUED_UNIT.sub(r"\1 \2", rest_s)
    rest_s = _THOUSANDS.sub("", rest_s)  # "8,000" is the number "8000" writes
    # "3F" is the floor the Chinese writes "3 楼": the same floor, and none of the numbers
    floors = frozenset(m.group(1) or m.group(2) for m in _FLOOR.finditer(rest_s))
    rest_s = _FLOOR.sub(" ", rest_s)
    ids = frozenset(_CODE_ID.findall(rest_s))
    nums = frozenset(n for n in _PLAIN_NUM.findall(_CODE_ID.sub(" ", rest_s)))
    if chinese:
        nums |= zh_numbers(rest_s)  # ("五年级" is the grade "Grade 5" gives)
    if chinese:
        names = frozenset(w.lower() for w in _LATIN_WORD.findall(body))
    else:
        words = list(_LATIN_WORD.finditer(body))
        names = frozenset(m.group(1).lower() for k, m in enumerate(words)
                          if k and m.group(1)[0].isupper() and not lx.WEEKDAY.fullmatch(m.group(1).lower()))
    return {"clock": frozenset(c[2] for c in ticks) if clock is None else clock, "id": ids, "num": nums, "name": names,
            "day": _weekdays(body), "floor": floors}


# the number one written as a count of a thing in Chinese ("一批", "一箱"; not 前一晚, 第一, 每一)
_ONE_COUNTED = re.compile(r"(?<![前后第每同统唯万十百千一])一(?=[批个次台位张份袋包箱桶罐瓶件只条块盒锅])")


def _bilingual_merges(ctx: Context, items: list[Item]) -> list[Candidate]:
    """One fact written once in Chinese and once in English, each maybe with details of its own (rooms,
    times, a phone number): in one section, what no translation changes is the same where both give it —
    the same codes, each one's clock times and weekdays within the other's, at least two shared, a name
    or a code among them (or values only, with a concept both hold) — and no third entry fits either as
    well. The entry saying more of it keeps its wording (on a tie, the one in the file's language) and
    takes, after a semicolon, every clause of the other that gives a value it lacks, or, unless the two
    say the same values, shares no word with it."""
    if len(items) < 2:
        return []
    # written in Chinese: by share, or by a sentence's worth of Chinese around product names in Latin letters
    # ("每周日凌晨 3 点，NAS 用 Hyper Backup 备份到 Backblaze B2 的 fernhill-archive 桶")
    by_share = [cjk_share(it.entry.body) >= 0.3 for it in items]
    zh = [z or len(_CJK_CHAR.findall(it.entry.body)) >= 8 for z, it in zip(by_share, items)]
    body = [_DATE_TAIL.sub("", it.entry.body).rstrip() for it in items]
    # written in English: no Chinese word in it at all (an entry under a Chinese label, "平台抽成：Uber Eats 30%，
    # foodpanda 32%", is in neither language for this pairing)
    # (a word of it glossed in Chinese in brackets, "Private room (包间)", leaves it English)
    en = [not z and not _CJK_WORD.search(_ZH_GLOSS.sub(" ", b)) for z, b in zip(zh, body)]
    if not any(zh) or not any(en):
        return []
    inv = [_invariants(b, z) for b, z in zip(body, zh)]
    latin = [_latin(b) for b in body]
    # only an English entry writing a Latin word, a code or a clock time of the Chinese one can pair with
    # it: pairs from postings of those, not all pairs
    by_key: dict[object, list[int]] = {}
    for j in range(len(items)):
        if en[j]:
            for key in (*latin[j], *inv[j]["id"], *inv[j]["clock"], *(("#", n) for n in inv[j]["num"]),
                        *(("day", d) for d in inv[j]["day"])):
                by_key.setdefault(key, []).append(j)
    fits: dict[int, list[int]] = {}
    for i, a in enumerate(items):
        if not zh[i] or a.entry.frozen or a.secret or a.step:
            continue  # (a marked rule may pair: it can only be the one kept, as written)
        near = sorted({j for key in (*inv[i]["name"], *inv[i]["id"], *inv[i]["clock"], *(("#", n) for n in inv[i]["num"]),
                                     *(("day", d) for d in inv[i]["day"]))
                       for j in by_key.get(key, ())})
        if not any(inv[i].values()):
            # (one giving no name, code, time or number: the English ones of its section, to be read as its translation)
            near = [j for j in range(len(items)) if en[j] and items[j].entry.section == a.entry.section]
        for j in near:
            b = items[j]
            if b.entry.frozen or b.secret or b.step or a.entry.file != b.entry.file:
                continue
            x, y = inv[i], inv[j]
            if "1" in y["num"] and "1" not in x["num"] and _ONE_COUNTED.search(fold(body[i])):
                y = {**y, "num": y["num"] - {"1"}}  # ("1 batch" is the "一批" of the Chinese one)
            # both name the same compound thing ("tallyho-db-backups"): then they may stand in two sections
            # ("Infrastructure", "运维"), and a code only one of them gives ("the S3 bucket") is a detail
            compound = any(re.search(r"\w[-_.]\w", n) for n in x["name"] & latin[j])
            # (a section and its translation, "Operations" / "运营", is one section: a concept both titles hold; and
            # two entries agreeing on all that no translation changes, three things or more and a name among
            # them, are one fact in any two sections: "RO", "20%" and Sunday in both)
            agree = x["name"] and all(x[k] == y[k] for k in x) and sum(len(v) for v in x.values()) >= 3
            if a.entry.section != b.entry.section and not compound and not agree and not (
                    lx.concept_terms(a.entry.section or "") & lx.concept_terms(b.entry.section or "")):
                continue
            one_sided = not (x["id"] and y["id"]) and compound
            if x["id"] != y["id"] and not one_sided or any(
                    n.isalpha() and stem(n) not in {stem(w) for w in latin[j]} for n in x["name"] - y["name"] - latin[j]):
                continue  # another room or code, or a name the English one never writes in any form (a program's
                # name, "slow-bisque", may be a detail of its own; "job" is written as "jobs")
            if {n for n in x["name"] - latin[j] if "-" in n} and {n for n in latin[j] - latin[i] if "-" in n}:
                continue  # each names a compound the other lacks ("quill-logs" / "quill-dumps"): two things
            if x["floor"] and y["floor"] and x["floor"] != y["floor"]:
                continue  # another floor: another room
            if _own_place(body[j], latin[i], body[i]):
                continue  # a place of its own only the English one names ("Main Street branch"): two places
            if not (x["clock"] <= y["clock"] or y["clock"] <= x["clock"]) or not (
                    x["day"] <= y["day"] or y["day"] <= x["day"]):
                continue  # another time or day
            shared = (len(x["name"] & y["name"] | x["name"] & latin[j]) + len(x["clock"] & y["clock"])
                      + len(x["id"]) + len(x["num"] & y["num"]) + len(x["day"] & y["day"])
                      + len(x["floor"] & y["floor"]))
            # a name or a code both write; values alone (the same hours, a weekday and a number) only with
            # a concept of the bilingual lexicon both hold: a bakery and a clinic may open 07:00–10:00
            # (or a word of the English one that a Chinese word of the other translates to: "grade" / 年级)
            cover, hits = _glossed(a, b)
            # (or a Chinese word both write, the English one glossing its place in brackets: "Moshan pier (磨山码头)")
            alike = any(t.startswith("~") or CJK_IN.match(t) for t in a.subject & b.subject) or hits >= 1
            # (a clock time and two more values beside it: days or numbers both give)
            values = len(x["clock"] & y["clock"]) >= 2 or bool(x["clock"] & y["clock"]) and (
                len(x["day"] & y["day"]) + len(x["num"] & y["num"]) >= 2 and bool(x["day"] & y["day"]))
            strong = bool(x["name"] & latin[j] or x["id"]) or alike and values
            # or one a translation of the other: every value the same (a number at least), most of the English
            # one's words what the Chinese one's translate to, two Chinese words among them ("Refunds: an unused
            # course is refunded within 30 days" / "退款规则：没上过的课程 30 天内凭小票可退款")
            # (with no value at all, nearly every word translated: most of the English one's words, four Chinese
            # words or more, "Every box … gets ice packs …; tape the foam box shut" / "每箱放冰袋，泡沫箱封胶带")
            # (two values or more the same, what it is about translated: two words in five will do, "Pineapple filling
            # must rest in the walk-in at 4 °C for 24 h" / "鳳梨餡…放冷藏庫 4°C 靜置 24 小時")
            n_values = sum(len(v) for v in x.values())
            # (a clock time and a number both the same, what it is about translated: a quarter of the words will do, the
            # dictionary missing most of a trade's words, "Raw milk arrives at 7am …, 40 L" / "生牛乳每天早上 7 点…40 升")
            translated = all(x[k] == y[k] for k in x) and (
                n_values >= 1 and cover >= 0.5 and hits >= 2 or n_values >= 2 and cover >= 0.4 and hits >= 2
                or cover >= 0.7 and hits >= 4 or bool(x["clock"]) and bool(x["num"]) and cover >= 0.25 and hits >= 2)
            # (two marked rules only when one translates the other: either is kept word for word)
            if (shared >= 2 and strong or translated) and (translated or not (a.core and b.core)):
                fits.setdefault(i, []).append(j)
    out = []
    by_j: dict[int, list[int]] = {}
    for i, js in fits.items():
        for j in js:
            by_j.setdefault(j, []).append(i)
    # (the file's language, by what most of its entries are written in; its marked rules aside)
    plain = [z for z, it in zip(by_share, items) if not it.core]
    majority_zh = sum(plain) * 2 > len(plain)
    for i, js in fits.items():
        if len(js) != 1 or len(by_j[js[0]]) != 1:
            continue  # a third entry fits as well: which two are one fact is unsure
        j = js[0]
        # the entry that says more of what no translation changes keeps its wording (a merge must lose
        # nothing the other says only inside a clause it shares); on a tie, the file's language
        rich = [sum(len(v) for v in inv[k].values()) for k in (i, j)]
        keep, other = (i, j) if rich[0] > rich[1] or rich[0] == rich[1] and majority_zh else (j, i)
        if items[i].core != items[j].core:
            keep, other = (i, j) if items[i].core else (j, i)  # a marked rule (…must…) is the one kept
        same = all(inv[i][k] == inv[j][k] for k in inv[i])
        kept_inv = frozenset().union(*(frozenset(v) for v in inv[keep].values()))
        extra = []
        # (a clause's clock times as the whole entry reads them: "四点半" after "下午五点…" is 16:30, not 4:30)
        whole_f = fold(body[other])
        whole_ticks = clocks(whole_f) if len(whole_f) == len(body[other]) else []
        at = 0
        for cl in _CLAUSE_CUT.split(body[other]):
            start = body[other].find(cl, at)
            at = start + len(cl) if start >= 0 else at
            cl = cl.strip()
            if not cl:
                continue
            ci = _invariants(cl, zh[other], frozenset(c[2] for c in whole_ticks if start <= c[0] < start + len(cl) + 1)
                             if whole_ticks and start >= 0 else None)
            vals = frozenset().union(*(frozenset(v) for v in ci.values()))
            if vals - kept_inv - latin[keep]:
                extra.append(cl)  # a value the kept entry lacks
            elif not vals and not same and not (term_set(cl) | lx.concept_terms(cl)) & items[keep].subject \
                    and not (zh[other] and not zh[keep] and _says_in_chinese(cl, items[keep].subject)):
                # a detail of its own, when the two do not say the same (a clause saying a concept the kept
                # entry holds, "after breakfast" beside "早餐後", is its translation)
                extra.append(cl)
        sep = "；" if zh[keep] else "; "
        new_body = body[keep] + "".join(sep + cl for cl in extra)
        pair = sorted((items[i], items[j]), key=lambda x: x.entry.start)
        day = max((x.entry.date for x in pair if x.entry.date), default=None)
        if items[keep].core:
            if extra:
                continue  # the marked rule would change: left to a person
            day = items[keep].entry.date  # kept word for word, its date too
        score = confidence("duplicate", similarity=0.8, extra_entries=0)
        op = Operation("merge", items[keep].entry.file, tuple(x.entry.text for x in pair),
                       text=compose(items[keep], new_body, day), confidence=score,
                       reason="one fact written in Chinese and in English; kept in the file's language with the "
                              "other's details", evidence=tuple(entry_evidence(x) for x in pair), origin="offline")
        out.append(Candidate(op, "duplicate", score, {"entries": 2, "bilingual": True, "added": len(extra)}))
    return out


def _alike(a: str, b: str) -> bool:
    """Two stems of one word: the same, or one the other's start of four letters or more ("math" / "mathemat")."""
    return a == b or min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a))


_ZH_GLOSS = re.compile(r"(?<=[A-Za-z])\s*[(（]\s*[\u4e00-\u9fff]{1,8}\s*[)）]")


def _glossed(zh: Item, en: Item) -> tuple[float, int]:
    """How much of an English entry a Chinese one translates: the share of the English one's words (function
    words and names aside) that a Chinese word of the other glosses to, and how many Chinese words do; 0 when
    a word of what the English one is about (its label or first clause, names aside) is none of them: the same
    hours of a bakery and of a clinic (诊所) are two facts."""
    words = {t for t in en.subject if t.isascii() and t.isalpha() and len(t) > 2 and t not in STOP}
    if not words:
        return 0.0, 0
    # (its words of two characters or more, common ones too: "一般" is the "general" of "General bookings")
    # (and a character the segmenter leaves a word of its own, no function word: the 课 of "初学者课" is "lesson")
    cut = [w for run in CJK_RUN_RE.findall(fold(zh.entry.body)) for w in cjk_cut(run) if len(w) >= 2 or w not in STOP_ZH]
    g = glosses([*(t for t in zh.subject if CJK_IN.match(t)), *cut])
    # (a word the dictionary lacks is read by its characters: "藕粉" as 藕 "lotus root" and 粉 "powder")
    g.update(glosses([c for w in cut if len(w) >= 2 and w not in g for c in w if c not in STOP_ZH]))
    said = {x for s in g.values() for x in s}
    # (a word the bilingual lexicon gives a concept both hold is translated too: "Dr." / 医生)
    body = en.entry.body
    # (each word's concept, from the word as written: "individual" of the stem "individu")
    ideas = {t: c for w in _LATIN_WORD.findall(body) if (c := lx.concept(w)) for t in term_set(w)}
    # (and of a phrase: "picked" of "picked up")
    ideas.update((t, c) for w, c in lx.concept_words(body).items() for t in term_set(w) if t not in ideas)
    hit = {w for w in words if any(_alike(w, x) for x in said) or f"~{ideas.get(w) or lx.concept(w)}" in zh.subject}
    m = LABEL_RE.match(body)
    lead = m.group(1) if m and _label(body) else _CLAUSE_CUT.split(body, maxsplit=1)[0]
    # what it is about: the first two words of that naming a thing (a word never a noun, "sit", "new", says what
    # is done or how), a name inside it aside
    head = [t for k, w in enumerate(_LATIN_WORD.findall(lead)) if not (k and w[:1].isupper()) and not never_a_noun(w)
            for t in term_set(w) if t in words][:2]
    if set(head) - hit:
        return 0.0, 0
    return len(hit) / len(words), sum(1 for s in g.values() if any(_alike(w, x) for w in words for x in s))


def _says_in_chinese(clause: str, english: frozenset[str]) -> bool:
    """Every Chinese word of a clause the dictionary knows glosses to a word the English entry says ("自带桨" beside
    "bring own paddle"): the clause is its translation, no detail of its own."""
    words = [w for run in CJK_RUN_RE.findall(fold(clause)) for w in cjk_cut(run) if w not in STOP_ZH]
    g = glosses(words)
    return bool(g) and len(g) == len(words) and all(any(_alike(t, x) for t in english for x in s) for s in g.values())


def _own_place(english: str, written: frozenset[str], chinese: str = "") -> bool:
    """Two or more capitalised words in a row, none of which the Chinese entry writes ("Acme Bakery Main
    Street branch" beside "Acme Bakery 河西店"): a name of its own, a place only one of them is about. A person
    called as Singapore, Malaysia and Hong Kong romanise 阿 ("Ah Seng" of "阿成") is none, beside a 阿 name."""
    for run in _MULTI_NAME.findall(english):
        if run.split()[0] == "Ah" and len(run.split()) == 2 and re.search(r"阿[\u4e00-\u9fff]", chinese):
            continue
        alone = 0
        for w in run.split():
            alone = alone + 1 if w.lower() not in written else 0
            if alone >= 2:
                return True
    return False


def _latin(text: str) -> frozenset[str]:
    """Every word of Latin letters a text holds, folded."""
    return frozenset(w.lower() for w in _LATIN_WORD.findall(text))


# a capitalised word that does not open the entry or a sentence: a name
_PROPER = re.compile(r"(?<=[\w,;:(（)] )[A-Z][a-z]{2,}\b")


def _names_retired(newer: Item, older: Item, m: re.Match[str]) -> bool:
    """The newer entry's change clause ("X retired", "switched from X", "instead of X") names what the
    older entry is about: a specific term of the older entry's head within the clause."""
    window = newer.folded[max(0, m.start() - 40):m.end() + 40]
    named = term_set(window) & (older.head or older.subject)
    return bool(named - newer.head) or bool(named & older.head and len(named) >= 2)


_VALUES = re.compile(r"(?<![\w.])\d+(?:[.:：]\d+)+(?![\w.])|(?<![\w.])\d{3,}(?![\w.])")


def _translated(zh: Item, other: Item) -> bool:
    """One fact written in Chinese and in another language: what no translation changes (the names in
    Latin letters, hosts, paths, numbers) is the same in both — at least four such terms, or three with
    an identifier or a number among them, every one of the Chinese entry's in the other and every identifier or
    number of the other in the Chinese one ("NAS 的地址是 nas.lan…" / "The NAS is reachable at nas.lan…");
    or two names and, with them, five things both say alike."""
    names = {t for t in zh.subject if t.isascii() and not t.startswith("~")}
    # an identifier holds a digit, a dot or a dash; a possessive ("ho's") is a word
    ids = {t for t in other.subject if t.isascii() and not t.startswith("~") and not t.replace("'", "").isalpha()}
    if not (names <= other.subject and ids <= zh.subject):
        return False
    # the times and long numbers each gives ("07:00–10:00 … 09:45"): the same two or more in both are
    # what no translation changes either
    said = _VALUES.findall(fold(zh.entry.body)), _VALUES.findall(fold(other.entry.body))
    same = set(said[0]) if len(set(said[0])) >= 2 and set(said[0]) == set(said[1]) else set()
    if same and any(t not in zh.subject for w in _PROPER.findall(other.entry.body) for t in term_set(w)):
        same = set()  # a name only one of them gives ("Main Street" of one branch): the same hours of two places
    if len(names) + len(same) >= 4 or (len(names) >= 3 and bool(ids)):
        return bool(names)  # (the same hours of two places named nowhere alike are two facts)
    # fewer names: what else both say alike counts with them — a Chinese name the other entry writes
    # too ("Dr. Ho's clinic (何內科)") and the concepts of the bilingual lexicon both hold (~phone)
    alike = {t for t in zh.subject & other.subject if t.startswith("~") or CJK_IN.search(t)}
    return len(names) >= 2 and len(names) + len(alike) >= 5


# a text's tokens for comparing two wordings: a word of Latin letters or digits, or one Chinese character
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'._-]*|[\u4e00-\u9fff]|[^\sa-z0-9\u4e00-\u9fff]")


# an identifier: a name made of parts joined by a dot, a dash, a slash or an underscore ("backup.sh", "db-2")
_IDENT = re.compile(r"[a-z0-9]+(?:[._/-][a-z0-9]+)+")


def _one_template(a: str, b: str) -> bool:
    """Two entries in the same words but for a word or name put in another's place ("周医生的多点执业备案…" /
    "林医生的多点执业备案…", "the north store's freezer" / "the south store's freezer"): two things of one kind,
    or two values of one thing, never one fact written twice, whatever the rest shares. A merge keeps one
    wording, so it would lose the other thing. A spelling (case, script, punctuation) or a word and its
    translation in the bilingual lexicon is no other word."""
    ta = _TOKEN.findall(fold(_DATE_TAIL.sub("", a)))
    tb = _TOKEN.findall(fold(_DATE_TAIL.sub("", b)))
    if {t for t in ta if _IDENT.fullmatch(t)} & {t for t in tb if _IDENT.fullmatch(t)}:
        return False  # both name one identifier ("cusum-drift-detector.py"): one thing described twice
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    if sm.ratio() < 0.7:
        return False  # reworded, not one template
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "replace":
            continue
        x, y = [t for t in ta[i1:i2] if t[0].isalnum()], [t for t in tb[j1:j2] if t[0].isalnum()]
        if not x or not y or len(x) > 3 or len(y) > 3:
            continue
        if all(t in STOP for t in x + y):
            continue  # "with" / "using": a function word, no thing
        cx, cy = lx.concept_terms(" ".join(x)), lx.concept_terms(" ".join(y))
        if cx and cx == cy:
            continue  # one word in two languages or spellings
        return True
    return False


def _same_fact(ctx: Context, keep: Item, drop: Item, cross: bool) -> bool:
    """A merge keeps `keep`'s wording, so `drop` may hold nothing `keep` lacks: its words are (almost)
    all in `keep` — a template shared by two different facts is not the same fact."""
    from rapidfuzz import fuzz

    if cross or CJK_IN.search(keep.entry.body + drop.entry.body):
        missing = drop.subject - keep.subject
        # a Chinese word only `drop` has may be where the segmenter cut differently (the same cut recurs
        # wherever the phrase does), unless another entry of memory names it too: then it is a name
        # ("春熙路" of one store, beside "春熙路店门口…")
        pair = {id(keep), id(drop)}
        if not cross and any(CJK_IN.search(t) and ctx.anchor(t)
                             and any(id(ctx.items[i]) not in pair for i in ctx._items_by_term.get(t, ()))
                             for t in missing):
            return False
        return len(missing) <= max(1, len(drop.subject) // 3)
    a, b = fold(keep.entry.body), fold(drop.entry.body)
    return fuzz.token_set_ratio(a, b) >= 85


def _newer(a: Item, b: Item) -> bool:
    da, db = a.entry.date or date.min, b.entry.date or date.min
    return (da, a.entry.start) > (db, b.entry.start)
