"""Words that carry state, change and intent, in English, Simplified and Traditional
Chinese. The words are data, one file per language (`memgit/data/lexicon/en.toml`,
`zh.toml`, read by `memgit.wordlists`); this module builds from them the patterns the
dream's rules use. Patterns run on `text.norm()` output (lower case, Traditional folded
to Simplified), so each Chinese word is written once, in Simplified; the few built from
`as_written.*` lists run on text as written."""
from __future__ import annotations

import re
from functools import lru_cache

from memgit.errors import DataError
from memgit.text import CJK_RE as CJK_IN, norm, term_set
from memgit.wordlists import LazyPattern, alternation, compiled as _compiled_now, pattern_later as _re, table, words

_NEG = f"(?:{alternation('negation')})"

# A thing waiting to happen (status words), in rough order of progress.
PENDING = _re("pending")
TODO = _re("todo")
ERROR = _re("error")
FIXED = _re("fixed")
# the opposite of a failure: what the thing that failed does once it works ("备份成功", "the sync succeeded");
# alone it is no fix (a first success can be luck), so it counts only on two days (memgit.dream.rules.prune)
SUCCEEDED = _re("succeeded")
# how often a fault comes, said before its word ("keeps", "一直"): stripped to find the fault's own word
OFTEN_LEAD = LazyPattern(rf"^(?:{alternation('often_lead')})", key="often_lead")
REPEATED = _re("repeated")  # "two nights in a row", "连续两晚": a line that reports several runs


def _done() -> list[tuple[int, re.Pattern[str], str, str, tuple[str, ...]]]:
    en, zh = table("done", "en"), table("done", "zh")
    out = []
    for state, rank in DONE_RANKS:
        try:
            # a state with `ends` ends only a wait named by one of those words ("approved" ends "pending
            # approval", not "pending merge"); without, it ends any
            ends = tuple(en[state].get("ends", ())) + tuple(zh[state].get("ends", ()))
            if not all(isinstance(w, str) for w in ends):
                raise TypeError
            out.append((rank, _re(f"done.{state}.words"), en[state]["display"], zh[state]["display"], ends))
        except (KeyError, TypeError, AttributeError):
            raise DataError(f"memgit's word lists lack a display of done state '{state}'; reinstall memgit.") from None
    return out


# Done states, in order, with how far along each is; a tie keeps the first.
DONE_RANKS = (("live", 3), ("deployed", 3), ("released", 3), ("arrived", 3), ("shipped", 2), ("pushed", 2),
              ("merged", 2), ("approved", 2), ("accepted", 2), ("signed", 1), ("ruled", 2), ("repaired", 2), ("resolved", 2), ("completed", 2), ("done", 1))
# (rank, pattern, canonical English, canonical Chinese, the waits it alone ends); TRADITIONAL spells the
# Chinese display.
DONE: list[tuple[int, re.Pattern[str], str, str, tuple[str, ...]]] = _done()
REPAIRED = table("done", "en")["repaired"]["display"]  # a state that also ends the fault it names
ARRIVED = table("done", "en")["arrived"]["display"]  # a thing come in: of the entry, or only of a part it waits on
TRADITIONAL = {d["display"]: d.get("traditional", d["display"]) for d in table("done", "zh").values()}
NEGATED_BEFORE = LazyPattern(_NEG + r"\s*[^\s,，。;；!！?？]{0,6}$", key="negation")  # (within its clause: "受不了，订了台" is no negation of 订)

