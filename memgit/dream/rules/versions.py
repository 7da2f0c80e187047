"""Refresh a value: a version that moved next to the entry's subject, or a labelled setting a log reassigns."""
from __future__ import annotations

import re
from functools import lru_cache
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta

from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.ops import Evidence, Operation
from memgit.text import (CODE_SPAN, CODE_SPAN_RE, clauses, compile_words, is_common_word, is_dictionary_word, stem,
                         STOP, term_set, to_simplified, version_key, versions)
from memgit.dream.scoring import confidence
from memgit.dream.model import (
    _a_count, _label, Candidate, CJK_IN, clause_at, clock_as, clocks, compose, Context, entry_evidence, fold, Item, LABEL_RE
)


# -- refresh: version moved -----------------------------------------------------------
UPGRADE = re.compile(rf"{lx.VERSION_MOVED.source}|→|->")  # an arrow reads the same in every language


def version_changes(ctx: Context) -> list[Candidate]:
    out = []
    versioned = [it for it in ctx.items if it.versions]
    # the entries holding a version, by their specific terms (the model's index, narrowed to them)
    with_version = {i for i, it in enumerate(ctx.items) if it.versions}
    by_term = {t: mine for t, idx in ctx._items_by_term.items() if (mine := [i for i in idx if i in with_version])}

    def owner(o: Observation) -> Item | None:
        """The entry holding a version that the line names most of (the first such, in file order)."""
        idx = sorted({i for t in o.terms for i in by_term.get(t, ())})
        best = max((ctx.items[i] for i in idx), key=lambda it: ctx.mentions(o, it), default=None)
        return best if best is not None and ctx.mentions(o, best) >= 0.1 else None

    owners: dict[int, Item | None] = {}  # an observation's owner, found when first asked
    found_versions: dict[int, tuple[tuple[str, tuple], ...]] = {}  # a line's versions and their keys
    for it in versioned:
        if it.frozen or it.step or lx.HELD.search(it.folded):
            continue  # (a version the entry pins, or keeps back, stays until a person moves it)
        # what the version belongs to: the entry's subject or its section's, not the word "version"
        names = ((it.head | term_set(it.entry.section or "")) - {v.lower().lstrip("v") for v in it.versions}
                 - lx.VERSION_WORDS)
        old = it.versions[0]
        before = fold(it.entry.body[:max(0, it.entry.body.find(old))])
        if _COMPARED.search(before) or lx.MEASURED.search(before[-12:]):
            continue  # "error detection >0.7", "相似度阈值 0.82": a bound on a value or a measure, not a release
        key, held = version_key(old), {version_key(x) for x in it.versions}
        qual = qualifiers(it)
        fb = fold(it.entry.body)
        old_at = re.compile(r"(?<![\w.])" + re.escape(fold(old)) + r"(?![\w]|\.\w)")  # (the version as a whole token)
        at = old_at.search(fb)
        if at and (_RANGE_AFTER.match(fb, at.end()) or _RANGE_BEFORE.search(fb[:at.start()])):
            continue  # "EC 1.6–2.0": one end of a range of values, no release
        vname = _name_before(fb[:at.start()]) if at else None
        found: dict[str, list[tuple[Observation, bool]]] = {}
        about = ctx.obs_about(it)
        # (and a line writing the entry's own version of two parts or more, which no other entry writes, beside a newer
        # one: "2.4.7 vs 2.5.1 on batch 7 … we're on 2.5.1 for everything now" names no tool, but only this entry's)
        by_old: set[int] = set()
        if at and len(key) >= 2 and not any(old_at.search(x.folded) for x in ctx.items if x is not it):
            by_old = {id(o) for o in ctx.obs if old_at.search(fold(o.text))}
            seen = {id(o) for o in about}
            about = [o for o in ctx.obs if id(o) in seen or id(o) in by_old] if by_old - seen else about
        for o in about:
            if o.role == "assistant":
                continue
            if qual and not (o.terms & qual):
                continue  # the version of another one of the same kind ("OpenClaw" of another instance)
            # the line's versions newer than the entry's, of the same form, that the entry does not hold
            got = found_versions.get(id(o))
            if got is None:
                got = found_versions[id(o)] = tuple((v, version_key(v)) for v in versions(o.text))
            ov = [v for v, k in got if len(k) == len(key) and k > key and k not in held]
            if not ov:
                continue
            if id(o) not in owners:
                owners[id(o)] = owner(o)
            if id(o) not in by_old and owners[id(o)] is not it or _names_a_sibling(it, o, frozenset({vname or ""})):
                continue  # (a line naming "orion-mobile" is not about the entry's Orion)
            f = fold(o.text)
            if lx.ASKED.search(f):
                continue  # a question reports no release ("我们要不要也升？")
            if _holds_own(f, fold(old)):
                continue  # the entry's version still holds on the line ("…升到 4.0 了。我们还是 3.2"): another's
            for v in ov:
                pos = f.find(v.lower())
                if lx.VERSION_HELD.search(f[max(0, pos - 25):pos + len(v) + 15]):
                    continue
                if _theirs_before(f, pos):
                    continue  # another party's ("他们 cryoSPARC 升到 v4.6 了", "they moved it to v4.6"): not ours
                if _no_release_moved(_clause_at(f, pos)):
                    continue  # "4.4 is planned for Q4", "if 4.4 arrives": a plan or a condition moves nothing
                if _COMPARED.search(f[max(0, pos - 3):pos]) or lx.MEASURED.search(f[max(0, pos - 12):pos]) \
                        or _UNIT_AFTER.match(f, pos + len(v)):
                    continue  # a rating, a score, a bound or a measure ("評分 4.7", "accuracy >0.9", "浪高 1.7 米"):
                    # a value, no release
                if not ctx.near(f, pos, names, 30, specific=False) and not (
                        id(o) in by_old and any(abs(m.start() - pos) <= 30 for m in old_at.finditer(f))):
                    continue  # a version of something else named on the same line
                explicit = bool(UPGRADE.search(f)) or old.lower().lstrip("v") in f
                found.setdefault(v.lower().lstrip("v"), []).append((o, explicit))
        if not found and vname and at:
            # (or a release of its name by a whole number past the entry's, said as the change: "EzCad 2.7" → "升到
            # EzCad3", written as the line writes it)
            whole = _whole_release(ctx, it, vname, old, key)
            if whole is None:
                continue
            new_raw, support, explicit = whole
            days = len({o.day for o in support})
            name_at = fb.rfind(vname, 0, at.start())
            if name_at < 0 or fb[name_at + len(vname):at.start()].strip():
                continue
            body = it.entry.body
            new_body = body[:name_at] + new_raw + body[at.end():]
            score = confidence("version", explicit=explicit, extra_days=days - 1, recent=ctx.recency(support))
            op = Operation("refresh", it.entry.file, (it.entry.text,),
                           text=compose(it, new_body, max(o.day for o in support)), confidence=score,
                           reason=f"version moved: {body[name_at:at.end()]} → {new_raw} (seen on {days} day(s))",
                           evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
            out.append(Candidate(op, "version", score, {"days": days, "explicit": explicit, "from": old,
                                                        "to": new_raw}))
            continue
        if not found:
            continue
        # the newest version that has support
        best = max(found, key=lambda k: (version_key(k), len(found[k])))
        support = [o for o, _ in found[best]]
        if at and _still_said(ctx, it, "version", at.start(), at.end(), support, max(support, key=lambda o: o.day)):
            continue  # a line as late says the entry's version still holds ("staging 还是 Node 18")
        days = len({o.day for o in support})
        explicit = any(e for _, e in found[best])
        score = confidence("version", explicit=explicit, extra_days=days - 1, recent=ctx.recency(support))
        new_v = (old[0] if old[:1] in ("v", "V") else "") + best  # "V600" → "V850", as the entry writes it
        body = it.entry.body
        new_body = re.sub(r"(?<![\w.])" + re.escape(old) + r"(?![\w]|\.\w)", new_v, body, count=1)
        if new_body == body:
            continue  # the version is not where the entry can be rewritten: nothing would change but the date
        text = compose(it, new_body, max(o.day for o in support))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"version moved: {old} → {new_v} (seen on {days} day(s))",
                       evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
        out.append(Candidate(op, "version", score, {"days": days, "explicit": explicit, "from": old,
                                                    "to": new_v}))
    return out


def _whole_release(ctx: Context, it: Item, vname: str, old: str, key: tuple[int, ...]
                   ) -> tuple[str, list[Observation], bool] | None:
    """A release of the entry's version's name by a whole number past its major, as the lines write it ("EzCad3"
    after "EzCad 2.7"), in lines that state it (no question, another party's or a plan), one alone: (as written,
    the lines, whether a line says the change or the old version beside it)."""
    seen: dict[str, list[tuple[Observation, bool]]] = {}
    for o in ctx.obs:  # (by the name itself: "EzCad3" is a term of its own, no word of the entry's)
        if o.role == "assistant" or o.sensitive:
            continue
        for name, num, raw, start in _releases(o.text):
            if name != vname or num <= key[0]:
                continue
            f = fold(o.text)
            if lx.ASKED.search(f) or _theirs_before(f, start) or _no_release_moved(_clause_at(f, start)):
                continue
            explicit = bool(UPGRADE.search(f)) or re.search(rf"(?<![\d.]){re.escape(old.lower().lstrip('v'))}(?![\d]|\.\d)", f)
            seen.setdefault(raw.lower(), []).append((raw, o, bool(explicit)))
    if len(seen) != 1:
        return None
    got = next(iter(seen.values()))
    raw = got[0][0]  # (as the first line writes it; "EzCad3" and "ezcad3" are one release)
    hits = [(o, e) for _, o, e in got]
    support = list({id(o): o for o, _ in hits}.values())
    explicit = any(e for _, e in hits)
    if not explicit and len({o.day for o in support}) < 2:
        return None
    return raw, support, explicit


@lru_cache(maxsize=65536)
def _releases(text: str) -> tuple[tuple[str, int, str, int], ...]:
    """The releases a line names by a whole number: (name folded, number, as written, where)."""
    return tuple((m.group(1).lower(), int(m.group(2)), m.group(0), m.start()) for m in _RELEASE.finditer(text))


def _theirs_before(f: str, pos: int) -> bool:
    """The last party a line names before `pos`, in its sentence, is another's ("吴老师组说他们 cryoSPARC 升到 …")."""
    if pos < 0:
        return False
    head = f[max((x.end() for x in _SENTENCE_MARK.finditer(f, 0, pos)), default=0):pos]
    last = max((m for p in (lx.PARTY_OURS, lx.PARTY_THEIRS) for m in p.finditer(head)), key=lambda m: m.start(),
               default=None)
    return last is not None and bool(lx.PARTY_THEIRS.fullmatch(last.group(0)))


def _holds_own(f: str, old: str) -> bool:
    """The folded line says, in a clause of its own, that the version `old` still holds ("我们还是 3.2", "we're
    still on 3.2")."""
    for m in re.finditer(r"(?<![\w.])" + re.escape(old.lstrip("v")) + r"(?![\w]|\.\d)", f):
        cl = _clause_at(f, m.start())
        if lx.PERSISTS.search(cl) or lx.VERSION_HELD.search(cl):
            return True
    return False


_RANGE_AFTER = re.compile(r"\s*(?:[–—~～-]|to\b|至|到)\s*v?\d")
_RANGE_BEFORE = re.compile(r"\d\s*(?:[–—~～-]|to|至|到)\s*v?$")
# a comparison right before a number: the number bounds a value ("accuracy >0.7", "≤ 1.5"), it is no release
_COMPARED = re.compile(r"(?:[<>≤≥=≈~]|>=|<=)\s*$")


IDENT = r"`?([A-Za-z][\w.-]*/[\w./-]*\w|[A-Za-z][\w-]*-\d[\w.-]*\w)`?"


SLOT_TAIL = re.compile(r"^(.*?\S)\s+(?:primary|default)\b", re.I)


# what every label's assignment pattern (`labelled_slots`) holds: a separator, then an identifier
_ASSIGN = r"(?:\s*[:：=]|\s+(?:is|are)\s+now)\s*"  # "model: X", "host is now X"
ASSIGNS = re.compile(_ASSIGN + IDENT, re.I)


MULTI_VALUE = compile_words(r"[,，、;；]|\band\b|\+")


def slot_changes(ctx: Context) -> list[Candidate]:
    """One slot of an entry moved: a labelled setting reassigned, a labelled list restated, or a version,
    model or tool a change statement moves (`moved_slots`)."""
    from memgit.dream.rules.aligned import aligned_numbers
    from memgit.dream.rules.displaced import displacements

    found = labelled_slots(ctx) + listed_values(ctx) + moved_slots(ctx) + handovers(ctx)
    # each later rule only for entries the earlier ones left alone
    for rule in (adopted_tools, displacements, named_releases, moved_values, aligned_numbers):
        taken = {c.op.targets for c in found}
        found += [c for c in rule(ctx) if c.op.targets not in taken]
    return found


# -- refresh: an amount moved from the entry's value to another ("上限从 $80 调到 $150") -------------------
_AMOUNT = (r"(?:(?:nt|hk|us|au|ca|nz|s)?\$|[¥€£])?\d+(?:[.,]\d+)?"
           r"(?:\s?(?:%|[kmgt]b|kb|元|块|万|kg|公斤|天|小时|分钟|个|份|人|次|束|件|箱|"
           r"mb|gb|tb|ms|min|h|days?|hours?|minutes?|items?|users?|seats?|ppm|°c|°f|℃))?")
# where an amount ends: no word, path or decimal goes on; after a Chinese unit, Chinese may ("7 天内", "800 元起")
_AMOUNT_END = r"(?:(?<=[\u4e00-\u9fff])(?![a-z0-9_.:/%-])|(?<![\u4e00-\u9fff])(?![\w:/%-]|\.\w))"
_AMOUNT_RE = re.compile(rf"(?<![\w.$¥€£:/-])({_AMOUNT}){_AMOUNT_END}", re.I)
# an amount set anew, with no old one said ("免運門檻…改成單筆滿 NT$1,200", "the cap is now set to $150"): only
# of a labelled entry whose label the line names (labelled_amounts)
_SET_AMOUNT = re.compile(rf"(?:改成|改为|调到|调整为|调整到|调成|上调到|下调到|提高到|降到|降低到|"
                         rf"\b(?:raised|lowered|changed|set|increased|reduced|bumped|moved)\s+to\b)"
                         rf"[^\d$¥€£，,。；;]{{0,6}}?(?<![\w.:/-])(?P<new>{_AMOUNT}){_AMOUNT_END}", re.I)
_MOVED_AMOUNT = re.compile(
    rf"(?:\bfrom\s+|从\s*)(?P<old>{_AMOUNT})\s*(?:to\b|→|->|=>|调到|改到|改成|改为|提到|提高到|降到|降低到|调整为|调整到|调成|"
    rf"上调到|下调到|涨到|加到|减到|升到|到)\s*(?P<new>{_AMOUNT}){_AMOUNT_END}"
    rf"|(?<![\w.$¥€£:/-])(?P<old2>{_AMOUNT})\s*(?:→|->|=>)\s*(?P<new2>{_AMOUNT}){_AMOUNT_END}", re.I)


def _amount_key(a: str) -> tuple[str, str]:
    """An amount as (number, unit), both folded ("$80" → ("80", "$"), "5 MB" → ("5", "mb"))."""
    a = a.strip().lower()
    m = re.match(r"((?:[a-z]{1,2})?[$]|[¥€£])?(\d+(?:[.,]\d+)?)\s?(.*)$", a)
    if not m:
        return (a, "")
    number = m.group(2).replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+", m.group(2)) else m.group(2)
    return (number, (m.group(1) or "") + m.group(3).rstrip("s"))  # ("1,200" is 1200)


def moved_values(ctx: Context) -> list[Candidate]:
    """An amount the entry gives moved to another, said from the old to the new ("月度预算上限从 $80 调到
    $150", "raised the upload limit from 5 MB to 10 MB"): the line names the entry's amount as the old one and
    the new one in the same unit, and the entry's subject in the clause; no other entry gives that amount; the
    clause does not ask, plan, hold back or deny. The amount is replaced as the line writes the new one."""
    holders: dict[tuple[str, str], list[tuple[Item, re.Match[str]]]] = {}
    for it in ctx.items:
        if not (it.frozen or it.step):
            for m in _AMOUNT_RE.finditer(fold(it.entry.body)):
                holders.setdefault(_amount_key(m.group(1)), []).append((it, m))
    found: dict[int, list[tuple[Observation, re.Match[str], str]]] = {}
    owns: dict[int, frozenset[str]] = {}  # each entry's specific words but numbers, found once

    def own_of(it: Item) -> frozenset[str]:
        if id(it) not in owns:
            owns[id(it)] = frozenset(t for t in it.subject if ctx.anchor(t) and not any(c.isdigit() for c in t))
        return owns[id(it)]
    items = {id(it): it for it in ctx.items}
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 400:
            continue
        f = fold(o.text)
        if not re.search(r"\d", f) or lx.ASKED.search(f):
            continue
        for m in _MOVED_AMOUNT.finditer(f):
            g = "" if m.group("old") else "2"
            old, new = _amount_key(m.group("old" + g)), _amount_key(m.group("new" + g))
            if not old[1] and new[1]:
                old = (old[0], new[1])  # "from 1.0 to 1.2 ppm": the unit said once is both ends'
            if old[0] == new[0] or new[1] != old[1] or not old[1]:
                continue  # the same amount, another unit, or a bare number (a count, a version: other rules')
            cl = _clause_at(f, m.start())
            if lx.PLANNED.search(cl) or lx.HELD.search(cl) or lx.DENIED.search(cl) or lx.PENDING.search(cl):
                continue
            held = holders.get(old, [])
            if len(held) != 1:
                continue  # no entry, or several, give that amount: whose moved is unsure
            it, at = held[0]
            own = own_of(it)
            if (it.entry.date and o.day < it.entry.date) or not term_set(cl) & own:
                continue  # written after the move, or the clause names nothing of the entry's subject
            new_raw = o.text[m.start("new" + g):m.end("new" + g)].strip()
            found.setdefault(id(it), []).append((o, at, new_raw))
    from_to = set(found)  # (an entry a line moves from its amount takes that; a bare new amount only elsewhere)
    for it, at, o, new_raw in _labelled_amounts(ctx):
        if id(it) not in from_to:
            own_of(it)
            found.setdefault(id(it), []).append((o, at, new_raw))
    out = []
    for k, hits in found.items():
        it = items[k]
        o, at, new_raw = max(hits, key=lambda h: (h[0].day, h[0].line))
        if any(_amount_key(h[2]) != _amount_key(new_raw) for h in hits if h[0].day == o.day):
            continue  # two new amounts the same day: unsure
        own = owns[k]
        number = _amount_key(new_raw)[0]
        later = [x for x in ctx.obs if x.day > o.day and x.role != "assistant" and not x.sensitive
                 and x.terms & own and re.search(rf"(?<![\d.]){re.escape(number)}(?![\d]|\.\d)", fold(x.text))]
        body = it.entry.body
        a, b = at.start(1), at.end(1)
        days = len({o.day, *(x.day for x in later)})
        score = confidence("slot", extra_days=min(days - 1, 2), recent=ctx.recency([o, *later]))
        text = compose(it, body[:a] + new_raw + body[b:], max(x.day for x in (o, *later)) if it.entry.date else None)
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"{body[a:b]} → {new_raw} ({o.day.isoformat()})",
                       evidence=(entry_evidence(it), *ctx.evidence([o, *later], 3, first=o)), origin="offline")
        out.append(Candidate(op, "slot", score, {"days": days, "from": body[a:b], "to": new_raw}))
    return out


