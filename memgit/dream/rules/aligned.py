"""Refresh a number an entry gives, found by aligning the entry with the logs on the words right before it:
the entry's number stands after a few words of its own ("target API level 34", "heat alert fires above
32°C"), and a line says the same words before another number in the same unit ("(target API level 35)"),
or sets those words to it ("drop the T1 heat alert to 30°C", "報價上限調到 5000 元"). What moved is that
one slot; the rest of the entry stays as written.

A line that only says the words before a new number is one reading among others (another team's "API
level 33"), so it needs the number said of the thing on a second day ("the API 35 build"); a line that
sets the words to a number is the person's decision and stands alone. Either way nothing is proposed when
a later line still says the words before the entry's number, or before a third one."""
from __future__ import annotations

import re

from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.dream.model import Candidate, compose, Context, entry_evidence, fold, Item
from memgit.dream.scoring import confidence
from memgit.memory import DATE_TAIL_RE
from memgit.ops import Operation
from memgit.text import term_set

# a number standing alone: no clock time, date, version, range, code or identifier holds it
_NUMBER = re.compile(r"(?<![\w.:/#$¥€£+-])(\d+(?:\.\d+)?)(?![\d:/]|\.\d|[.,]\d|-\d|[a-z]\d)")
# what the number counts in, written right after it ("32°C", "128kbps", "5000 元"): the new one must agree
_UNIT = re.compile(r"[ \t]?(°[cf]|℃|%|(?:kbps|mbps|gbps|kb|mb|gb|tb|ms|min|mins|km|kg|mm|cm|ml|lufs|hz|khz|px|"
                   r"dpi|rpm|psi|bar|kw|kwh|w|v|a|s|h|m|g|l|k)(?![a-z])|[元块号天个份人次箱袋斤度分秒页张台])?")
_RANGE_ON = re.compile(r"\s*(?:[–—~～-]|to\b|至|到)\s*\d")
_RANGE_BEFORE = re.compile(r"\d\s*(?:[–—~～-]|to|至|到)\s*$")
_CLAUSE_MARK = re.compile(r"[，,；;。！!？?：:（(）)\[\]「」“”\"]|(?<=[a-z])\.\s|\s[—–]\s")
_TOKEN = re.compile(r"[a-z][a-z0-9+_'-]*|[\u4e00-\u9fff]")
_MAX_LATIN, _MAX_CJK = 3, 4  # the words before a number that say what it is


def _numbers(f: str) -> list[tuple[int, int, str, str]]:
    """The lone numbers of a folded text: (start, end with its unit, number, unit)."""
    out = []
    for m in _NUMBER.finditer(f):
        unit = _UNIT.match(f, m.end())
        end = unit.end() if unit.group(1) else m.end()
        if _RANGE_ON.match(f, end) or _RANGE_BEFORE.search(f[max(0, m.start() - 6):m.start()]):
            continue  # one end of a range ("3–5 °C", "lifts 1–3")
        out.append((m.start(), end, m.group(1), unit.group(1) or ""))
    return out


def _clause_start(f: str, pos: int) -> int:
    return max((m.end() for m in _CLAUSE_MARK.finditer(f, max(0, pos - 120), pos)), default=max(0, pos - 120))


def _words_before(f: str, pos: int) -> list[tuple[int, int]]:
    """The words right before f[pos] in its clause, nearest last, as (start, end) spans; none when a mark
    stands right before the number ("level: 34", "T1 → 32")."""
    start = _clause_start(f, pos)
    toks = [(m.start() + start, m.end() + start) for m in _TOKEN.finditer(f[start:pos])]
    if not toks or f[toks[-1][1]:pos].strip():
        return []
    return toks[-8:]


def _default_size(f: str, toks: list[tuple[int, int]]) -> int:
    """How many of the words before a number say what it is: up to three Latin words or four characters."""
    latin = cjk = size = 0
    for a, b in reversed(toks):
        size += 1
        if f[a:b].isascii():
            latin += 1
        else:
            cjk += 1
        if latin >= _MAX_LATIN or cjk >= _MAX_CJK:
            break
    return size


def _flex(words: str) -> str:
    """A pattern for `words` with any spacing between them."""
    return r"\s*".join(re.escape(w) for w in words.split())


def _statement(f: str, pos: int) -> bool:
    """The clause of f[pos] states what is, not a question, plan, wait, denial or one-off."""
    a = _clause_start(f, pos)
    b = _CLAUSE_MARK.search(f, pos)
    cl = f[a:b.start() if b else len(f)]
    return not (lx.ASKED.search(f) or lx.EXCEPTION.search(f) or lx.PLANNED.search(cl) or lx.HELD.search(cl)
                or lx.DENIED.search(cl) or lx.PENDING.search(cl) or lx.negated_at(f, a + 1))