# the work moved to another name further on in a line naming the old one (memgit.dream.rules.displaced)
SWITCH_TO = _re("switch_to")
PREFERENCE = _re("preference")
EXCEPTION = _re("exception")
# a value set anew: the verb, and the word joining what is set to its number (memgit.dream.rules.aligned)
VALUE_SET = _re("value_set")
VALUE_TO = _re("value_to")
SUPERSEDE = _re("supersede")
# A lesson in its rule form: what to do (a workaround, "always", "记住"), not the complaint that it
# happened again ("又", "again", "第三次" mark recurrence: AGAIN).
RULE = _re("rule")
FORGOT = alternation("forgot")  # a step skipped: what it skipped is the rule
UNDECIDED = _re("undecided")  # a choice still open ("场地待定", "venue TBD")
DECIDED = _re("decided")  # the words that close it ("已确认", "went with")
OPTIONS = _re("options")  # what lists its candidates ("候选：", "options:")
# a complaint that a lesson was missed ("forgot to", "忘了", "浪费半小时"): not the lesson itself
COMPLAINT = _re("complaint")
MISHAP = _re("mishap")  # a near miss, or a fault found late: trouble a rule answers
OTHERWISE = _re("otherwise")  # what follows a rule: what happens when it is broken
# a label a rule is said under, at a sentence's start ("记住：", "Remember:", "Rule:")
RULE_LABEL = LazyPattern(f"^(?:(?:你们|你們|你|大家|我们|我們|各位)都?\\s*)?(?:{alternation('as_written.rule_label')})\\s*[:：,，]\\s*", re.I,
                         key="as_written.rule_label")
# what was done to fix it, which, recurring, is a workaround in all but name
REMEDY = _re("remedy")
# how often, not what to do: "as always" is no rule
HABITUAL = _re("habitual")
AGAIN = _re("again")
TEMP = _re("temp")
# groups 1, 2: the English count and unit; 3, 4: the Chinese (memgit.dream.rules.prune reads them so)
EXPIRES_IN = _compiled_now("|".join(words("expires_in")), key="expires_in")
if EXPIRES_IN.groups != 2 * len(words("expires_in")):
    raise DataError("memgit's word list 'expires_in' needs two groups (count, unit) per alternative; reinstall memgit.")
# days per unit of EXPIRES_IN
EXPIRY_DAYS: dict[str, int] = {k: int(v) for k, v in table("expiry_unit").items()}
CHATTER = _re("chatter")
ACK = _re("ack")
# leading words of a log line that say when, not what
# (after a comma or a dash, at the very end, "!" and emoji aside)
EMPHASIS_TAIL = LazyPattern(rf"\s*[,，;；—–.。!！-]\s*(?:{alternation('emphasis_tail')})"
                            r"\s*[!！.。~～\U0001F300-\U0001FAFF]*\s*$", re.I,
                            key="emphasis_tail")
DAY_NOISE = LazyPattern(f"^(?:{alternation('day_noise')})", re.I, key="day_noise")
STATE_WORDS = LazyPattern("|".join(p.source for p in (PENDING, TODO, ERROR, FIXED, *[d[1] for d in DONE])),
                          key="state words")


def negated_at(text: str, pos: int) -> bool:
    """A negation stands just before `pos` ("没有报错", "not pending"), in its clause: one before a comma is another
    clause's ("MycoAlert 等不了，改用 PCR")."""
    if text[pos:pos + 1] in _CLAUSE_MARKS:
        return False  # (a word matched with the comma opening its clause)
    window = text[max(0, pos - 8):pos]
    return bool(NEGATED_BEFORE.search(re.split(f"[{_CLAUSE_MARKS}]", window)[-1]))


_CLAUSE_MARKS = "，,。；;！!？?"


