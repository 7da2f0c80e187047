"""Refresh a value: a version that moved next to the entry's subject, or a labelled setting a log reassigns."""
from __future__ import annotations

import re

from memgit.dream.collect import Observation
from memgit.ops import Evidence, Operation
from memgit.text import term_set, version_key, versions
from memgit.dream.scoring import confidence
from memgit.dream.model import (
    _label, Candidate, compose, Context, entry_evidence, fold, Item, LABEL_RE
)


# -- refresh: version moved -----------------------------------------------------------
UPGRADE = re.compile(r"upgrad|updat|bump|migrat|moved to|now (?:on|runs?|at)|升级|更新|升到|切到|换到|→|->|\bto v?\d")


HOLD = re.compile(r"stay(?:ing)? on|pinned|pin to|roll(?:ed)? back|revert(?:ed)? to|downgrad|broke|breaks|"
                  r"回滚|退回|降级|保持|继续用")


VERSION_WORDS = frozenset({"version", "ver", "release", "build", "版本", "发行"})


def version_changes(ctx: Context) -> list[Candidate]:
    out = []
    versioned = [it for it in ctx.items if it.versions]

    def owner(o: Observation) -> Item | None:
        best = max((it for it in ctx.items_about(o) if it.versions), key=lambda it: ctx.mentions(o, it),
                   default=None)
        return best if best is not None and ctx.mentions(o, best) >= 0.1 else None

    owners = {id(o): owner(o) for o in ctx.obs if versions(o.text)}
    for it in versioned:
        if it.frozen or it.step:
            continue
        # what the version belongs to: the entry's subject or its section's, not the word "version"
        names = ((it.head | term_set(it.entry.section or "")) - {v.lower().lstrip("v") for v in it.versions}
                 - VERSION_WORDS)
        old = it.versions[0]
        found: dict[str, list[tuple[Observation, bool]]] = {}
        for o in ctx.obs_about(it):
            if o.role == "assistant":
                continue
            ov = versions(o.text)
            if not ov or owners.get(id(o)) is not it:
                continue
            f = fold(o.text)
            for v in ov:
                if len(version_key(v)) != len(version_key(old)) or version_key(v) <= version_key(old):
                    continue
                if version_key(v) in {version_key(x) for x in it.versions}:
                    continue
                pos = f.find(v.lower())
                if HOLD.search(f[max(0, pos - 25):pos + len(v) + 15]):
                    continue
                if not ctx.near(f, pos, names, 30, specific=False):
                    continue  # a version of something else named on the same line
                explicit = bool(UPGRADE.search(f)) or old.lower().lstrip("v") in f
                found.setdefault(v.lower().lstrip("v"), []).append((o, explicit))
        if not found:
            continue
        # the newest version that has support
        best = max(found, key=lambda k: (version_key(k), len(found[k])))
        support = [o for o, _ in found[best]]
        days = len({o.day for o in support})
        explicit = any(e for _, e in found[best])
        score = confidence("version", explicit=explicit, extra_days=days - 1, recent=ctx.recency(support))
        new_v = ("v" if old.lower().startswith("v") else "") + best
        body = it.entry.body
        new_body = re.sub(r"(?<![\w.])" + re.escape(old) + r"(?![\w.])", new_v, body, count=1)
        text = compose(it, new_body, max(o.day for o in support))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"version moved: {old} → {new_v} (seen on {days} day(s))",
                       evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
        out.append(Candidate(op, "version", score, {"days": days, "explicit": explicit, "from": old,
                                                    "to": new_v}))
    return out


IDENT = r"`?([A-Za-z][\w.-]*/[\w./-]*\w|[A-Za-z][\w-]*-\d[\w.-]*\w)`?"


SLOT_WORDS = r"primary|default|main|current|now|主模型|默认|默認|当前|當前|主"


SLOT_TAIL = re.compile(r"^(.*?\S)\s+(?:primary|default)\b", re.I)


MULTI_VALUE = re.compile(r"[,，、;；]|\band\b|\+")


def slot_changes(ctx: Context) -> list[Candidate]:
    """A labelled setting whose value is one identifier ("**Model**: Kimi K2.5 (kimi-coding/k2p5)"),
    and a line that assigns a new identifier to that label, or to its primary/default slot, next to the
    label and to what the entry's section is about ("main agent model … primary: `openai/gpt-5.3`"):
    the value is refreshed to that identifier. A value listing several things is left alone."""
    out = []
    by_label: dict[tuple[str, str], int] = {}
    for it in ctx.items:
        lab = _label(it.entry.body)
        if lab:
            by_label[(it.entry.file, lab)] = by_label.get((it.entry.file, lab), 0) + 1
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
        assign = re.compile(rf"(?:(?:{names})\w*|{SLOT_WORDS})\s*[:：=]\s*" + IDENT, re.I)
        found = []
        for o in ctx.obs:
            if o.role == "assistant" or o.sensitive:
                continue
            f = fold(o.text)
            for a in assign.finditer(o.text):
                new = a.group(1)
                before = f[max(0, a.start() - 60):a.start() + 1]
                if not any(t in term_set(before + f[a.start():a.end()]) for t in lab_terms):
                    continue  # a primary of something else
                if by_label[(it.entry.file, lab)] > 1 and not (term_set(before) & scope):
                    continue  # the label stands under several headings: the line must say which
                if new.lower() in fold(it.entry.body) or new in old_ids:
                    continue
                found.append((o, new, o.text[a.start():a.end()]))
                break
        if not found:
            continue
        o, new, said = max(found, key=lambda x: (x[0].day, x[0].line))
        if any(n != new for x, n, _ in found if x.day == o.day):
            continue  # two new values the same day: unsure
        label_text = it.entry.body[:m.end()].rstrip()
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