def _labelled_amounts(ctx: Context) -> Iterator[tuple[Item, re.Match[str], Observation, str]]:
    """The one amount of a labelled entry ("免運門檻：單筆訂單滿 NT$800 免運費") set anew, with no old amount said,
    by a line naming the whole label earlier in the same sentence ("免運門檻要調整：從 6/10 起改成單筆滿 NT$1,200")
    in the same unit: (entry, where its amount stands, the line, the new amount as written). A label two entries
    share, a sentence that asks, plans, holds back, denies or waits, or an entry giving two amounts in that unit
    gives nothing."""
    labels: dict[str, list[Item]] = {}
    for it in ctx.items:
        if not (it.frozen or it.step) and (lab := _label(it.entry.body)) and len(lab) >= 2:
            labels.setdefault(lab, []).append(it)
    labelled = [(lab, its[0]) for lab, its in labels.items() if len(its) == 1]
    if not labelled:
        return
    # the few lines that set an amount at all, each folded once (most lines set none)
    setting = []
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 400:
            continue
        f = fold(o.text)
        sets = list(_SET_AMOUNT.finditer(f))
        if sets:
            setting.append((o, f, " ".join(f.split()), sets))
    for lab, it in labelled:
        said = [(o, f, sets) for o, f, flat, sets in setting
                if lab in flat and not (it.entry.date and o.day < it.entry.date)]
        if not said:
            continue
        start = LABEL_RE.match(it.entry.body).end()
        amounts = [m for m in _AMOUNT_RE.finditer(fold(it.entry.body), start) if _amount_key(m.group(1))[1]]
        for o, f, sets in said:
            for m in sets:
                sentence = _sentence_at(f, m.start())
                if lab not in " ".join(sentence[:sentence.find(f[m.start():m.end()])].split()):
                    continue  # the label is not what the sentence sets
                if lx.ASKED.search(sentence) or lx.PLANNED.search(sentence) or lx.HELD.search(sentence) \
                        or lx.DENIED.search(sentence) or lx.PENDING.search(sentence):
                    continue
                new = _amount_key(m.group("new"))
                same_unit = [a for a in amounts if _amount_key(a.group(1))[1] == new[1]]
                if len(same_unit) != 1 or _amount_key(same_unit[0].group(1))[0] == new[0]:
                    continue
                yield it, same_unit[0], o, o.text[m.start("new"):m.end("new")].strip()


_SENTENCE_MARK = re.compile(r"[。！？!?；;]|\.(?=\s|$)")


def _sentence_at(f: str, pos: int) -> str:
    """The sentence of `f` holding f[pos]."""
    return clause_at(f, pos, _SENTENCE_MARK)


# -- refresh: a release named by a whole number ("Node 18", "Windows 10", "PostgreSQL 15") -------------
# a capitalised name and a whole number after it, the number no part of a time, a decimal, a range or a unit
# a comma right after the number ends its clause ("Ubuntu 22, Blender from the snap"); one before a digit is
# a thousands separator or a list ("Room 3,4")
# (a name of one letter glued to its number, "N100", "M2", is a model's code, no release)
_RELEASE = re.compile(r"(?<![\w.#/-])([A-Z][A-Za-z]+(?:[+#]|[.-][A-Za-z]+)*)[ \t]?(\d{1,3})(?![\w:/%°'’-]|[.,]\d)")
_CLAUSE_END = re.compile(r"[，,；;。！!？?]|(?<=[a-z])\.\s")


_PRODUCT_BEFORE = re.compile(r"(?<![\w.-])[A-Z][a-z]+[A-Za-z]*\s+$")


def _release_in(body: str) -> tuple[str, str] | None:
    """The one release an entry names by a whole number (name folded, number), if exactly one."""
    # (an acronym after a product's name is the release's name however a function word spells it: "Proxmox VE 7")
    found = {(m.group(1).lower(), m.group(2)) for m in _RELEASE.finditer(body)
             if m.group(1).lower() not in lx.ORDINAL and (m.group(1).lower() not in STOP or m.group(1).isupper()
                                                         and _PRODUCT_BEFORE.search(body, 0, m.start()))}
    return found.pop() if len(found) == 1 else None


def _own_terms(it: Item, name_terms: frozenset[str]) -> frozenset[str]:
    """What an entry names besides a release's name: its words, not concepts or common words."""
    return frozenset(t for t in (it.subject | it.head) - name_terms
                     if not t.startswith("~") and not is_common_word(t) and not _a_count(t))


def _clause_at(f: str, pos: int) -> str:
    return clause_at(f, pos, _CLAUSE_END)