def _slots(ctx: Context) -> list[tuple[Item, int, int, str, str, str]]:
    """Every entry's numbers that stand after words of its own: (entry, start, end, number, unit, the words
    before). Where two entries say the same words before a number ("T1 heat alert fires above", "T2 heat alert
    fires above"), more of the words before count, until they differ; words the entry says twice before a
    number, or that never come to differ, give nothing."""
    found = []
    for it in ctx.items:
        if it.frozen or it.step or len(it.folded) != len(it.entry.body):
            continue  # (folding changed its length: a place in one is not the same place in the other)
        f = it.folded[:len(DATE_TAIL_RE.sub("", it.entry.body))]
        for a, b, n, unit in _numbers(f):
            toks = _words_before(f, a)
            if len(toks) >= 2:
                found.append([it, a, b, n, unit, f, toks, _default_size(f, toks)])

    def words(s: list) -> str:
        f, toks, size = s[5], s[6], s[7]
        return " ".join(f[toks[-size][0]:toks[-1][1]].split())
    for _ in range(6):
        by: dict[str, list[list]] = {}
        for s in found:
            by.setdefault(words(s), []).append(s)
        clash = [s for group in by.values() if len({id(x[0]) for x in group}) > 1 for s in group]
        if not clash:
            break
        for s in clash:
            s[7] = min(s[7] + 1, len(s[6]))
    by = {}
    for s in found:
        by.setdefault(words(s), []).append(s)
    out = []
    for w, group in by.items():
        if len(group) != 1 or len(w.split()) < 2 and not re.search(r"[\u4e00-\u9fff]{2}", w):
            continue
        it, a, b, n, unit = group[0][:5]
        if any(ctx.anchor(t) for t in term_set(w) & it.subject):
            out.append((it, a, b, n, unit, w))
    return out


def aligned_numbers(ctx: Context) -> list[Candidate]:
    """The one number of an entry that the logs say, after the same words, as another (`module doc`)."""
    slots = _slots(ctx)
    if not slots:
        return []
    lines = [(o, fold(o.text)) for o in ctx.obs if o.role != "assistant" and not o.sensitive and len(o.text) <= 400]
    lines = [(o, f) for o, f in lines if re.search(r"\d", f)]
    set_to = re.compile(rf"(?:{lx.VALUE_TO.source})\s*(?<![\d.])(\d+(?:\.\d+)?)(?!\d|\.\d)")
    setting = {id(o): ms for o, f in lines if (ms := list(set_to.finditer(f)))}  # (found once: few lines set)
    out = []
    for it, a, _, n, unit, words in slots:
        said = re.compile(rf"(?<![a-z0-9]){_flex(words)}\s*(?<![\d.])(\d+(?:\.\d+)?)(?!\d|\.\d)")
        last = words.split()[-1][-1:] if not words.isascii() else words.split()[-1]
        entry_words = fold(it.entry.body)[:a]
        named: dict[str, list[tuple[Observation, bool]]] = {}  # new number → (line, set anew)
        after: list[tuple[Observation, str]] = []  # every reading of the words, in order
        for o, f in lines:
            if it.entry.date and o.day < it.entry.date or (last not in f and id(o) not in setting):
                continue
            hits = [(m, False) for m in said.finditer(f)] if last in f else []
            hits += [(m, True) for m in setting.get(id(o), ()) if _sets(f, m.start(), entry_words, it, ctx)]
            for m, decided in hits:
                if _unit_at(f, m.end(1)) != unit or not _statement(f, m.start(1)):
                    continue
                after.append((o, m.group(1)))
                if m.group(1) != n:
                    named.setdefault(m.group(1), []).append((o, decided))
        if len(named) != 1:
            continue  # nothing new, or two new numbers: which one holds is unsure
        (v, hits), = named.items()
        first = min((o.day, o.line) for o, _ in hits)
        if any((o.day, o.line) > first and x != v for o, x in after):
            continue  # the old number or a third one said after the new one
        support = list(dict.fromkeys(o for o, _ in hits))
        if not any(d for _, d in hits):
            # a reading of the words needs a line moving the thing to the number ("bumped … to 35") and the
            # number said of it on another day ("the API 35 build"): a class "in Room 14 today" moved nothing
            moved = _moved_to(lines, it, v, unit, set_to, ctx)
            if not moved:
                continue
            support = list(dict.fromkeys([*support, *moved]))
            support += _also_said(lines, it, words, v, unit, {id(o) for o in support}, ctx)
            if len({o.day for o in support}) < 2:
                continue
        support.sort(key=lambda o: (o.day, o.line))
        out.append(_refresh(ctx, it, a, n, unit, v, support))
    return out