def first_affirmed(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of `pattern` in `text` that no negation stands before."""
    return next((m for m in pattern.finditer(text) if not negated_at(text, m.start())), None)


# the English word a state word is said of: the one right before it, auxiliaries aside ("funds released",
# "the grant is approved")
_CONTAINER = frozenset(words("container", "en"))
_SAID_OF = re.compile(r"([a-z][a-z'-]*)\s+(?:(?:is|are|was|were|been|be|has|have|had|got|gets|now|just|finally)\s+)*$")
# (a thing and its number: "level 2 is confirmed")
_SAID_OF_NUMBERED = re.compile(r"([a-z][a-z'-]*)\s+\d+[a-z]?\s+"
                               r"(?:(?:is|are|was|were|been|be|has|have|had|got|gets|now|just|finally)\s+)*$")


def _said_of(text: str, pos: int, subject: frozenset[str], strict: bool = False) -> bool:
    """The state word at `pos` is not said of another thing: the English word right before it, if any,
    is a function word or one of `subject`'s terms (`strict`: there is one, and it is the subject's)."""
    before = text[max(0, pos - 40):pos]
    m = _SAID_OF.search(before)
    if strict and (m is None or not term_set(m.group(1))):
        m = _SAID_OF_NUMBERED.search(before) or m
    if m is not None and m.group(1) in _CONTAINER:
        # what the thing came in ("sensor parcel arrived", "the chairs' shipment was delivered"): the word
        # before it names what arrived
        m = _SAID_OF.search(before[:m.start(1)].rstrip("'s’ —–-:") + " ") or m
    if m is None or not (ts := term_set(m.group(1))):
        return not strict
    if ts & subject:
        return True
    # another word for the same thing ("consent granted" of a permit)
    return any(f"~{c}" in subject for c in concepts(m.group(1)))


def _object_of(text: str, end: int, subject: frozenset[str]) -> bool:
    """The English state word ending at `end` is said of the thing right after it, one of `subject`'s terms ("Halden
    quality signed off HR-4410 FAI": what was signed off is the entry's part, whoever signed)."""
    m = _OBJECT_AFTER.match(text, end)
    return m is not None and bool(term_set(m.group(1)) & subject)


_OBJECT_AFTER = re.compile(r"\s+(?:(?:the|our|my|their|his|her|its)\s+)?([a-z0-9][\w-]*)")


# a done word a wait follows is still to come ("上架要等四周后", "live has to wait until June")
_STILL_TO_WAIT = re.compile(r"\s*(?:还|也)?(?:要|得|需要)等|\s+(?:has|have|will have|needs?) to wait\b")
DONE_NOUN = _re("done_noun")


def _bare_noun(text: str, m: re.Match[str]) -> bool:
    """A Chinese done verb said bare (no 已 before, no 了 after) right before a noun it names the kind of
    ("上线公告草稿", "部署文档"): nothing is done."""
    return bool(CJK_IN.match(m.group(0))) and not text[max(0, m.start() - 2):m.start()].rstrip().endswith(("已", "经")) \
        and DONE_NOUN.match(text, m.end()) is not None


def done_state(text: str, wait: str | None = None, subject: frozenset[str] | None = None, named: str = ""
               ) -> tuple[int, str, str, int, int] | None:
    """The most advanced non-negated done state in `text`: (rank, english, chinese, position, end). With
    `wait` (the words of what an entry waits for), only a state that can end that wait or the thing
    `named` as waiting ("health permit: blocked until …" ends when the permit is issued); with `subject`
    (an entry's terms), only a state said of it, not of another noun ("funds released in April")."""
    best = None
    # what the wait is for, as its words name it ("waiting for the sensors"): a state said of it ends the wait
    obj = _EN_OBJECT.match(wait) if wait else None
    awaited = frozenset(term_set(obj.group(1))) if obj and obj.group(1) not in _FUNCTION else frozenset()
    for rank, pat, en, zh, ends in (*DONE, *_echoes(wait)):
        of_it = False
        # ("!check": a wait this state never ends, whatever else it ends)
        never = [w[1:] for w in ends if w.startswith("!")]
        ends = [w for w in ends if not w.startswith("!")]
        if never and wait is not None and any(w in wait for w in never):
            continue
        if ends and wait is not None and not any(w in wait or w in named for w in ends):
            if not awaited:
                continue
            of_it = True  # only said of what the wait is for
        # a wait's own English participle only said right after the entry's own word ("the venue contract
        # signed", "Orchid v3 was reviewed"; not "reviewed the exporter logs for Orchid")
        m = next((m for m in pat.finditer(text) if not negated_at(text, m.start())
                  and not _STILL_TO_WAIT.match(text, m.end()) and not _bare_noun(text, m)
                  and (subject is None or _said_of(text, m.start(), subject, strict=not en)
                       or en and _object_of(text, m.end(), subject))
                  and (not of_it or _said_of(text, m.start(), awaited, strict=True))), None)
        if m is not None and (best is None or rank > best[0]):
            best = (rank, en or m.group(0), zh, m.start(), m.end())  # a wait's own participle is its word
    return best


