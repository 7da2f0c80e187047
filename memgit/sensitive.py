"""The one sensitive-data filter every write into memory goes through.

It finds credentials (API keys, tokens, passwords, private keys, connection
strings), personal identifiers (Chinese resident ID and bank card numbers) and
the user's trading figures (holdings, cost basis, P&L) in English, Simplified
and Traditional Chinese text. detect-secrets' provider plugins do what they
know; memgit's own rules cover what they miss. A `Finding` carries the kind and
position of a value, never the value itself.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, TypeVar

REDACTED = "[REDACTED]"


@dataclass(frozen=True)
class Finding:
    """One sensitive value: its kind, 1-based line and character span in that line."""

    kind: str
    line: int
    start: int
    end: int


def scan(text: str) -> list[Finding]:
    """Every sensitive value in `text`, line by line, in reading order."""
    return list(_iter_findings(text))


def has_sensitive(text: str) -> bool:
    """True if `scan(text)` would find anything; stops at the first hit."""
    return next(_iter_findings(text), None) is not None


def kinds(text: str) -> list[str]:
    """The distinct kinds found in `text`, in order of first appearance."""
    return list(dict.fromkeys(f.kind for f in _iter_findings(text)))


def redact(text: str) -> str:
    """`text` with every sensitive value replaced by "[REDACTED]", all else byte-identical."""
    return apply_spans(text, spans(text))


Span = tuple[int, int, int]  # (1-based line, start, end): where one "[REDACTED]" goes


def spans(text: str) -> list[Span]:
    """Where `redact` puts "[REDACTED]": overlapping findings merged, line by line in order."""
    by_line: dict[int, list[tuple[int, int]]] = {}
    for f in _iter_findings(text):
        by_line.setdefault(f.line, []).append((f.start, f.end))
    return [(number, start, end) for number in sorted(by_line) for start, end in _merge(by_line[number])]


def apply_spans(text: str, where: list[Span]) -> str:
    """`text` with "[REDACTED]" over each span of `spans(text)`; `text` itself when there is none."""
    if not where:
        return text
    lines = text.split("\n")
    by_line: dict[int, list[tuple[int, int]]] = {}
    for number, start, end in where:
        by_line.setdefault(number, []).append((start, end))
    for number, line_spans in by_line.items():
        line = lines[number - 1]
        out: list[str] = []
        pos = 0
        for start, end in line_spans:
            out.append(line[pos:start])
            out.append(REDACTED)
            pos = end
        out.append(line[pos:])
        lines[number - 1] = "".join(out)
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Plumbing: lazy regexes, line iteration, overlap resolution

_Hit = tuple[str, int, int]  # (kind, start, end) within one line


class _LazyRegex:
    """A regex compiled on first use: compiling every rule at import would cost ~10 ms."""

    search: Callable[..., re.Match[str] | None]
    match: Callable[..., re.Match[str] | None]
    fullmatch: Callable[..., re.Match[str] | None]
    finditer: Callable[..., Iterator[re.Match[str]]]

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __getattr__(self, name: str) -> object:
        # Reached only before the first use: the compiled pattern's methods are bound onto
        # the instance, so every later call goes straight to the C implementation.
        compiled = re.compile(self.pattern)
        for method in ("search", "match", "fullmatch", "finditer"):
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


class _AnchoredRegex:
    """A regex whose every match has one of `words` within `reach` characters of its start.

    re tries a case-insensitive alternation of words at every position of a line, about 1 µs a
    character; this finds the words first (one case-sensitive scan of the lower-cased line) and
    tries the pattern only at the few starts near them. `search` and `finditer` give exactly
    what the plain regex would.
    """

    def __init__(self, pattern: str, words: tuple[str, ...], reach: int = 0) -> None:
        self.regex = _LazyRegex(pattern)
        self.anchors = _LazyRegex(_trie_pattern(set(words)))
        self.reach = reach

    def search(self, line: str, pos: int = 0) -> re.Match[str] | None:
        lower = line.lower()
        if len(lower) != len(line):  # lower() moved the offsets (a few letters lower to two)
            return self.regex.search(line, pos)
        match = self.regex.match
        tried = pos  # every start before this one has been tried
        for word in self.anchors.finditer(lower, pos):
            for start in range(max(tried, word.start() - self.reach), word.start() + 1):
                m = match(line, start)
                if m is not None:
                    return m
            tried = word.start() + 1
        return None

    def finditer(self, line: str) -> Iterator[re.Match[str]]:
        pos = 0
        while (m := self.search(line, pos)) is not None:
            yield m
            pos = m.end() if m.end() > m.start() else m.end() + 1


def _iter_findings(text: str) -> Iterator[Finding]:
    # the multi-line key block we are inside ("pem", "ppk" or "ppk-private"), and whether its
    # first line stood after a prefix (a diff's "+", a list's "- "), which its other lines then carry too
    block: str | None = None
    prefixed = False
    # Split on "\n" only, so line numbers and redact() agree on what a line is;
    # a trailing "\r" stays outside every span.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        hits: list[_Hit] = []
        if block is not None:
            block, block_hit = _block_continuation(block, prefixed, line)
            if block_hit is not None:
                hits.append(block_hit)
        if not hits:
            if "PRIVATE KEY" in line and _pem_start(line, hits):
                block, prefixed = "pem", hits[-1][1] > 0
            elif "PuTTY-User-Key-File-" in line and _ppk_start(line, hits):
                block, prefixed = "ppk", hits[-1][1] > 0
            _line_hits(line, hits)
        for kind, start, end in _resolve(hits):
            yield Finding(kind, number, start, end)


def _line_hits(line: str, hits: list[_Hit]) -> None:
    """Append every candidate on one line, highest priority first.

    Each rule family sits behind a cheap substring gate, so an ordinary log line
    costs a few `in` tests instead of dozens of regex scans.
    """
    lower = line.lower()
    for rule in _provider_index().select(line):  # one scan for every provider's hints; most lines have none
        rule.find(line, hits)
    if _DS_HINT.search(line):
        _detect_secrets_hits(line, lower, hits)
    if "://" in line:
        _connection_url_hits(line, hits)
    if _LONG_NUMBER.search(line):
        _id_number_hits(line, hits)
        _bank_card_hits(line, hits)
    if "PIN" in line or "pin " in lower:
        _pin_hits(line, hits)
    if _ACCESS_GATE.search(lower):
        _access_code_hits(line, hits)
    if "$" in line and _UP_DOWN_GATE.search(line):
        _up_down_hits(line, hits)
    for family in _family_index().select(lower):  # one scan for every family's words; most lines have none
        family(line, hits)


_T = TypeVar("_T")


class _HintIndex(Generic[_T]):
    """Items (rules, rule families) each behind literal hints; `select` gives those whose hints occur.

    One regex search over every hint rejects most lines; on the others, one more pass finds which
    hints occur, so no item's hints are tested one by one.
    """

    def __init__(self, entries: list[tuple[_T, tuple[str, ...]]]) -> None:
        self.items = [item for item, _ in entries]
        hints = {h for _, item_hints in entries for h in item_hints}
        pattern = _trie_pattern(hints)
        self.gate = re.compile(pattern)
        # zero-width, so overlapping hints are all seen; the trie matches the longest hint at a
        # position, and every shorter hint there is its prefix
        self.every = re.compile(f"(?=({pattern}))")
        self.by_hint = {h: frozenset(i for i, (_, item_hints) in enumerate(entries)
                                     if any(h.startswith(x) for x in item_hints)) for h in hints}

    def select(self, text: str) -> list[_T]:
        if self.gate.search(text) is None:
            return []
        found: set[int] = set()
        for m in self.every.finditer(text):
            found |= self.by_hint[m.group(1)]
        return [self.items[i] for i in sorted(found)]


@lru_cache(maxsize=1)
def _provider_index() -> _HintIndex[_ProviderRule]:
    return _HintIndex([(rule, rule.hints) for rule in _provider_rules()])


@lru_cache(maxsize=1)
def _family_index() -> _HintIndex[Callable[[str, list[_Hit]], None]]:
    # in priority order: a password or key found first outranks a figure in the same span
    return _HintIndex([
        (_password_hits, _PASSWORD_WORDS),
        (_assignment_hits, _ASSIGNMENT_WORDS),
        (_labelled_hits, _LABEL_WORDS),
        (_cli_password_hits, _CLI_WORDS),
        (_wifi_hits, _WIFI_WORDS),
        (_login_hits, _LOGIN_WORDS),
        (_cost_basis_hits, _COST_WORDS),
        (_holdings_hits, _SHARE_WORDS),
        (_pnl_hits, _PNL_WORDS),
        (_holding_value_hits, _VALUE_WORDS),
        (_brokerage_account_hits, _ACCOUNT_WORDS),
        (_credit_limit_hits, _CREDIT_WORDS),
    ])


def _trie_pattern(words: set[str]) -> str:
    """One regex for many literals, factored by common prefix ("sk-ant-|sk-" → "sk\\-(?:ant\\-)?").

    re tries the branches of a flat alternation one by one at every position; a trie lets it
    drop a position after its first character, which keeps a gate of a hundred hints cheap.
    """
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        ends = "" in node
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:
            return body + "?" if len(branches) == 1 and len(body) == 1 else "(?:" + body + ")?"
        return body

    return build(trie)


def _has_any(text: str, words: tuple[str, ...]) -> bool:
    for word in words:
        if word in text:
            return True
    return False


def _resolve(hits: list[_Hit]) -> list[_Hit]:
    """Drop empty hits and hits inside one of a kind found earlier (more specific); sort by position.

    A wider hit of a later kind is kept beside the specific one, so redact() covers both.
    """
    if len(hits) < 2:
        return [h for h in hits if h[1] < h[2]]
    rank: dict[str, int] = {}
    for kind, _, _ in hits:
        rank.setdefault(kind, len(rank))
    # Sweep by start (wider first, then by rank); reach[r] is the furthest end kept for rank r.
    order = sorted(range(len(hits)), key=lambda i: (hits[i][1], -hits[i][2], rank[hits[i][0]], i))
    reach = [-1] * len(rank)
    kept: list[_Hit] = []
    for i in order:
        kind, start, end = hits[i]
        r = rank[kind]
        if end <= start or max(reach[: r + 1]) >= end:
            continue
        reach[r] = max(reach[r], end)
        kept.append(hits[i])
    kept.sort(key=lambda h: (h[1], h[2]))
    return kept


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# --- private key blocks: PEM / PGP armour and PuTTY .ppk (the only multi-line rules) ----

_PEM_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_BEGIN = _LazyRegex(r"-----BEGIN " + _PEM_LABEL)
_PEM_END = _LazyRegex(r"-----END " + _PEM_LABEL)
# What may stand before each line of a block: indentation, a unified diff's "-", "+" or " ",
# markdown quote and list markers ("> ", "- ", "* ", "1. "), in any mix ("+> - ").
_BLOCK_PREFIX = _LazyRegex(r"[ \t]*(?:(?:[-+>*]|[0-9]{1,3}[.)])[ \t]*)*")
# A block that opens at the start of its line has indentation and quote marks at most: a "+" or
# "-" there is base64, not a prefix.
_BLOCK_INDENT = _LazyRegex(r"[ \t>]*")
_BASE64_LINE = _LazyRegex(r"[A-Za-z0-9+/=]+\s*")
# base64 body lines and RFC 1421 / OpenPGP armour headers such as "Proc-Type: 4,ENCRYPTED"
_PEM_BODY = _LazyRegex(r"(?:[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z0-9-]*: \S.*)\s*")
# a .ppk file: "PuTTY-User-Key-File-3: ssh-ed25519", headers, public lines, "Private-Lines: N",
# the private lines, "Private-MAC: <hex>"
_PPK_HEADER = _LazyRegex(r"(?P<name>[A-Za-z][A-Za-z0-9-]*): ?(?P<value>.*?)\s*")


def _block_line(line: str, prefixed: bool = True) -> tuple[int, str]:
    """The start of a block line's own text, after any diff, quote or list prefix, and that text."""
    m = (_BLOCK_PREFIX if prefixed else _BLOCK_INDENT).match(line)
    start = m.end() if m else 0
    return start, line[start:]


