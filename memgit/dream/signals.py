"""REM: find what should change in memory, as scored candidates.

Every rule works on meaning-bearing units (subject terms, versions, dates,
status words, negations) from `memgit.text`, never on whole-line equality,
and in English, Simplified and Traditional Chinese alike. Each candidate
carries its evidence (`path:line` and a verbatim, secret-free quote) and the
features its confidence was computed from.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from dataclasses import dataclass, field
from datetime import date, timedelta

from memgit import sensitive
from memgit.dream import lexicon as lx
from memgit.dream.collect import Collected, Observation
from memgit.lifecycle.priority import is_core
from memgit.memory import DATE_TAIL_RE, ISO_DATE_RE, TAG_RE, Document, Entry
from memgit.ops import Evidence, Operation
from memgit.text import (cjk_share, clauses, is_traditional, term_set, to_simplified, version_key, versions)

CJK_IN = re.compile("[\u4e00-\u9fff]")
NUM_RE = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?%")


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """Lower case and Simplified, keeping every character's position."""
    f = to_simplified(text).lower()
    return f if len(f) == len(text) else to_simplified(text)


@dataclass
class Candidate:
    op: Operation
    kind: str
    score: float
    features: dict = field(default_factory=dict)
    forced: bool = False

    @property
    def targets(self) -> tuple[str, ...]:
        return self.op.targets

    def to_dict(self) -> dict:
        return {"kind": self.kind, "op": self.op.op, "file": self.op.file, "title": self.op.title,
                "score": round(self.score, 3), "features": self.features}


class DisjointSets:
    """Union-find over 0..n-1 (path halving)."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        p = self.parent
        while p[i] != i:
            p[i] = p[p[i]]
            i = p[i]
        return i

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def clamp(x: float) -> float:
    return max(0.0, min(1.0, round(x, 3)))


@dataclass
class Item:
    """An entry with the units the rules compare."""

    entry: Entry
    doc: Document
    folded: str
    subject: frozenset[str]          # terms without status words and versions
    versions: list[str]
    head: frozenset[str] = frozenset()  # subject terms of the first clause: what the entry is about
    secret: bool = False                # holds sensitive data: only ever pruned, never reworded or merged
    core: bool = False                  # identity or a marked rule: never changed automatically

    @property
    def frozen(self) -> bool:
        return self.entry.frozen or self.secret or self.core

    @property
    def step(self) -> bool:
        """A numbered step of a procedure: removing one alone breaks the procedure."""
        return bool(re.match(r"\s*\d+[.)]", self.entry.marker or ""))


def _subject(body: str) -> frozenset[str]:
    b = lx.STATE_WORDS.sub(" ", fold(body))
    b = NUM_RE.sub(" ", b)
    vs = {v.lower().lstrip("v") for v in versions(body)}
    return frozenset(t for t in term_set(b) if t not in vs)


class Context:
    def __init__(self, col: Collected, primary: str, user_file: str | None):
        self.col = col
        self.now = col.now
        self.primary = primary
        self.user_file = user_file
        self.items: list[Item] = []
        for doc in col.docs.values():
            for e in doc.entries:
                body = e.body
                first = clauses(LABEL_RE.sub("", body, count=1) if _label(body) else body)
                head = _subject(first[0]) if first else frozenset()
                if _label(body):
                    head = _subject(LABEL_RE.match(body).group(1)) | head
                self.items.append(Item(e, doc, fold(body), _subject(body), versions(body), head,
                                       sensitive.has_sensitive(e.text), is_core(e, doc.section_at(e.start))))
        self.obs = col.observations
        df: dict[str, int] = {}
        for o in self.obs:
            for t in o.terms:
                df[t] = df.get(t, 0) + 1
        for it in self.items:
            for t in it.subject:
                df[t] = df.get(t, 0) + 1
        self.n = max(1, len(self.obs) + len(self.items))
        self.df = df
        self._idf: dict[str, float] = {}
        self._anchor: dict[str, bool] = {}
        # inverted indexes over anchor terms: a rule asks only the observations (or entries) that share
        # a specific term with what it looks at, so its cost grows with the window, not entries × lines
        self._obs_by_term: dict[str, list[int]] = {}
        for i, o in enumerate(self.obs):
            for t in o.terms:
                if self.anchor(t):
                    self._obs_by_term.setdefault(t, []).append(i)
        self._items_by_term: dict[str, list[int]] = {}
        for i, it in enumerate(self.items):
            for t in it.subject | it.head:
                if self.anchor(t):
                    self._items_by_term.setdefault(t, []).append(i)

    def obs_about(self, it: Item) -> list[Observation]:
        """Window observations sharing a specific term with the entry, in window order."""
        idx: set[int] = set()
        for t in it.subject | it.head:
            idx.update(self._obs_by_term.get(t, ()))
        return [self.obs[i] for i in sorted(idx)]

    def items_about(self, o: Observation) -> list[Item]:
        """Entries sharing a specific term with the observation, in file order."""
        idx: set[int] = set()
        for t in o.terms:
            idx.update(self._items_by_term.get(t, ()))
        return [self.items[i] for i in sorted(idx)]

    def near(self, text: str, pos: int, terms: frozenset[str] | set[str], span: int = 40,
             specific: bool = True) -> bool:
        """One of `terms` (a specific one, unless told) stands within `span` characters of `pos` in
        `text` (folded): a status or version word belongs to the subject named next to it, not to
        the whole line."""
        window = term_set(text[max(0, pos - span):pos + span])
        return any(t in window and (not specific or self.anchor(t)) for t in terms)

    def distinctive(self, it: Item, k: int = 3) -> frozenset[str]:
        """The entry's k rarest terms: what names it among similar entries ("SEO report", not "cron")."""
        # names in any script (product, host, command) identify better than Chinese bigrams, which a
        # word boundary can make rare by accident
        named = [t for t in it.subject if not CJK_IN.search(t)] or list(it.subject)
        return frozenset(sorted(named, key=lambda t: (-self.idf(t), t))[:k])

    def idf(self, t: str) -> float:
        v = self._idf.get(t)
        if v is None:
            v = self._idf[t] = math.log((self.n + 1) / (self.df.get(t, 0) + 0.5)) + 0.1
        return v

    def weight(self, terms) -> float:
        return sum(map(self.idf, terms))

    def anchor(self, t: str) -> bool:
        """A term specific enough to identify a subject."""
        v = self._anchor.get(t)
        if v is None:
            v = self._anchor[t] = not (len(t) < 2 or (t.isascii() and t.isalpha() and len(t) < 3)) \
                and self.df.get(t, 0) <= max(4, 0.25 * self.n)
        return v

    def mentions(self, o: Observation, it: Item) -> float:
        """How much of the entry's subject (or of its head clause) the observation names.

        0 when no specific term is shared.
        """
        shared = o.terms & it.subject
        if not shared or not any(self.anchor(t) for t in shared):
            return 0.0
        full = self.weight(shared) / max(self.weight(it.subject), 1e-9)
        if it.head and it.head != it.subject:
            hs = o.terms & it.head
            if hs and any(self.anchor(t) for t in hs):
                full = max(full, self.weight(hs) / max(self.weight(it.head), 1e-9))
        return full

    def evidence(self, obs: list[Observation], limit: int = 4, first: Observation | None = None
                 ) -> tuple[Evidence, ...]:
        """Quotes of the newest observations; `first` (the line a new entry is written from) always."""
        out, seen = [], set()
        if first is not None and first.quote():
            seen.add(first.ref)
            limit -= 1
        for o in sorted(obs, key=lambda o: (o.day, o.source, o.line), reverse=True):
            if len(out) >= limit:
                break
            q = o.quote()
            if not q or o.ref in seen:
                continue
            seen.add(o.ref)
            out.append(Evidence(o.ref, q))
        if first is not None and first.quote():
            out.append(Evidence(first.ref, first.quote()))
            out.sort(key=lambda e: e.source, reverse=True)
        return tuple(reversed(out))

    def recency(self, obs: list[Observation]) -> float:
        if not obs:
            return 0.0
        last = max(o.day for o in obs)
        return 0.05 if (self.now - last).days <= 3 else 0.0


