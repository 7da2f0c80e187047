"""The one gate every dream candidate passes (memgit.dream.verify): pure checks over plain values."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import pytest

from memgit.dream import verify
from memgit.memory import parse
from memgit.ops import Evidence, Operation, hash_target

MEM = """# MEMORY

## Who I Am
- **Name:** Pip

## Rules
- **NEVER reboot the build host while a job runs**
- Calendar syncs must use `caldav-sync` only

## Projects [P1]
- [P1] Cockpit v1 待 push (2026-05-02)
- [P1] PostgreSQL 15 on h1 (2026-04-01)
- [P1] **Model**: Falcon 4.1 (2026-04-01)
- [P1] Big entry
  - one
  - two
  - three
  - four
  - five
  - six
  - seven
  - eight
  - nine
  - ten
  - eleven
  - twelve
- [P1] Secret: token = abcdEFGH1234567890abcdefXYZ (2026-04-01)
"""


@dataclass(frozen=True)
class Obs:
    source: str
    line: int
    day: date
    text: str
    raw: str

    @property
    def ref(self) -> str:
        return f"{self.source}:{self.line}"


LOG = [Obs("memory/2026-05-29.md", 3, date(2026, 5, 29), "Cockpit v1 已 push，并部署上线",
           "- 10:40 Cockpit v1 已 push，并部署上线"),
       Obs("memory/2026-05-30.md", 3, date(2026, 5, 30), "PostgreSQL upgraded to 16 on h1",
           "- 09:00 PostgreSQL upgraded to 16 on h1")]


def ground(**kw):
    docs = {"MEMORY.md": parse("MEMORY.md", MEM.encode())}
    return verify.build(docs, LOG, **kw)


def entry(prefix: str) -> str:
    doc = parse("MEMORY.md", MEM.encode())
    return next(e.text for e in doc.entries if e.body.startswith(prefix) or e.text.startswith(prefix))


def refresh(target: str, text: str, *ev: Evidence) -> Operation:
    return Operation("refresh", "MEMORY.md", (target,), text=text, confidence=0.9, reason="r", evidence=ev,
                     origin="offline")


def reason(op: Operation, g=None) -> str | None:
    try:
        verify.check(op, g or ground())
    except verify.Fail as e:
        return str(e)
    return None


PG = Evidence("memory/2026-05-30.md:3", "PostgreSQL upgraded to 16 on h1")


def test_a_grounded_refresh_passes():
    op = refresh(entry("PostgreSQL"), "[P1] PostgreSQL 16 on h1 (2026-05-30)", PG)
    assert reason(op) is None


def test_a_value_found_nowhere_is_refused():
    op = refresh(entry("PostgreSQL"), "[P1] PostgreSQL 17 on h1 (2026-05-30)", PG)
    assert "17" in reason(op)


def test_a_quote_not_at_its_line_is_refused():
    op = refresh(entry("PostgreSQL"), "[P1] PostgreSQL 16 on h1", Evidence("memory/2026-05-30.md:3", "MySQL 16"))
    assert "does not occur" in reason(op)
    op = refresh(entry("PostgreSQL"), "[P1] PostgreSQL 16 on h1", Evidence("memory/2026-05-31.md:1", "PostgreSQL"))
    assert "does not occur" in reason(op)


def test_unbalanced_markdown_and_a_lost_label_are_refused():
    ev = Evidence("memory/2026-05-30.md:3", "PostgreSQL upgraded to 16 on h1")
    assert "unbalanced" in reason(refresh(entry("PostgreSQL"), "[P1] **PostgreSQL 16 on h1", ev))
    assert "label" in reason(refresh(entry("**Model**"), "[P1] Model Falcon 4.1 now", ev))


@pytest.mark.parametrize("prefix", ["**Name:**", "**NEVER", "Calendar syncs must"])
def test_identity_and_marked_rules_are_never_targets(prefix):
    op = Operation("prune", "MEMORY.md", (entry(prefix),), confidence=0.9, reason="r", origin="offline")
    assert "identity or a marked rule" in reason(op)


def test_a_marked_rule_is_rewritten_only_when_the_persons_newer_words_retire_its_tool():
    target = entry("Calendar syncs must")
    said = Obs("memory/2026-05-30.md", 5, date(2026, 5, 30),
               "Jw said `caldav-sync` is no longer needed; use plain `vdirsyncer` only",
               "- 11:00 Jw said `caldav-sync` is no longer needed; use plain `vdirsyncer` only")
    ground = verify.build({"MEMORY.md": parse("MEMORY.md", MEM.encode())}, [*LOG, said])
    ev = Evidence(said.ref, "Jw said `caldav-sync` is no longer needed; use plain `vdirsyncer` only")

    def why(text, *evidence):
        op = Operation("refresh", "MEMORY.md", (target,), text=text, confidence=0.8, reason="r",
                       evidence=evidence, origin="offline")
        try:
            verify.check(op, ground)
        except verify.Fail as e:
            return str(e)
        return None

    assert why("Calendar syncs must use `vdirsyncer` only (2026-05-30)", ev) is None
    # the rule may not stop being a rule, nor keep the retired tool, nor change on other evidence
    assert "marked rule" in why("Calendar syncs use `vdirsyncer` (2026-05-30)", ev)
    assert "marked rule" in why("Calendar syncs must use `caldav-sync` or `vdirsyncer` (2026-05-30)", ev)
    assert "marked rule" in why("Calendar syncs must use `vdirsyncer` only (2026-05-30)",
                                Evidence(LOG[0].ref, LOG[0].text))
    prune = Operation("prune", "MEMORY.md", (target,), confidence=0.9, reason="r", evidence=(ev,), origin="offline")
    assert "marked rule" in reason(prune)


def test_more_than_a_reviewable_deletion_is_refused():
    op = Operation("prune", "MEMORY.md", (entry("Big entry"),), confidence=0.9, reason="r", origin="offline")
    assert "more than the 12" in reason(op)


def test_a_secret_prune_passes_and_new_secret_text_does_not():
    secret = entry("Secret")
    op = Operation("prune", "MEMORY.md", (secret,), confidence=0.99, reason="r", origin="offline")
    assert op.targets[0] == hash_target(secret)
    assert reason(op) is None
    bad = refresh(entry("PostgreSQL"), "[P1] PostgreSQL 16, password: hunter2hunter2", PG)
    assert "sensitive" in reason(bad)


def test_an_open_proposal_target_is_not_targeted_again():
    target = entry("PostgreSQL")
    other = Operation("prune", "MEMORY.md", (target,), confidence=0.9, reason="r", origin="offline")
    op = refresh(target, "[P1] PostgreSQL 16 on h1 (2026-05-30)", PG)
    assert "open proposal" in reason(op, ground(open_ops=[other]))


def test_a_person_approval_outranks_older_evidence():
    target = entry("PostgreSQL")
    op = refresh(target, "[P1] PostgreSQL 16 on h1 (2026-05-30)", PG)
    later = [verify.Decision("MEMORY.md", target, date(2026, 5, 31))]
    assert "approved" in reason(op, ground(decisions=later))
    earlier = [verify.Decision("MEMORY.md", target, date(2026, 5, 1))]
    assert reason(op, ground(decisions=earlier)) is None


def test_gate_reports_what_it_drops():
    @dataclass
    class C:
        op: Operation

    good = C(refresh(entry("PostgreSQL"), "[P1] PostgreSQL 16 on h1", PG))
    bad = C(refresh(entry("PostgreSQL"), "[P1] PostgreSQL 99 on h1", PG))
    kept, dropped = verify.gate([good, bad], ground())
    assert kept == [good]
    assert len(dropped) == 1 and dropped[0]["stage"] == "gate" and "99" in dropped[0]["reason"]


def test_the_files_opening_lines_are_never_targets_whatever_proposes_them():
    """An untagged, undated line under the file's title, before its first section, says who and what the file is
    about: no backend's proposal may prune or rewrite it (the offline engine never proposes one; the model may)."""
    mem = "# USER\n\n- 徐哲宇（阿哲），主攝兼老闆\n- Runs a two-person studio in Taichung\n\n## Preferences\n" \
          "- [P1] Reports by email (2026-05-01)\n- Untagged later line\n"
    docs = {"USER.md": parse("USER.md", mem.encode())}
    g = verify.build(docs, LOG)
    doc = docs["USER.md"]
    for text in ("- 徐哲宇（阿哲），主攝兼老闆", "- Runs a two-person studio in Taichung"):
        e = next(x for x in doc.entries if x.text == text)
        op = Operation("prune", "USER.md", (e.text,), confidence=0.9, reason="r", origin="anthropic")
        assert "identity or a marked rule" in (reason(op, g) or ""), text
    # entries inside a section, tagged or not, stay open to proposals
    for text in ("- [P1] Reports by email (2026-05-01)", "- Untagged later line"):
        e = next(x for x in doc.entries if x.text == text)
        op = Operation("prune", "USER.md", (e.text,), confidence=0.9, reason="r", origin="anthropic")
        assert reason(op, g) is None, text
    # a file without sections is a list of entries, its lines no preamble
    flat = {"MEMORY.md": parse("MEMORY.md", b"# MEMORY\n\n- Untagged fact one\n- Another fact\n")}
    e = flat["MEMORY.md"].entries[0]
    op = Operation("prune", "MEMORY.md", (e.text,), confidence=0.9, reason="r", origin="anthropic")
    assert reason(op, verify.build(flat, LOG)) is None


