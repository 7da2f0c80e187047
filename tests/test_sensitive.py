from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.sensitive import REDACTED, Finding, has_sensitive, kinds, redact, scan

_CORPUS_PATH = Path(__file__).parent / "data" / "secrets_corpus.py"
_spec = importlib.util.spec_from_file_location("secrets_corpus", _CORPUS_PATH)
assert _spec is not None and _spec.loader is not None
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

SAMPLE = Path(__file__).resolve().parent.parent / "sample_memory"
ALL_POSITIVES = corpus.POSITIVES + corpus.DETECT_SECRETS_POSITIVES
POSITIVE_IDS = [f"{i}-{kind}" for i, (kind, _, _) in enumerate(ALL_POSITIVES)]
CORPUS_POSITIVES = 261  # quoted in README.md
CORPUS_LOOKALIKES = 182


def _detected(kind: str, text: str, values: list[str]) -> bool:
    out = redact(text)
    return kind in kinds(text) and has_sensitive(text) and not any(v in out for v in values)


def _untouched(text: str) -> bool:
    return scan(text) == [] and not has_sensitive(text) and redact(text) == text and kinds(text) == []


@pytest.mark.parametrize(("kind", "text", "values"), ALL_POSITIVES, ids=POSITIVE_IDS)
def test_positive_is_found_and_redacted(kind: str, text: str, values: list[str]) -> None:
    assert kind in kinds(text)
    assert has_sensitive(text)
    out = redact(text)
    for value in values:
        assert value not in out
    assert REDACTED in out


@pytest.mark.parametrize(("kind", "text", "values"), ALL_POSITIVES, ids=POSITIVE_IDS)
def test_redacted_text_is_clean_and_stable(kind: str, text: str, values: list[str]) -> None:
    out = redact(text)
    assert not has_sensitive(out)
    assert redact(out) == out
    assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize("text", corpus.LOOKALIKES)
def test_lookalike_is_untouched(text: str) -> None:
    assert scan(text) == []
    assert not has_sensitive(text)
    assert redact(text) == text


def test_rates() -> None:
    # every positive caught with its kind and every look-alike kept, counted both ways
    found = sum(_detected(*p) for p in ALL_POSITIVES)
    false_pos = sum(not _untouched(t) for t in corpus.LOOKALIKES)
    assert (found, len(ALL_POSITIVES)) == (CORPUS_POSITIVES, CORPUS_POSITIVES)
    assert (false_pos, len(corpus.LOOKALIKES)) == (0, CORPUS_LOOKALIKES)


def test_findings_never_carry_the_value() -> None:
    for _, text, values in ALL_POSITIVES:
        rendered = repr(scan(text)) + str(kinds(text))
        for value in values:
            assert value not in rendered
    assert [f.name for f in dataclasses.fields(Finding)] == ["kind", "line", "start", "end"]