def _pem_start(line: str, hits: list[_Hit]) -> bool:
    """Flag a BEGIN line (through END when the block sits on one line); True if a block opens."""
    begin = _PEM_BEGIN.search(line)
    if begin is None:
        return False
    end = _PEM_END.search(line, begin.end())
    if end is not None:
        hits.append(("private key", begin.start(), end.end()))
        return False
    hits.append(("private key", begin.start(), len(line.rstrip())))
    return True


def _ppk_start(line: str, hits: list[_Hit]) -> bool:
    # the header may follow any prefix: a diff or list marker, a log line's time ("- 10:00 PuTTY-…")
    start = line.find("PuTTY-User-Key-File-")
    if start < 0 or not re.match(r"PuTTY-User-Key-File-\d+: ", line[start:]):
        return False
    hits.append(("private key", start, len(line.rstrip())))
    return True


def _block_continuation(block: str, prefixed: bool, line: str) -> tuple[str | None, _Hit | None]:
    """Inside a key block: the block's state after `line`, and the hit on `line` if any."""
    start, rest = _block_line(line, prefixed)
    end = len(line.rstrip())
    if not rest.strip():
        return block, None  # a blank line (or a diff's bare "+") does not end a block
    if block == "pem":
        pem_end = _PEM_END.search(line)
        if pem_end is not None:
            # the prefix pattern also eats the END line's own dashes: the hit starts where END does
            return None, ("private key", min(start, pem_end.start()), pem_end.end())
        if _PEM_BODY.fullmatch(rest):
            return block, ("private key", start, end)
        return None, None
    if block == "ppk-private" and _BASE64_LINE.fullmatch(rest):
        return block, ("private key", start, end)
    header = _PPK_HEADER.fullmatch(rest)
    if header is not None:
        name = header.group("name")
        if name == "Private-MAC":
            return None, ("private key", start + header.start("value"), start + header.end("value"))
        return ("ppk-private" if name == "Private-Lines" else "ppk"), None
    if block == "ppk" and _BASE64_LINE.fullmatch(rest):
        return block, None  # the public lines
    return None, None


# --- provider keys detect-secrets misses or matches only in part ------------------

_L = r"(?<![A-Za-z0-9_\-])"  # a token starts here
_R = r"(?![A-Za-z0-9_\-])"  # a token ends here


class _ProviderRule:
    """One provider's key format: runs only on lines holding one of its literal `hints`."""

    __slots__ = ("check", "hints", "kind", "regex")

    def __init__(
        self, kind: str, pattern: str, hints: tuple[str, ...], check: Callable[[str], bool] | None = None
    ) -> None:
        self.kind = kind
        self.regex = _LazyRegex(pattern)  # most runs meet few providers' hints
        self.hints = hints
        self.check = check

    def find(self, line: str, hits: list[_Hit]) -> None:
        group = 1 if self.regex.groups else 0
        for m in self.regex.finditer(line):
            if self.check is None or self.check(m.group(group)):
                hits.append((self.kind, m.start(group), m.end(group)))


