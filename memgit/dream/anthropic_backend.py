"""The model-backed dream: Anthropic's Messages API does the REM and deep-sleep
stages, memgit's gate and selection keep every guard rail.

What is sent: one request per run. A system block (instructions and the
current memory files, each line numbered `FILE:N`, marked for prompt caching)
and a user message holding the window's evidence: only the lines that name
something in memory or recur across days *and* carry a change (status,
version, preference, fix, rule, date), each with its `path:line` id, the same
text listed once. Everything sent is redacted by `memgit.sensitive` first:
secrets, personal numbers and trading figures never leave the machine.

What comes back: a forced call of the tool `propose_operations`. Each
operation passes `memgit.dream.gate` or is dropped with its reason; what
passes becomes a Candidate (origin "anthropic") for `select()`.

Budget: `[llm] token_budget` caps the estimated input tokens of the run's
request. When the evidence does not fit, its least telling lines are left out
(and the report says so); when not even the instructions and memory fit, the
run stops with an error before anything is sent.

The `anthropic` SDK is imported here only, and only when this backend runs.
"""
from __future__ import annotations

import json
import re
import math
from dataclasses import dataclass
from datetime import date
from typing import Any

from memgit import render, sensitive
from memgit.dream import gate
from memgit.dream import lexicon as lx
from memgit.dream.collect import Observation
from memgit.dream.signals import Candidate, Context
from memgit.errors import MemgitError
from memgit.memory import ISO_DATE_RE, Document
from memgit.text import CJK_RE, norm, versions

TOOL_NAME = "propose_operations"
SYSTEM_TEMPLATE = "dream_system.md.j2"
EVIDENCE_TEMPLATE = "dream_evidence.md.j2"
# Anthropic adds a fixed system prompt for tool use (346 tokens with a forced tool_choice).
TOOL_OVERHEAD = 346
MAX_LINE_CHARS = 300
MAX_REFS = 4
NAMED = 0.3           # how much of an entry's subject a line must name to be about it

TOOL: dict = {
    "name": TOOL_NAME,
    "description": ("Propose changes to the memory files. Each operation becomes one proposal a person "
                    "reviews; memgit drops any operation whose evidence quote is not on its cited line."),
    "input_schema": {
        "type": "object",
        "properties": {
            "operations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "enum": list(gate.OPS)},
                        "file": {"type": "string", "description": "The memory file, e.g. MEMORY.md."},
                        "targets": {"type": "array", "items": {"type": "string"},
                                    "description": "Exact text of each existing entry changed "
                                                   "(prune: 1+, refresh: 1, merge: 2+, consolidate: none)."},
                        "section": {"type": "string", "description": "consolidate: the section heading."},
                        "text": {"type": "string",
                                 "description": "refresh, merge, consolidate: the whole new entry."},
                        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        "reason": {"type": "string", "description": "One short sentence."},
                        "evidence": {
                            "type": "array", "minItems": 1,
                            "items": {"type": "object",
                                      "properties": {"source": {"type": "string",
                                                                "description": "path:line as shown."},
                                                     "quote": {"type": "string",
                                                               "description": "Verbatim from that line."}},
                                      "required": ["source", "quote"]},
                        },
                    },
                    "required": ["op", "file", "confidence", "reason", "evidence"],
                },
            },
        },
        "required": ["operations"],
    },
}

_SIGNALS = (lx.STATE_WORDS, lx.PREFERENCE, lx.SUPERSEDE, lx.RULE, lx.AGAIN, lx.TEMP, lx.EXCEPTION, lx.EXPIRES_IN)


def estimate(text: str) -> int:
    """Tokens `text` costs, estimated offline: a CJK character ≈ 1 token, other text ≈ 3.5 characters."""
    cjk = len(CJK_RE.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 3.5)