def named_releases(ctx: Context) -> list[Candidate]:
    """A release named by a whole number moved: the entry says "Node 18" and the lines about its subject
    now say "Node 22" ("runners reimaged, now on Node 22"). Only the number changes. The line must be
    about this entry more than any other entry naming the same release, and say something of the entry
    besides the name. The clause must not ask, plan, hold back or deny. The newer number needs a
    change said (an upgrade word, or the old number beside it) or two days of it."""
    releases = {id(it): r for it in ctx.items if (r := _release_in(it.entry.body))}
    by_name: dict[str, list[Item]] = {}
    for it in ctx.items:
        if id(it) in releases:
            by_name.setdefault(releases[id(it)][0], []).append(it)
    every = [(x, _own_terms(x, term_set(releases[id(x)][0]))) for x in ctx.items if id(x) in releases]
    out = []
    for it in ctx.items:
        rel = releases.get(id(it))
        if not rel or it.frozen or it.step or lx.HELD.search(it.folded) or it.versions:
            continue
        name, cur = rel
        name_terms = term_set(name)
        own = _own_terms(it, name_terms)
        rivals = [(x, _own_terms(x, name_terms)) for x in by_name[name] if x is not it]
        names = "|".join(re.escape(n) for n in (name, *_abbreviations(ctx, it, name, cur, own)))
        # (an image tag names the release too: "node:22-bookworm")
        rx = re.compile(rf"(?<![a-z0-9_./-])(?:{names})(?:[ \t]?v?(\d{{1,3}})(?![\w:/%°'’-]|[.,]\d)"
                        rf"|:(\d{{1,3}})(?:-[a-z][\w.-]*)?(?![\w:/%°'’]|[.,]\d))")
        # "Ubuntu 22 to 24", "Node 18 → 22": the old number, then the new one bare
        onward = re.compile(rf"(?<![a-z0-9_./-])(?:{names})[ \t]?v?{re.escape(cur)}\s*(?:→|->|=>|\bto\b|"
                            rf"{lx.CHANGE_ZH})\s*v?(\d{{1,3}})(?![\w:/%°'’-]|[.,]\d)")
        ids = {m.group(0) for m in _NAMED_ID.finditer(it.folded)}
        held = re.compile(rf"(?<![a-z0-9_./-])(?:{names})[ \t]?v?{re.escape(cur)}(?!\d|[.,]\d)")
        planned: dict[str, Observation] = {}  # a move planned for the entry ("想把主服库 pg14 升到 16"): its first line
        by_number: dict[str, list[tuple[Observation, bool, bool]]] = {}  # lines moving it by the bare number
        found: dict[str, list[tuple[Observation, bool, bool]]] = {}  # (line, its box runs it now, explicit)
        # every line naming the release (a topic talked of daily is no anchor of the index in a short week)
        named_here = not any(re.search(names, x.folded) for x in ctx.items if x is not it)
        for o in ctx.obs:
            if o.role == "assistant" or o.sensitive or (it.entry.date and o.day < it.entry.date):
                continue
            f = fold(o.text)
            if lx.ASKED.search(f):
                continue
            if not re.search(names, f):
                # "正式环境的订单库也升到 16 了": the release moved, said of the entry's own subject by its bare number
                bare = _bare_move(ctx, f, cur, own, [theirs for x, theirs in every if x is not it])
                if bare:
                    by_number.setdefault(bare, []).append((o, False, True))
                continue
            mine = ctx.weight(o.terms & own)
            if not mine and not (named_here and UPGRADE.search(f) and re.match(rf"\s*(?:{names})", f)):
                continue  # the name alone: a release of something else (unless no other entry names it and the line,
                # opening with it, says it was upgraded or installed: "Aspire 12 upgrade license came thru"; not
                # "文档站升级到 Next.js 15", another thing's upgrade)
            if any(ctx.weight(o.terms & theirs) >= mine for _, theirs in rivals):
                continue  # another entry with the same release fits the line as well
            if _names_a_sibling(it, o, name_terms):
                continue  # "orion-mobile 升到 Node 22" is not the entry's Orion
            if any(lx.VERSION_HELD.search(c) or lx.PERSISTS.search(c) for c in clauses(f) if held.search(c)):
                continue  # the line says the entry's release stays ("billing stays on Java 17")
            for m in [*onward.finditer(f), *rx.finditer(f)]:
                nv = m.group(1) or m.group(2)
                if int(nv) <= int(cur):
                    continue
                cl = _clause_at(f, m.start())
                if _no_release_moved(cl):
                    if m.re is onward and lx.PLANNED.search(cl) and not (lx.DENIED.search(cl) or lx.HELD.search(cl)):
                        planned.setdefault(nv, o)
                    continue
                # the upgrade said, the old number beside the new, or the planned move since come true
                explicit = (bool(UPGRADE.search(cl)) or bool(re.search(rf"(?<!\d){re.escape(cur)}(?!\d)", cl))
                            or nv in planned and planned[nv].day <= o.day)
                # the clause says what the entry's own instance runs now ("db-1 现在是 PostgreSQL 16"): a named
                # box, not the product in general
                now = bool(lx.NOW_STATE.search(cl)) and any(i in cl for i in ids)
                found.setdefault(nv, []).append((o, now, explicit))
                break
        for nv, hits in by_number.items():
            if nv in found or nv in planned:  # only beside a line naming the release with that number
                found.setdefault(nv, []).extend(hits)
        if not found:
            continue
        last = max(o.day for hits in found.values() for o, _, _ in hits)
        newest = {nv for nv, hits in found.items() if any(o.day == last for o, _, _ in hits)}
        if len(newest) != 1:
            continue  # two new numbers on the last day: unsure
        nv = newest.pop()
        support = [o for o, _, _ in found[nv]]
        if nv in planned and planned[nv].day < min(o.day for o in support):
            support.insert(0, planned[nv])  # the plan and, on a later day, its outcome: two lines of the move
        days = len({o.day for o in support})
        explicit = any(e for _, _, e in found[nv])
        instance = any(i for _, i, _ in found[nv])
        if not explicit and days < 2:
            continue
        slot = _slot(it, "version", None, f"{name}\0{nv}")
        if slot is None:
            continue
        a, b, old_raw = slot
        if _still_said(ctx, it, "version", a, b, support, max(support, key=lambda o: o.day)):
            continue  # a line as late says the entry's release still holds ("staging 还是 Node 18")
        body = it.entry.body
        text = compose(it, body[:a] + nv + body[b:], max(o.day for o in support) if it.entry.date else None)
        score = confidence("version", explicit=explicit, extra_days=min(days - 1, 2), instance=instance,
                           recent=ctx.recency(support))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"{name} {old_raw} → {nv} (seen on {days} day(s))",
                       evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
        out.append(Candidate(op, "version", score, {"days": days, "explicit": explicit, "from": old_raw, "to": nv}))
    return out


# a unit after a number: a measure, no release ("1.7 米", "2.5 kg", "3.5h")
_UNIT_AFTER = re.compile(r"\s*(?:米|厘米|公分|毫米|公里|公斤|千克|克|斤|毫升|度|小时|分钟|秒|吨|寸|尺|"
                         r"(?:m|cm|mm|km|kg|lb|lbs|ml|hrs?|min|°c|°f|%|kn|kt|ft)(?![a-z0-9]))")


def _no_release_moved(cl: str) -> bool:
    """A clause naming a newer release that reports no move of it: a plan, a hold, a denial, a wait, a to-do, a
    release kept back, or one only read about."""
    return bool(lx.PLANNED.search(cl) or lx.HELD.search(cl) or lx.DENIED.search(cl) or lx.PENDING.search(cl)
                or lx.TODO.search(cl) or lx.VERSION_HELD.search(cl) or lx.RELEASE_DOCS.search(cl))


_BARE_MOVE = re.compile(rf"(?:{lx.CHANGE_ZH}|\b(?:upgraded|bumped|updated|moved) to\b)\s*v?(\d{{1,3}})"
                        r"(?=\s*(?:$|了|[，,。;；!！)）、]|\.(?!\d)))")


def _bare_move(ctx: Context, f: str, cur: str, own: frozenset[str], others: list[frozenset[str]]) -> str | None:
    """The newer number a line's clause moves a release to without naming it ("订单库也升到 16 了"): the
    clause names the entry's own subject more than any other entry with a release, no name stands before
    the number, and the clause does not plan, hold back or deny. (Such a line only adds to one naming the
    release with that number: alone, "会员系统升到 11" may be the system's own version.)"""
    if not lx.UPGRADED.search(f):
        return None
    for m in _BARE_MOVE.finditer(f):
        nv = m.group(1)
        cl = _clause_at(f, m.start())
        if int(nv) <= int(cur) or _name_before(f[:m.start()]) or not lx.UPGRADED.search(cl):
            continue
        if _no_release_moved(cl):
            continue
        said = term_set(cl)
        mine = ctx.weight(said & own)
        if mine and not any(ctx.weight(said & theirs) >= mine for theirs in others):
            return nv
    return None


def _abbreviations(ctx: Context, it: Item, name: str, cur: str, own: frozenset[str]) -> list[str]:
    """What the lines call a release's name for short, on a line about the entry's own subject: its head of
    three letters or more with any number ("Win11" for "Windows 10"), or two to four letters, the name's
    first letter first and the rest in the name's order, with the entry's current number ("pg14" for
    "PostgreSQL 14")."""
    if len(name) < 6 or not name.isalpha():
        return []
    rx = re.compile(r"(?<![a-z0-9_./-])([a-z]{2,5})[ \t]?v?(\d{1,3})(?!\d|[.,]\d)")
    found = set()
    for o in ctx.obs:
        if o.role == "assistant" or not ctx.weight(o.terms & own):
            continue
        for m in rx.finditer(fold(o.text)):
            short = m.group(1)
            if short == name or short in STOP or is_common_word(short):
                continue
            # its head ("Win11" for Windows) with any number; letters in its order ("pg14") with the entry's own
            if len(short) >= 3 and name.startswith(short) or m.group(2) == cur and len(short) <= 4 and \
                    short[0] == name[0] and re.fullmatch(".*?".join(map(re.escape, short)) + ".*", name):
                found.add(short)
    return sorted(found)


_CODE_LIST = rf"{CODE_SPAN}(?:\s*[,，、]\s*(?:and\s+|和|及)?{CODE_SPAN}|\s*(?:,?\s*and|和|及)\s*{CODE_SPAN})+"
_LIST_COPULA = r"\s*(?:\bare\b|\bwere\b|[:：=]|是|为|有)\s*"


def headings(it: Item) -> list[str]:
    """The titles of the sections an entry stands in, outermost first."""
    path: list[tuple[int, str]] = []
    for sec in it.doc.sections:
        if sec.line > it.entry.start:
            break
        while path and path[-1][0] >= sec.level:
            path.pop()
        path.append((sec.level, sec.title))
    return [t for _, t in path]


def qualifiers(it: Item) -> frozenset[str]:
    """What a heading that names the entry's subject says besides it: which one of several things of that
    kind the section is about ("TEG rental OpenClaw instance" → teg, rental). Empty when no heading names
    the subject, or names only it and words any heading uses ("OpenClaw setup")."""
    subj = set(it.head) - lx.VERSION_WORDS
    for title in reversed(headings(it)):
        ht = term_set(title)
        if ht & subj:
            return frozenset(t for t in ht - subj - lx.VERSION_WORDS if t not in lx.GENERIC_HEADING
                             and fold(t) not in lx.GENERIC_HEADING)
    return frozenset()


def _label_text(body: str, m: re.Match[str]) -> str:
    """The entry's label as written, its closing bold included ("**Label:** value" → "**Label:**")."""
    closing = re.match(r"(?:\*\*|__)?", body[m.end():]).group(0)
    return (body[:m.end()].rstrip() + closing).rstrip()