def entry_evidence(it: Item, quote: str | None = None) -> Evidence:
    q = quote if quote is not None else it.entry.text.split("\n")[0]
    return Evidence(f"{it.entry.file}:{it.entry.line}", q)


def compose(it: Item, body: str, day: date | None) -> str:
    """The entry's new text: its own tag, the new body, and the date it was last confirmed."""
    tag = f"[{it.entry.own_tag}] " if it.entry.own_tag else ""
    body = DATE_TAIL_RE.sub("", body).strip()
    when = f" ({day.isoformat()})" if day else ""
    return f"{tag}{body}{when}"


def _script(word_zh: str, word_en: str, like: str, context: str = "") -> str:
    """The word in the script of `like` (the phrase it replaces), Traditional if `context` is."""
    if cjk_share(like) < 0.3 and not CJK_IN.search(like):
        return word_en
    if is_traditional(like + context):
        return lx.TRADITIONAL.get(word_zh, word_zh)
    return word_zh


# -- refresh: status moved ------------------------------------------------------------
def status_changes(ctx: Context) -> list[Candidate]:
    out = []
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        pend = lx.PENDING.search(it.folded)
        todo = lx.TODO.search(it.folded)
        if not pend and not todo:
            continue
        have = lx.done_state(lx.PENDING.sub(" ", it.folded))  # "待上线" is not "上线"
        support, best = [], None
        about = ctx.obs_about(it)
        for o in about:
            if o.role == "assistant" or ctx.mentions(o, it) < 0.3:
                continue
            if _version_clash(it, o):
                continue
            f = fold(o.text)
            st = lx.done_state(f)
            if not st or (have and st[0] <= have[0]):
                continue
            if not ctx.near(f, st[3], it.head or it.subject):
                continue  # the done word is about something else on a long line
            if lx.PENDING.search(f[st[3]:]):  # "deployed to staging, prod pending"
                continue
            support.append(o)
            if best is None or st[0] > best[0][0] or (st[0] == best[0][0] and o.day > best[1].day):
                best = (st, o)
        if not best:
            continue
        later = [o for o in about if o.day > best[1].day and o not in support and ctx.mentions(o, it) >= 0.3
                 and o.role != "assistant"]
        relapsed = [o for o in later if _affirmed(lx.PENDING, fold(o.text)) or _affirmed(lx.ERROR, fold(o.text))]
        days = len({o.day for o in support})
        confirm = len({o.day for o in later}) - len({o.day for o in relapsed})
        st, o = best
        explicit = st[0] >= 2
        score = clamp(0.55 + 0.15 * explicit + 0.08 * (days - 1) + 0.06 * min(confirm, 2)
                      - 0.3 * bool(relapsed) + ctx.recency(support))
        feats = {"days": days, "explicit": explicit, "confirming_days": confirm, "contradicted": bool(relapsed)}
        if todo and not pend:
            op = Operation("prune", it.entry.file, (it.entry.text,), confidence=score,
                           reason=f"the to-do is done: {o.quote()[:80]}",
                           evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
            out.append(Candidate(op, "todo-done", score, feats))
            continue
        new_body = _restate(it.entry.body, st)
        text = compose(it, new_body, max(x.day for x in support))
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=text, confidence=score,
                       reason=f"status moved: {pend.group(0) if pend else 'pending'} → {st[1]}",
                       evidence=(entry_evidence(it), *ctx.evidence(support)), origin="offline")
        out.append(Candidate(op, "status", score, feats))
    return out