# What a wait's own verb says once it is done: 待签字 → 已签字 / 签好了, 等厂商送货 → 已送货,
# "awaiting signature" → "signed", "pending inspection" → "inspected". The verb is the last two
# characters after 待 / 等 (what follows the party waited on), or the one; the English one, the noun right after the
# wait's words, whose stem a participle ("-ed") begins. Rank 2, as approved or completed.
_ZH_WAITED = re.compile(r"(?:待|等)\s*([\u4e00-\u9fff]{1,6})")
_EN_OBJECT = re.compile(r"(?:pending|awaiting|waiting(?:\s+(?:on|for))?|in|out|for)\s+"
                        r"(?:(?:on|for|the|a|an|their|his|her|our|its|final)\s+)*([a-z]+)\b(?:\s+([a-z]+)\b)?")
EN_OBJECT = _EN_OBJECT  # (what an English wait is for: memgit.dream.rules.status)
_FUNCTION = frozenset(("about", "after", "before", "since", "until", "which", "their", "there", "where", "while"))


@lru_cache(maxsize=512)
def _echoes(wait: str | None) -> tuple[tuple[int, re.Pattern[str], str, str, tuple[str, ...]], ...]:
    if not wait:
        return ()
    m = _ZH_WAITED.match(wait)
    if m:
        said = m.group(1)
        # (the verb ends where the pending words do, before what it is done to: "等客户确认" of "等客户确认铭文图面")
        pm = PENDING.match(wait)
        if pm and m.start(1) + 2 <= pm.end() < m.end(1):
            said = wait[m.start(1):pm.end()]
        v = re.escape(said[-2:])
        head = re.escape(said[-2:][0])  # (a verb of one character is its own head: 待签 → 签妥)
        # (and the verb done in writing where its clause ends: "已经签字确认，")
        pat = re.compile(rf"已(?:经)?\s*(?:{v}|{head}(?![\u4e00-\u9fff])|{head}[好完妥])|{v}(?:好|完成|完|妥)"
                         rf"|{v}了(?=\s*(?:[。！!，,；;]|$))|{head}(?:好|完)了"
                         rf"|已(?:经)?\s*(?:签字|签名|盖章|书面)\s*{v}(?=\s*(?:[。！!，,；;]|$))"
                         # (or said to be so in speech: "铭文图面确认 OK", "确认无误")
                         rf"|{v}\s*(?:ok|无误|没问题)(?![a-z])")
        zh = "已" + said[-2:]
        # (a thing awaited, not a step: it comes out, "等报告" → "报告出了", "等结果" → "结果出来了")
        if len(said) >= 2 and said[-2:] in _AWAITED_THINGS:
            # (or said come out before what it says: "杯测结果出来：84.5 分")
            come = re.compile(rf"{v}\s*(?:已经?|都|终于)?\s*(?:出了|出来了|出炉|下来了|到了|来了|出来(?=\s*[：:]))")
            return ((2, pat, zh, zh, ()), (2, come, said[-2:] + "已出", said[-2:] + "已出", ()))
        return ((2, pat, zh, zh, ()),)
    # a party waited on to do a thing, the wait's last words ("waiting on UKRA to confirm"): done when it is done
    if to := _TO_VERB_END.search(wait):
        return ((2, re.compile(rf"\b{re.escape(to.group(1).rstrip('e'))}e?d\b"), "", "已完成", ()),)
    # the noun right after the wait's words ("awaiting signature", "waiting for the permit"), no later one
    # ("waiting for the landlord to return it" waits for no return)
    m = _EN_OBJECT.match(wait)
    if not m:
        return ()
    # the noun right after the wait's words, or the second of two ("awaiting client signature": a compound
    # noun, whose head is its last word), never one after a function word ("for the landlord to return it")
    # (the second only when a verb made into a noun, "signature", "approval": "pending OpenClaw install" waits
    # for no "installed" said of anything)
    second = m.group(2) if m.group(2) and any(m.group(2).endswith(x) for x in _NOMINAL if len(x) >= 2) else None
    nouns = [n for n in (m.group(1), second) if n and len(n) >= 5 and n not in _FUNCTION]
    if not nouns:
        return ()
    # the verb a noun is made of: "signature" → sign, "delivery" → deliver, "review" → review
    stems = {s for n in nouns for s in (n, *(n[:-len(x)] for x in _NOMINAL if n.endswith(x) and len(n) - len(x) >= 3))}
    alts = "|".join(sorted(f"{re.escape(x)}(?:{re.escape(x[-1])})?" for x in stems))
    return ((2, re.compile(rf"\b(?:{alts})ed\b"), "", "已完成", ()),)