def listed_values(ctx: Context) -> list[Candidate]:
    """A labelled entry that lists several things ("**Models:** A primary, B and C fallbacks") and a
    line that states the whole list again under the same label, each value written as code, in the
    scope of the entry's headings ("the configured models are `a`, `b`, and `c`" in an audit of the
    configuration the section is about): the list is refreshed to what that line lists, newest line
    first. Two different lists on the newest day, or a line outside the headings' scope, change nothing."""
    out = []
    # only a line that writes code can list values as code: each label's pattern is tried on these only
    coded = [o for o in ctx.obs if "`" in o.text and o.role != "assistant" and not o.sensitive]
    for it in ctx.items:
        if it.frozen or it.step or it.entry.file not in (ctx.primary, ctx.user_file):
            continue
        m = LABEL_RE.match(it.entry.body)
        lab = _label(it.entry.body)
        if not m or not lab:
            continue
        value = re.sub(r"^(?:\*\*|__)\s*", "", it.entry.body[m.end():]).strip()
        if not MULTI_VALUE.search(value) or len(value) > 160 or "\n" in value:
            continue
        noun = re.sub(r"[*_`]", "", lab).split()[-1] if re.sub(r"[*_`]", "", lab).split() else ""
        if len(noun) < 2:
            continue
        lab_terms = term_set(noun)
        scope = term_set(" ".join(headings(it))) - lab_terms
        if not lab_terms or not scope:
            continue
        lower_noun = noun.lower()
        # the label's noun must be there (an ASCII noun: re.I folds no other letters onto it)
        lines = [o for o in coded if lower_noun in o.text.lower()] if noun.isascii() else coded
        if not lines:
            continue
        said = re.compile(rf"(?<![\w-]){re.escape(noun)}{_LIST_COPULA}(?:{_CODE_LIST})", re.I)
        found = []
        for o in lines:
            a = said.search(o.text)
            if not a or not (o.terms & scope):
                continue
            vals = CODE_SPAN_RE.findall(a.group(0))
            if len(set(vals)) < 2 or all(v.lower() in fold(value) for v in vals):
                continue
            found.append((o, tuple(vals), a.group(0)))
        if not found:
            continue
        o, vals, quote = max(found, key=lambda x: (x[0].day, x[0].line))
        if any(v != vals for x, v, _ in found if x.day == o.day):
            continue  # two lists the same day: unsure
        label_text = _label_text(it.entry.body, m)
        body = f"{label_text} " + ", ".join(f"`{v}`" for v in vals)
        days = len({x.day for x, v, _ in found if v == vals})
        score = confidence("slot", extra_days=days - 1, recent=ctx.recency([o]))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, body, o.day), confidence=score,
                       reason=f"'{lab.strip('* ')}' are now " + ", ".join(vals),
                       evidence=(entry_evidence(it), Evidence(o.ref, quote)), origin="offline")
        out.append(Candidate(op, "slot", score, {"days": days, "list": True}))
    return out


def labelled_slots(ctx: Context) -> list[Candidate]:
    """A labelled setting whose value is one identifier ("**Model**: Falcon 4.1 (falcon-cloud/f41)"),
    and a line that assigns a new identifier to that label, or to its primary/default slot, next to the
    label and to what the entry's section is about ("the main agent's model … primary: `acme/falcon-5`"):
    the value is refreshed to that identifier. A value listing several things is left alone."""
    out = []
    # the lines that assign an identifier to anything: each label's own pattern is tried on these only
    assignable = [o for o in ctx.obs if o.role != "assistant" and not o.sensitive and ASSIGNS.search(o.text)]
    by_label: dict[tuple[str, str], int] = {}
    labelled: list[tuple[Item, frozenset[str]]] = []  # each labelled entry with its label's terms, found once
    for it in ctx.items:
        lab = _label(it.entry.body)
        if lab:
            by_label[(it.entry.file, lab)] = by_label.get((it.entry.file, lab), 0) + 1
            labelled.append((it, term_set(lab.replace("*", " "))))
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        m = LABEL_RE.match(it.entry.body)
        lab = _label(it.entry.body)
        if not m or not lab:
            continue
        value = re.sub(r"^(?:\*\*|__)\s*", "", it.entry.body[m.end():]).strip()  # "**Label:** value"
        old_ids = re.findall(IDENT, value)
        slot_clause = None  # in a list of values, the one clause that names the primary slot
        if MULTI_VALUE.search(re.sub(r"\([^)]*\)", "", value)):
            clauses_ = [c for c in re.split(r"[,，;；]", value) if SLOT_TAIL.search(c.strip())]
            if len(clauses_) != 1:
                continue
            slot_clause = clauses_[0].strip()
            old_ids = [SLOT_TAIL.search(slot_clause).group(1)]
        if not old_ids or len(value) > 120:
            continue
        lab_terms = term_set(lab.replace("*", " "))
        if not lab_terms:
            continue
        scope = term_set(it.entry.section or "") - lab_terms
        if by_label[(it.entry.file, lab)] > 1 and not scope:
            continue  # one label under several headings, and nothing to tell which heading is meant
        names = "|".join(re.escape(t) for t in sorted(lab_terms, key=len, reverse=True))
        assign = re.compile(rf"(?:(?:{names})\w*|{lx.SLOT_WORDS}){_ASSIGN}" + IDENT, re.I)
        # another entry's label sharing a word of this one ("Production database host" beside "Staging
        # database host"): the line must name what tells this label apart, and nothing that tells the other
        rivals = [r for x, r in labelled if x is not it and x.entry.file == it.entry.file and r & lab_terms
                  and r != lab_terms]
        found = []
        for o in assignable:
            f = fold(o.text)
            for a in assign.finditer(o.text):
                new = a.group(1)
                before = f[max(0, a.start() - 60):a.start() + 1]
                if not any(t in term_set(before + f[a.start():a.end()]) for t in lab_terms):
                    continue  # a primary of something else
                if by_label[(it.entry.file, lab)] > 1 and not (term_set(before) & scope):
                    continue  # the label stands under several headings: the line must say which
                bt = term_set(before)
                if any(not bt & (lab_terms - r) or bt & (r - lab_terms) for r in rivals):
                    continue  # the label of a sibling entry as well: the line must say which
                if new.lower() in fold(it.entry.body) or new in old_ids:
                    continue
                found.append((o, new, o.text[a.start():a.end()]))
                break
        if not found:
            continue
        o, new, said = max(found, key=lambda x: (x[0].day, x[0].line))
        if any(n != new for x, n, _ in found if x.day == o.day):
            continue  # two new values the same day: unsure
        label_text = _label_text(it.entry.body, m)
        if slot_clause:
            tail = SLOT_TAIL.search(slot_clause)
            body = it.entry.body.replace(slot_clause, f"`{new}` {slot_clause[tail.end(1):].strip()}", 1)
        else:
            body = f"{label_text} `{new}`"
        days = len({x.day for x, n, _ in found if n == new})
        score = confidence("slot", extra_days=days - 1, recent=ctx.recency([o]))
        # the quote is the assignment itself, which may sit on a continuation line of the cited item
        ev = [Evidence(x.ref, q) for x, n, q in sorted(found, key=lambda x: (x[0].day, x[0].line))[-3:] if n == new]
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, body, o.day), confidence=score,
                       reason=f"'{lab.strip('* ')}' is now {new}", evidence=(entry_evidence(it), *ev),
                       origin="offline")
        out.append(Candidate(op, "slot", score, {"days": days}))
    return out


# -- refresh: one slot a change statement moves --------------------------------------------------
# A value, over folded text (lower case, Simplified): a name, a name with its version ("next.js 15",
# "qwen2.5"), or a bare version. Letters and digits only at its edges: a path, an identifier's part or a
# command is not a value of its own.
_NAME = r"[a-z][a-z0-9.+_-]*[a-z0-9+]|[a-z]"
_VER = r"v?\d+(?:\.\d+)*"
_VAL = rf"`?(?<![a-z0-9_./-])(?:(?:{_NAME})(?: v?\d+(?:\.\d+)*)?|{_VER})(?![a-z0-9_/-]|\.[a-z0-9])`?"
_FRAMES = [re.compile(p) for p in (
    # (a name may carry a Chinese word of its own: "Google 翻譯 → DeepL Pro")
    rf"(?P<old>{_VAL}(?:[ \t]?[\u4e00-\u9fff]{{1,4}}(?=\s*(?:→|->|=>|⇒|➜)))?)\s*(?:→|->|=>|⇒|➜)\s*(?P<new>{_VAL})",
    rf"\bfrom\s+(?P<old>{_VAL})\s+(?:to|into)\s+(?P<new>{_VAL})",                      # from X to Y
    # a Chinese verb may carry its aspect particle: 换成了 / 升级到了 Y
    rf"从\s*(?P<old>{_VAL})\s*(?:{lx.CHANGE_ZH}|到)\s*了?\s*(?P<new>{_VAL})",          # 从 X 换成 Y
    rf"(?P<old>{_VAL})\s*(?:{lx.CHANGE_ZH})\s*了?\s*(?P<new>{_VAL})",                   # X 换成 Y
    rf"\bswitch(?:ed|es|ing)?\s+(?:over\s+)?(?P<old>{_VAL})\s+to\s+(?P<new>{_VAL})",     # switched X to Y
    rf"\breplac(?:e|ed|es|ing)\s+(?P<old>{_VAL})\s+(?:with|by)\s+(?P<new>{_VAL})",       # replaced X with Y
    rf"(?P<old>{_VAL})\s+(?:(?:was|is|got|has been)\s+)?replaced\s+(?:with|by)\s+(?P<new>{_VAL})",
    # no old value: only a version moves this way, of the name given or named just before
    rf"\b(?:{lx.CHANGE_EN})\s+(?:(?:the|our|my)\s+)?(?:(?P<name>{_NAME})\s+)?to\s+(?P<new>{_VAL})",
    rf"(?:{lx.CHANGE_ZH})\s*了?\s*(?P<new>{_VAL})",
    # what a job is done with now ("transcripts now come from whisper.cpp", "发票现在改由 Xero 开"): a tool, no old one
    rf"\bnow\s+(?:(?:comes?|came)\s+from|(?:is|are)\s+(?:done|made|generated|handled|produced|built|run)\s+"
    rf"(?:with|by|in|on)|(?:uses?|runs?\s+on|goes\s+through))\s+(?P<new>{_VAL})",
    rf"(?:现在|如今|目前)(?:改由|改用|都用|用)\s*(?P<new>{_VAL})",
    # what a thing uses from now on ("以后青柚统一用 pnpm", "今后一律改用 X"), the thing named between
    rf"(?:以后|今后|往后|从此)[^，,。；;：:]{{0,12}}?(?:统一|一律|全部|都)(?:改用|用)\s*(?P<new>{_VAL})",
    # "labels go through Evri instead of Royal Mail": the new one first
    rf"(?P<new>{_VAL})\s+instead\s+of\s+(?P<old>{_VAL})",
)]
# what each frame cannot match without (a literal every match holds): a clause holding none of a
# frame's words is not searched with it
_CHANGE_ZH_WORDS = tuple(lx.CHANGE_ZH.split("|"))
_CHANGE_EN_HEADS = tuple(re.match(r"\w+", a).group(0) for a in re.findall(r"(?:[^|(]|\([^)]*\))+", lx.CHANGE_EN))
_FRAME_NEEDS = (("→", "->", "=>", "⇒", "➜"), ("from",), ("从",), _CHANGE_ZH_WORDS, ("switch",), ("replac",),
                ("replaced",), _CHANGE_EN_HEADS, _CHANGE_ZH_WORDS, ("now",), ("现在", "如今", "目前"),
                ("以后", "今后", "往后", "从此"), ("instead",))
# any frame's word: a clause holding none is searched with no frame
_FRAME_WORDS = re.compile("|".join(re.escape(w) for w in sorted({w for needs in _FRAME_NEEDS for w in needs},
                                                                key=len, reverse=True)))
# "switched to Y", "换成 Y", "now come from Y", "以后统一用 Y": the old one is the entry's
_NO_OLD_FRAMES = frozenset(_FRAMES[7:12])
_NOW_FRAMES = frozenset(_FRAMES[9:12])  # "now come from Y", "现在改由 Y", "以后统一用 Y"
_INSTEAD_FRAME = _FRAMES[12]  # "NEW instead of OLD"
_VERB_FRAMES = frozenset(_FRAMES[4:7])  # "switched X to Y", "replaced X with Y": X may name the slot instead
_SPLIT = re.compile(r"^(?P<name>[a-z][a-z.+_-]*?[a-z]) ?[-_]?v?(?P<ver>\d+(?:\.\d+)*)$|^v?(?P<bare>\d+(?:\.\d+)*)$")
# every frame above needs one of these: a line without them states no change (checked before the frames)
_FRAME_GATE = compile_words(rf"→|->|=>|⇒|➜|\bfrom\b|从|\bswitch|\breplac|{lx.CHANGE_ZH}|\b(?:{lx.CHANGE_EN})|\bnow\b|"
                            r"(?:现在|如今|目前)(?:改由|改用|都用|用)|(?:以后|今后|往后|从此)|\binstead of\b")