PLAN = re.compile(r"\b(?:once|after|when|before|until|will|then|next (?:week|time|step|month)|plan(?:ned)?"
                  r"|waiting|needs?|need to|blocked)\b|就上|修完|之后|以后|等|再|准备|明天|下周|计划|需要|还要")


def _restate(body: str, st: tuple) -> str:
    """The entry with its pending status replaced by the new one; clauses that only described
    what was still to happen before the change are dropped."""
    f = fold(body)
    m = lx.PENDING.search(f)
    word = _script(st[2], st[1], body[m.start():m.end()] if m else body, body)
    if not m:
        return f"{body} — {word}"
    new = body[:m.start()] + word + body[m.end():]
    parts = re.split(r"([，,；;。])", new)
    kept, pos = [], 0
    for k in range(0, len(parts), 2):
        cl = parts[k]
        sep = parts[k + 1] if k + 1 < len(parts) else ""
        holds_state = pos <= m.start() + len(word) and m.start() <= pos + len(cl)
        if holds_state or not PLAN.search(fold(cl)):
            kept.append(cl + sep)
        pos += len(cl) + len(sep)
    out = "".join(kept).strip().rstrip("，,；;")
    return re.sub(r"\s{2,}", " ", out).strip()


def _affirmed(pattern: re.Pattern[str], text: str) -> bool:
    """`pattern` occurs and is not negated ("没有报错", "no errors", "not pending")."""
    for m in pattern.finditer(text):
        if not lx.NEGATED_BEFORE.search(text[max(0, m.start() - 8):m.start()]):
            return True
    return False


def _version_clash(it: Item, o: Observation) -> bool:
    """Entry and observation both name versions of the same shape, and none agree: another release."""
    if not it.versions:
        return False
    ov = versions(o.text)
    if not ov:
        return False
    shape = lambda v: len(version_key(v))  # noqa: E731
    same = [v for v in ov if any(shape(v) == shape(e) for e in it.versions)]
    if not same:
        return False
    ek = {version_key(e) for e in it.versions}
    return not any(version_key(v) in ek for v in same)


# -- refresh: version moved -----------------------------------------------------------
UPGRADE = re.compile(r"upgrad|updat|bump|migrat|moved to|now (?:on|runs?|at)|升级|更新|升到|切到|换到|→|->|\bto v?\d")
HOLD = re.compile(r"stay(?:ing)? on|pinned|pin to|roll(?:ed)? back|revert(?:ed)? to|downgrad|broke|breaks|"
                  r"回滚|退回|降级|保持|继续用")


VERSION_WORDS = frozenset({"version", "ver", "release", "build", "版本", "发行", "release"})


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
        score = clamp(0.5 + 0.15 * explicit + 0.15 * (days - 1) + ctx.recency(support))
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


# -- refresh: preference restated ---------------------------------------------------------
NEGATION = re.compile(r"\b(?:don'?t|do not|never|stop|skip|no more|no longer|not)\b|不要|别|不用|不必|甭|停止|取消|"
                      r"不再")
FILLER = re.compile(r"^(?:ok(?:ay)?|yes|yeah|right|对|好|嗯|是的|行)[,，:：!！。\s]+", re.I)
LABEL_RE = re.compile(r"^([^:：]{1,16})[:：]\s*")


PREF_SECTION = re.compile(r"prefer|style|habit|taste|likes?\b|dislikes?|communicat|偏好|喜好|习惯|習慣|风格|風格|"
                          r"沟通|溝通|口味", re.I)
# "Mei said (that) …", "Jw 说 …": who said it is evidence, not part of the preference
ATTRIBUTION = re.compile(r"^[^\s,，:：]{1,20}(?:\s+[^\s,，:：]{1,20})?\s+"
                         r"(?:said|says|told me|asked|wants)\s+(?:that\s+)?"
                         r"|^[^\s,，:：]{1,12}\s*(?:说|說|表示|要求)\s*[:：,，]?\s*", re.I)
SAID = re.compile(r"\b(?:said|says|asked|wants?|prefers?|told me)\b|说|要求|希望|想要|交代|叮嘱")
CHANGE_VERB = re.compile(r"\b(?:switch(?:ed)? to|change(?:d)? to|instead of|rather than)\b|改成|改用|换成|换用|改为")
TIME_MARKER = re.compile(r"\bfrom now on\b|\bgoing forward\b|\bhenceforth\b|\bin (?:the )?future\b|"
                         r"\bfrom today on\b|\bstarting (?:today|now)\b|\bplease always\b|以后|今后|往后|"
                         r"从现在起|从今天起", re.I)