def test_a_fact_holding_a_rule_s_word_may_only_have_the_name_of_its_tool_swapped():
    mem = ("# MEMORY\n\n## Staffing\n- [P1] Crew rota lives in Deputy; leave requests must be approved by Ines (2026-03-01)\n"
           "\n## Rules\n- Leave requests must go through Deputy\n")
    docs = {"MEMORY.md": parse("MEMORY.md", mem.encode())}
    said = Obs("memory/2026-05-28.md", 3, date(2026, 5, 28), "rota + leave go through Rotaready from today",
               "- 08:00 rota + leave go through Rotaready from today")
    g = verify.build(docs, [said])
    ev = Evidence(said.ref, said.text)
    doc = docs["MEMORY.md"]
    fact, rule = (e.text for e in doc.entries)

    def why(target, text, *evidence):
        try:
            verify.check(Operation("refresh", "MEMORY.md", (target,), text=text, confidence=0.8, reason="r",
                                   evidence=evidence, origin="offline"), g)
        except verify.Fail as e:
            return str(e)
        return None

    assert why(fact, "[P1] Crew rota lives in Rotaready; leave requests must be approved by Ines (2026-05-28)", ev) is None
    # not a name no quoted line writes, not a word of the rule, not the rule's word itself, not an untagged rule line
    assert "marked rule" in why(fact, "[P1] Crew rota lives in Rotaready; leave requests must be approved by Ines (2026-05-28)")
    assert "marked rule" in why(fact, "[P1] Crew rota lives in Rotaready; leave requests must be approved by Sam (2026-05-28)", ev)
    assert "marked rule" in why(fact, "[P1] Crew rota lives in Rotaready; leave requests are approved by Ines (2026-05-28)", ev)
    assert "marked rule" in why(rule, "Leave requests must go through Rotaready", ev)