_CHANGE_WORDS = compile_words(rf"\b(?:{lx.CHANGE_EN}|replac\w*|from|to|with|by)\b|{lx.CHANGE_ZH}|从|把|将")


def _split(value: str) -> tuple[str | None, str | None]:
    """A value as (name, version): "next.js 15" → ("next.js", "15"), "qwen2.5" → ("qwen", "2.5"),
    "16" → (None, "16"), "uv" → ("uv", None)."""
    m = _SPLIT.match(value)
    if not m or m.group("name") and re.search(r"[-_.][a-z]$", m.group("name")):
        return value, None  # (a letter glued on, "deepseek-r1", "gpt-4o": the number is the name's)
    if m.group("bare"):
        return None, m.group("bare")
    return m.group("name"), m.group("ver")


def _frames_in(fc: str) -> list[re.Pattern[str]]:
    """The frames whose words (any of a frame's needs) the clause holds, in _FRAMES order."""
    if not _FRAME_WORDS.search(fc):
        return []
    return [fr for fr, needs in zip(_FRAMES, _FRAME_NEEDS) if any(w in fc for w in needs)]


def _statements(o: Observation) -> list[tuple[str, str | None, str, str, int, int, frozenset[str]]]:
    """The changes a line states: (kind, old, new, new as written, start, end, the clause's other terms).
    kind "version" gives old and new as versions of one name (old None when unsaid) and the name in
    `new`'s place is "name\0version"; kind "tool" gives two names. Nothing when the line asks, plans,
    denies, holds back or rolls back."""
    f = fold(o.text)
    if not _FRAME_GATE.search(f) or lx.ASKED.search(f) or lx.EXCEPTION.search(f):
        return []  # no frame's words on the line (most log lines), or a one-off: nothing it could state
    out = []
    pos = 0
    # what the line is about when it starts with it as a label ("kiln: do-release-upgrade finished, Ubuntu 22 → 24"),
    # not who said it ("Teodor: …", a person's words)
    topic = _topic(f)
    for cl in clauses(o.text):
        start = o.text.find(cl, pos)
        pos = start + len(cl)
        fc = f[start:start + len(cl)]
        frames = _frames_in(fc)
        if not frames:
            continue  # no frame's words in the clause
        if lx.HELD.search(fc) or lx.PENDING.search(fc) or lx.TODO.search(fc):
            continue
        if len(re.findall(r"→|->|=>|⇒|➜", fc)) > 1:
            continue  # a chain of arrows is a flow, not a change
        seen = set()
        for fr in frames:
            for m in fr.finditer(fc):
                prefix = fc[:m.start("new")]
                if lx.PLANNED.search(prefix) or lx.DENIED.search(prefix):
                    continue
                if lx.PLANNED.search(fc[m.end("new"):]) and not lx.PLANNED.search(fc[m.start("new"):m.end("new")]):
                    continue  # hedged after it in its clause ("moving invoicing from Xero to QuickBooks 'maybe in the
                    # new year'")
                new_raw = cl[m.start("new"):m.end("new")].strip("`")
                old = m.group("old").strip("`") if "old" in fr.groupindex and m.group("old") else None
                new = m.group("new").strip("`")
                nn, nv = _split(new)
                if old is not None:
                    on, ov = _split(old)
                    if old in STOP or new in STOP or old == new:
                        continue
                    if fr in _VERB_FRAMES and cl[m.start("old"):m.end("old")].strip("`").isupper():
                        continue  # "switched TTS to …", "replaced TTS with …": the slot's name, not its value
                else:
                    on, ov = None, None
                if nv is not None and (ov is not None or old is None) and (on is None or nn is None or on == nn):
                    name = nn or on
                    if not name and lx.UPGRADED.search(fc):
                        # a bare number is a version when a release is said to move, of the name just before
                        name = ("name" in fr.groupindex and m.group("name")) or _name_before(fc[:m.start()])
                    if not name or name in STOP:
                        continue
                    kind, a, b = "version", ov, f"{name}\0{nv}"
                    if nn is not None:
                        new_raw = new_raw[len(new_raw) - len(nv):] if new_raw.endswith(nv) else nv
                    else:
                        new_raw = nv
                elif old is None and nv is None and fr in _NO_OLD_FRAMES and new not in STOP and len(new) > 1:
                    new_raw, new = _whole_name(cl, m.end("new"), new_raw, new)
                    kind, a, b = "tool", None, new  # "以后统一换成 deepseek-r1": the old tool is the entry's
                elif old is not None and nv is None and ov is None or old is not None and on != nn and on and nn:
                    if re.search(r"[./_]", old + new) or fr is _FRAMES[0] and not lx.SWITCHED.search(fc):
                        continue  # a file, a module, or a flow ("a → b"): no tool of its own
                    if fr is _INSTEAD_FRAME and not (lx.TIME_MARKER.search(f) or lx.TOOK_OVER.search(f)):
                        continue  # "took cards with Toast instead of Square today": a stand-in, no standing change
                    if lx.WEEKDAY.fullmatch(old) or lx.WEEKDAY.fullmatch(new):
                        continue  # "on Monday instead of Friday": a day, the schedule's, no tool
                    new_raw, new = _whole_name(cl, m.end("new"), new_raw, new)
                    # (the old one of several capitalised words too: "instead of Royal Mail" is one name)
                    old = _whole_name(cl, m.end("old"), cl[m.start("old"):m.end("old")].strip("`"), old)[1]
                    kind, a, b = "tool", old, new
                else:
                    continue
                key = (kind, a, b)
                if key in seen:
                    continue
                seen.add(key)
                # who said it ("周柏拍板：", "Tomás decided:") is no part of what the change is about
                said_by = _SAID_BY.match(fc)
                lead = fc[said_by.end() if said_by and lx.PERSON_SAID.search(said_by.group(0)) else 0:m.start()]
                if fr is _FRAMES[11]:
                    lead += " " + fc[m.start():m.start("new")]  # ("以后青柚统一用 pnpm": the thing inside the frame)
                # (what follows the tool a job is now done with says where it runs: the new tool's, not the entry's;
                # what follows the sentence's end, "Ubuntu 22 → 24. Docker … came back fine", is another story)
                after = "" if fr in _NOW_FRAMES else _SENTENCE_END.split(fc[m.end():], 1)[0]
                rest = _CHANGE_WORDS.sub(" ", lead + " " + after + " " + topic)
                out.append((kind, a, b, new_raw, start + m.start(), start + m.end(), _words_once(term_set(rest))))
    return out


_SAID_BY = re.compile(r"^[^:：]{1,40}[:：]")
_TOPIC = re.compile(r"^\s*`?([a-z0-9][a-z0-9_.-]{1,23})`?\s*[:：]\s")  # one name as the line's label
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
_MORE_NAME = re.compile(r"(?:[ \t]+[A-Z][A-Za-z0-9+-]*)+")


def _topic(f: str) -> str:
    """What a folded line is about when it starts with it as a label ("kiln: do-release-upgrade finished, …"), not
    who said it ("teodor said: …")."""
    head = _TOPIC.match(f)
    return head.group(1) if head and not lx.PERSON_SAID.search(head.group(0)) and head.group(1) not in STOP else ""


def _words_once(terms: frozenset[str]) -> frozenset[str]:
    """Terms with a hyphenated word left out when its parts are terms too ("show-notes" beside "note"): the
    same words, counted once, as an entry writing them apart ("show notes") names them."""
    return frozenset(t for t in terms if not ("-" in t and t.isascii() and all(
        p in terms or p in STOP or len(p) < 2 for p in (stem(x) for x in t.split("-")))))


def _whole_name(cl: str, end: int, raw: str, folded: str) -> tuple[str, str]:
    """A name of several capitalised words is one name ("GitHub Actions", "Dropbox Sign"): the new tool
    as written and folded, with the capitalised words that follow it in the clause."""
    more = _MORE_NAME.match(cl, end) if raw[:1].isupper() else None
    return (raw + more.group(0), folded + more.group(0).lower()) if more else (raw, folded)


def _name_before(text: str) -> str | None:
    """The name a bare version belongs to: the last name before the change ("PostgreSQL 从 15 升到 16")."""
    text = re.sub(rf"(?:\s|\b(?:{lx.CHANGE_EN})\b|把|将)+$", "", text)
    m = re.search(rf"(?<![a-z0-9_./-])(?:{_NAME})$", text)
    return m.group(0) if m and m.group(0) not in STOP else None


def _slot(it: Item, kind: str, old: str | None, new: str) -> tuple[int, int, str] | None:
    """Where the one slot the change moves stands in the entry's body: (start, end, what it says now)."""
    body = it.entry.body
    f = fold(body)
    edge_l, edge_r = r"(?<![a-z0-9_./-])", r"(?![a-z0-9_/-]|\.[a-z0-9])"
    if kind == "version":
        name, nv = new.split("\0")
        if len(name) >= 6 and not re.search(edge_l + re.escape(name) + r"(?![a-z])", f):
            # a short form of the entry's name ("Postgres" for "PostgreSQL", "Elastic" for "Elasticsearch")
            longer = {m.group(0) for m in re.finditer(edge_l + re.escape(name) + r"[a-z]{1,6}(?![a-z])", f)}
            name = longer.pop() if len(longer) == 1 else name
        hits = list(re.finditer(edge_l + re.escape(name) + r"(?: ?[-_]?)v?(\d+(?:\.\d+)*)" + edge_r, f))
        if len(hits) != 1 or len(re.findall(edge_l + re.escape(name) + r"(?![a-z])", f)) != 1:
            return None  # the name twice, or with two versions: which one moved is unsure
        h = hits[0]
        cur = h.group(1)
        if cur in {v.lstrip("vV") for v in it.versions}:
            return None  # a dotted version: the version rule's
        if old is not None and version_key(old) != version_key(cur):
            return None
        if version_key(nv) == version_key(cur) or (old is None and version_key(nv) < version_key(cur)):
            return None
        if re.search(rf"(?<![\d.]){re.escape(nv.lstrip('v'))}(?![\d]|\.\d)", f):
            return None  # the new version is already named: the entry says something about it
        span = (h.start(1), h.end(1))
    else:
        hits = list(re.finditer(edge_l + re.escape(old) + edge_r, f))
        if len(hits) != 1 or re.search(edge_l + re.escape(new) + edge_r, f):
            return None
        span = (hits[0].start(), hits[0].end())
        if body[span[0]:span[0] + 1].isupper() and (more := _NAME_GOES_ON.match(body, span[1])):
            span = (span[0], more.end())  # "Royal Mail Click & Drop": a name of capitalised words is one name
        lab = LABEL_RE.match(body)
        if lab and _label(body) and span[0] < lab.end(1):
            return None  # the entry is about the old tool, not a choice of it
    for c in re.finditer(r"`([^`]+)`", body):
        if c.start() < span[0] and span[1] < c.end() and c.group(1).strip().lower() != f[span[0]:span[1]]:
            return None  # part of a command or identifier written as code
    return span[0], span[1], body[span[0]:span[1]]


_NAME_GOES_ON = re.compile(r"(?:[ \t]+(?:&[ \t]+)?[A-Z][A-Za-z0-9+-]*)+")
_FILE_LIKE = re.compile(r"`[^`\n]+`|(?<![\w/.-])[\w-]+\.[a-z][a-z0-9]{1,4}(?![\w])")


_TOOL_WORD = re.compile(r"(?<![a-z0-9_./-])[a-z][a-z0-9.+_-]*[a-z0-9+](?![a-z0-9_/-])")