PARTICLE_END = re.compile(r"[吧了啊呀哦嘛呢]+$")


def _pref_content(text: str, like: str) -> str:
    """What the user wants from now on: the statement's clauses without the refused old way
    (negated clauses, "instead of …") and without time markers, in the target entry's script."""
    parts = []
    for cl in clauses(text):
        f = fold(cl)
        m = re.search(r"\binstead of\b|\brather than\b|而不是", f)
        if m:
            cl, f = cl[:m.start()], f[:m.start()]
        for sub in re.split(r"\s+(?:and|but)\s+", cl):
            fs = fold(sub)
            if NEGATION.search(fs):
                continue
            keep = [True] * len(sub)
            for tm in TIME_MARKER.finditer(fold(sub)):
                for i in range(tm.start(), min(tm.end(), len(keep))):
                    keep[i] = False
            sub = "".join(c for c, k in zip(sub, keep) if k)
            sub = ATTRIBUTION.sub("", sub.strip(), count=1)
            sub = PARTICLE_END.sub("", FILLER.sub("", sub.strip()).strip(" ,，.。;；:：")).strip()
            if sub and term_set(sub):
                parts.append(sub)
    want_cjk = bool(CJK_IN.search(like))
    same = [p for p in parts if bool(CJK_IN.search(p)) == want_cjk]
    parts = same or parts
    joiner = "，" if want_cjk else ", "
    out = joiner.join(dict.fromkeys(parts))
    return out[:1].upper() + out[1:] if out and out[0].isascii() else out


def preference_changes(ctx: Context) -> list[Candidate]:
    """A preference the user restated ("from now on…", "以后…", "不要再…") refreshes the entry it replaces."""
    by_target: dict[int, list[tuple[Observation, float]]] = {}
    # only a standing preference is refreshed: an entry of the user file or of a preferences section
    items = [it for it in ctx.items if not it.frozen and (it.entry.file == ctx.user_file
                                                          or PREF_SECTION.search(it.entry.section or ""))]
    index = {id(it): k for k, it in enumerate(items)}
    for o in ctx.obs:
        if o.role == "assistant" or o.sensitive or len(o.text) > 240:
            continue  # (a paragraph of a log is not a statement of preference)
        f = fold(o.text)
        # the person's own words: what they typed, or a log line reporting what they said
        if o.role != "user" and not SAID.search(f):
            continue
        if not lx.PREFERENCE.search(f) or lx.EXCEPTION.search(f):
            continue
        markers = term_set(" ".join(m.group(0) for m in lx.PREFERENCE.finditer(f)))
        stmt = frozenset(t for t in o.terms if t not in markers)
        best, best_s = None, 0.0
        for it in ctx.items_about(o):
            k = index.get(id(it))
            if k is None:
                continue
            shared = stmt & it.subject
            if not shared or not any(ctx.anchor(t) for t in shared):
                continue
            sc = ctx.weight(shared) / max(ctx.weight(it.subject), 1e-9)
            if it.entry.file == ctx.user_file:
                sc *= 1.2
            if sc > best_s:
                best, best_s = k, sc
        if best is not None and best_s >= 0.3:
            by_target.setdefault(best, []).append((o, best_s))
    out = []
    for k, stated in by_target.items():
        it = items[k]
        # the user's own words first, then the newest
        stated.sort(key=lambda x: (x[0].role == "user", x[0].day, x[1]), reverse=True)
        o = stated[0][0]
        content = _pref_content(o.text, it.entry.body)
        if not content or len(content) < 4 or len(content) > max(120, 2 * len(it.entry.body)):
            continue
        stmt = o.terms
        negates = any(NEGATION.search(fold(cl)) and (term_set(cl) & it.subject) for cl in clauses(o.text))
        acks = [x for x in ctx.obs if x is not o and x.session == o.session and o.session and x.day == o.day
                and x.role == "assistant" and (len(x.terms & stmt) >= 2 or lx.ACK.search(fold(x.text).strip()))]
        others = [x for x, _ in stated[1:]]
        again_days = {x.day for x in others} - {o.day}
        f = fold(o.text)
        # the person's own words: a user turn, or a log line that reports what they said
        said = o.role == "user" or bool(SAID.search(f))
        change = bool(CHANGE_VERB.search(f))
        score = clamp(0.6 + 0.1 * negates + 0.1 * bool(acks) + 0.05 * bool(others) + 0.05 * bool(again_days)
                      + 0.05 * said + 0.05 * change + ctx.recency([o]))
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


# -- prune: stale ---------------------------------------------------------------------------
DONE_WITH = re.compile(r"\b(?:removed|deleted|closed|torn down|shut down|cancel+ed|expired|gone)\b|删除|删了|关闭|"
                       r"关掉|撤掉|取消|过期|结束")