_NOMINAL = tuple(words("nominal_suffix"))
_TO_VERB_END = re.compile(r"\bto\s+([a-z]{4,})\s*$")  # (a wait ending on what a party is to do: "… to confirm")
# things a wait awaits that come out rather than get done ("等报告", "等结果")
_AWAITED_THINGS = frozenset(words("awaited_thing"))


# A state that holds, and the states that end it: (name, holds, ended). An entry saying the first
# whose subject the newest logs report in the second is out of date.
STATE_PAIRS: list[tuple[str, re.Pattern[str], re.Pattern[str]]] = [
    (name, _re(f"state_pair.{name}.holds"), _re(f"state_pair.{name}.ended"))
    for name in table("state_pair", "en")
]
# "still", "again": the ended state persists (one day's report is enough)
PERSISTS = _re("persists")
# a failure put in the past a few words before it ("之前 30 分钟超时", "previously timed out")
EARLIER = _re("earlier")

# A tool or way of working the person has retired: the entries built around it are out of date.
RETIRED = _re("retired")
# how a log reports what the person said or decided
PERSON_SAID = _re("person_said")
# right after a name, who speaks or decides: a colon, or a word of saying ("阿哲決定了：", "Tom said")
SPEAKS_AFTER = LazyPattern(rf"\s*(?:[:：]|(?:{alternation('person_said')}))", key="person_said")

# A passing condition said of "these days": true when written, stale once the window stops reporting it.
TRANSIENT_SPAN = _re("transient_span")
TRANSIENT_STATE = _re("transient_state")

# One value moved: the verbs of "X 换成 Y" / "upgraded to Y" (Chinese after folding to Simplified), and
# what makes such a line no report of a change: a question, a plan, a denial, a hold or a rollback.
CHANGE_ZH = alternation("change", "zh")
CHANGE_EN = alternation("change", "en")
# a release moved: what makes a bare number after a name a version ("upgraded Node from 18 to 20")
UPGRADED = _re("upgraded")
# a chosen thing changed: what makes "X → Y" a change of tool, not a flow or a mapping
SWITCHED = _re("switched")
ASKED = _re("asked")
ADMONITION = _re("admonition")
# a party named: ours or another's (the last one before a thing says whose it is: memgit.dream.rules.versions)
PARTY_OURS = _re("party_ours")
PARTY_THEIRS = _re("party_theirs")
PARTY_THEIRS_OWN = _re("party_theirs_own")
PLANNED = _re("planned")
CONDITIONAL = _re("conditional")  # a condition ("if", "如果"): what it leads is not said to have happened
DENIED = _re("denied")
HELD = _re("held")

# -- words of single rules ------------------------------------------------------------------------
# a preference (memgit.dream.rules.preference): the refused old way, who wants it, the change,
# "from now on", "instead of"; the last five run on the statement as written
REFUSAL = _re("refusal")
PREFERENCE_SAID = _re("preference_said")
PREFERENCE_CHANGE = _re("preference_change")
TIME_MARKER = _re("time_marker", re.I)
RATHER_THAN = _re("rather_than")
CHANNEL = _re("channel")  # a way a message reaches a person, named bare ("email at 06:30")
PREF_KEPT = _re("pref_kept")  # "same time", "照旧": what stays when the rest of a preference changes
PREF_ADDED = _re("pref_added")  # "also", "加上": new words that add to a preference
# a channel refused, written before it ("not email"), and one moved to, written before it ("just Teams"): alternations
# a rule embeds with the channel's own name
CHANNEL_DROPPED, CHANNEL_MOVED = alternation("channel_dropped"), alternation("channel_moved")
# a clock time moved ("改到 9 点", "move it to 9pm"), the day it is given for, and the parts of a Chinese day
# a clock time is said in ("晚上"; `CLOCK_PM` adds twelve hours to 1–11)
TIME_MOVED = _re("time_moved")
WEEKDAY = _re("weekday")
# a place moved ("改到五樓 502", "moved to room 214"): the number after it is the new one (rules.schedule)
PLACE_MOVED = _re("place_moved")
# a word that numbers a place, a position or an item before its number ("room 201"): no release
ORDINAL = frozenset(words("ordinal", "en"))
CLOCK_AM = tuple(words("clock_am"))
CLOCK_PM = tuple(words("clock_pm"))
# a part of the day said right before a clock time: the clock words and a day named with its part ("明早", "tonight")
DAY_PART_BEFORE = LazyPattern(rf"(?:{alternation('clock_am')}|{alternation('clock_pm')}"
                              rf"|{alternation('day_part_named')})\s*$",
                              key="day_part_named")