def _retired_here(it: Item, o: Observation, new: str) -> str | None:
    """For a line naming only the tool switched to ("以后统一换成 deepseek-r1"), the one the entry names that
    the line says is retired or stopped in a clause of its own ("llama3 那套流程停掉", "llama3 is retired")."""
    f = fold(o.text)
    found = set()
    # the tool the entry says it uses, whose own file the line removes ("yarn.lock 删掉了" for "依赖用 yarn")
    uses = {m.group("tool").strip("`") for m in _USED_TOOL.finditer(it.folded)}
    for cl in clauses(f):
        if not (lx.RETIRED.search(cl) or lx.DONE_WITH.search(cl)):
            continue
        for m in _TOOL_WORD.finditer(cl):
            t = m.group(0)
            if "." in t and t.split(".")[0] in uses:
                t = t.split(".")[0]
            if t != new and t not in STOP and not is_common_word(t) and re.search(
                    r"(?<![a-z0-9_./-])" + re.escape(t) + r"(?![a-z0-9_/-])", it.folded):
                found.add(t)
    return found.pop() if len(found) == 1 else None


_USED_TOOL = re.compile(rf"(?:{lx.USE_VERB.source}|\bvia\b|部署在|托管在|跑在|\b(?:deployed|hosted)\s+(?:on|to|at)\b|"
                        rf"\b(?:generated|made|done|created|produced|handled|built|"
                        rf"transcribed|rendered|sent|hosted)\s+(?:with|by|in|on)\b)\s*(?P<tool>{_VAL})")


def _used_here(ctx: Context, it: Item, o: Observation, new: str, at: int) -> str | None:
    """For a line naming only the tool switched to, said of the entry's own subject ("nightly backup 已經搬到
    systemd timer" for "nightly backup 用 cron 每晚跑"), the one tool the entry says it uses: what the clause
    names before its change word is two or more of the entry's specific terms and nothing else specific."""
    tools = {m.group("tool").strip("`") for m in _USED_TOOL.finditer(it.folded)}
    tools = {t for t in tools if t not in STOP and not is_common_word(t) and t != new}
    if len(tools) != 1:
        return None
    f = fold(o.text)
    start = max((m.end() for m in _CLAUSE_END.finditer(f, 0, at)), default=0)
    said_by = _SAID_BY.match(f, start)
    lead = f[said_by.end() if said_by and lx.PERSON_SAID.search(said_by.group(0)) else start:at]
    # (when it starts is no part of what moved: "從今天起線上預約改用 X" is about 線上預約)
    lead = lx.TOOK_OVER.sub(" ", lx.TIME_MARKER.sub(" ", lead))
    said = {t for t in _words_once(term_set(_CHANGE_WORDS.sub(" ", lead))) if not t.startswith("~")}
    named = {t for t in said if ctx.anchor(t)}
    # (or every word of it the entry's, one of them specific: "線上預約" for "線上預約系統用 PetDesk", in a week
    # when 預約 is every day's word)
    fits = len(named) >= 2 and named <= it.subject | it.head or len(said) >= 2 and named and said <= it.subject
    return tools.pop() if fits else None


def _file_swap(it: Item, o: Observation) -> tuple[int, int, str] | None | bool:
    """A file or code name the entry holds that the line says was removed ("requirements.txt 删掉"), with
    the one the line puts in its place: False when the line removes none, the slot (start, end, the new
    name as written) when it names exactly one other file the entry lacks and keeps it ("uv.lock 已提交"),
    None when more moved than that (a person rewrites the entry)."""
    f = fold(o.text)
    body = fold(it.entry.body)
    gone = []
    for m in _FILE_LIKE.finditer(body):
        name = m.group(0).strip("`")
        pos = f.find(name)
        if pos >= 0 and lx.DONE_WITH.search(f[max(0, pos - 14):pos + len(name) + 14]):
            gone.append((m.start() + (m.group(0) != name), m.start() + (m.group(0) != name) + len(name)))
    if not gone:
        return False
    if len(gone) > 1:
        return None
    new = [m for m in _FILE_LIKE.finditer(f) if m.group(0).strip("`") not in body]
    if len(new) != 1 or lx.DONE_WITH.search(_clause_at(f, new[0].start())):
        return None
    m = new[0]
    raw = o.text[m.start():m.end()].strip("`")
    return gone[0][0], gone[0][1], raw


def _only_entry_naming(ctx: Context, kind: str, old: str | None, new: str) -> Item | None:
    """The one entry of memory naming what a change moves (the versioned name, or the old tool), if one."""
    name = new.split("\0")[0] if kind == "version" else (old or "")
    if not name:
        return None
    rx = re.compile(r"(?<![a-z0-9_./-])" + re.escape(name) + r"(?![a-z])")
    hits = [it for it in ctx.items if rx.search(it.folded)]
    return hits[0] if len(hits) == 1 else None


def _details_hold(it: Item, a: int, b: int, support: list[Observation]) -> bool:
    """A tool swapped for another takes its own details with it: every identifier the entry gives beside
    the old tool, in its clause (a host, a path, "self-hosted"), must be said again by the lines of the
    change, or the entry would put the new tool on the old one's box; another clause of the entry ("…,
    target 是 NAS 的 /volume1/borg") is the entry's own and stays."""
    body = it.entry.body
    said = frozenset().union(*(o.terms for o in support))
    clause = _clause_at(body, a)
    ids = {t for t in term_set(clause) - term_set(body[a:b]) if t.isascii() and not t.startswith("~")
           and not t.replace("'", "").isalpha() and not _ISO_DAY.fullmatch(t)}
    return ids <= said


# a path, or a file or host name with a dot ("/srv/nginx/conf.d", "~/.config/x", "nginx.conf")
_PATHLIKE = re.compile(r"(?:~|\.{1,2})?/[A-Za-z0-9_.@-]+(?:/[A-Za-z0-9_.@-]*)*"
                       r"|(?<![A-Za-z0-9_/.-])[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+(?![A-Za-z0-9_/-])")


def _owned_ids(body: str, old: str, new: str, support: list[Observation]) -> list[tuple[int, int, str]] | None:
    """The paths and file names of an entry that name its old tool ("配置放在 /srv/nginx/conf.d" for Nginx): each
    with the one path of the change's lines that names the new tool in its place ("配置在 /srv/caddy/Caddyfile"),
    to be put there; None when one has no such counterpart (then the old tool's setting would stay beside the
    new tool: a person says what takes its place). An empty list when no path names the old tool."""
    o_low, n_low = old.lower(), new.lower()
    out = []
    for m in _PATHLIKE.finditer(body):
        parts = re.split(r"[/._-]+", m.group(0).lower())
        if o_low not in parts and not any(p.startswith(o_low) for p in parts if p):
            continue
        theirs = {x.group(0) for o in support for x in _PATHLIKE.finditer(o.text)
                  if n_low in x.group(0).lower() and (x.group(0)[0] in "~/.") == (m.group(0)[0] in "~/.")}
        if len(theirs) != 1:
            return None
        out.append((m.start(), m.end(), theirs.pop()))
    return out


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_NAMED_ID = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w/-])")
_COMPOUND = re.compile(r"(?<![\w./-])([a-z][a-z0-9]*)[-_]([a-z][a-z0-9]*)(?![\w./-])")


def _names_a_sibling(it: Item, o: Observation, moving: frozenset[str] = frozenset()) -> bool:
    """The line names a compound ("orion-mobile", "Orion-Admin") whose head the entry names and whose
    other part it does not: the line is about another thing of the same family, not the entry's. A
    compound of what moves ("mariadb-upgrade" for MariaDB 10 → 11) is the change's own tool."""
    f = it.folded
    for m in _COMPOUND.finditer(fold(o.text)):
        head, tail = m.group(1), m.group(2)
        if m.group(0) in f or len(tail) < 2 or head in moving or tail in moving or any(
                lx.UPGRADED.search(w) for w in (head, tail)):
            continue  # ("pg_upgrade", "db-migrate": the tool of a move, no sibling)
        has = [bool(re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", f)) for w in (head, tail)]
        if has[0] != has[1]:
            return True
    return False


def _still_said(ctx: Context, it: Item, kind: str, a: int, b: int, hits: list[Observation],
                last: Observation) -> bool:
    """A line of the change's day or later, not itself one of the change's, says the entry's value still
    holds ("staging 还是 Node 18", "still on Node 18") of something specific to the entry besides that
    value, in the same clause, and not of a sibling ("web-a 仍是 Ubuntu 22" beside web-b's entry): the change is not the
    entry's."""
    f = fold(it.entry.body)
    cur = f[a:b]
    name = _name_before(f[:a]) if kind == "version" else None
    if kind == "version" and not name:
        return False
    said = rf"{re.escape(name)}\s?[-_]?v?{re.escape(cur)}(?!\d|\.\d)" if name else rf"{re.escape(cur)}(?![a-z0-9_/-])"
    rx = re.compile(r"(?<![a-z0-9_./-])" + said)
    other = it.subject - term_set(cur) - term_set(name or "")
    if name:  # ("llama3" is the value itself, written as one word)
        other = frozenset(t for t in other if not (t.startswith(name) and t[len(name):].lstrip(" -_v") == cur))
    seen = {id(h) for h in hits}
    for o in ctx.obs:
        if id(o) in seen or o.day < last.day or o.sensitive:
            continue
        fo = fold(o.text)
        m = rx.search(fo)
        if not m:
            continue
        cl = _clause_at(fo, m.start())
        if not (lx.PERSISTS.search(cl) or lx.VERSION_HELD.search(cl)):
            continue
        # the parts of a name the entry does not hold ("files-01" beside "render-01") say nothing of it
        foreign = frozenset().union(*(term_set(c.group(0)) for c in _NAMED_ID.finditer(fo) if c.group(0) not in f))
        if any(ctx.anchor(t) and not t.isdigit() for t in (term_set(cl) - foreign) & other):  # in that clause
            return True
    return False


def moved_slots(ctx: Context) -> list[Candidate]:
    """A version of any form ("PostgreSQL 15 → 16", "升級到 Next.js 15", "qwen2.5 换成 qwen3") or a chosen
    tool ("pip 換成 uv", "switched the TTS from Piper to Kokoro", "replaced nginx with Caddy") that a line
    says moved: the one slot of the one entry about that subject is refreshed with the line's words, the
    rest of the entry as written. The line must state the change (no question, plan or denial) in the
    person's or a log's words, and name nothing the entry does not when it names anything besides."""
    found: dict[int, list[tuple[Observation, int, int, str, str]]] = {}
    index = {id(it): k for k, it in enumerate(ctx.items)}
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 300:
            continue
        stated = _statements(o)
        if not stated:
            continue
        topic = term_set(_topic(fold(o.text)))
        for kind, old, new, new_raw, at, _, rest in stated:
            # (the release's or the new tool's own name, however short its form, says nothing of the entry)
            rest -= term_set(new.split("\0")[0]) | term_set(new_raw)
            said, rest = rest, frozenset(t for t in rest if ctx.anchor(t))
            best: list[tuple[float, Item, tuple[int, int, str], tuple | bool]] = []
            for it in ctx.items_about(o):
                if it.frozen or it.step or lx.HELD.search(it.folded):
                    continue
                if it.entry.date and o.day < it.entry.date:
                    continue  # written after the change
                was = old if old is not None or kind != "tool" else (
                    _retired_here(it, o, new) or _used_here(ctx, it, o, new, at))
                if kind == "tool" and was is None:
                    continue
                swap = _file_swap(it, o)
                if swap is None:
                    continue  # more than one slot moved ("… requirements.txt 删掉"): a person rewrites it
                if _names_a_sibling(it, o, frozenset({new.split("\0")[0], was or ""})):
                    continue  # "orion-mobile" beside an entry about Orion: another thing of the same name
                slot = _slot(it, kind, was, new)
                if slot is None:
                    continue
                own = it.subject | it.head | term_set(it.entry.section or "")
                if rest and ctx.weight(rest & own) < 0.5 * ctx.weight(rest) and not (
                        said & own and _only_entry_naming(ctx, kind, was, new) is it):
                    # the line is about something the entry does not name, unless the entry is the one
                    # entry of memory naming what moved and the line names something else it does too
                    # ("Priya ran pg_upgrade on db-2: PostgreSQL 15 to 16" for "… PostgreSQL 15 on db-2")
                    continue
                if swap and (swap[0] < slot[1] and slot[0] < swap[1] or kind != "tool"):
                    continue  # the file is the slot itself, or a version moved beside a file swap
                # (of two that fit as well, the one the line's label names, "kiln: … Ubuntu 22 → 24", or the one its
                # words name, however common they are here: "以后青柚统一用 pnpm")
                best.append(((ctx.weight(rest & own), bool(topic & own), ctx.weight(said & own)), it, slot, swap))
            if not best:
                continue
            best.sort(key=lambda b: (-b[0][0], not b[0][1], -b[0][2]))
            if len(best) > 1 and best[1][0] == best[0][0]:
                continue  # two entries fit as well: which one moved is unsure
            _, it, (a, b, _), swap = best[0]
            found.setdefault(index[id(it)], []).append((o, a, b, new_raw, kind, swap or None))
    out = []
    for k, hits in found.items():
        it = ctx.items[k]
        o, a, b, new_raw, kind, swap = max(hits, key=lambda h: (h[0].day, h[0].line))
        if any(h[3].lower() != new_raw.lower() or (h[1], h[2]) != (a, b) for h in hits if h[0].day == o.day):
            continue  # two changes of it the same day: unsure
        support = [h[0] for h in hits if h[3].lower() == new_raw.lower() and (h[1], h[2]) == (a, b)]
        body = it.entry.body
        if _still_said(ctx, it, kind, a, b, [h[0] for h in hits], o):
            continue  # a line as late says the entry's value still holds ("staging 还是 Node 18")
        if kind == "tool" and not _details_hold(it, a, b, support):
            continue  # a person says what of the old tool's setting the new one keeps
        old_raw = body[a:b]
        owned = _owned_ids(body, old_raw, new_raw, support) if kind == "tool" else []
        if owned is None:
            continue  # a path or file of the old tool's ("/srv/nginx/conf.d") with no new one to put in its place
        new_body = body[:a] + new_raw + body[b:]
        for ia, ib, inew in sorted(owned, reverse=True):  # (each after the slot: positions before it hold)
            shift = len(new_raw) - (b - a) if ia > a else 0
            new_body = new_body[:ia + shift] + inew + new_body[ib + shift:]
        if swap:  # the file the line removed, with the one it put in its place
            sa, sb, sn = swap
            new_body = (body[:sa] + sn + body[sb:a] + new_raw + body[b:] if sb <= a
                        else body[:a] + new_raw + body[b:sa] + sn + body[sb:])
        day = max(x.day for x in support) if it.entry.date else None
        text = compose(it, new_body, day) if day else compose(it, new_body, None)
        days = len({x.day for x in support})
        score = confidence("slot", extra_days=min(days - 1, 2), recent=ctx.recency(support))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"{old_raw} → {new_raw} ({o.day.isoformat()})",
                       evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
        out.append(Candidate(op, "slot", score, {"days": days, "from": old_raw, "to": new_raw}))
    return out


# -- refresh: a party or device handed its part to another ----------------------------------------
# a name as written: capitalised words ("Greenleaf Farms", "Rain Bird ESP-Me"), or a Chinese one in quotes
_CAP_NAME = re.compile(r"(?<![\w'’])(?:(?:Mr|Ms|Mrs|Dr|Prof)\.[ \t]+)?[A-Z][\w&+-]*"
                       r"(?:\.[\w&+-]+)*(?:[ \t]+(?:[A-Z][\w&+-]*(?:\.[\w&+-]+)*|\d+\w*))*")
# a person named by surname and title ("陳律師", "林先生", "王老师"): one character before the title
_TITLED_ZH = re.compile(r"[\u4e00-\u9fff](?:律師|律师|小姐|先生|女士|醫師|医师|醫生|医生|老師|老师|經理|经理"
                        r"|主任|師傅|师傅)")
_QUOTED_ZH = re.compile(r"[「“\"]([\u4e00-\u9fff]{2,12})[」”\"]")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;。！？：；]\s*)$")