def stale_entries(ctx: Context) -> list[Candidate]:
    out = []
    for it in ctx.items:
        if it.frozen or it.step:
            continue
        e = it.entry
        f = it.folded
        reason, feats, score, ev = None, {}, 0.0, []
        if lx.TEMP.search(f) or lx.EXPIRES_IN.search(f):
            body_wo_tail = DATE_TAIL_RE.sub("", e.body)
            dates = [date(int(y), int(m), int(d)) for y, m, d in ISO_DATE_RE.findall(body_wo_tail)
                     if _valid(y, m, d)]
            ex = lx.EXPIRES_IN.search(f)
            expiry = None
            if ex and e.date:
                n = int(ex.group(1) or ex.group(3))
                unit = ex.group(2) or ex.group(4)
                days = n * {"day": 1, "天": 1, "week": 7, "周": 7, "month": 30, "个月": 30}.get(unit, 1)
                expiry = e.date + timedelta(days=days)
            past = [d for d in dates if d < ctx.now]
            if expiry and expiry < ctx.now:
                reason, feats = f"expired on {expiry.isoformat()}", {"expired": expiry.isoformat()}
            elif past and not [d for d in dates if d >= ctx.now]:
                reason, feats = f"temporary item whose date {max(past).isoformat()} has passed", \
                    {"date_passed": max(past).isoformat()}
            if reason:
                gone = [o for o in ctx.obs_about(it) if ctx.mentions(o, it) >= 0.3 and DONE_WITH.search(fold(o.text))]
                score = clamp(0.8 + 0.1 * bool(gone))
                ev = gone
        if not reason and lx.ERROR.search(f) and not lx.FIXED.search(f):
            fixed = [o for o in ctx.obs_about(it) if o.role != "assistant" and ctx.mentions(o, it) >= 0.3
                     and (m := lx.FIXED.search(fold(o.text))) and ctx.near(fold(o.text), m.start(), it.head or it.subject)
                     and o.terms & ctx.distinctive(it) and (not e.date or o.day >= e.date)]
            if fixed:
                days = len({o.day for o in fixed})
                reason = "the recorded error was later reported fixed"
                feats = {"days": days}
                score = clamp(0.65 + 0.1 * days + ctx.recency(fixed))
                ev = fixed
        if reason:
            op = Operation("prune", e.file, (e.text,), confidence=score, reason=reason,
                           evidence=(entry_evidence(it), *ctx.evidence(ev)), origin="offline")
            out.append(Candidate(op, "stale", score, feats))
    return out


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
        kinds = ", ".join(sorted({f.kind for f in found}))
        safe = sensitive.redact(it.entry.text.split("\n")[0]).split("[REDACTED]")[0].rstrip(" :：=")
        op = Operation("prune", it.entry.file, (it.entry.text,), confidence=0.99,
                       reason=f"holds sensitive data ({kinds}); keep it in a password manager, not in memory",
                       evidence=(entry_evidence(it, safe),), origin="offline")
        out.append(Candidate(op, "secret", 0.99, {"kinds": kinds}))
    return out


# -- merge and contradiction -----------------------------------------------------------------
def _label(body: str) -> str | None:
    m = LABEL_RE.match(body)
    return " ".join(fold(m.group(1)).split()) if m and len(m.group(1).split()) <= 4 else None


BARE_NUM_RE = re.compile(r"(?<![\w.:/-])[-+$¥€£]?\d+(?:[.,]\d+)?(?![\w.:/-]|\.\d)")


def _value_jaccard(a: str, b: str) -> float:
    """How alike the values after two entries' shared label are ("Shell: bash" vs "Shell: fish": 0)."""
    va = term_set(LABEL_RE.sub("", a, count=1))
    vb = term_set(LABEL_RE.sub("", b, count=1))
    return len(va & vb) / len(va | vb) if va and vb else 1.0


def _values(body: str) -> set[str]:
    """The numbers an entry states (versions, percentages, amounts, counts): two entries
    that say the same words with different numbers are not duplicates."""
    body = ISO_DATE_RE.sub(" ", body)
    return ({v.lower().lstrip("v") for v in versions(body)} | set(NUM_RE.findall(body))
            | {n.lstrip("+") for n in BARE_NUM_RE.findall(body)} | zh_numbers(body))


ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
            "八": 8, "九": 9}
ZH_UNIT = {"十": 10, "百": 100, "千": 1000, "万": 10000, "萬": 10000}
ZH_NUM_RE = re.compile("[零〇一二两兩三四五六七八九十百千万萬]+")


def zh_number(run: str) -> int | None:
    """A Chinese numeral as an int ("十二" → 12, "第三" → 3), None if it is not one."""
    total, section, digit = 0, 0, None
    for ch in run:
        if ch in ZH_DIGIT:
            digit = ZH_DIGIT[ch]
        elif ch in ZH_UNIT:
            unit = ZH_UNIT[ch]
            if unit == 10000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
        else:
            return None
    return total + section + (digit or 0)


def zh_numbers(text: str) -> set[str]:
    """Numbers written in Chinese numerals, as digits: "第三篇" and "第五篇" state different numbers."""
    out = set()
    for m in ZH_NUM_RE.finditer(text):
        n = zh_number(m.group(0))
        if n is not None and (len(m.group(0)) > 1 or text[max(0, m.start() - 1):m.start()] == "第"):
            out.add(str(n))
    return out


