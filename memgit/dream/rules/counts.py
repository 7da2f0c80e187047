"""Refresh a count that grew: "Two nodes: a and b" when the newest logs name "three nodes (a, b, c)"."""
from __future__ import annotations

import re

from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.dream.scoring import confidence
from memgit.dream.model import Candidate, Context, compose, entry_evidence, fold
from memgit.ops import Evidence, Operation
from memgit.text import compile_words

WORDS = lx.NUMBER_WORDS
SPELL = {v: k for k, v in WORDS.items() if k.isascii()}
COUNT = compile_words(rf"\b({'|'.join(SPELL.values())}|\d{{1,2}})\s+((?:[A-Za-z][\w-]*\s+){{0,2}}"
                      r"[A-Za-z][\w-]*s)\b", re.I)
NAME = re.compile(r"(?<![\w.-])([A-Za-z]+[-_]\d+)(?![\w.-])")  # pve-01, ci-02, node_3


def _n(word: str) -> int:
    return int(word) if word.isdigit() else WORDS[word.lower()]


def count_growth(ctx: Context) -> list[Candidate]:
    """An entry counts named things ("Two Proxmox nodes: pve-01 … and pve-02 …"); a line by the person
    or the logs counts more of the same noun and names every one the entry names plus the new ones:
    the count and the new names are written in; what the entry says of each old one is kept."""
    out = []
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        m = COUNT.search(it.entry.body)
        if not m:
            continue
        have, noun = _n(m.group(1)), m.group(2).lower()
        named = {x.lower() for x in NAME.findall(it.entry.body[m.end():])}
        best: tuple[Observation, int, list[str], str] | None = None
        last = noun.split()[-1]
        for o in ctx.obs_about(it):
            if o.role == "assistant" or last not in fold(o.text):
                continue  # (the noun itself must be there before the pattern is worth running)
            for c in COUNT.finditer(o.text):
                if c.group(2).lower().split()[-1] != noun.split()[-1] or not set(noun.split()) <= set(
                        c.group(2).lower().split() + fold(o.text[max(0, c.start() - 30):c.start()]).split()):
                    continue
                more = _n(c.group(1))
                listed = [x.lower() for x in NAME.findall(o.text[c.end():c.end() + 80])]
                if more <= have or len(set(listed)) != more or named & set(listed) != named or len(named) != have:
                    continue
                if best is None or o.day > best[0].day:
                    best = (o, more, [x for x in dict.fromkeys(listed) if x not in named], c.group(0))
        if best is None:
            continue
        o, more, new, said = best
        word = m.group(1)
        spelled = SPELL.get(more, str(more)) if not word.isdigit() else str(more)
        if word[:1].isupper():
            spelled = spelled.capitalize()
        body = it.entry.body
        body = body[:m.start(1)] + spelled + body[m.end(1):]
        body = f"{body.rstrip('.')}; also {', '.join(new)}"
        score = confidence("count", recent=ctx.recency([o]))
        quote = o.text[max(0, o.text.find(said)):o.text.find(said) + len(said) + 80].strip()
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, body, o.day), confidence=score,
                       reason=f"the logs now count {more} {noun}: {', '.join(new)} added",
                       evidence=(entry_evidence(it), Evidence(o.ref, quote)), origin="offline")
        out.append(Candidate(op, "count", score, {"from": have, "to": more}))
    return out