# (a dash after it stands apart: "right — from now on", never "right-hand")
FILLER = LazyPattern(rf"^(?:{alternation('as_written.filler')})(?:\s*[—–-]\s+|[,，:：!！。\s])+", re.I, key="as_written.filler")
# "Mei said (that) …", "Jw 说 …": who said it is evidence, not part of the preference
_SAID_EN, _SAID_ZH = (alternation("as_written.attribution", lang) for lang in ("en", "zh"))
ATTRIBUTION = LazyPattern(rf"^[^\s,，:：]{{1,20}}(?:\s+[^\s,，:：]{{1,20}})?\s+(?:{_SAID_EN})\s+(?:that\s+)?"
                       rf"|^[^\s,，:：]{{1,12}}\s*(?:{_SAID_ZH})\s*[:：,，]?\s*", re.I, key="as_written.attribution")
PARTICLE_END = LazyPattern(f"(?:{alternation('as_written.particle')})+$", key="as_written.particle")
AND_BUT = LazyPattern(rf"\s+(?:{alternation('as_written.and_but')})\s+", key="as_written.and_but")
PREFERENCE_TITLE = _re("as_written.preference_title", re.I)
# a thing that is over (memgit.dream.rules.prune)
DONE_WITH = _re("done_with")
# a party or device whose part is over, and one that takes it over (memgit.dream.rules.versions.handovers)
HANDED_OVER = _re("handed_over")
TOOK_OVER = _re("took_over")
# a measure right before a number ("評分 4.7", "rated 4.5"): the number is a value, no version (rules.versions)
MEASURED = LazyPattern(f"(?:{alternation('measured')})\\s*[:：=]?\\s*$", key="measured")
# next to a name whose part is over, and next to the one taking it (memgit.dream.rules.displaced)
DISPLACED = _re("displaced")
STAND_IN = _re("stand_in")  # for a while only: until it is back, for today
ADDED_DAY = _re("added_day")  # one day more, not the day moved ("also on Fridays", "周五也加送")
TAKING_PART = _re("taking_part")
# a section that holds lessons (memgit.dream.rules.recurring)
LESSON_TITLE = _re("as_written.lesson_title", re.I)
# what a pending status waits on, and the words after which a status takes an object (rules.status)
WAITING = _re("waiting")
OBJECT_PREPOSITION = alternation("object_preposition")
# a thing that waits on something or someone, and the words that end the wait short of done
BLOCKED = _re("blocked")
UNBLOCKED = _re("unblocked")
# what the person puts in a retired tool's place ("use plain `gh` only", "改用 `uv`"): group 1 is the tool
REPLACE_WITH = LazyPattern(f"(?:{alternation('replace_with')})`([^`\\n]{{1,60}})`", key="replace_with")
# a verb prescribing a tool ("always use `x`"), and a sentence that only points back at the one before
USE_VERB = _re("use_verb")
NOW_STATE = _re("now_state")
BEFORE_FIRST = _re("before_first")
RELEASE_DOCS = _re("release_docs")
ANAPHOR = _re("anaphor")
# words any heading uses ("setup", "状态"): they name no one thing of a kind (rules.versions.qualifiers)
GENERIC_HEADING = frozenset(words("generic_heading"))
# a version moved or kept back, the words naming a version, a labelled setting's slot (rules.versions)
VERSION_MOVED = _re("version_moved")
VERSION_HELD = _re("version_held")
VERSION_WORDS = frozenset(words("word_set.version"))
SURNAMES = frozenset(words("word_set.surname", "zh"))  # ("老陈", "郑姐": rules.versions._familiar_names)
# a surname that begins a whole name the segmenter reads ("方国栋": rules.versions._full_names)
SURNAMES_IN_NAME = SURNAMES | frozenset(words("word_set.surname_in_name", "zh"))
SLOT_WORDS = alternation("as_written.slot")
# spelled-out numbers (memgit.dream.rules.counts)
NUMBER_WORDS: dict[str, int] = {k: int(v) for k, v in table("number").items()}