_PRONOUN = re.compile(r"\b(?:she|he|her|him|hers|his|herself|himself)\b", re.I)
_SWAP = {"she": "he", "her": "him", "hers": "his", "herself": "himself", "he": "she", "him": "her", "his": "her",
         "himself": "herself"}
_TITLE_SEX = {"mr": "m", "ms": "f", "mrs": "f", "miss": "f"}


def _pronouns_for(body: str, old: str, new: str) -> str | None:
    """The entry with its pronouns for the new one: swapped when the titles say the two differ ("Ms. Lindqvist …
    remind her" → "Mr. Okafor … remind him"), as they are when they agree or the entry has none; None when it
    has one and the titles do not say."""
    if not _PRONOUN.search(body):
        return body
    sex = [_TITLE_SEX.get(re.match(r"\W*(\w*)", n).group(1).lower()) for n in (old, new)]
    if None in sex:
        return None
    if sex[0] == sex[1]:
        return body

    def swap(m: re.Match[str]) -> str:
        w = _SWAP[m.group(0).lower()]
        return w.capitalize() if m.group(0)[0].isupper() else w
    return _PRONOUN.sub(swap, body)


def _names(text: str) -> list[tuple[int, int, str]]:
    """The names a text writes: capitalised runs not opening a sentence (or of two words or more), and
    quoted Chinese names. (start, end, name); a possessive "'s" is no part of one."""
    out = []
    for m in _CAP_NAME.finditer(text):
        name = re.sub(r"['’]s$", "", m.group(0)).rstrip(".-")
        if " " not in name and _SENTENCE_START.search(text[:m.start()]):
            continue  # one capitalised word opening a sentence is any word
        if len(name) >= 3 and not name.isupper():
            out.append((m.start(), m.start() + len(name), name))
    out += [(m.start(1), m.end(1), m.group(1)) for m in _QUOTED_ZH.finditer(text)]
    out += [(m.start(), m.end(), m.group(0)) for m in _TITLED_ZH.finditer(text)]
    if CJK_IN.search(text):
        out += _familiar_names(text)
        out += _full_names(text, out)
    return out