def duplicates_and_contradictions(ctx: Context) -> list[Candidate]:
    out = []
    by_file: dict[str, list[Item]] = {}
    for it in ctx.items:
        if not it.frozen and not it.step:
            by_file.setdefault(it.entry.file, []).append(it)
    for file, items in by_file.items():
        sets = DisjointSets(len(items))
        sims: dict[tuple[int, int], float] = {}
        # only entries sharing a specific term can be duplicates or contradict: pairs from postings
        postings: dict[str, list[int]] = {}
        for i, it in enumerate(items):
            for t in it.subject:
                if ctx.anchor(t):
                    postings.setdefault(t, []).append(i)
        pairs = sorted({(x[p], x[q]) for x in postings.values() for p in range(len(x))
                        for q in range(p + 1, len(x))})
        vals = [_values(it.entry.body) for it in items]
        has_cjk = [bool(CJK_IN.search(it.entry.body)) for it in items]
        zh = [cjk_share(it.entry.body) >= 0.3 for it in items]
        labels = [_label(it.entry.body) for it in items]
        wsub = [ctx.weight(it.subject) for it in items]
        for i, j in pairs:
            a, b = items[i], items[j]
            if a.entry.section != b.entry.section:
                continue  # per-section fields ("Telegram:" under each agent) are different facts
            shared = a.subject & b.subject
            if not shared or not any(ctx.anchor(t) for t in shared):
                continue
            newer, older = (b, a) if _newer(b, a) else (a, b)
            sup = lx.SUPERSEDE.search(newer.folded)
            va, vb = vals[i], vals[j]
            jac = len(shared) / len(a.subject | b.subject)
            ov = ctx.weight(shared) / max(min(wsub[i], wsub[j]), 1e-9)
            la, lb = labels[i], labels[j]
            if sup and not lx.SUPERSEDE.search(older.folded) and ov >= 0.3 and _names_retired(newer, older, sup):
                named = bool((older.subject - newer.subject) & newer.subject) or ov >= 0.3
                used = [o for o in ctx.obs_about(newer) if (o.terms & (newer.subject - older.subject))
                        and any(ctx.anchor(t) for t in o.terms & (newer.subject - older.subject))]
                score = clamp(0.72 + 0.08 * named + 0.08 * bool(used))
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
                short = max(len(term_set(LABEL_RE.sub("", x.entry.body, count=1))) for x in (a, b)) <= 3
                score = clamp(0.62 + 0.1 * (bool(used) and not stale) + 0.05 * short)
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
            if la != lb and not cross and (la is None or lb is None or _overlap(term_set(la), term_set(lb)) < 0.6):
                continue  # two labels are two fields (across languages a label is translated)
            # Chinese bigrams across word boundaries add noise terms: a lower bar for CJK text
            cjk = zh[i] and zh[j]
            if len(shared) < 2:
                continue  # one word in common is not enough to call two entries the same
            if not _same_fact(newer, older, cross):
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
            # (a Chinese bigram only one member has may straddle a word boundary: not a fact)
            seen_in: dict[str, int] = {}
            for x in its:
                for t in x.subject:
                    seen_in[t] = seen_in.get(t, 0) + 1
            # across languages only what no translation changes must survive: names, paths, numbers
            mixed = len({bool(CJK_IN.search(x.entry.body)) for x in its}) > 1
            union = frozenset(t for t, c in seen_in.items()
                              if c >= 2 or (not CJK_IN.search(t) and (not mixed or not t.isalpha())))
            complete = [x for x in its if x.subject >= union]
            if not complete:
                continue
            newest = max(complete, key=lambda x: (x.entry.date or date.min, x.entry.start))
            sim = min(sims.get((min(i, j), max(i, j)), 1.0) for i in members for j in members if i < j
                      and (min(i, j), max(i, j)) in sims) if sims else 0.6
            score = clamp(0.6 + 0.35 * sim + 0.03 * (len(its) - 2))
            text = compose(newest, newest.entry.body, newest.entry.date)
            ordered = sorted(its, key=lambda x: x.entry.start)
            op = Operation("merge", file, tuple(x.entry.text for x in ordered), text=text, confidence=score,
                           reason=f"{len(its)} entries say the same thing; keep the newest wording that says all of it",
                           evidence=tuple(entry_evidence(x) for x in ordered), origin="offline")
            out.append(Candidate(op, "duplicate", score, {"entries": len(its), "similarity": round(sim, 2)}))
    return out


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _names_retired(newer: Item, older: Item, m: re.Match[str]) -> bool:
    """The newer entry's change clause ("X retired", "switched from X", "instead of X") names what the
    older entry is about: a specific term of the older entry's head within the clause."""
    window = newer.folded[max(0, m.start() - 40):m.end() + 40]
    named = term_set(window) & (older.head or older.subject)
    return bool(named - newer.head) or bool(named & older.head and len(named) >= 2)