def test_finding_is_frozen() -> None:
    f = Finding("password", 1, 2, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.kind = "x"  # type: ignore[misc]


def test_lines_and_offsets_point_at_the_value() -> None:
    key = corpus.GITHUB_CLASSIC
    text = "first line\r\nsecond: nothing here\r\n  token for CI " + key + " ok\r\n"
    (f,) = scan(text)
    assert (f.kind, f.line) == ("GitHub token", 3)
    assert text.split("\n")[2][f.start:f.end] == key
    assert redact(text) == "first line\r\nsecond: nothing here\r\n  token for CI [REDACTED] ok\r\n"


def test_trading_spans_cover_the_figures() -> None:
    line = "今日 NVDA 持仓 1200 股，成本价 31.5，浮盈 +18,400 元"
    spans = {f.kind: line[f.start:f.end] for f in scan(line)}
    assert spans == {
        "trading figure (holdings)": "1200 股",
        "trading figure (cost basis)": "成本价 31.5",
        "trading figure (P&L)": "+18,400 元",
    }
    assert redact(line) == "今日 NVDA 持仓 [REDACTED]，[REDACTED]，浮盈 [REDACTED]"


EXACT = [
    ("GH_TOKEN=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 (rotated)", "GH_TOKEN=[REDACTED] (rotated)"),
    ("https://api.telegram.org/bot110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw/getMe",
     "https://api.telegram.org/[REDACTED]/getMe"),
    ("password: Tr0ub4dor&3", "password: [REDACTED]"),
    ("数据库密码：Xk9#pq72，别外传", "数据库密码：[REDACTED]，别外传"),
    ("登入密碼為「Mao&Mao1998」", "登入密碼為「[REDACTED]」"),
    ("jdbc:mysql://db/app?user=app&password=Wq3rty9z&ssl=true", "jdbc:mysql://db/app?user=app&password=[REDACTED]&ssl=true"),
    ("postgres://app:s3cretPw@db:5432/x", "postgres://app:[REDACTED]@db:5432/x"),
    ("mysql://root:p@ss-w0rd!@127.0.0.1:3306/app", "mysql://root:[REDACTED]@127.0.0.1:3306/app"),
    ("curl -H 'Authorization: Bearer abcDEF123456ghiJKL789' x", "curl -H 'Authorization: Bearer [REDACTED]' x"),
    ("今日 NVDA 持仓 1200 股，成本价 31.5，浮盈 +18,400 元", "今日 NVDA 持仓 [REDACTED]，[REDACTED]，浮盈 [REDACTED]"),
    ("今日 TSLA 持倉 300 股，成本價 212.8，浮虧 -3,200 元", "今日 TSLA 持倉 [REDACTED]，[REDACTED]，浮虧 [REDACTED]"),
    ("Holding 1,500 shares of AAPL at avg cost $172.40, unrealized P&L +$5,400",
     "Holding [REDACTED] of AAPL at [REDACTED], unrealized P&L [REDACTED]"),
    ("$5,400 unrealized gain; stop loss at -8%", "[REDACTED] unrealized gain; stop loss at -8%"),
    ("Visa 4111 1111 1111 1111 exp 09/29", "Visa [REDACTED] exp 09/29"),
    ("身份证号 11010519491231002X。", "身份证号 [REDACTED]。"),
    # labelled values in the wrappings transcripts carry: a tag, an escaped JSON string, a table cell, a space
    ("<token>Ab3dEf6hIj9kLm2nOp5qRs8tUv1w</token>", "<token>[REDACTED]</token>"),
    ('{\\"token\\": \\"Ab3dEf6hIj9kLm2nOp5qRs8tUv1w\\"}', '{\\"token\\": \\"[REDACTED]\\"}'),
    ("| gateway token | Ab3dEf6hIj9kLm2nOp5qRs8tUv1w |", "| gateway token | [REDACTED] |"),
    ("Gateway token 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a6978 (from onboard)",
     "Gateway token [REDACTED] (from onboard)"),
    ("令牌（生产）：Ab3dEf6hIj9kLm2nOp5qRs8tUv1w", "令牌（生产）：[REDACTED]"),
    # a live stream's key, after its Chinese name and a space
    ("new 推流码 live_8Rk2Pq7wXz4N pasted into OBS only.", "new 推流码 [REDACTED] pasted into OBS only."),
    ("串流金鑰：live_3Hn8Qw2eRt6Y", "串流金鑰：[REDACTED]"),
    ("<task-notification>token: Ab3dEf6hIj9kLm2nOp5qRs8tUv1w</task-notification>",
     "<task-notification>token: [REDACTED]</task-notification>"),
]


@pytest.mark.parametrize(("text", "expected"), EXACT)
def test_redact_exact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_pem_block_every_line_flagged() -> None:
    text = "before\n" + corpus.PEM_ENCRYPTED + "\nafter"
    lines = text.split("\n")
    flagged = {f.line for f in scan(text)}
    expected = {i + 1 for i, line in enumerate(lines) if line.strip() and line not in ("before", "after")}
    assert flagged == expected
    out = redact(text).split("\n")
    assert out[0] == "before" and out[-1] == "after"
    assert all(line in ("", REDACTED) for line in out[1:-1])


def test_unterminated_pem_stops_at_prose() -> None:
    text = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(corpus.PEM_BODY[:2]) + "\n(truncated, see vault)"
    assert [f.line for f in scan(text)] == [1, 2, 3]
    assert redact(text).endswith("\n(truncated, see vault)")


def test_kinds_are_distinct_in_order() -> None:
    text = f"a {corpus.AWS_KEY_ID}\nb {corpus.GITHUB_CLASSIC}\nc {corpus.AWS_KEY_ID}"
    assert kinds(text) == ["AWS access key", "GitHub token"]


def test_sample_memory_only_planted_lines() -> None:
    flagged = set()
    for path in sorted(SAMPLE.rglob("*")):
        if path.suffix not in {".md", ".jsonl", ".toml"}:
            continue
        for f in scan(path.read_text(encoding="utf-8")):
            flagged.add((path.relative_to(SAMPLE).as_posix(), f.line, f.kind))
    assert flagged == {
        ("memory/2026-11-26.md", 5, "GitHub token"),
        ("memory/2026-11-27.md", 5, "trading figure (holdings)"),
        ("memory/2026-11-27.md", 5, "trading figure (cost basis)"),
        ("memory/2026-11-27.md", 5, "trading figure (P&L)"),
    }


def test_import_is_cheap() -> None:
    code = "import sys, memgit.sensitive; print('detect_secrets' in sys.modules, 'requests' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_gate_data_is_the_installed_plugins_patterns() -> None:
    """The published gate holds exactly the patterns of the detect-secrets installed (CI installs it):
    a gate missing a pattern would let a line that pattern flags pass unscanned."""
    import json
    from importlib.resources import files

    from memgit import sensitive

    data = json.loads(files("memgit.data").joinpath(sensitive.DS_GATE_DATA).read_text(encoding="utf-8"))
    if data["fingerprint"] != sensitive.detect_secrets_fingerprint():
        pytest.skip("another detect-secrets is installed: run the data's written_by command")
    assert sensitive._ds_gate() is not None
    assert data["patterns"] == sensitive.ds_gate_data()["patterns"]
    assert set(data["patterns"]) == {p[0] for p in sensitive._DS_PLUGINS}


def test_lines_no_plugin_pattern_matches_never_import_detect_secrets() -> None:
    code = ("import sys; from memgit.sensitive import has_sensitive as h\n"
            "print(h('- committed heartbeat-consolidation-model.py and sleep-spindle-scorer.py'),"
            " 'detect_secrets' in sys.modules)\n"
            "print(h('token ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'), 'detect_secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "True", "True"]


def test_without_the_gate_every_plugin_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Data written for another detect-secrets is not used: the plugins decide, as before."""
    from memgit import sensitive

    monkeypatch.setattr(sensitive, "detect_secrets_fingerprint", lambda: "another version")
    sensitive._ds_gate.cache_clear()
    try:
        assert sensitive._ds_gate() is None
        assert kinds("token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8") == ["GitHub token"]
        assert not has_sensitive("- committed heartbeat-consolidation-model.py")
    finally:
        monkeypatch.undo()
        sensitive._ds_gate.cache_clear()


def _ordinary_log(n: int) -> str:
    lines = []
    for path in sorted(SAMPLE.rglob("*.md")):
        lines += [ln for ln in path.read_text(encoding="utf-8").splitlines() if not has_sensitive(ln)]
    lines += list(corpus.LOOKALIKES)
    return "\n".join(lines[i % len(lines)] for i in range(n))


def _growth(fn: Callable[[str], object], small: str, big: str) -> float:
    """How many times longer `fn` takes on `big` than on `small`, best of several runs each: a ratio, so it
    holds on a slow or busy machine (the absolute speed targets are benchmarks/run.py's, not a test's). The
    inputs differ sixteenfold, so linear (16x) and quadratic (256x) lie far apart and a bound of 64x leaves
    a factor of four of noise either way (a fourfold step with a bound of 8x failed once on a busy CI)."""
    fn(small)  # warm-up: compiles rules and imports detect-secrets
    return min(_timed(fn, big) for _ in range(3)) / max(min(_timed(fn, small) for _ in range(7)), 1e-6)


def test_scan_time_grows_linearly_with_the_log() -> None:
    growth = _growth(scan, _ordinary_log(500), _ordinary_log(8000))
    assert growth < 64, f"16x the lines took {growth:.1f}x the time (linear: 16, quadratic: 256)"


def _long_line(k: int) -> str:
    return " ".join([corpus.GITHUB_CLASSIC] * 4 * k) + " 持仓 " + "100 股，" * 4 * k + "盈亏 +1,000 " * k


def test_long_lines_stay_linear() -> None:
    assert len(scan(_long_line(500))) == 2000 + 2000 + 500
    growth = _growth(scan, _long_line(125), _long_line(2000))
    assert growth < 64, f"a line 16x as long took {growth:.1f}x the time (linear: 16, quadratic: 256)"


def _timed(fn: Callable[[str], object], arg: str) -> float:
    t0 = time.perf_counter()
    fn(arg)
    return time.perf_counter() - t0


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_redact_only_changes_flagged_spans(text: str) -> None:
    findings = scan(text)
    assert has_sensitive(text) == bool(findings)
    out = redact(text)
    assert out.count("\n") == text.count("\n")
    if not findings:
        assert out == text
    for f in findings:
        line = text.split("\n")[f.line - 1]
        assert 0 <= f.start < f.end <= len(line)


@settings(max_examples=100, deadline=None)
@given(
    st.text(alphabet="abc 持仓，:\n", max_size=30),
    st.sampled_from([p for p in corpus.POSITIVES if "\n" not in p[1]]),
    st.text(alphabet="xyz 。\n", max_size=30),
)
def test_positive_found_in_surrounding_text(before: str, positive: tuple[str, str, list[str]], after: str) -> None:
    kind, text, values = positive
    whole = before + "\n" + text + "\n" + after
    assert kind in kinds(whole)
    out = redact(whole)
    assert not any(v in out for v in values)
    assert out.startswith(before + "\n") and out.endswith("\n" + after)


def test_a_rejected_keyword_does_not_hide_the_password_after_it():
    from memgit import sensitive

    line = "- 密码 password: hunter2-Horse!9"
    assert sensitive.kinds(line) == ["password"]
    assert "hunter2-Horse!9" not in sensitive.redact(line)


@pytest.mark.parametrize("line", [
    "- **Gateway token:** `0123456789abcdef0123456789abcdef0123456789abcdef`",
    "- Current token (2026-03-15): `Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0h`",
    "NVIDIA key nvapi-Q3wm8Lt0aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
    "Brave: BSAq7Lm2Xp9Tz4RwKc8NvYh3Qs5Dm1",
    "registry npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "Senha: Tr0ub4dor&3x", "Contraseña: hunter22!", "Mot de passe : sEcr3t99", "Passwort: Geheim123!",
    # a name written as code labels its value with no separator ("applicationKey …", "keyID …")
    "新建了一个 key（keyID 0052f8c1e9a7b3d0000000004，applicationKey K005vN8qR2tYx7LmW3pZs9HcJ6dFa1Bg）",
    "rotated it: secretToken Qm7xR2pL9vT4wZ8kN3bY6cH1",
])
def test_credential_forms_seen_in_real_memories(line):
    assert has_sensitive(line)
    assert REDACTED in redact(line)


@pytest.mark.parametrize("line", ["token count (approx): 12345678 words", "the passport number field is optional",
                                  "Gateway token rotated on 2026-03-15", "npm_config_cache is set",
                                  "keyID of the bucket is unknown", "Key ID card renewal 20260517"])
def test_their_look_alikes_are_not(line):
    assert not has_sensitive(line)


_KEYWORDY = st.lists(st.sampled_from([
    "key", "Key", "token", "TOKEN", "secret", "auth", "pass", "PASSWORD", "pwd", "密码", "令牌", "密鑰", "api_",
    "encryption_", "refresh-", "cost", "Price", "average ", "basis", "paid ", "成本", "均价", "持仓", " ", ":", "：",
    "=", '"', "\\", "(x)", " is ", " to ", "|", ">", "$", "1,200.5", "Ab3dEf6hIj9kLm2nOp5q", "xy", "İ", "-",
]), max_size=14).map("".join)


def _same_matches(text: str, pos: int = 0) -> None:
    from memgit import sensitive

    for rx in (sensitive._PASSWORD, sensitive._ASSIGNMENT, sensitive._LABELLED, sensitive._COST_BASIS):
        assert [m.span() for m in rx.finditer(text)] == [m.span() for m in rx.regex.finditer(text)], text
        found, plain = rx.search(text, pos), rx.regex.search(text, pos)
        assert (found and found.span()) == (plain and plain.span()), text


def test_anchored_regexes_match_like_the_plain_ones_on_every_label_form() -> None:
    # every qualifier before every word, after a word and after a letter, with each separator
    words = ["key", "Key", "token", "secret", "password", "pwd", "cost", "price", "basis", "paid", "密码", "令牌", "成本"]
    qualifiers = ["", "api_", "API ", "encryption_", "refresh-", "client_", "average ", "purchase ", "持仓", "x"]
    seps = [": ", "=", " is ", " ", "：", " $"]
    for q, w, sep in itertools.product(qualifiers, words, seps):
        for text in (f"{q}{w}{sep}Ab3dEf6hIj9kLm2nOp5q 1,200.5", f"the {q}{w}{sep}'Xk9#pq72' and {q}{w}{sep}318.6"):
            _same_matches(text)
    for _, text, _ in corpus.POSITIVES:
        for line in text.split("\n"):
            _same_matches(line)
    for line in corpus.LOOKALIKES:
        _same_matches(line)


@settings(max_examples=300, deadline=None)
@given(_KEYWORDY, st.integers(min_value=0, max_value=40))
def test_anchored_regexes_match_like_the_plain_ones(text: str, pos: int) -> None:
    # the rule families try their patterns only near their words: the matches must be the same
    _same_matches(text, pos)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(("name", "block", "secret_lines"), [
    ("pem", corpus.PEM_PKCS8, corpus.PEM_BODY),
    ("pgp", corpus.PGP_PRIVATE, corpus.PGP_BODY),
    ("ppk", corpus.PPK, [*corpus.PPK_PRIVATE, corpus.PPK_MAC]),
], ids=["pem", "pgp", "ppk"])
def test_key_blocks_in_a_real_git_diff_are_redacted(tmp_path: Path, name: str, block: str,
                                                    secret_lines: list[str]) -> None:
    # show / pr / web redact the unified diff of a proposal: adding a key and pruning it both
    # put a "+" or "-" before every line of the block
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    memory = repo / "MEMORY.md"
    memory.write_text("# MEMORY\n\n- [P1] deploy key for h1:\n" + block + "\n- [P2] other fact\n", encoding="utf-8")
    _git(repo, "add", "MEMORY.md")
    _git(repo, "commit", "-q", "-m", "with the key")
    memory.write_text("# MEMORY\n\n- [P2] other fact\n", encoding="utf-8")
    for diff in (_git(repo, "diff"), _git(repo, "diff", "-R")):
        out = redact(diff)
        assert not any(value in out for value in secret_lines)
        assert out.count("\n") == diff.count("\n")
        assert "deploy key for h1" in out and "other fact" in out  # prose around the block survives
        # each line keeps its diff prefix, so the redacted diff is still a diff
        assert [ln[:1] for ln in out.split("\n")] == [ln[:1] for ln in diff.split("\n")]


def test_ppk_public_lines_and_headers_survive() -> None:
    out = redact(corpus.PPK)
    assert corpus.PPK_PUBLIC in out and "Encryption: none" in out and "Private-MAC: [REDACTED]" in out
    assert kinds("PuTTY-User-Key-File-2: ssh-rsa") == ["private key"]


def test_a_plus_that_begins_a_base64_line_is_not_taken_for_a_diff_prefix() -> None:
    text = "-----BEGIN PRIVATE KEY-----\n+" + corpus.PEM_BODY[0][1:] + "\n-----END PRIVATE KEY-----"
    assert redact(text).split("\n")[1] == REDACTED


def test_readme_quotes_the_corpus_figures() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert f"{CORPUS_POSITIVES} positive forms and {CORPUS_LOOKALIKES} look-alikes" in readme


@pytest.mark.parametrize("line, secret", [
    ("+ office wifi while she was at it: CrumbBack / Sourd0ugh!Knead26", "Sourd0ugh!Knead26"),
    ("店里 WLAN：Home5G／x9Kp#22", "x9Kp#22"),
])
def test_a_network_name_and_password_pair_is_a_password(line, secret):
    assert secret not in redact(line) and has_sensitive(line)


@pytest.mark.parametrize("line", ["wifi: 2.4 / 5 GHz bands", "wifi router: TP-Link / Archer",
                                  "Wi-Fi: guest network / see the card"])
def test_a_wifi_line_without_a_password_is_left_alone(line):
    assert redact(line) == line


@pytest.mark.parametrize("line", ["收银系统后台密码改成 lhs_Kitchen#8812 了", "密碼改為 Qs1#4b2030", "密码设成了 Xy7#kkq2",
                                  "the wifi password changed to Xy7#kkq2pq", "router password is now Xy7#kkq2pq"])
def test_a_password_said_changed_to_its_new_value_is_found(line: str) -> None:
    assert kinds(line) == ["password"] and "[REDACTED]" in redact(line)


@pytest.mark.parametrize("line", ["password changed to the one in 1Password", "密码改成 生日了", "password was reset to default"])
def test_a_password_change_told_without_a_value_is_no_secret(line: str) -> None:
    assert not has_sensitive(line)


@pytest.mark.parametrize("line, secret", [
    ("set up the rota app, temp login for everyone = Harbour!Deck24 , change on first login", "Harbour!Deck24"),
    ("後台登入：Kx9!ab77ff 記得改", "Kx9!ab77ff"),
])
def test_a_login_given_out_with_a_password_s_look_is_a_password(line, secret):
    assert secret not in redact(line) and has_sensitive(line)


@pytest.mark.parametrize("line", ["login: dana.whitlock", "Login: admin@harbour.org", "sign-in: v2.3.1 page",
                                  "login page: /admin", "登录：2026-09-12 起用新系统"])
def test_a_login_s_user_name_page_or_version_is_left_alone(line):
    assert redact(line) == line