def _full_names(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """People named in full the Chinese way, a surname and a given name of one or two characters ("王芳",
    "周晓岚"), where the segmenter reads a name: none a dictionary word ("顾客"), and none inside a name found
    otherwise ("林小姐"). A three-character reading whose last character is a word's start ("王芳带陈磊") is
    the two-character name."""
    from memgit.text import person_spans

    out = []
    spans = person_spans(text)
    starts = {a for a, _ in spans}
    simple = to_simplified(text)
    for a, b in spans:
        name = simple[a:b]
        if len(name) == 3 and (is_dictionary_word(simple[b - 1:b + 1]) or b in starts
                               or re.search(re.escape(name[:2]) + r"(?!" + re.escape(name[2]) + ")", simple)):
            b -= 1  # ("王芳带陈磊", "张伟明天到": the name and the next word's start; "王芳" said apart elsewhere)
            name = name[:2]
        if not 2 <= len(name) <= 3 or name[0] not in lx.SURNAMES_IN_NAME or is_dictionary_word(name):
            continue
        if any(x <= a and b <= y for x, y, _ in found):
            continue
        out.append((a, b, text[a:b]))
    return out


def _in_user_file(ctx: Context, it: Item) -> bool:
    return ctx.user_file is not None and it.entry.file == ctx.user_file


_HEAD_LABEL = re.compile(r"^([^:：\n]{1,60})(?<!\d)[:：](?!\d)\s*\S")  # (a clock's colon is no label's)


def _tells_handover(text: str, old: list[str], new: list[str]) -> bool:
    """A line telling a whole handover in its clauses: one names the old one with an ending word ("老陈月底前
    交接完"), another the new one with a taking-over word ("以后由小吴对接")."""
    parts = clauses(text)
    return any(_said(old, c) and lx.HANDED_OVER.search(fold(c)) for c in parts) and any(
        _said(new, c) and lx.TOOK_OVER.search(fold(c)) and not _said(old, c) for c in parts)


_FAMILIAR = "老小阿"
_KIN = "姐哥"
_FAMILIAR_RE = re.compile(r"[老小阿][\u4e00-\u9fff]|[\u4e00-\u9fff][姐哥]")


def _familiar_names(text: str) -> list[tuple[int, int, str]]:
    """People named the familiar Chinese way: 老 / 小 / 阿 and a surname ("老陈", "小吴"), or a surname and
    姐 / 哥 ("郑姐"); not where the surname's character begins a word with the next one ("小王子", "老黄历")."""
    from memgit.text import is_dictionary_word, to_simplified

    out = []
    for m in _FAMILIAR_RE.finditer(text):
        pair = to_simplified(m.group(0))
        if len(pair) != 2:
            continue
        name_char = pair[1] if pair[0] in _FAMILIAR else pair[0]
        if name_char not in lx.SURNAMES or pair[0] in _FAMILIAR and pair[1] in _KIN:
            continue
        nxt = to_simplified(text[m.end():m.end() + 1])
        if pair[0] in _FAMILIAR and nxt and is_dictionary_word(name_char + nxt):
            continue
        out.append((m.start(), m.end(), m.group(0)))
    return out


def _short_forms(name: str) -> list[str]:
    """How a log may name a party it knows: the full name, its first words ("Rain Bird" of "Rain Bird
    ESP-Me"), its first word when that is no common word ("Greenleaf" of "Greenleaf Farms"), or the first
    two characters of a Chinese name ("瑞科" of "瑞科检验")."""
    if CJK_IN.match(name):
        # (a person named in full by surname and a two-character given name goes by the given name: 周晓岚, 晓岚)
        # (not a title, "林律師", nor a word: "律師")
        given = [name[1:]] if len(name) == 3 and to_simplified(name[0]) in lx.SURNAMES_IN_NAME and not (
            _TITLED_ZH.fullmatch(name) or is_dictionary_word(to_simplified(name[1:]))) else []
        return [name] + ([name[:2]] if len(name) >= 4 else []) + given
    words = name.split()
    forms = [" ".join(words[:k]) for k in range(len(words), 1, -1)]
    w = words[0].lower()
    if len(words) > 1 and len(w) >= 4 and w not in STOP and lx.concept(w) is None:
        forms.append(words[0])
    return forms or [name]


def _only_speaker(forms: list[str], text: str) -> bool:
    """Every time the text names the party it is who speaks ("Grace 说…", "Grace said …", "Grace："): the story
    is of others, not of their part."""
    f = fold(text)
    at = [(m.start(), m.end()) for form in forms for m in re.finditer(
        rf"(?<![\w]){re.escape(fold(form))}(?![\w])" if form.isascii() else re.escape(fold(form)), f)]
    # (a colon after it marks who speaks only where the line starts with the name: "Grace：…", not "the orchard
    # Rain Bird: it keeps dropping …")
    return bool(at) and all(re.match(rf"\s*(?:{lx.PERSON_SAID.source})", f[b:b + 12])
                            or not f[:a].strip() and re.match(r"\s*[:：]", f[b:b + 3]) for a, b in at)


def _said(forms: list[str], text: str) -> bool:
    return any(re.search(rf"(?<![\w]){re.escape(f)}(?![\w])" if f.isascii() else re.escape(f), text) for f in forms)


def handovers(ctx: Context) -> list[Candidate]:
    """A party or device an entry names handed its part to another, told in the logs' own story rather
    than as "X → Y": a line says the old one's part is over ("Greenleaf gets notice", "瑞科最后一次收样",
    "the old Rain Bird came off"), a line says the new one takes it over ("signed the agreement with …",
    "installed the … controller", "从今天起…都交给…"), and the new one is named with the entry's subject on
    two days from then on. The old name is replaced by the new one as the logs write it in full; a clock
    time the taking-over line gives in place of the entry's moves with it; the rest stays as written. A
    question is no report, and when another entry naming the old one fits the lines as well, nothing moves."""
    out: list[Candidate] = []

    def said_so(o: Observation) -> bool:  # a report: the person's or a log's, and no question
        return o.role != "assistant" and not o.sensitive and len(o.text) <= 400 and not lx.ASKED.search(fold(o.text))

    # the few lines that end a part, then those that take one over (most lines do neither, and most
    # windows hold no ending at all): every later test asks only them
    ending = [o for o in ctx.obs if lx.HANDED_OVER.search(fold(o.text)) and said_so(o)]
    if not ending:
        return out
    taking = [(o, _names(o.text)) for o in ctx.obs if lx.TOOK_OVER.search(fold(o.text)) and said_so(o)]
    if not taking:
        return out
    entry_names = [(it, [n for _, _, n in _names(it.entry.body)]) for it in ctx.items]
    # who memory names as itself, its person or a rule's party (the user file, identity and rules) never takes
    # a part over; a colleague another entry names may ("周末值班交给小林" beside "工作日值班：唐卫东、小林轮流")
    memory_names = {n for it, names in entry_names if it.frozen or it.core or _in_user_file(ctx, it) for n in names}
    by_old: dict[str, list[Item]] = {}
    for it, names in entry_names:
        if it.frozen or it.step or it.core:
            continue
        # a label says what the entry is about ("Rehearsal bookings at St Aidan's Hall: contact …"): the
        # party handed over is in what follows it
        lab = _HEAD_LABEL.match(it.entry.body)
        head, value = (it.entry.body[:lab.end(1)], it.entry.body[lab.end(1):]) if lab else ("", it.entry.body)
        in_value = [n for n in names[:4] if n in value]
        for name in names[:4]:
            # (a name only in the head beside a party named after it is what the entry is about: "Rehearsal
            # bookings at St Aidan's Hall: contact Margaret Finch"; alone there, it is the party: "订场找老周：…")
            if not lx.WEEKDAY.search(fold(name)) and (name in value or not in_value):
                by_old.setdefault(name, []).append(it)
    told = [o for o in ctx.obs if said_so(o)]
    known = {n for _, names in entry_names for n in names}
    known_full = sorted({n for n in known if CJK_IN.match(n) and len(n) == 3 and len(_short_forms(n)) > 1})
    for old, holders in by_old.items():
        forms = _short_forms(old)
        ends = [o for o in ending if _said(forms, o.text) and not _only_speaker(forms, o.text)]
        if not ends:
            continue
        start = min(o.day for o in ends)
        # the new one: named, where the old one is not the subject, with a taking-over word
        cands: dict[str, list[Observation]] = {}
        for o, named in taking:
            if o.day < start - timedelta(days=1):
                continue
            took_at = lx.TOOK_OVER.search(fold(o.text))
            # (one memory names already is the new one only when named after the taking-over word: "许律师说…改给
            # 林律师" hands the cases to 林律师, not to who said so)
            found = [n for a, _, n in named if n not in memory_names and not _said(forms, n)
                     and not lx.WEEKDAY.search(fold(n)) and (n not in known or a >= took_at.start())]
            # a colleague memory names in full, said by the given name after the taking-over word ("交接给一鸣"
            # for 郑一鸣)
            found += [n for n in known_full if n not in memory_names and n != old and not _said(forms, n)
                      and any(g in o.text[took_at.start():] for g in _short_forms(n)[1:])]
            if CJK_IN.match(old) and len(old) >= 4:  # a Chinese name of the same kind ("安澜检验" for "瑞科检验")
                found += [m.group(0) for m in re.finditer(rf"[\u4e00-\u9fff]{{2}}{re.escape(old[-2:])}", o.text)
                          if m.group(0) != old and m.group(0) not in memory_names]
            for n in dict.fromkeys(found):
                cands.setdefault(n, []).append(o)
        best = None
        for new, took in cands.items():
            new_forms = _short_forms(new)
            support = [o for o in told if o.day >= start and _said(new_forms, o.text)]
            for it in holders:
                if _said(new_forms, it.entry.body):
                    continue  # the entry names the new one already: no handover to it
                rest = it.subject - term_set(old) - term_set(new)
                lines = [o for o in support if o.terms & rest]
                days = {o.day for o in lines}
                # one line telling the whole handover of the entry's subject ("电梯维保以后由小吴对接，老陈月底前
                # 交接完") stands for the second day once a later day names the new one at work
                whole = [o for o in took if o in ends and o.terms & rest and _tells_handover(o.text, forms, new_forms)]
                if len(days) < 2 and whole and any(o.day > whole[0].day for o in support):
                    days = {*days, *(o.day for o in support if o.day > whole[0].day)}
                    lines = [*lines, *(o for o in support if o.day > whole[0].day and o not in lines)]
                # or the person tells it whole in their own turn and the agent's reply repeats the new one
                # ("from today … go to Keiko Tanaka instead" / "Got it: … go to Keiko Tanaka from today")
                acks = [x for o in whole if o.role == "user" and o.session for x in ctx.obs
                        if x.session == o.session and x.role == "assistant" and x.line > o.line
                        and x.day == o.day and _said(new_forms, x.text) and not lx.ASKED.search(fold(x.text))]
                if acks:
                    lines = [*lines, *(o for o in (whole[0], acks[0]) if o not in lines)]
                if len(days) < 2 and not acks or not any(o.terms & rest for o in took) \
                        or not any(o.terms & rest for o in ends):
                    continue
                fit = sum(ctx.weight(o.terms & rest) for o in lines)
                cand = (fit, it, new, took[0], lines)
                if best is None or fit > best[0]:
                    best = cand
                elif fit == best[0] and it is not best[1]:
                    best = (fit, None, None, None, None)  # two entries fit as well: which one moved is unsure
        if best is None or best[1] is None:
            continue
        _, it, new, took, lines = best
        body = it.entry.body
        new_body = _pronouns_for(body.replace(old, new, 1), old, new)
        if new_body is None:
            continue  # the entry speaks of the old one as "her" and who the new one is is unsaid: a person rewrites it
        # a detail in brackets right after the old one ("林先生（分機 214）") is the old one's: its number moves to
        # the one the lines give the new one under the same word ("分機 305"), or a person rewrites it
        at, extra = body.find(old) + len(old), 0
        aside = re.match(r"\s*[（(]([^（）()]{1,24})[）)]", body[at:])
        inner = aside.group(1).strip() if aside else ""
        if inner and not re.search(r"\d", inner) and (any(n == inner for _, _, n in _names(inner)) or CJK_IN.match(old)
                                                     and re.fullmatch(r"[\u4e00-\u9fff]{2,3}", inner)
                                                     and to_simplified(inner[0]) in lx.SURNAMES_IN_NAME):
            # the old one's full name in brackets ("老周（周建国）") is the old one's: it goes with them
            a = at + len(new) - len(old)
            new_body = new_body[:a] + new_body[a + len(aside.group(0)):]
            extra = -len(aside.group(0))
        elif aside and re.search(r"\d", aside.group(1)):
            word = re.sub(r"[\d\s+#:：.-]+", "", aside.group(1))
            nums = {m.group(1) for o in (took, *lines)
                    for m in re.finditer(re.escape(word) + r"\s*[:：#]?\s*(\d[\d-]*\d|\d)", o.text)} if word else set()
            old_nums = re.findall(r"\d[\d-]*\d|\d", aside.group(1))
            if len(nums) != 1 or len(old_nums) != 1:
                continue
            fixed = aside.group(0).replace(old_nums[0], nums.pop(), 1)
            a = at + len(new) - len(old)
            new_body = new_body[:a] + fixed + new_body[a + len(aside.group(0)):]
            extra = len(fixed) - len(aside.group(0))
        have, said = clocks(fold(body)), clocks(fold(took.text))
        if len(said) == 1 and said[0][2] not in {c[2] for c in have}:
            if len(have) != 1:
                continue  # a new time the entry cannot be given: a person rewrites it
            a, b, _, style = have[0]
            when = clock_as(said[0][2], body[a:b], style)
            if when is None:
                continue
            shift = len(new) - len(old) + (extra if at < a else 0) if body.find(old) < a else 0
            new_body = new_body[:a + shift] + when + new_body[b + shift:]
        days = len({o.day for o in lines})
        score = confidence("slot", extra_days=days - 1, recent=ctx.recency(lines))
        ev = sorted({id(o): o for o in (*ends[:1], took, *lines)}.values(), key=lambda o: (o.day, o.line))
        text = compose(it, new_body, max(o.day for o in lines))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"{old} handed its part to {new} (seen on {days} days)",
                       evidence=(entry_evidence(it), *ctx.evidence(ev, 4, first=took)), origin="offline")
        out.append(Candidate(op, "handover", score, {"days": days, "from": old, "to": new}))
    # one entry handed over from two of its names ("Hall B: contact Margaret Finch, key with Tom Reyes"):
    # which one's part moved is unsure
    targets = Counter(c.op.targets for c in out)
    return [c for c in out if targets[c.op.targets] == 1]


# -- refresh: a tool adopted from now on, the entry's one removed ---------------------------------
_CAP_WORD = re.compile(r"(?<![\w.-])[A-Z][A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*(?![\w-])(?!['’]s\b)")  # ("Dana's": a person)
_LINE_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*")


def _run_at(words: list[str], k: int, low: list[str]) -> int:
    """How many words from words[k] on `low` (lower case) holds in a row somewhere, up to three."""
    best = 0
    for j in range(len(low)):
        n = 0
        while n < 3 and k + n < len(words) and j + n < len(low) and words[k + n].lower() == low[j + n]:
            n += 1
        best = max(best, n)
    return best


def adopted_tools(ctx: Context) -> list[Candidate]:
    """A line adopting one new tool from now on ("Parakeet for the main feed from now on") and, in another
    sentence, removing or retiring the one an entry uses ("Removed the Whisper medium model"): the entry
    naming the removed tool as that sentence writes it, longest (Whisper medium beside Whisper large), has
    it replaced by the new one, once a later line names the new one with the entry's subject. The new
    tool is a capitalised name memory never writes; a question or a plan moves nothing."""
    out: list[Candidate] = []
    memory = " ".join(it.folded for it in ctx.items)
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 300:
            continue
        f = fold(o.text)
        if not lx.TIME_MARKER.search(f) or lx.ASKED.search(f) or lx.PLANNED.search(f):
            continue
        sents = [x.strip() for x in _LINE_SENTENCE.split(o.text) if x.strip()]
        adopt = [x for x in sents if lx.TIME_MARKER.search(fold(x))]
        gone = [x for x in sents if x not in adopt and (lx.RETIRED.search(fold(x)) or lx.DONE_WITH.search(fold(x)))]
        if len(adopt) != 1 or len(gone) != 1:
            continue
        news = {w for w in _CAP_WORD.findall(adopt[0]) if w.lower() not in memory and not is_common_word(w.lower())}
        if len(news) != 1:
            continue
        new = news.pop()
        gw = [w.lower() for w in re.findall(r"[\w.+-]+", gone[0])]
        best: list[tuple[int, Item, int, int]] = []
        for it in ctx.items:
            if it.frozen or it.step:
                continue
            body = it.entry.body
            bw = list(re.finditer(r"[\w.+-]+", body))
            words = [m.group(0) for m in bw]
            for k, w in enumerate(words):
                if not _CAP_WORD.fullmatch(w) or is_common_word(w.lower()):
                    continue
                n = _run_at(words, k, gw)
                if n:
                    best.append((n, it, bw[k].start(), bw[k + n - 1].end()))
        if not best:
            continue
        best.sort(key=lambda b: -b[0])
        if len(best) > 1 and best[1][0] == best[0][0]:
            continue  # two entries name the removed tool as well: which one moved is unsure
        _, it, a, b = best[0]
        own = it.subject - term_set(it.entry.body[a:b])
        later = [x for x in ctx.obs if (x.day, x.line) > (o.day, o.line) and x.role != "assistant" and not x.sensitive
                 and new.lower() in fold(x.text) and x.terms & own]
        if not later:
            continue  # no later line uses the new tool for the entry's subject
        body = it.entry.body
        text = compose(it, body[:a] + new + body[b:], max(x.day for x in later) if it.entry.date else None)
        days = len({x.day for x in later})
        score = confidence("slot", extra_days=min(days - 1, 2), recent=ctx.recency([o, *later]))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"{body[a:b]} removed, {new} from now on ({o.day.isoformat()})",
                       evidence=(entry_evidence(it), *ctx.evidence([o, *later], 4, first=o)), origin="offline")
        out.append(Candidate(op, "slot", score, {"days": days, "from": body[a:b], "to": new}))
    return out