_DETERMINERS = frozenset({"the", "a", "an", "our", "my", "its", "their", "his", "her", "把", "将"})


def _sets(f: str, at: int, entry_words: str, it: Item, ctx: Context) -> bool:
    """The words right before a line's setting of a number ("drop the t1 heat alert to 30°c", "报价上限调到")
    are two or more of the entry's, in a row before its number, one of them specific; and the clause says
    it sets them (a verb of setting before them, or a Chinese one joining them to the number)."""
    start = _clause_start(f, at)
    lead = f[start:at]
    toks = list(_TOKEN.finditer(lead))
    if not toks or lead[toks[-1].end():].strip():
        return False
    for k in range(max(0, len(toks) - 6), len(toks) - 1):
        if toks[k].group(0) in _DETERMINERS:
            continue
        words = " ".join(lead[toks[k].start():toks[-1].end()].split())
        rx, holders = _holders(ctx, words)
        if not holders:
            continue
        # (the most of its words any entry holds say whose it is: "t1 heat alert", not "heat alert")
        if holders != [it] or not rx.search(entry_words) or not any(
                ctx.anchor(t) for t in term_set(words) & it.subject):
            return False
        return bool(lx.VALUE_SET.search(f, at, at + 6) or lx.VALUE_SET.search(lead[:toks[k].start()]))
    return False


def _holders(ctx: Context, words: str) -> tuple[re.Pattern[str], list[Item]]:
    """The pattern of some words, and the entries holding them, found once a run for each wording (every slot asks
    of every line that sets a number)."""
    cache = ctx.__dict__.setdefault("_aligned_holders", {})
    got = cache.get(words)
    if got is None:
        rx = re.compile(rf"(?<![a-z0-9]){_flex(words)}")
        got = cache[words] = (rx, [x for x in ctx.items if rx.search(x.folded)])
    return got


def _moved_to(lines: list[tuple[Observation, str]], it: Item, v: str, unit: str, set_to: re.Pattern[str],
              ctx: Context) -> list[Observation]:
    """Lines about the entry (a specific word of it) that move something to the number ("bumped targetSdk
    and compileSdk to 35"): a verb of setting or upgrading before it in its clause."""
    out = []
    for o, f in lines:
        if it.entry.date and o.day < it.entry.date or not any(ctx.anchor(t) for t in o.terms & it.subject):
            continue
        for m in set_to.finditer(f):
            before = f[_clause_start(f, m.start()):m.start()]
            if m.group(1) == v and _unit_at(f, m.end(1)) == unit and _statement(f, m.start(1)) and (
                    lx.VALUE_SET.search(f, m.start(), m.start(1)) or lx.VALUE_SET.search(before)
                    or lx.UPGRADED.search(before)):
                out.append(o)
                break
    return out


def _unit_at(f: str, pos: int) -> str:
    unit = _UNIT.match(f, pos)
    return unit.group(1) or ""


def _also_said(lines: list[tuple[Observation, str]], it: Item, words: str, v: str, unit: str, have: set[int],
               ctx: Context) -> list[Observation]:
    """Lines that say the new number right after one specific word of the entry's before it ("API 35")."""
    own = [w for w in words.split() if ctx.anchor(w) and w in it.subject]
    if not own:
        return []
    rx = re.compile(rf"(?<![a-z0-9])(?:{'|'.join(map(re.escape, own))})\s*{re.escape(v)}(?![\d.]|\.\d)")
    out = []
    for o, f in lines:
        if id(o) in have or it.entry.date and o.day < it.entry.date:
            continue
        m = rx.search(f)
        if m and _unit_at(f, m.end()) == unit and _statement(f, m.start()):
            out.append(o)
    return out


def _refresh(ctx: Context, it: Item, a: int, n: str, unit: str, v: str, support: list[Observation]) -> Candidate:
    body = it.entry.body
    new_body = body[:a] + v + body[a + len(n):]
    day = max(o.day for o in support)
    days = len({o.day for o in support})
    score = confidence("slot", extra_days=min(days - 1, 2), recent=ctx.recency(support))
    text = compose(it, new_body, day if it.entry.date else None)
    op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                   reason=f"{n}{unit} → {v}{unit} ({day.isoformat()})",
                   evidence=(entry_evidence(it), *ctx.evidence(support, 3)), origin="offline")
    return Candidate(op, "slot", score, {"days": days, "from": n, "to": v})