# -- the evidence: compact, relevant, redacted ----------------------------------------------------
@dataclass(frozen=True)
class Line:
    """One evidence line: a text and every place it was seen."""

    refs: tuple[str, ...]
    more: int
    tag: str           # "date, speaker" where the ids do not already say them
    text: str
    rank: float
    last: tuple


def _signal(text: str) -> bool:
    f = norm(text)
    return any(p.search(f) for p in _SIGNALS) or bool(versions(text)) or bool(ISO_DATE_RE.search(text))


def _tag(refs: list[str], days: list[date], role: str) -> str:
    """(date, speaker) of a line, leaving out what its ids already say."""
    parts = []
    if not all(any(d.isoformat() in r for d in days) for r in refs):
        first, last = min(days), max(days)
        parts.append(last.isoformat() if first == last else f"{first.isoformat()}…{last.isoformat()}")
    if role != "log":
        parts.append(role)
    return ", ".join(parts)


def evidence_lines(ctx: Context) -> list[Line]:
    """The window's lines that could matter, ranked: they name an entry of memory or recur
    across days, and carry a change. The same text is one line with all its ids."""
    groups: dict[str, list[Observation]] = {}
    for o in ctx.obs:
        key = norm(o.text)
        if len(key) < 4 or lx.ACK.search(key):
            continue
        groups.setdefault(key, []).append(o)
    term_days: dict[str, set[date]] = {}
    for o in ctx.obs:
        for t in o.terms:
            term_days.setdefault(t, set()).add(o.day)
    items = [it for it in ctx.items if not it.frozen]
    out = []
    for obs in groups.values():
        obs.sort(key=lambda o: (o.day, o.source, o.line))
        rep = obs[-1]
        if not _signal(rep.text):
            continue
        named = max((ctx.mentions(rep, it) for it in items), default=0.0)
        days = sorted({o.day for o in obs})
        recurring = len(days) >= 2 or sum(1 for t in rep.terms
                                          if ctx.anchor(t) and len(term_days.get(t, ())) >= 2) >= 2
        if named < NAMED and not recurring:
            continue
        refs = list(dict.fromkeys(o.ref for o in obs))
        shown = refs[-MAX_REFS:]
        text = rep.text if len(rep.text) <= MAX_LINE_CHARS else rep.text[:MAX_LINE_CHARS - 1] + "…"
        age = (ctx.now - rep.day).days
        rank = min(named, 1.0) * 2 + (1.0 if recurring else 0.0) + 0.2 * len(days) - 0.02 * age
        out.append(Line(tuple(shown), len(refs) - len(shown), _tag(refs, days, rep.role), text, round(rank, 3),
                        (rep.day, rep.source, rep.line)))
    out.sort(key=lambda ln: ln.last)
    return out


# -- the prompt ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prompt:
    system: str
    user: str
    lines: list[Line]
    total: int                   # window lines
    truncated: int               # evidence lines left out for the budget
    tokens: int                  # estimated input tokens of the whole request
    stable_tokens: int           # of which the cached part (tools + system)