def _same_fact(keep: Item, drop: Item, cross: bool) -> bool:
    """A merge keeps `keep`'s wording, so `drop` may hold nothing `keep` lacks: its words are (almost)
    all in `keep` — a template shared by two different facts is not the same fact."""
    from rapidfuzz import fuzz

    if cross or CJK_IN.search(keep.entry.body + drop.entry.body):
        return len(drop.subject - keep.subject) <= max(1, len(drop.subject) // 3)
    a, b = fold(keep.entry.body), fold(drop.entry.body)
    return fuzz.token_set_ratio(a, b) >= 85


def _newer(a: Item, b: Item) -> bool:
    da, db = a.entry.date or date.min, b.entry.date or date.min
    return (da, a.entry.start) > (db, b.entry.start)


# -- consolidate: recurring ------------------------------------------------------------------
SECTION_HINT = re.compile(r"workflow|tool|note|gotcha|lesson|rule|how-?to|tip|trick|learn|规则|经验|笔记|备忘|工具|"
                          r"流程|注意|教训", re.I)


BUCKET_TERMS = 5   # an observation is filed under each pair of 5 of its recurring specific terms
BUCKET_CAP = 16    # a bucket larger than this is linked along a chain, not pairwise


LISTED = re.compile(r"^\s*(?:\d+[.)]|#+)\s")  # "1. replied to …", "## heading": an activity list, not a lesson


LESSON_CHARS = 320
NOT_LESSON = re.compile("|".join(f"(?:{p.pattern})" for p in (lx.EXCEPTION, lx.CHATTER, lx.ROUTINE)))


def recurring(ctx: Context) -> list[Candidate]:
    # a lesson is a line, not a paragraph: long log lines are reports, never written into memory whole
    obs = [o for o in ctx.obs if len(o.text) <= LESSON_CHARS and len(o.terms) >= 2]
    if len(obs) > 4000:
        obs = obs[-4000:]
    # Candidate pairs by buckets, not all pairs: two observations can only link when they share two
    # specific terms, so each is filed under every pair of its rarest specific terms; only members of
    # one bucket are compared, and a bucket as large as a template's is compared along a chain.
    # A term seen once in the window cannot recur, so only terms on two or more lines are filed.
    seen: dict[str, int] = {}
    for o in obs:
        for t in o.terms:
            seen[t] = seen.get(t, 0) + 1
    buckets: dict[tuple[str, str], list[int]] = {}
    for i, o in enumerate(obs):
        rec = sorted((t for t in o.terms if seen[t] >= 2 and ctx.anchor(t)), key=lambda t: (seen[t], t))
        # its rarest recurring terms (what only a few lines share) and its most recurring ones (what a
        # lesson's lines share however each is worded)
        rare = sorted(set(rec[:BUCKET_TERMS // 2] + rec[::-1][:BUCKET_TERMS - BUCKET_TERMS // 2]))
        for a in range(len(rare)):
            for b in range(a + 1, len(rare)):
                buckets.setdefault((rare[a], rare[b]), []).append(i)
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

    for i, j in sorted(pairs):
        if sets.find(i) == sets.find(j):
            continue  # already linked through another pair
        o = obs[i]
        shared = o.terms & obs[j].terms
        if len([t for t in shared if ctx.anchor(t)]) < 2:
            continue
        # recurring terms are frequent in the window by definition, so the idf-weighted
        # overlap undervalues them: either measure may link two observations
        sim = ctx.weight(shared) / max(min(weight(i), weight(j)), 1e-9)
        plain = len(shared) / min(len(o.terms), len(obs[j].terms))
        if sim >= 0.45 or plain >= 0.5:
            sets.union(i, j)
    groups: dict[int, list[Observation]] = {}
    for i, o in enumerate(obs):
        groups.setdefault(sets.find(i), []).append(o)
    out = []
    primary = ctx.col.docs.get(ctx.primary)
    for members in groups.values():
        if len({o.day for o in members}) < 2:
            continue
        # chatter, one-off exceptions and "nothing new" lines recur but are not lessons (checked only
        # here, on lines that recur at all: the patterns are costly to run over every line)
        members = [o for o in members if not NOT_LESSON.search(fold(o.text))]
        days = sorted({o.day for o in members})
        if len(days) < 2:
            continue
        by_day: dict[date, set[str]] = {}
        for o in members:
            by_day.setdefault(o.day, set()).update(o.terms)
        counts: dict[str, int] = {}
        for ts in by_day.values():
            for t in ts:
                counts[t] = counts.get(t, 0) + 1
        core = frozenset(t for t, c in counts.items() if c >= 2)
        anchors = [t for t in core if ctx.anchor(t)]
        if len(anchors) < 2:
            continue
        # a remedy done again counts as the rule's recurrence once one line states the rule (or the
        # remedy recurs on three days)
        stated = any(lx.RULE.search(fold(o.text)) for o in members if not LISTED.match(o.text))
        def remedy(o: Observation) -> bool:  # a remedy that is itself what recurs
            m = lx.REMEDY.search(fold(o.text))
            return bool(m) and (stated or (len(days) >= 3 and bool(term_set(m.group(0)) & core)))

        ruled = [o for o in members if not LISTED.match(o.text) and (lx.RULE.search(fold(o.text)) or remedy(o))]
        # what recurs is worth remembering as a lesson only in a rule's form (a workaround, "always",
        # "每次"): activity that recurs is the log's business, not memory's
        if not ruled or (len(days) < 3 and len({o.day for o in ruled}) < 2):
            continue
        near_items = {i for t in core for i in ctx._items_by_term.get(t, ())}
        wcore = max(ctx.weight(core), 1e-9)
        coverage = max((ctx.weight(core & ctx.items[i].subject) / wcore for i in near_items), default=0.0)
        if coverage >= 0.6:
            continue  # memory already holds it
        sessions = len({o.session for o in members if o.session})
        score = clamp(0.66 + 0.04 * (len(days) - 2) + 0.08 * bool(ruled) + 0.02 * min(sessions, 2)
                      + ctx.recency(members) - 0.6 * max(0.0, coverage - 0.35))
        clean = [o for o in members if not o.sensitive]
        if not clean:
            continue
        clean = [o for o in clean if o in ruled] or clean
        rep = max(clean, key=lambda o: (ctx.weight(core & o.terms) + 0.5 * bool(lx.RULE.search(fold(o.text)))
                                          - 0.002 * len(o.text), o.day))
        # what the new entry says must itself recur: the lines that share most of its specific terms,
        # on enough days (a cluster chained through different topics has no one lesson)
        rep_anchor = frozenset(t for t in rep.terms & core if ctx.anchor(t))
        support = [o for o in members if o is rep or (rep_anchor and ctx.weight(o.terms & rep_anchor)
                                                        >= 0.6 * ctx.weight(rep_anchor))]
        s_days = sorted({o.day for o in support})
        if len(rep_anchor) < 2 or len(s_days) < 2 or (len(s_days) < 3 and len({o.day for o in support
                                                                            if o in ruled}) < 2):
            continue
        members, days = support, s_days
        text = _clean(rep.text)
        if not text or sensitive.has_sensitive(text):
            continue
        section, prio = _pick_section(ctx, primary, core)
        tag = "P1" if ruled else prio
        new = f"[{tag}] {text} ({days[-1].isoformat()})"
        op = Operation("consolidate", ctx.primary, (), text=new, section=section, confidence=score,
                       reason=f"recurs on {len(days)} distinct days and memory lacks it",
                       evidence=ctx.evidence(members, 5, first=rep), origin="offline")
        out.append(Candidate(op, "recurring", score, {"days": len(days), "rule": bool(ruled),
                                                       "coverage": round(coverage, 2), "sessions": sessions}))
    return out


def _clean(text: str) -> str:
    t = lx.DAY_NOISE.sub("", text.strip()).strip()
    t = TAG_RE.sub("", t).strip()
    if len(t) > 220:
        cut = max(t.rfind(c, 0, 220) for c in "。.;；，,")
        t = t[:cut] if cut > 60 else t[:220]
    return t.strip()


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
        sc = ctx.weight(core & s_terms) + (0.5 if SECTION_HINT.search(s.title) else 0.0) + 0.01 * s.line / 1000
        if sc > best_s:
            best, best_s = s, sc
    if best is None:
        return "Notes", "P1"
    return best.title, best.priority if best.priority != "P0" else "P1"


TIMELINE = re.compile(r"event|timeline|history|changelog|journal|大事|时间线|時間線|历史|歷史|日志", re.I)


def state_regressions(ctx: Context) -> list[Candidate]:
    """An entry says a state holds ("WhatsApp 已连接", "the NAS is online"); the newest lines about
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
            score = clamp(0.7 + 0.05 * min(len(days) - 1, 2) + 0.05 * persists + ctx.recency([o]))
            op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, new_body, day),
                           confidence=score, reason=f"{name} ended: the newest logs report it {word}",
                           evidence=(entry_evidence(it), *ctx.evidence([e[3] for e in ends], 3, first=o)),
                           origin="offline")
            out.append(Candidate(op, "state", score, {"days": len(days), "persists": persists}))
            break
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
        score = clamp(0.72 + 0.08 * (days - 1) + ctx.recency([o]))
        # the quote is the assignment itself, which may sit on a continuation line of the cited item
        ev = [Evidence(x.ref, q) for x, n, q in sorted(found, key=lambda x: (x[0].day, x[0].line))[-3:] if n == new]
        op = Operation("refresh", it.entry.file, (it.entry.text,), text=compose(it, body, o.day), confidence=score,
                       reason=f"'{lab.strip('* ')}' is now {new}", evidence=(entry_evidence(it), *ev),
                       origin="offline")
        out.append(Candidate(op, "slot", score, {"days": days}))
    return out


TICKED = re.compile(r"`([A-Za-z][\w.@/+-]{2,60})`")
DATED_TITLE = re.compile(r"^\s*\d{4}-\d{2}(?:-\d{2})?\b")
RETIRED_PER_RUN = 3
LINK_RE = re.compile(r"\]\([^)]+\)")


def retired_subjects(ctx: Context) -> list[Candidate]:
    """The person retired a tool ("`mcporter` is not required anymore", "不再使用 `foo`"): entries
    built around it — it is their label or among their first words — are out of date. Past records
    (dated or timeline sections) and entries already saying it is retired are left alone."""
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
            near = [t for t in TICKED.finditer(o.text) if abs(t.end() - m.start()) <= 40 or abs(t.start() - m.end()) <= 40]
            if near:
                tool = min(near, key=lambda t: min(abs(t.end() - m.start()), abs(t.start() - m.end()))).group(1)
                retired[tool.lower()] = o
    out = []
    for tool, o in retired.items():
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
            score = clamp(0.76 + 0.04 * (o.role == "user") + ctx.recency([o]))
            op = Operation("prune", it.entry.file, (it.entry.text,), confidence=score,
                           reason=f"`{tool}` was retired ({o.day.isoformat()}); this entry is built around it",
                           evidence=(entry_evidence(it), *ctx.evidence([o], 1)), origin="offline")
            out.append(Candidate(op, "retired", score, {"tool": tool}))
    return out


def _negated(text: str, pos: int) -> bool:
    return bool(lx.NEGATED_BEFORE.search(text[max(0, pos - 8):pos]))


RULES = (secret_entries, stale_entries, status_changes, state_regressions, slot_changes, retired_subjects,
         version_changes, preference_changes,
         duplicates_and_contradictions, recurring)


def find_candidates(ctx: Context) -> list[Candidate]:
    out: list[Candidate] = []
    for rule in RULES:
        out += rule(ctx)
    return out