# -- concepts: one id for the English and Chinese spellings of a common word of agent memory ------
# Their ids join the terms an entry and an observation are compared by ("~backup" for "backup" and
# "备份"), so a subject written in one language is recognised in the other (memgit.dream.model).
@lru_cache(maxsize=1)
def _concepts() -> tuple[dict[str, str], re.Pattern[str]]:
    by_word: dict[str, str] = {}
    for lang in ("en", "zh"):
        for cid, spec in table("concept", lang).items():
            forms = spec.get("words") if isinstance(spec, dict) else None
            if not isinstance(forms, list) or not all(isinstance(w, str) and w for w in forms):
                raise DataError(f"memgit's word list {lang}.toml has a bad concept '{cid}'; reinstall memgit.")
            for w in forms:
                if by_word.setdefault(w, cid) != cid:
                    raise DataError(f"memgit's word lists give '{w}' two concepts; reinstall memgit.")
    if not by_word:
        raise DataError("memgit's word lists have no concepts; reinstall memgit.")
    # Chinese forms by one pattern, longest first; English forms are whole words, looked up word by word
    # (a pattern of a hundred \b-bounded alternatives costs a microsecond a character on every line)
    zh = [re.escape(w) for w in sorted(by_word, key=len, reverse=True) if not w.isascii()]
    return by_word, _compiled_now("|".join(zh) or "(?!)", key="concept")


_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


@lru_cache(maxsize=1)
def _english_forms() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    """English forms by their first word: (the form's words, concept id), longest first."""
    out: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for w, cid in _concepts()[0].items():
        if w.isascii():
            words_ = tuple(w.split())
            out.setdefault(words_[0], []).append((words_, cid))
    for v in out.values():
        v.sort(key=lambda x: -len(x[0]))
    return out


def concept(word: str) -> str | None:
    """The concept id of one word ("deployed", "上线", "上線" → "deploy"), or None."""
    return _concepts()[0].get(norm(word))


def _english_forms_in(n: str) -> list[tuple[tuple[str, ...], str]]:
    """The concept forms the English words of normalised text `n` hold, in order: (the form's words, its concept)."""
    forms = _english_forms()
    ws = _EN_WORD.findall(n)
    out = []
    i = 0
    while i < len(ws):
        step = 1
        for seq, cid in forms.get(ws[i], ()):
            if tuple(ws[i:i + len(seq)]) == seq:
                out.append((seq, cid))
                step = len(seq)  # "roll back": one form, not "roll" and then "back" again
                break
        i += step
    return out


def concepts(text: str) -> set[str]:
    """The concept ids of the words in `text`, after folding it with `text.norm()`."""
    by_word, pat = _concepts()
    n = norm(text)
    found = {by_word[m.group(0)] for m in pat.finditer(n)} if CJK_IN.search(n) else set()
    return found | {cid for _, cid in _english_forms_in(n)}


def concept_words(text: str) -> dict[str, str]:
    """Each English word of `text` inside a form of a concept ("picked", "up" of "picked up"), and that concept."""
    return {w: cid for seq, cid in _english_forms_in(norm(text)) for w in seq}


def concept_terms(text: str) -> frozenset[str]:
    """The concept ids of a text as terms ("~backup"), to join its `text.terms()`."""
    return frozenset("~" + c for c in concepts(text))