def _ranges(numbers: list[int]) -> list[str]:
    out: list[str] = []
    for n in sorted(set(numbers)):
        if out and n == int(out[-1].split("-")[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return out


def memory_view(docs: dict[str, Document], config) -> list[dict]:
    """The memory files as the model sees them: numbered, redacted lines and the frozen ones."""
    files = []
    for name, doc in docs.items():
        lines = gate.redacted_lines(doc)
        frozen = [n + 1 for e in doc.entries if e.frozen for n in range(e.start, e.end)]
        frozen += [s.line + 1 for s in doc.sections if s.priority == "P0" or s.protected]
        budget = config.budget(name)
        files.append({"name": name, "budget": budget, "used": f"{100 * doc.chars / budget:.0f}%" if budget else "",
                      "lines": [{"number": i, "text": t} for i, t in enumerate(lines, 1)],
                      "frozen": _ranges(frozen)})
    return files


def system_text(ctx: Context, config) -> str:
    files = memory_view(ctx.col.docs, config)
    example = next((f"{f['name']}:{len(f['lines'])}" for f in files if f["lines"]), "MEMORY.md:1")
    text = render.render(SYSTEM_TEMPLATE, files=files, threshold=config.dream.threshold,
                         max_ops=config.dream.max_ops, example_memory_source=example)
    return sensitive.redact(text)


def user_text(ctx: Context, lines: list[Line], truncated: int) -> str:
    col = ctx.col
    total = len({o.ref for o in col.observations})
    text = render.render(EVIDENCE_TEMPLATE, now=col.now.isoformat(), start=col.start.isoformat(),
                         logs=len(col.logs_read), sessions=len(col.sessions_read), total=total, lines=lines,
                         truncated=truncated)
    return sensitive.redact(text)


def stable_tokens(system: str) -> int:
    return estimate(system) + estimate(json.dumps(TOOL, ensure_ascii=False)) + TOOL_OVERHEAD


def build_prompt(ctx: Context, config, budget: int | None = None) -> Prompt:
    """Render the request; leave out the least telling evidence lines to fit `budget` input tokens."""
    budget = config.llm.token_budget if budget is None else budget
    system = system_text(ctx, config)
    stable = stable_tokens(system)
    lines = evidence_lines(ctx)
    total = len({o.ref for o in ctx.col.observations})
    header = estimate(user_text(ctx, [], 0))
    if stable + header > budget:
        raise MemgitError(
            f"the dream request needs about {stable + header} tokens before any evidence, over the [llm] "
            f"token_budget of {budget}; raise token_budget in memgit.toml or shorten the memory files.")
    kept = list(lines)
    room = budget - stable - header
    cost = {id(ln): estimate(_format(ln)) for ln in lines}
    if sum(cost.values()) > room:
        kept, used = [], 0
        for ln in sorted(lines, key=lambda ln: (-ln.rank, ln.last)):
            if used + cost[id(ln)] <= room:
                kept.append(ln)
                used += cost[id(ln)]
        kept.sort(key=lambda ln: ln.last)
    while True:
        user = user_text(ctx, kept, len(lines) - len(kept))
        tokens = stable + estimate(user)
        if tokens <= budget:
            break
        if not kept:
            raise MemgitError(
                f"the dream request needs about {tokens} tokens before any evidence, over the [llm] "
                f"token_budget of {budget}; raise token_budget in memgit.toml or shorten the memory files.")
        kept.remove(min(kept, key=lambda ln: (ln.rank, ln.last)))
    return Prompt(system, user, kept, total, len(lines) - len(kept), tokens, stable)


def _format(ln: Line) -> str:
    return f"{' '.join(ln.refs)} ({ln.tag}): {ln.text}\n"


def request(prompt: Prompt, config) -> dict:
    """The keyword arguments of `messages.create` for `prompt`."""
    return {
        "model": config.llm.model,
        "max_tokens": config.llm.max_tokens,
        "system": [{"type": "text", "text": prompt.system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": prompt.user}],
        "tools": [TOOL],
        "tool_choice": {"type": "tool", "name": TOOL_NAME},
    }


# -- talking to the API -------------------------------------------------------------------------
def _sdk():
    try:
        import anthropic
    except ImportError:
        raise MemgitError("the anthropic backend needs the `anthropic` package; run `pip install anthropic` "
                          "or dream with --backend offline.") from None
    return anthropic


def client(config):
    """An SDK client configured as the SDK itself reads the environment (ANTHROPIC_API_KEY,
    ANTHROPIC_BASE_URL, …), with memgit's timeout; a clean error when it has no credentials."""
    anthropic = _sdk()
    kwargs: dict[str, Any] = {"timeout": config.llm.timeout}
    retries = getattr(config.llm, "max_retries", None)
    if retries is not None:
        kwargs["max_retries"] = retries
    try:
        c = anthropic.Anthropic(**kwargs)
    except anthropic.AnthropicError as e:  # e.g. an unreadable credentials profile
        raise MemgitError(f"the Anthropic SDK cannot set up a client ({type(e).__name__}); check the "
                          f"ANTHROPIC_* environment variables.") from None
    if c.api_key is None and c.auth_token is None and getattr(c, "credentials", None) is None:
        raise MemgitError("no Anthropic API key: set ANTHROPIC_API_KEY in the environment, or dream with "
                          "--backend offline.")
    return c


class MalformedAnswer(Exception):
    """The API answered, but not with a message memgit can read: every operation is dropped."""


def send(c, body: dict):
    """One Messages API call; every failure left after the SDK's retries is a MemgitError."""
    anthropic = _sdk()
    tries = f"after {c.max_retries} retr{'y' if c.max_retries == 1 else 'ies'}"
    try:
        message = c.messages.create(**body)
    except (ValueError, anthropic.APIResponseValidationError):  # a body that is not the JSON promised
        raise MalformedAnswer("the API's answer is not valid JSON") from None
    except anthropic.APITimeoutError:
        raise MemgitError(f"the Anthropic API did not answer within {c.timeout} s {tries} (timeout); try again "
                          f"later or raise [llm] timeout in memgit.toml.") from None
    except anthropic.APIConnectionError:
        raise MemgitError(f"cannot reach the Anthropic API at {c.base_url} {tries} (connection error); check "
                          f"the network and ANTHROPIC_BASE_URL.") from None
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as e:
        raise MemgitError(f"the Anthropic API refused the credentials ({e.status_code}); check "
                          f"ANTHROPIC_API_KEY.") from None
    except anthropic.RateLimitError as e:
        raise MemgitError(f"the Anthropic API is rate limiting this key {tries} ({e.status_code}); try again "
                          f"later, or set fallback_offline = true under [llm] in memgit.toml.") from None
    except anthropic.APIStatusError as e:
        if e.status_code >= 500:
            raise MemgitError(f"the Anthropic API failed {tries} ({e.status_code}); try again later, or set "
                              f"fallback_offline = true under [llm] in memgit.toml.") from None
        raise MemgitError(f"the Anthropic API rejected the dream request ({e.status_code}); check [llm] model "
                          f"and max_tokens in memgit.toml.") from None
    except anthropic.AnthropicError as e:
        raise MemgitError(f"the Anthropic SDK failed ({type(e).__name__}); check the ANTHROPIC_* environment "
                          f"variables and try again.") from None
    if getattr(message, "type", None) != "message" or not isinstance(getattr(message, "content", None), list):
        raise MalformedAnswer("the API's answer is not a Messages API message")
    return message


def tool_operations(message: Any) -> tuple[Any, str | None]:
    """The `operations` of the answer's propose_operations call, or (None, why there are none)."""
    items, problem = _operations(message)
    if problem and getattr(message, "stop_reason", None) == "max_tokens":
        problem += " (the answer was cut off at max_tokens; raise [llm] max_tokens in memgit.toml)"
    return items, problem


def _operations(message: Any) -> tuple[Any, str | None]:
    blocks = getattr(message, "content", None) or []
    calls = [b for b in blocks if getattr(b, "type", None) == "tool_use" and getattr(b, "name", None) == TOOL_NAME]
    if not calls:
        return None, f"the model answered without calling {TOOL_NAME}"
    data = calls[0].input
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return None, f"the {TOOL_NAME} input is not valid JSON"
    if not isinstance(data, dict) or "operations" not in data:
        return None, f"the {TOOL_NAME} input has no 'operations'"
    ops = data["operations"]
    if isinstance(ops, str):
        try:
            ops = json.loads(ops)
        except ValueError:
            return None, "the 'operations' value is not valid JSON"
    if not isinstance(ops, list):
        return None, "the 'operations' value is not a list"
    return ops, None


def usage(message: Any) -> dict:
    """Tokens of one answer: input (uncached), cached (read + written to the cache), output."""
    u = getattr(message, "usage", None)

    def n(name: str) -> int:
        v = getattr(u, name, None) if u is not None else None
        return int(v) if isinstance(v, (int, float)) else 0

    return {"input": n("input_tokens"),
            "cached": n("cache_read_input_tokens") + n("cache_creation_input_tokens"),
            "output": n("output_tokens")}


def ground(ws, ctx: Context, config) -> gate.Ground:
    """What the gate checks the answer against: the lines sent, memory, open and rejected changes."""
    return gate.workspace_ground(ws, ctx.col, config, "anthropic")


def run(ws, ctx: Context, config) -> tuple[list[Candidate], dict]:
    """The `anthropic` dream backend: (candidates that passed the gate, report fields)."""
    c = client(config)
    prompt = build_prompt(ctx, config)
    if prompt.truncated:
        ctx.col.warnings.append(f"{prompt.truncated} evidence line(s) were left out of the model's prompt to stay "
                                f"within [llm] token_budget ({config.llm.token_budget}).")
    try:
        message: Any = send(c, request(prompt, config))
        items, problem = tool_operations(message)
    except MalformedAnswer as e:
        message, items, problem = None, None, str(e)
    if problem is not None:
        verdict = gate.Verdict([], [gate.dropped(None, problem)])
    else:
        verdict = gate.gate(items, ground(ws, ctx, config))
    model = str(getattr(message, "model", None) or config.llm.model)
    candidates = [Candidate(op, "model", float(op.confidence or 0.0),
                            {"model": model, "evidence": len(op.evidence)}) for op in verdict.passed]
    extra = {
        "model": model,
        "tokens": usage(message),
        "sent": {"evidence_lines": len(prompt.lines), "window_lines": prompt.total,
                 "left_out_for_budget": prompt.truncated, "estimated_input": prompt.tokens},
        "answered": len(items) if isinstance(items, list) else 0,
        "dropped": verdict.dropped,
    }
    return candidates, extra


# -- cost figure ---------------------------------------------------------------------------------
def estimate_tokens(ws, now: date, window_days: int | None = None) -> dict:
    """Tokens a dream on `now` would send, against sending the window's logs and sessions verbatim.

    Read-only and offline: nothing is sent. `evidence_pct` compares the evidence
    message with the window's files verbatim; `request_pct` compares the whole
    request with the same instructions and memory followed by those files.
    """
    from memgit.dream.collect import collect

    cfg = ws.config
    days = window_days or cfg.dream.window_days
    col = collect(ws, now, days)
    files = list(col.docs)
    primary = next((f for f in cfg.memory.files if f in col.docs), files[0] if files else "MEMORY.md")
    user_file = next((f for f in files if f.upper().startswith("USER")), None)
    ctx = Context(col, primary, user_file)
    prompt = build_prompt(ctx, cfg, budget=10 ** 9)
    verbatim = 0
    for rel in [*col.logs_read, *sorted(col.sessions_read)]:
        verbatim += estimate((ws.root / rel).read_text(encoding="utf-8", errors="replace"))
    evidence = prompt.tokens - prompt.stable_tokens
    naive = prompt.stable_tokens + verbatim
    return {"now": now.isoformat(), "window_days": days, "window_files": len(col.logs_read) + len(col.sessions_read),
            "window_lines": prompt.total, "evidence_lines": len(prompt.lines),
            "stable": prompt.stable_tokens, "evidence": evidence, "request": prompt.tokens,
            "verbatim": verbatim, "naive_request": naive,
            "evidence_pct": round(100 * evidence / verbatim, 1) if verbatim else 0.0,
            "request_pct": round(100 * prompt.tokens / naive, 1) if naive else 0.0}


# -- the dream diary -------------------------------------------------------------------------------
INSIGHT_TOOL_NAME = "propose_insights"
INSIGHT_TOOL = {
    "name": INSIGHT_TOOL_NAME,
    "description": "Record at most 3 non-obvious links between the numbered snippets, for the dream diary.",
    "input_schema": {
        "type": "object",
        "properties": {"insights": {"type": "array", "maxItems": 3, "items": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "one or two sentences"},
                           "sources": {"type": "array", "items": {"type": "string"},
                                       "description": "ids of the snippets it links, e.g. S1, S4"}},
            "required": ["text", "sources"]}}},
        "required": ["insights"],
    },
}
INSIGHT_SYSTEM = (
    "You keep the dream diary of a personal AI agent. Below are snippets sampled from its recent daily logs "
    "and its long-term memory, each with an id. Find at most 3 non-obvious links between snippets from "
    "different days or topics: a shared cause, a pattern, a risk, a connection the owner may not have "
    "noticed. Each insight is one or two sentences and cites the ids it links. If no link is strong enough, "
    "return an empty list. Never repeat secrets, passwords or financial figures. Answer only by calling "
    f"{INSIGHT_TOOL_NAME}."
)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def associate(snippets: list, config) -> tuple[list[dict], list[dict], dict]:
    """Ask the model for diary insights over `snippets` (memgit.lifecycle.diary.Snippet).

    Returns (insights that passed the checks, dropped items with their reasons, tokens).
    An insight must cite two or more of the given ids from different topics, hold one or two
    sentences and nothing sensitive; everything sent is redacted first.
    """
    ids = {f"S{i + 1}": s for i, s in enumerate(snippets)}
    user = "\n".join(f"[{k}] ({s.topic}, {s.source}) {sensitive.redact(s.text)}" for k, s in ids.items())
    body = {"model": config.llm.model, "max_tokens": min(config.llm.max_tokens, 1024),
            "system": [{"type": "text", "text": INSIGHT_SYSTEM}],
            "messages": [{"role": "user", "content": user}],
            "tools": [INSIGHT_TOOL], "tool_choice": {"type": "tool", "name": INSIGHT_TOOL_NAME}}
    try:
        message: Any = send(client(config), body)
    except MalformedAnswer as e:
        return [], [{"reason": str(e)}], usage(None)
    calls = [b for b in (getattr(message, "content", None) or [])
             if getattr(b, "type", None) == "tool_use" and getattr(b, "name", None) == INSIGHT_TOOL_NAME]
    items = calls[0].input.get("insights") if calls and isinstance(calls[0].input, dict) else None
    if not isinstance(items, list):
        return [], [{"reason": f"the model answered without a list of insights from {INSIGHT_TOOL_NAME}"}], \
            usage(message)
    passed, dropped = [], []
    for item in items:
        why = _insight_problem(item, ids)
        if why:
            dropped.append({"text": sensitive.redact(str(item.get("text", "")) if isinstance(item, dict) else ""),
                            "reason": why})
        elif len(passed) < 3:
            passed.append({"text": " ".join(item["text"].split()),
                           "sources": [ids[k].source for k in dict.fromkeys(item["sources"])]})
        else:
            dropped.append({"text": item["text"], "reason": "more than 3 insights"})
    return passed, dropped, usage(message)


def _insight_problem(item: Any, ids: dict) -> str | None:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not isinstance(item.get("sources"), list):
        return "malformed insight (needs text and a list of sources)"
    text = item["text"].strip()
    if not text:
        return "empty insight"
    unknown = [k for k in item["sources"] if k not in ids]
    if unknown:
        return f"cites snippets that were not sent: {', '.join(map(str, unknown))[:60]}"
    topics = {ids[k].topic for k in item["sources"]}
    if len(topics) < 2:
        return "links snippets of one topic only"
    sentences = [p for p in _SENTENCE_SPLIT.split(text) if p.strip()]
    if len(sentences) > 2 or len(text) > 400:
        return "longer than two sentences"
    if sensitive.has_sensitive(text) or "[REDACTED]" in text:
        return "holds sensitive data"
    return None