@lru_cache(maxsize=1)
def _provider_rules() -> tuple[_ProviderRule, ...]:
    P = _ProviderRule
    return (
        P("Anthropic API key", _L + r"sk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",), _letters_and_digits),
        P("OpenRouter API key", _L + r"sk-or-v1-[a-f0-9]{64}" + _R, ("sk-or-v1-",)),
        P("OpenAI API key", _L + r"sk-(?!ant-|or-v1-)[A-Za-z0-9_\-]{20,}", ("sk-",), _letters_and_digits),
        P("Google API key", _L + r"AIza[0-9A-Za-z_\-]{35}" + _R, ("AIza",)),
        P("Hugging Face token", _L + r"hf_[A-Za-z0-9]{30,}" + _R, ("hf_",), _mixed_case),
        P("SendGrid API key", _L + r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", ("SG.",)),
        P("Telegram bot token", r"(?<![0-9])[0-9]{6,12}:AA[A-Za-z0-9_\-]{30,}", (":AA",)),
        P("GitHub token", _L + r"github_pat_[A-Za-z0-9_]{40,}", ("github_pat_",)),
        P("GitHub token", _L + r"gh[pousr]_[A-Za-z0-9]{30,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
        P(
            "GitLab token",
            _L + r"gl(?:pat|dt|ft|rt|soat|cbt|ptt|ffct|imt|agent|oas)-[A-Za-z0-9_\-]{20,}",
            ("glpat-", "gldt-", "glft-", "glrt-", "glsoat-", "glcbt-", "glptt-", "glffct-", "glimt-", "glagent-",
             "gloas-"),
        ),
        P(
            "Slack webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+",
            ("hooks.slack.com",),
        ),
        P("Slack token", _L + r"(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}", ("xox", "xapp-"), _letters_and_digits),
        P("Stripe API key", _L + r"(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{16,}", ("k_live_", "k_test_", "k_prod_")),
        P("Stripe API key", _L + r"whsec_[0-9A-Za-z]{24,}", ("whsec_",)),
        P(
            "AWS access key",
            _L + r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + _R,
            ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        ),
        P("NVIDIA API key", _L + r"nvapi-[A-Za-z0-9_\-]{20,}", ("nvapi-",)),
        P("npm token", _L + r"npm_[A-Za-z0-9]{30,}" + _R, ("npm_",), _letters_and_digits),
        P("DigitalOcean token", _L + r"do[opr]_v1_[a-f0-9]{40,}" + _R, ("_v1_",)),
        P("Shopify token", _L + r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{20,}" + _R, ("shpat_", "shpss_", "shpca_", "shppa_")),
        P("Vault token", _L + r"hvs\.[A-Za-z0-9_\-]{20,}" + _R, ("hvs.",)),
        P("Databricks token", _L + r"dapi[a-f0-9]{32}" + _R, ("dapi",)),
        P("Brave Search API key", _L + r"BSA[A-Za-z0-9_\-]{20,}" + _R, ("BSA",), _letters_and_digits),
        P("Linear API key", _L + r"lin_api_[A-Za-z0-9]{30,}" + _R, ("lin_api_",)),
        P("age secret key", _L + r"AGE-SECRET-KEY-1[0-9A-Z]{50,}", ("AGE-SECRET-KEY-",)),
        P("Discord webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+",
          ("/api/webhooks/",)),
        *_gitleaks_prefix_rules(),
        *_labelled_provider_rules(),
        P(
            "session cookie",
            r"(?i)(?<![A-Za-z0-9])(?:sessionid|session_id|sessid|phpsessid|jsessionid|connect\.sid|[a-z_]*_session)"
            r"=([A-Za-z0-9%._\-]{16,})",
            ("essionid=", "ESSIONID=", "ession_id=", "SESSION_ID=", "essid=", "ESSID=", "connect.sid=", "_session="),
            _letters_and_digits,
        ),
        P("bearer token", r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)", ("earer", "EARER"), _credential_like),
        P(
            "basic auth credentials",
            r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+([A-Za-z0-9+/]{8,}=*)",
            ("uthorization", "UTHORIZATION"),
        ),
    )


# Prefixes from gitleaks' published rule set (config/gitleaks.toml) that the rules above and
# detect-secrets do not cover: (kind, the token after its prefix, literal hints). Lengths are
# gitleaks' own or a little looser, never shorter than its shortest documented token. Docker Hub
# (dckr_pat_ + 27), Groq (gsk_ + 52), Replicate (r8_ + 37) and Tavily (tvly-[dev-|prod-] + 32)
# follow betterleaks / Sonar's rules and the vendors' own key pages; PyPI's macaroon prefix is
# gitleaks' (detect-secrets wants 70 characters after it, gitleaks 50).
_GITLEAKS_PREFIXES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("1Password token", r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}", ("ops_eyJ",)),
    ("1Password secret key",
     r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}", ("A3-",)),
    ("Adobe client secret", r"p8e-[A-Za-z0-9]{32}", ("p8e-",)),
    ("Alibaba access key", r"LTAI[A-Za-z0-9]{20}", ("LTAI",)),
    ("Artifactory credentials", r"cmVmd[A-Za-z0-9]{59}", ("cmVmd",)),
    ("AWS Bedrock API key", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}", ("ABSK",)),
    ("Clojars token", r"CLOJARS_[A-Za-z0-9]{60}", ("CLOJARS_",)),
    ("ClickHouse secret key", r"4b1d[A-Za-z0-9]{38}", ("4b1d",)),
    ("Cloudflare origin CA key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", ("v1.0-",)),
    ("Docker Hub token", r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{27,}", ("dckr_pat_", "dckr_oat_")),
    ("Doppler token", r"dp\.pt\.[A-Za-z0-9]{43}", ("dp.pt.",)),
    ("Duffel token", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", ("duffel_",)),
    ("Dynatrace token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", ("dt0c01.",)),
    ("EasyPost API key", r"EZ[AT]K[A-Za-z0-9]{54}", ("EZAK", "EZTK")),
    ("Facebook access token", r"EAA[MC][A-Za-z0-9]{100,}", ("EAAM", "EAAC")),
    ("Flutterwave secret key", r"FLWSECK(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?", ("FLWSECK",)),
    ("Fly.io token", r"(?:fo1_[\w-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
     ("fo1_", "fm1a_", "fm1r_", "fm2_")),
    ("Frame.io token", r"fio-u-[A-Za-z0-9_\-=]{64}", ("fio-u-",)),
    ("GitLab token", r"GR1348941[\w-]{20,}", ("GR1348941",)),
    ("Grafana token", r"(?:eyJrIjoi[A-Za-z0-9]{70,400}={0,3}|glc_[A-Za-z0-9+/]{32,400}={0,3}"
     r"|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})", ("eyJrIjoi", "glc_", "glsa_")),
    ("Groq API key", r"gsk_[A-Za-z0-9]{52}", ("gsk_",)),
    ("Harness API key", r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", ("pat.", "sat.")),
    ("Tavily API key", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}", ("tvly-",)),
    ("Terraform Cloud token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9\-_=]{60,70}", (".atlasv1.",)),
    ("Heroku API key", r"HRKU-AA[0-9A-Za-z_\-]{58}", ("HRKU-AA",)),
    ("Hugging Face token", r"api_org_[A-Za-z]{34}", ("api_org_",)),
    ("Infracost token", r"ico-[A-Za-z0-9]{32}", ("ico-",)),
    ("42 client secret", r"s-s4t2(?:ud|af)-[a-f0-9]{64}", ("s-s4t2",)),
    ("Mailgun API key", r"key-[a-f0-9]{32}", ("key-",)),
    ("MaxMind license key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", ("_mmk",)),
    ("Microsoft Teams webhook",
     r"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/[a-z0-9@\-]{30,}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9\-]{36}",
     ("webhook.office.com",)),
    ("New Relic API key", r"(?:NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9\-]{32}|NRJS-[a-f0-9]{19})",
     ("NRAK-", "NRII-", "NRJS-")),
    ("Notion token", r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})", ("ntn_", "secret_")),
    ("OpenShift token", r"sha256~[\w-]{43}", ("sha256~",)),
    ("Perplexity API key", r"pplx-[A-Za-z0-9]{48}", ("pplx-",)),
    ("PlanetScale token", r"pscale_(?:tkn|oauth|pw)_[\w=.\-]{32,64}", ("pscale_",)),
    ("PyPI token", r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,}", ("pypi-AgE",)),
    ("Postman API key", r"PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}", ("PMAK-",)),
    ("Prefect API key", r"pnu_[A-Za-z0-9]{36}", ("pnu_",)),
    ("Pulumi token", r"pul-[a-f0-9]{40}", ("pul-",)),
    ("ReadMe API key", r"rdme_[a-z0-9]{70}", ("rdme_",)),
    ("Replicate API token", r"r8_[A-Za-z0-9]{37}", ("r8_",)),
    ("RubyGems API key", r"rubygems_[a-f0-9]{48}", ("rubygems_",)),
    ("Scalingo token", r"tk-us-[\w-]{48}", ("tk-us-",)),
    ("Sendinblue API key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", ("xkeysib-",)),
    ("Sentry token", r"(?:sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=_]{50,})", ("sntryu_", "sntrys_")),
    ("SettleMint token", r"sm_[aps]at_[A-Za-z0-9]{16}", ("sm_aat_", "sm_pat_", "sm_sat_")),
    ("Shippo API key", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", ("shippo_",)),
    ("Sourcegraph token", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}", ("sgp_",)),
    ("Square access token", r"(?:EAAA|sq0atp-)[\w-]{22,60}", ("EAAA", "sq0atp-")),
    ("Typeform token", r"tfp_[A-Za-z0-9\-_.=]{59}", ("tfp_",)),
    ("Vault token", r"hvb\.[\w-]{138,300}", ("hvb.",)),
    ("Yandex API key", r"AQVN[A-Za-z0-9_\-]{35,38}", ("AQVN",)),
)


def _gitleaks_prefix_rules() -> tuple[_ProviderRule, ...]:
    # A random token mixes letters and digits; "EAAAAAAA…" padding or a word after the prefix does not.
    return tuple(_ProviderRule(kind, _L + body + _R, hints, _letters_and_digits)
                 for kind, body, hints in _GITLEAKS_PREFIXES)


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# Values with no prefix of their own, known by the service named just before them (as gitleaks'
# labelled rules do): "heroku: <uuid>", "twilio auth token <32 hex>". A UUID or hex string with no
# such label is an id and is kept.
_LABELLED_PROVIDERS: tuple[tuple[str, str, str], ...] = (
    ("Heroku API key", "heroku", _UUID),
    ("Twilio auth token", "twilio", r"[a-f0-9]{32}"),
    ("Snyk token", "snyk", _UUID),
    ("HubSpot API key", "hubspot", _UUID),
    ("Datadog API key", "datadog", r"[a-f0-9]{32}(?:[a-f0-9]{8})?"),
    ("Sentry token", "sentry", r"[a-f0-9]{64}"),
    ("Cloudflare API key", "cloudflare", r"[a-f0-9]{37}|[A-Za-z0-9_\-]{40}"),
    ("Algolia API key", "algolia", r"[a-f0-9]{32}"),
    ("Okta token", "okta", r"00[\w=\-]{40}"),
)


def _labelled_provider_rules() -> tuple[_ProviderRule, ...]:
    rules = []
    for kind, word, value in _LABELLED_PROVIDERS:
        # the service word, up to 30 label characters ("_API_KEY", " auth token"), an optional
        # separator, then the value as a whole token
        pattern = (rf"(?i){word}[\w .\-]{{0,30}}?[\"'\]]?[ \t]*(?:[:=：]|\bis\b)?[ \t]*[\"'`]?"
                   rf"(?<![A-Za-z0-9_\-])((?-i:{value}))" + _R)
        rules.append(_ProviderRule(kind, pattern, (word, word.upper(), word.capitalize()), _letters_and_digits))
    return tuple(rules)


# --- detect-secrets -----------------------------------------------------------------

# (module, class, kind, the secret is the pattern's capture group rather than the whole
# match, lower-case substrings one of which every match of the plugin's patterns holds).
# The Base64/Hex high-entropy and keyword plugins are left out on purpose: they flag
# hashes, version strings and prose; memgit's own rules cover keyword assignments.
_DS_PLUGINS: tuple[tuple[str, str, str, bool, tuple[str, ...]], ...] = (
    ("aws", "AWSKeyDetector", "AWS access key", True, ("akia", "asia", "abia", "acca", "a3t", "aws")),
    ("artifactory", "ArtifactoryDetector", "Artifactory credentials", False, ("akc", "ap")),
    ("azure_storage_key", "AzureStorageKeyDetector", "Azure storage key", False, ("accountkey=",)),
    ("basic_auth", "BasicAuthDetector", "connection string with credentials", True, ("://",)),
    ("cloudant", "CloudantDetector", "Cloudant credentials", True, ("cl",)),
    ("discord", "DiscordBotTokenDetector", "Discord bot token", False, (".",)),
    ("github_token", "GitHubTokenDetector", "GitHub token", False, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    ("gitlab_token", "GitLabTokenDetector", "GitLab token", False, ("gl", "gr1348941")),
    ("ibm_cloud_iam", "IbmCloudIamDetector", "IBM Cloud IAM key", True, ("key", "pwd", "pass", "token")),
    ("ibm_cos_hmac", "IbmCosHmacDetector", "IBM COS HMAC credentials", True, ("secret",)),
    ("jwt", "JwtTokenDetector", "JSON Web Token", False, ("eyj",)),
    ("mailchimp", "MailchimpDetector", "Mailchimp API key", False, ("-us",)),
    ("npm", "NpmDetector", "npm token", True, ("_authtoken",)),
    ("openai", "OpenAIDetector", "OpenAI API key", False, ("t3blbkfj",)),
    ("private_key", "PrivateKeyDetector", "private key", False, ("private key", "putty")),
    ("pypi_token", "PypiTokenDetector", "PyPI token", False, ("pypi-",)),
    ("sendgrid", "SendGridDetector", "SendGrid API key", False, ("sg.",)),
    ("slack", "SlackDetector", "Slack token", False, ("xox", "hooks.slack.com")),
    ("softlayer", "SoftlayerDetector", "SoftLayer credentials", True, ("sl", "softlayer")),
    ("square_oauth", "SquareOAuthDetector", "Square OAuth secret", False, ("sq0csp-",)),
    ("stripe", "StripeDetector", "Stripe API key", False, ("k_live_",)),
    ("telegram_token", "TelegramBotTokenDetector", "Telegram bot token", False, (":",)),
    ("twilio", "TwilioKeyDetector", "Twilio API key", False, ("ac", "sk")),
)

# Every pattern of the plugins above needs one of these; lines without them skip them all.
# (Artifactory's AP… keys are the only pattern shorter than 16 token characters: they get their own hint.)
_DS_HINT = _LazyRegex(r"[A-Za-z0-9_\-+/=]{16}|://|PRIVATE KEY|PuTTY|_authToken|AKC|AP[0-9A-F][A-Za-z0-9]{8}")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_TOKEN_RIGHT = _LazyRegex(r"[A-Za-z0-9_\-]*=*")  # not "/": a token inside a URL path ends there
_EDGE_JUNK = " \t\"'=:"

_DsPlugin = tuple[object, str, bool, tuple[str, ...]]  # (plugin, kind, value_in_group, hints)


@lru_cache(maxsize=1)
def _ds_plugins() -> tuple[_DsPlugin, ...]:
    # detect-secrets pulls in `requests` (100-300 ms), so it is imported on the first line one of
    # its plugins' patterns matches (see _ds_gate), never for a text none of them can flag.
    from importlib import import_module

    loaded = []
    for module, cls, kind, in_group, hints in _DS_PLUGINS:
        plugin_type = getattr(import_module(f"detect_secrets.plugins.{module}"), cls)
        loaded.append((plugin_type(), kind, in_group, hints))
    return tuple(loaded)


# The plugins' own patterns, as published data (memgit/data/secrets/detect-secrets-gate.json) for the
# detect-secrets whose plugin files it was written from. A hit needs a match of one of its plugin's
# patterns (_detect_secrets_hits finds its span with them), so a line none of them matches is passed
# by without importing the library. With any other detect-secrets installed the data is not used.
DS_GATE_DATA = "secrets/detect-secrets-gate.json"


def detect_secrets_files() -> list:
    """The files of the installed detect-secrets whose code decides what its plugins flag."""
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec("detect_secrets")  # finds the package without importing it
    base = Path(next(iter(spec.submodule_search_locations or ()))) if spec else None
    if base is None:
        raise OSError("detect-secrets not found")
    return [base / "__version__.py", *(base / "plugins" / f"{m}.py" for m in ("base", *(p[0] for p in _DS_PLUGINS)))]


@lru_cache(maxsize=1)
def detect_secrets_fingerprint() -> str | None:
    """A hash of `detect_secrets_files()`, or None when they cannot be read."""
    import hashlib

    h = hashlib.sha256()
    try:
        for f in detect_secrets_files():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    except (OSError, StopIteration, ValueError):
        return None
    return h.hexdigest()[:32]


def ds_gate_data() -> dict:
    """What DS_GATE_DATA holds for the installed detect-secrets: its fingerprint and each plugin's
    patterns (source and flags). Imports the library."""
    return {"fingerprint": detect_secrets_fingerprint(),
            "patterns": {module: [[p.pattern, p.flags] for p in plugin.denylist]  # type: ignore[attr-defined]
                         for (module, *_), (plugin, *_) in zip(_DS_PLUGINS, _ds_plugins())}}


def write_ds_gate() -> None:
    """Write DS_GATE_DATA for the installed detect-secrets (after upgrading it)."""
    import json
    from pathlib import Path

    data = {"written_by": "python -c 'from memgit.sensitive import write_ds_gate; write_ds_gate()'",
            "detect_secrets": _ds_version(), **ds_gate_data()}
    path = Path(__file__).parent / "data" / DS_GATE_DATA
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _ds_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("detect-secrets")
    except PackageNotFoundError:
        return "?"


@lru_cache(maxsize=1)
def _ds_gate() -> tuple[tuple[re.Pattern[str], ...], ...] | None:
    """Per plugin of _DS_PLUGINS, its patterns compiled from DS_GATE_DATA; None when the data is
    missing, malformed or written for another detect-secrets (then every plugin runs)."""
    import json
    from importlib.resources import files

    try:
        data = json.loads(files("memgit.data").joinpath(DS_GATE_DATA).read_text(encoding="utf-8"))
        fp = detect_secrets_fingerprint()
        if fp is None or data.get("fingerprint") != fp:
            return None
        patterns = data["patterns"]
        return tuple(tuple(re.compile(src, flags) for src, flags in patterns[module])
                     for module, *_ in _DS_PLUGINS)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, re.error):
        return None


def _detect_secrets_hits(line: str, lower: str, hits: list[_Hit]) -> None:
    gate = _ds_gate()
    for i, (_module, _cls, _kind, _in_group, hints) in enumerate(_DS_PLUGINS):
        if not _has_any(lower, hints):
            continue
        if gate is not None and not any(p.search(line) for p in gate[i]):
            continue  # no pattern of the plugin matches: it cannot flag the line
        plugin, kind, in_group, _ = _ds_plugins()[i]
        # analyze_string is the plugin's own verdict (the JWT plugin also validates the
        # token); unlike analyze_line it never verifies a secret over the network.
        values = set(plugin.analyze_string(line))  # type: ignore[attr-defined]
        if not values:
            continue
        # analyze_string yields values, not positions: find them with the same patterns.
        for pattern in plugin.denylist:  # type: ignore[attr-defined]
            for m in pattern.finditer(line):
                # a key block's marker line is a marker, not a token: widening it would take a diff's "-"
                span = _ds_span(line, m, values, in_group, widen=kind != "private key")
                if span is not None and not _is_placeholder(line[span[0]:span[1]]):
                    hits.append((kind, span[0], span[1]))


def _ds_span(
    line: str, m: re.Match[str], values: set[str], in_group: bool, widen: bool = True
) -> tuple[int, int] | None:
    groups = [i for i in range(1, (m.re.groups or 0) + 1) if m.group(i) and m.group(i) in values]
    if m.group(0) not in values and not groups:
        return None
    if in_group and groups:
        return m.span(groups[0])
    start, end = m.span()
    while start < end and line[start] in _EDGE_JUNK:
        start += 1
    while end > start and line[end - 1] in _EDGE_JUNK:
        end -= 1
    if not widen:
        return start, end
    # Some patterns match a fixed-length prefix of a longer key (Stripe, GitHub) or stop
    # before a JWT's signature: widen to the whole token so no tail of it survives.
    while start > 0 and line[start - 1] in _TOKEN_CHARS:
        start -= 1
    right = _TOKEN_RIGHT.match(line, end)
    return start, (right.end() if right else end)


# --- connection strings, passwords, key/token/secret assignments ---------------------

_CONNECTION_URL = _LazyRegex(
    # scheme://user:password@host — the password is greedy up to the last "@" before the host
    r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s/:@'\"<>]*:([^\s/'\"<>]+)@[^\s/@'\"<>]"
)


def _connection_url_hits(line: str, hits: list[_Hit]) -> None:
    for m in _CONNECTION_URL.finditer(line):
        if not _is_placeholder(m.group(1)):
            hits.append(("connection string with credentials", m.start(1), m.end(1)))


# A value in quotes (any kind), or a bare run of printable ASCII.
_QUOTED = r"\"([^\"\n]+)\"|'([^'\n]+)'|`([^`\n]+)`|“([^”\n]+)”|「([^」\n]+)」|『([^』\n]+)』"
# "&" ends the value only where a query string goes on ("password=x&ssl=true").
_BARE = r"((?:[A-Za-z0-9!#$%()*+\-./:<=>?@\[\]^_{|}~\\]|&(?![A-Za-z_]\w*=))+)"
_STRONG_SEP = r"(?::=|=>|=(?!=)|:|：)"
# "is", "是"; and a password said changed to its new value ("密码改成 X", "password changed to X", "is now X")
_WEAK_SEP = (r"(?:\s+(?:is(?:\s+now)?|now\s+is|(?:was\s+|got\s+)?(?:changed|set|reset|updated)\s+to)\s+"
             r"|\s*(?:就|即)?(?:是|为|為|(?:改|换|換|设|設|重置|变|變)(?:成|为|為)了?)\s*[:：]?)")

# markdown emphasis around a label's colon ("**Gateway token:** `…`") and a short aside between the
# label and its colon ("Current token (2026-03-15): …") do not end the label
_EMPH = r"\*\*|__|\*|_"
_ASIDE = r"(?:[ \t]*(?:\([^()\n]{1,30}\)|（[^（）\n]{1,30}）))?"

_PASSWORD_WORDS = ("pass", "pwd", "密码", "密碼", "口令", "senha", "contraseña", "mot de passe", "passwort",
                   "wachtwoord", "пароль")
_PASSWORD = _AnchoredRegex(
    r"(?i)(?P<kw>password|passwd|passphrase|pwd|密码|密碼|口令|senha|contraseña|mot de passe|passwort|wachtwoord"
    r"|пароль)"
    rf"[\"'\]]?{_ASIDE}(?:[ \t]*(?:{_EMPH})?(?P<strong>{_STRONG_SEP})(?:{_EMPH})?|(?P<weak>{_WEAK_SEP})"
    r"|(?P<space>(?<=[码碼令])[ \t]+))"
    rf"[ \t]*(?:{_QUOTED}|{_BARE})",
    _PASSWORD_WORDS,
)
_NOT_A_PASSWORD = frozenset({
    "none", "null", "nil", "true", "false", "required", "optional", "empty", "unset", "n/a", "na",
    "tbd", "todo", "redacted", "hidden", "masked", "see", "stored", "saved", "in", "from", "is", "the",
    "an", "your", "same", "set", "changed", "reset", "expired", "protected", "manager", "managers",
    "field", "prompt", "policy",
})

_ASSIGNMENT_WORDS = ("key", "token", "secret", "credential", "令牌", "密钥", "密鑰", "秘钥", "秘鑰", "私钥", "私鑰",
                     "金鑰", "金钥", "推流", "串流")
_ASSIGNMENT_KEYWORDS = (
    ("API key", r"api[_\-. ]?key|apikey|access[_\-]?key(?![_\-]?id)"),
    # (a live stream's key: "推流码 live_…", "串流金鑰")
    ("token", r"(?:auth|access|refresh|bot|api|session)?[_\-]?token|令牌|推流[码碼]|串流[码碼]|串流金[鑰钥]"),
    (
        "secret",
        (
            r"client[_\-]?secret|secret(?:[_\-]?access)?(?:[_\-]?key)?"
            r"|(?:private|signing|encryption|master)[_\-]?key|credentials?|密钥|密鑰|秘钥|秘鑰|私钥|私鑰|金鑰|金钥"
        ),
    ),
)
_ASSIGNMENT = _AnchoredRegex(
    "(?i)(?:"
    + "|".join(f"(?P<k{i}>{kw})" for i, (_, kw) in enumerate(_ASSIGNMENT_KEYWORDS))
    + rf")\\?[\"'\]]?{_ASIDE}(?:[ \t]*(?:{_EMPH})?(?:{_STRONG_SEP}|{_WEAK_SEP})(?:{_EMPH})?|(?<=[牌钥鑰码碼])(?=[ \t]))"
    r"[ \t]*\\?[\"'`“「]?"
    r"([A-Za-z0-9_\-.+/~]{8,}={0,3})(?![A-Za-z0-9_\-.+/~=])",
    _ASSIGNMENT_WORDS,
    reach=len("encryption_"),  # the longest qualifier before its key word
)


def _matched(m: re.Match[str], last_first: bool = False) -> int:
    """The number of the capturing group that matched (the first one, or with last_first the last)."""
    order = range(m.re.groups, 0, -1) if last_first else range(1, m.re.groups + 1)
    return next(i for i in order if m.group(i) is not None)


def _password_hits(line: str, hits: list[_Hit]) -> None:
    pos = 0
    while (m := _PASSWORD.search(line, pos)) is not None:
        # a rejected candidate may have swallowed the real one ("密码 password: x"): look again
        # just after its keyword, not after its value
        pos = m.end("kw")
        group = _matched(m, last_first=True)
        start, end = m.span(group)
        if group == m.re.groups:  # bare, not quoted: drop sentence punctuation
            end = start + len(_strip_trailing(m.group(group)))
        value = line[start:end]
        if m.group("kw").lower() == "pwd" and value.startswith(("/", "~")):
            continue  # PWD=/home/… is the working directory
        if len(value) < 3 or _is_placeholder(value) or value.lower() in _NOT_A_PASSWORD:
            continue
        if (m.group("weak") or m.group("space")) and not _password_like(value):
            continue
        hits.append(("password", start, end))
        pos = max(pos, end)


def _assignment_hits(line: str, hits: list[_Hit]) -> None:
    for m in _ASSIGNMENT.finditer(line):
        value = m.group(m.re.groups)
        if not _credential_like(value) or _is_placeholder(value):
            continue
        kind = next(k for i, (k, _) in enumerate(_ASSIGNMENT_KEYWORDS) if m.group(f"k{i}") is not None)
        hits.append((kind, m.start(m.re.groups), m.end(m.re.groups)))


# The general rule: any label whose last word is key, token, secret, auth or pass — FOO_KEY,
# storageKey, "Storage account key", "auth" — with a strong separator before a value that looks
# random. The known labels above accept any credential-like value; these accept only a
# high-entropy one, so "sort_key: created_at_desc" and "auth: enabled" stay. Besides ":" and "="
# a value may follow an XML-ish tag ("<token>…</token>"), a table cell ("| token | … |"), "to"
# ("set OPENCLAW_GATEWAY_TOKEN to …"), or for a key, token or secret named by what it opens
# ("Gateway token …", "the API key …", "--token …") just a space; a JSON string escaped inside
# another one (\"token\": \"…\") keeps its backslashes.
_LABEL_WORDS = ("key", "token", "secret", "auth", "pass", "pwd")
_LABELLED = _AnchoredRegex(
    r"(?:(?<![A-Za-z])(?P<word>(?i:key|token|secret|auth|passwd|pass|pwd))"
    r"|(?<=[a-z0-9])(?P<camel>Key|Token|Secret|Auth|Passwd|Pass|Pwd))(?P<id>[_\-]?(?:ID|Id)(?![a-z]))?(?![A-Za-z])"
    rf"\\?[\"'\]]?{_ASIDE}(?:[ \t]*(?:{_EMPH})?(?:{_STRONG_SEP}|\||>)(?:{_EMPH})?[ \t]*"
    r"|(?P<to>[ \t]+to[ \t]+)|(?P<space>[ \t]+))"
    rf"(?:{_QUOTED}|(?:\\[\"'])?([A-Za-z0-9_\-.+/~]{{8,}}={{0,3}}))(?![A-Za-z0-9_\-.+/~=])",
    _LABEL_WORDS,
)
_LABEL_KIND = {"key": "secret", "token": "token", "secret": "secret", "auth": "token", "pass": "password",
               "passwd": "password", "pwd": "password"}
_SEGMENT = _LazyRegex(r"[A-Za-z0-9+/]+")
# What names a key, token or secret standing before its value with only a space between them
_QUALIFIER = _LazyRegex(
    r"(?i)(?:(?<![A-Za-z])(?:api|access|auth|bot|gateway|refresh|session|secret|private|personal|deploy|service"
    r"|client|signing|master|bearer|registry|publish|upload|license|integration|account|admin|webhook"
    r"|subscription|stream)[ _.\-]?|(?<![\w-])--)\Z"
)
# ...and what such a spaced value must not be: an id in prose (a UUID, a git commit)
_ID_IN_PROSE = _LazyRegex(_UUID + r"|[0-9a-fA-F]{40}")


def _labelled_hits(line: str, hits: list[_Hit]) -> None:
    pos = 0
    while (m := _LABELLED.search(line, pos)) is not None:
        # a rejected candidate's value may be the next label ("auth token …"): look again after its word
        label = "word" if m.group("word") is not None else "camel"
        pos = m.end(label)
        group = _matched(m, last_first=True)
        value = m.group(group)
        word = m.group(label).lower()
        if _is_placeholder(value):
            continue
        if m.group("to") is not None or m.group("space") is not None:
            # a name written as code ("applicationKey K005…", "keyID 0052…") labels its value as a bare word does
            # not ("the key 2026 …"): a qualifier before a bare word says what key it is
            coded = m.group("camel") is not None or m.group("id") is not None
            if word not in ("key", "token", "secret") or _ID_IN_PROSE.fullmatch(value) or (
                    m.group("space") is not None and not coded
                    and not _QUALIFIER.search(line, max(0, m.start() - 40), m.start())):
                continue
        if word in ("pass", "pwd", "passwd"):
            # "pass" alone is a verb ("all tests pass: 3"); as the tail of a name (db_pass, SMTP_PASS) it is a password
            named = m.group("camel") is not None or (m.start() >= 2 and line[m.start() - 1] in "_-."
                                                     and line[m.start() - 2].isalnum())
            if not (named and _password_like(value) and " " not in value):
                continue
        elif not _random_looking(value):
            continue
        kind = _LABEL_KIND[word]
        if word == "auth" and _is_basic_auth(value):
            kind = "basic auth credentials"
        hits.append((kind, m.start(group), m.end(group)))
        pos = max(pos, m.end(group))


def _random_looking(value: str) -> bool:
    """A machine-made value: long, not a version/date/path, and one long run mixing letters and digits."""
    if len(value) < 16 or not _credential_like(value):
        return False
    longest = max((seg.group(0) for seg in _SEGMENT.finditer(value)), key=len, default="")
    return len(longest) >= 12 and _letters_and_digits(longest) and len(set(longest)) >= 8


def _is_basic_auth(value: str) -> bool:
    """A base64 "user:password" (Docker's config.json "auth", an HTTP Basic header)."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, sep, password = decoded.partition(":")
    return bool(sep and user and password and decoded.isprintable())


# Passwords given on a command line or in a .netrc line: the value is the flag's argument.
_CLI_WORDS = ("password", "mysql", "mariadb", "curl", "sshpass", "--user")
_CLI_ARG = r"('[^'\s]+'|\"[^\"\s]+\"|[^\s'\"]+)"
_CLI_PASSWORD = _LazyRegex(
    r"(?i)(?:\b(?:machine\s+\S+\s+)?login\s+\S+\s+password\s+" + _CLI_ARG
    + r"|\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^|;&\n]*?\s-p" + _CLI_ARG
    + r"|\bsshpass\s+-p\s*" + _CLI_ARG
    + r"|\bcurl\b[^|;&\n]*?\s(?:-u|--user)[= ]\s*['\"]?[^\s:'\"]+:([^\s'\"@]+)"
    + r"|--password[= ]" + _CLI_ARG + ")"
)
_PIN = _LazyRegex(
    r"(?:\bPIN|(?i:\bpin[ \t]+(?:code|number)))[ \t]*(?:码|碼|code|Code)?[ \t]*(?:[:：=]|是|为|為|\bis\b)?[ \t]*"
    r"(?<![0-9])([0-9]{4,8})(?![0-9]|[.,:/%][0-9]|\s*%)"
)


# a code that opens a gate, a door, an alarm or a key safe, written beside what it opens ("texted new gate code
# 4471#", "key safe code is 0815", "门禁密码改成 3391#"): digits, with the "#" or "*" a keypad ends them with
_ACCESS_GATE = _LazyRegex(r"code|combo|门|門|锁|鎖|箱")
_ACCESS_CODE = _LazyRegex(
    r"(?:(?i:\b(?:gate|door|alarm|keypad|key ?pad|entry|access|lock ?box|key ?safe|key ?box|garage|padlock|safe|store|"
    r"storeroom|shed|locker|cabinet|cupboard|kit|bike ?lock|lock)"
    r"[ \t]+(?:code|pin|combo|combination)s?\b)"
    r"|(?:门禁|門禁|大门|大門|后门|後門|前门|前門|铁门|鐵門|闸门|閘門|车库|車庫|门锁|門鎖|保险箱|保險箱|密码箱|密碼箱)"
    r"(?:的)?(?:密码|密碼|码|碼|[ \t]*code))"
    r"[ \t]*(?:(?i:is|was|now|changed to|set to|改成|改为|改為|换成|換成|是|为|為)[ \t]*|[:：=][ \t]*|[-–—][ \t]*)*"
    r"(?<![0-9])([0-9]{3,8})(?![0-9]|[.,:/][0-9]|\s*%)"
)


# such a code named first and given later in the line ("asked for the kit store code … (it's 3806, not posted)")
_ACCESS_CODE_LATER = _LazyRegex(
    r"(?i:\b(?:code|pin|combo|combination)s?\b)[^0-9\n]{0,80}?\b(?i:it'?s|it is|that'?s|which is)[ \t]+"
    r"(?<![0-9])([0-9]{3,8})(?![0-9]|[.,:/][0-9]|\s*%)"
)


def _access_code_hits(line: str, hits: list[_Hit]) -> None:
    for rx in (_ACCESS_CODE, _ACCESS_CODE_LATER):
        for m in rx.finditer(line):
            end = m.end(1) + (1 if line[m.end(1):m.end(1) + 1] in ("#", "*") else 0)
            hits.append(("access code", m.start(1), end))


# a customer's or an account's credit limit and its amount ("credit limit 加到 HK$300,000", "信用额度调到 30 万")
_CREDIT_WORDS = ("credit limit", "credit line", "信用额度", "信用額度", "授信额度", "授信額度", "赊账额度", "賒賬額度")
_CREDIT_LIMIT = _LazyRegex(
    r"(?i)(?:credit (?:limit|line)|信用[额額]度|授信[额額]度|[赊賒][账賬][额額]度)[^0-9\n$¥€£，,。；;()（）]{0,12}?"
    r"((?:(?:HK|US|NT|S|A|C|RMB)?\$|[¥€£])?\s*\d[\d,]*(?:\.\d+)?(?:\s*(?:k|K|万|萬|m|M)\b|\s*(?:万|萬))?)(?![-/:]\d)"
)


def _credit_limit_hits(line: str, hits: list[_Hit]) -> None:
    for m in _CREDIT_LIMIT.finditer(line):
        hits.append(("credit limit", m.start(1), m.end(1)))


def _cli_password_hits(line: str, hits: list[_Hit]) -> None:
    for m in _CLI_PASSWORD.finditer(line):
        group = _matched(m)
        start, end = m.span(group)
        if line[start] in "'\"":
            start, end = start + 1, end - 1
        value = line[start:end]
        if len(value) >= 3 and not _is_placeholder(value) and value.lower() not in _NOT_A_PASSWORD:
            hits.append(("password", start, end))


def _pin_hits(line: str, hits: list[_Hit]) -> None:
    for m in _PIN.finditer(line):
        hits.append(("PIN", m.start(1), m.end(1)))


def _strip_trailing(value: str) -> str:
    value = value.rstrip(".:")
    for opener, closer in ("()", "[]", "{}", "<>"):
        while value.endswith(closer) and value.count(closer) > value.count(opener):
            value = value[:-1]
    return value


_PLACEHOLDER = _LazyRegex(
    r"(?i)\[REDACTED\]|<[^>]*>|^<|(?:\.\.\.|…)$|\$\{.*\}|\{\{.*\}\}|\$\(|^%\(?\w*\)?s$|^\$[A-Za-z_]\w*$|^[*•x.…]+$"
    r"|^(?:os\.|process\.env|env\.|self\.|settings\.|config\.)|^[A-Za-z_][\w.]*\("
)
_VERSIONISH = _LazyRegex(r"v?[0-9]+(?:\.[0-9]+)+(?:[-+.][A-Za-z0-9.]+)?")
_DATEISH = _LazyRegex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.search(value) is not None


def _letters_and_digits(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mixed_case(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def _credential_like(value: str) -> bool:
    """Long enough, letters and digits, and not a version, a date or a path."""
    return (
        len(value) >= 12
        and _letters_and_digits(value)
        and not _VERSIONISH.fullmatch(value)
        and not _DATEISH.match(value)
        and not value.startswith(("/", "./", "../", "~/"))
    )


# a network's name and password written as a pair ("office wifi: CrumbBack / S0urdough!26", "WLAN：Home5G／x9Kp#22")
_WIFI_WORDS = ("wifi", "wi-fi", "wlan", "hotspot", "无线", "無線", "热点", "熱點")
_WIFI_PAIR = _LazyRegex(r"(?i)(?:wi-?fi|wlan|hotspot|无线|無線|热点|熱點)[^\n:：]{0,40}[:：][ \t]*[^\s/／]{2,40}"
                        r"[ \t]*[/／][ \t]*(\S{4,64})")


def _wifi_hits(line: str, hits: list[_Hit]) -> None:
    for m in _WIFI_PAIR.finditer(line):
        value = _strip_trailing(m.group(1))
        if _password_like(value) and not _is_placeholder(value):
            hits.append(("password", m.start(1), m.start(1) + len(value)))


# a login given out as a value, a password by its look ("temp login for everyone = Larkfield!Deck24", "登入：Kx9!ab77"):
# letters and digits with a symbol or a capital inside, never an address or a path (a user name stays)
_LOGIN_WORDS = ("login", "log-in", "sign-in", "signin", "登入", "登录", "登錄")
_LOGIN_VALUE = _LazyRegex(r"(?i)(?:\b(?:log-?in|sign-?in)\b|登入|登录|登錄)[^\n=:：]{0,30}?(?:=(?!=)|:|：)[ \t]*"
                          r"([^\s,，;；]{6,64})")


def _login_hits(line: str, hits: list[_Hit]) -> None:
    for m in _LOGIN_VALUE.finditer(line):
        value = _strip_trailing(m.group(1))
        if len(value) < 6 or "@" in value or value.startswith(("/", "http")) or _is_placeholder(value) \
                or _VERSIONISH.fullmatch(value) or _DATEISH.match(value):
            continue
        letters, digits = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
        if letters and digits and (any(not c.isalnum() for c in value) or any(c.isupper() for c in value[1:])):
            hits.append(("password", m.start(1), m.start(1) + len(value)))


def _password_like(value: str) -> bool:
    """For "password is X" / "密码是X": X must not read like a plain word."""
    if len(value) < 4:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    inner_upper = any(c.isupper() for c in value[1:])
    return has_digit or has_symbol or inner_upper


# --- personal identifiers -------------------------------------------------------------

_LONG_NUMBER = _LazyRegex(r"[0-9]{6}|[0-9]{4}[ \-][0-9]{4}")
_ID_NUMBER = _LazyRegex(
    r"(?<![0-9A-Za-z])[1-9][0-9]{5}(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
    r"[0-9]{3}[0-9Xx](?![0-9A-Za-z])"
)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_BANK_CARD = _LazyRegex(
    r"(?<![0-9A-Za-z.\-])(?:[2-6][0-9]{13,18}"
    r"|[2-6][0-9]{3}(?P<sep>[ \-])[0-9]{4}(?P=sep)[0-9]{4}(?P=sep)[0-9]{4}(?:(?P=sep)[0-9]{1,3})?"
    r"|3[0-9]{3}(?P<sep2>[ \-])[0-9]{6}(?P=sep2)[0-9]{4,5})"  # Amex 4-6-5, Diners 4-6-4
    r"(?![0-9A-Za-z])"
)


def _id_number_hits(line: str, hits: list[_Hit]) -> None:
    for m in _ID_NUMBER.finditer(line):
        value = m.group(0)
        total = sum(int(d) * w for d, w in zip(value[:17], _ID_WEIGHTS))
        if "10X98765432"[total % 11] == value[17].upper():
            hits.append(("Chinese ID number", m.start(), m.end()))


def _bank_card_hits(line: str, hits: list[_Hit]) -> None:
    for m in _BANK_CARD.finditer(line):
        digits = [int(c) for c in m.group(0) if c.isdigit()]
        if _card_length_ok(digits) and _luhn_ok(digits):
            hits.append(("bank card number", m.start(), m.end()))


def _card_length_ok(digits: list[int]) -> bool:
    # 16-19 digits for Visa, Mastercard, UnionPay, JCB…; the shorter numbers only under their
    # schemes' prefixes: American Express (34, 37: 15 digits), Diners Club (300-305, 36, 38, 39: 14)
    if 16 <= len(digits) <= 19:
        return True
    head = digits[0] * 10 + digits[1]
    if len(digits) == 15:
        return head in (34, 37)
    if len(digits) == 14:
        return head in (36, 38, 39) or (head == 30 and digits[2] <= 5)
    return False


def _luhn_ok(digits: list[int]) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# --- trading figures -------------------------------------------------------------------

_NUMBER = r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?"
_CURRENCY = r"(?:US|HK|NT|C|A|S)?\$|¥|￥|€|£"
_MONEY_UNIT = r"元|美元|港元|港币|港幣|台币|台幣|新台币|新台幣|块|塊|USD|CNY|RMB|HKD|TWD|NTD|dollars?|bucks"
_NOT_PERCENT = r"(?![0-9]|[.,][0-9])(?!\s*[%‰％])"  # the whole number, and not a percentage

_COST_WORDS = ("成本", "均价", "均價", "买入价", "買入價", "开仓价", "開倉價", "建仓价", "建倉價", "cost", "price",
               "bought at", "basis", "paid")
_COST_BASIS = _AnchoredRegex(
    r"(?i)(?:成本价|成本價|持仓成本|持倉成本|成本均价|成本均價|买入均价|買入均價|均价|均價|买入价|買入價"
    r"|开仓价|開倉價|建仓价|建倉價|\bcost basis|\bavg\.? cost|\baverage cost|\bavg\.? price|\baverage price"
    r"|\bentry price|\bpurchase price|\bbuy price|\bcost per share|\bbought at|摊薄成本|攤薄成本|成本)"
    rf"\s*(?:[:：=@]|是|为|為|\bat\b|\bof\b)?\s*(?:{_CURRENCY})?\s*(?:{_NUMBER}){_NOT_PERCENT}"
    rf"(?:\s*(?:{_MONEY_UNIT}))?"
    # a bare "basis" or "paid" is a cost basis only with a currency (and "paid", per share)
    rf"|(?i:\bbasis)\s*(?:[:：=]|\bis\b|\bwas\b|\bof\b|\bat\b)?\s*(?:{_CURRENCY})\s*(?:{_NUMBER}){_NOT_PERCENT}"
    rf"|(?i:\bpaid)\s+(?:{_CURRENCY})\s*(?:{_NUMBER}){_NOT_PERCENT}\s*(?i:a|per|/|each)\s*(?i:share)\b",
    _COST_WORDS,
    reach=len("purchase "),  # the longest words before "price", "cost", 成本 or 均价
)

_SHARE_WORDS = ("股", "手", "share", "lot")
_SHARES = _LazyRegex(
    rf"(?i)(?<![0-9A-Za-z.,\]])(?:{_NUMBER}){_NOT_PERCENT}\s*(?:万|萬|千)?\s*"
    r"(?:股(?![票价價息东東份权權])|手|shares?\b|lots?\b)"
)
# Holdings words, and trade verbs: "bought 200 shares" reveals a position just the same.
_HOLDINGS_KW = _LazyRegex(
    r"(?i)持仓|持倉|持有|持股|仓位|倉位|\bholdings?\b|\bpositions?\b|\bheld\b"
    r"|买入|買入|买了|買了|卖出|賣出|卖了|賣了|加仓|加倉|减仓|減倉|建仓|建倉|清仓|清倉|补仓|補倉"
    r"|\bbought\b|\bsold\b|\bbuy(?:ing)?\b|\bsell(?:ing)?\b|\b(?:long|short)(?:ed|ing)?\b"
)
# A ticker or an A-share code right before a share count: "NVDA 800 shares", "600519 20 手"...
_TICKER_BEFORE = _LazyRegex(r"(?:\b[A-Z]{2,5}|(?<![0-9])[0-9]{6}|\b[0-9]{4,5}\.HK)[ \t]*\Z")
_TICKER_WINDOW = 12
# ...and, in English, only where "shares" is a noun: not "GPU 0 shares memory".
_NOUN_SHARES_AFTER = _LazyRegex(r"\s*(?:$|[,.;:，。；)\]]|(?:of|at|in|held|worth)\b|@)")
_TRADE_PRICE = _LazyRegex(rf"(?i)(?:\bat\b|@)\s*(?:{_CURRENCY})\s*(?:{_NUMBER}){_NOT_PERCENT}")

_PNL_WORDS = ("盈", "亏", "虧", "损", "損", "获利", "獲利", "赚", "賺", "收益", "实现", "實現", "p&l", "p/l", "pnl",
              "realis", "realiz", "profit", "loss", "gain", "lost", "lose", "losing")
_PNL_STRONG = _LazyRegex(
    r"(?i)盈亏|盈虧|浮盈|浮亏|浮虧|盈利|亏损|虧損|获利|獲利|赚了|賺了|亏了|虧了|收益|未实现|未實現|已实现|已實現"
    r"|P&L|P/L|\bPnL\b|\bunreali[sz]ed\b|\breali[sz]ed\b"
)
# "stop loss" and "take profit" name rules, not results.
_PNL_WEAK = _LazyRegex(
    r"(?i)(?<!stop )(?<!stop-)(?<!stop_)(?<!take )\b(?:profits?|loss(?:es)?|gains?|lost|lose|losing)\b"
)
_AMOUNT = _LazyRegex(
    rf"(?i)(?<![0-9A-Za-z.,\]])(?P<sign>[+\-−＋－])?\s*(?P<cur>{_CURRENCY})?\s*(?:{_NUMBER}){_NOT_PERCENT}"
    rf"(?:\s*(?P<mult>[kKmM]\b|万|萬|千|亿|億|bn\b))?(?:\s*(?P<unit>{_MONEY_UNIT}))?"
)
# After a strong P&L word a figure needs no currency when it has a 万 or at least three digits,
# and is not a count, a date or a time: "赚了 2.3 万", "亏损 4200", not "盈利 3 次", "收益 2026 年".
_BARE_FIGURE = _LazyRegex(r"[0-9]{3}|[0-9][,.]?[0-9]*\s*[万萬千亿億]")
_NOT_A_FIGURE_AFTER = _LazyRegex(r"\s*(?:[次天笔筆个個只年月日号號周週倍%％]|[-/:][0-9])")
_CLAUSE_BREAK = _LazyRegex(r"[。；;!?！？\n]|\.\s")
_PNL_AFTER = 24  # characters between a P&L keyword and its amount
_PNL_BEFORE = 12  # "$5,400 unrealized gain"
_AMOUNT_MAX = 40  # longest amount text considered: bounds the search window around a keyword
_BEFORE_GAP = _LazyRegex(r"[ \t]*[A-Za-z]*[ \t]*")  # "$5,400 profit", not "$500, profit share"


# What a position or an account is worth: "仓位 65 万", "持仓市值 82.4 万元", "总资产 153 万",
# "portfolio worth $412,000". A figure needs a currency, a 万/k or four digits: "仓位 30%" is a rule.
_VALUE_WORDS = ("仓位", "倉位", "市值", "资产", "資產", "portfolio", "net worth", "account value", "market value",
                "long", "short")
_HOLDING_VALUE = _LazyRegex(
    r"(?:仓位|倉位|持仓市值|持倉市值|持股市值|持仓总值|持倉總值|总资产|總資產|净资产|淨資產|账户资产|帳戶資產"
    r"|(?i:\bportfolio(?:\s+is)?\s+(?:worth|valued?(?:\s+at)?)|\bnet worth|\baccount value|\bmarket value"
    r"|\bposition (?:size|value)))"
    rf"\s*(?:[:：=]|是|为|為|约|約|(?i:\bis\b|\bof\b|\babout\b|\baround\b))?\s*"
    rf"(?P<amount>(?P<cur>{_CURRENCY})?\s*(?:{_NUMBER}){_NOT_PERCENT}"
    rf"(?:\s*(?P<mult>[kKmM]\b|万|萬|千|亿|億|bn\b))?(?:\s*(?P<unit>{_MONEY_UNIT}))?)"
)
# "long 500 TSLA", "short 1,200 NIO": a trade direction, a count and a ticker
_LONG_SHORT = _LazyRegex(
    rf"(?i:\b(?:long|short)(?:ed|ing)?)\s+(?P<amount>(?:{_NUMBER}){_NOT_PERCENT}\s+"
    r"(?!(?:MB|GB|KB|TB|MS|PR|CPU|GPU)s?\b)[A-Z]{1,5}(?:\.[A-Z]{1,2})?)\b"
)


def _holding_value_hits(line: str, hits: list[_Hit]) -> None:
    for m in _HOLDING_VALUE.finditer(line):
        digits = sum(c.isdigit() for c in m.group("amount").split(".")[0])
        if m.group("cur") or m.group("mult") or m.group("unit") or (
                digits >= 4 and not _NOT_A_FIGURE_AFTER.match(line, m.end("amount"))):
            hits.append(("trading figure (holdings)", m.start("amount"), m.end("amount")))
    for m in _LONG_SHORT.finditer(line):
        hits.append(("trading figure (holdings)", m.start("amount"), m.end("amount")))


# "up $3,200 on NVDA", "NVDA is up $3,200": a gain on a named position, not a price move in general
_UP_DOWN_GATE = _LazyRegex(r"(?i)\b(?:up|down)\s+(?:US|HK|NT|C|A|S)?\$")
_UP_DOWN = _LazyRegex(
    rf"(?:(?:\b[A-Z]{{2,5}}|(?i:\bposition|\bportfolio|\baccount|\bI'?m|\bwe'?re))\s+(?:(?i:is|was|are|am)\s+)?"
    rf"(?i:up|down)\s+(?P<a>(?:{_CURRENCY})\s*(?:{_NUMBER})(?:\s*[kK]\b)?)"
    rf"|(?i:\b(?:up|down))\s+(?P<b>(?:{_CURRENCY})\s*(?:{_NUMBER})(?:\s*[kK]\b)?)\s+(?i:on|in)\s+"
    r"(?:\b[A-Z]{2,5}\b|(?i:(?:the|my|this|that)\s+(?:position|trade|stake|shares|stock|calls|puts|options))))"
)


def _up_down_hits(line: str, hits: list[_Hit]) -> None:
    for m in _UP_DOWN.finditer(line):
        hits.append(("trading figure (P&L)", *m.span(_matched(m))))


# Brokerage account numbers: IBKR's U + 7-8 digits next to its name, or a number after 资金账号/證券帳號
_ACCOUNT_WORDS = ("ibkr", "interactive brokers", "盈透", "账号", "帐号", "帳號", "賬號", "账户", "帳戶", "代码", "代碼",
                  "account")
_BROKERAGE_ACCOUNT = _LazyRegex(
    r"(?:(?i:\bIBKR\b|\bInteractive Brokers\b|盈透)[^\n]{0,30}?\b(U[0-9]{7,8})\b"
    r"|(?:(?:资金|資金|证券|證券|股东|股東|交易|券商|期货|期貨)(?:账号|帐号|帳號|賬號|账户|帐户|帳戶|賬戶|代码|代碼)"
    r"|(?i:\bbrokerage account|\btrading account|\bbroker account)(?:\s+(?i:number|no\.?|#))?)"
    r"\s*(?:[:：=#]|是|为|為|(?i:\bis\b))?\s*([A-Z]?[0-9]{6,14})(?![0-9]))"
)


def _brokerage_account_hits(line: str, hits: list[_Hit]) -> None:
    for m in _BROKERAGE_ACCOUNT.finditer(line):
        hits.append(("brokerage account number", *m.span(_matched(m))))


# "成本 100 元/月" is what something costs to run, not what a position cost
_PER_PERIOD = _LazyRegex(r"\s*(?:/|每|一)\s*(?:个|個)?\s*(?:月|年|天|日|周|週|小时|小時|month|year|day|mo\b|yr\b)")


def _cost_basis_hits(line: str, hits: list[_Hit]) -> None:
    for m in _COST_BASIS.finditer(line):
        if m.group(0).startswith("成本") and _PER_PERIOD.match(line, m.end()):
            continue
        hits.append(("trading figure (cost basis)", m.start(), m.end()))


def _holdings_hits(line: str, hits: list[_Hit]) -> None:
    # Every share count on a line that speaks of holdings or trades ("持仓：NVDA 800 股，AAPL
    # 300 股"), or one right after a ticker; then the price of such a trade ("at $118.4").
    keyword = _HOLDINGS_KW.search(line) is not None
    found = False
    for m in _SHARES.finditer(line):
        if keyword or (
            _TICKER_BEFORE.search(line, max(0, m.start() - _TICKER_WINDOW), m.start())
            and (not m.group(0)[-1].isascii() or _NOUN_SHARES_AFTER.match(line, m.end()))
        ):
            found = True
            hits.append(("trading figure (holdings)", m.start(), m.end()))
    if found:
        for m in _TRADE_PRICE.finditer(line):
            hits.append(("trading figure (cost basis)", m.start(), m.end()))


def _pnl_hits(line: str, hits: list[_Hit]) -> None:
    # An amount near a P&L word: signed or with a currency after 盈亏/P&L/realized...,
    # with a currency only after profit/loss/gain.
    for strong, keywords in ((True, _PNL_STRONG), (False, _PNL_WEAK)):
        for kw in keywords.finditer(line):
            lo = max(0, kw.start() - _PNL_BEFORE - _AMOUNT_MAX)
            hi = min(len(line), kw.end() + _PNL_AFTER + _AMOUNT_MAX)
            for amount in _AMOUNT.finditer(line, lo, hi):
                text = amount.group(0)
                currency = bool(amount.group("cur") or amount.group("unit"))
                bare = strong and _BARE_FIGURE.search(text) is not None and (
                    amount.group("mult") or not _NOT_A_FIGURE_AFTER.match(line, amount.end()))
                if not text.strip() or not (currency or (strong and amount.group("sign")) or bare):
                    continue
                if amount.start() >= kw.end():
                    gap = line[kw.end():amount.start()]
                    near = len(gap) <= _PNL_AFTER
                elif amount.end() <= kw.start():
                    gap = line[amount.end():kw.start()]
                    near = len(gap) <= _PNL_BEFORE and _BEFORE_GAP.fullmatch(gap) is not None
                else:
                    continue
                if near and not _CLAUSE_BREAK.search(gap):
                    hits.append(("trading figure (P&L)", amount.start() + len(text) - len(text.lstrip()), amount.end()))
