"""Corpus for tests/test_sensitive.py: real-looking positives and look-alikes.

Every credential here is fake. Values are built at import time from a seeded RNG so
each one matches its provider's format without a real-looking key sitting in the
source (which would trip secret scanners on this repository). A few strings are
copied verbatim from detect-secrets' own test suite (Yelp/detect-secrets,
tests/plugins/*_test.py); they are public test fixtures.

POSITIVES: (expected kind, text, values that redact() must remove entirely)
LOOKALIKES: text that must come back from scan() empty and from redact() unchanged
"""
from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20261130)

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"


def _rand(n: int, alphabet: str = ALNUM) -> str:
    """n random characters, with at least one upper, lower and digit when the alphabet has them."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        wanted = [cls for cls in (string.ascii_uppercase, string.ascii_lowercase, string.digits)
                  if any(c in cls for c in alphabet)]
        if all(any(c in cls for c in value) for cls in wanted):
            return value


def _digits(n: int) -> str:
    return str(_rng.randint(1, 9)) + "".join(_rng.choice(string.digits) for _ in range(n - 1))


def _b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def chinese_id(region: str, birth: str, seq: str) -> str:
    body = region + birth + seq
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return body + "10X98765432"[sum(int(d) * w for d, w in zip(body, weights)) % 11]


def luhn_complete(prefix: str) -> str:
    """prefix plus the check digit that makes it pass Luhn."""
    for check in "0123456789":
        digits = [int(c) for c in prefix + check]
        total = 0
        for i, d in enumerate(reversed(digits)):
            if i % 2:
                d = d * 2 - 9 if d > 4 else d * 2
            total += d
        if total % 10 == 0:
            return prefix + check
    raise AssertionError("unreachable")


def _group4(number: str, sep: str) -> str:
    return sep.join(number[i:i + 4] for i in range(0, len(number), 4))


# --- fake credentials in each provider's format ---------------------------------

AWS_KEY_ID = "AKIA" + _rand(16, UPPER_DIGITS)
AWS_SECRET = _rand(40, ALNUM + "/+")
GITHUB_CLASSIC = "ghp_" + _rand(36)
GITHUB_OAUTH = "gho_" + _rand(36)
GITHUB_FINE = "github_pat_11" + _rand(20, UPPER_DIGITS) + "_" + _rand(59)
GITLAB_PAT = "glpat-" + _rand(20, URLSAFE)
SLACK_BOT = "xoxb-" + _digits(12) + "-" + _digits(13) + "-" + _rand(24)
SLACK_USER = "xoxp-" + _digits(12) + "-" + _digits(12) + "-" + _digits(13) + "-" + _rand(32, "abcdef0123456789")
SLACK_HOOK = ("https://hooks.slack.com/services/T" + _rand(8, UPPER_DIGITS) + "/B" + _rand(10, UPPER_DIGITS)
              + "/" + _rand(24))
STRIPE_LIVE = "sk_live_51" + _rand(97)
STRIPE_RESTRICTED = "rk_live_" + _rand(24)
GOOGLE_KEY = "AIza" + _rand(35, URLSAFE)
OPENAI_PROJECT = "sk-proj-" + _rand(74, URLSAFE) + "T3BlbkFJ" + _rand(74, URLSAFE)
OPENAI_LEGACY = "sk-" + _rand(48)
ANTHROPIC = "sk-ant-api03-" + _rand(93, URLSAFE) + "AA"
HUGGING_FACE = "hf_" + _rand(34, string.ascii_letters)
SENDGRID = "SG." + _rand(22, URLSAFE) + "." + _rand(43, URLSAFE)
TELEGRAM = _digits(10) + ":AA" + _rand(33, URLSAFE)
JWT = (_b64url({"alg": "HS256", "typ": "JWT"}) + "."
       + _b64url({"sub": "agent-qianqian", "iat": 1764460800, "scope": "memory:write"}) + "."
       + _rand(43, URLSAFE))
_PEM_B64 = base64.b64encode(_rng.randbytes(300)).decode()
PEM_BODY = [_PEM_B64[i:i + 64] for i in range(0, len(_PEM_B64), 64)]
MAILCHIMP = _rand(32, string.ascii_lowercase + string.digits) + "-us14"
TWILIO = "SK" + _rand(32, string.ascii_lowercase + string.digits)
SQUARE = "sq0csp-" + _rand(43, URLSAFE)
AZURE = _rand(86, ALNUM + "+/") + "=="
DISCORD = "M" + _rand(23, URLSAFE) + "." + _rand(6, URLSAFE) + "." + _rand(27, URLSAFE)
PYPI = "pypi-AgEIcHlwaS5vcmc" + _rand(80, URLSAFE)
DB_PASSWORD = _rand(18)
MONGO_PASSWORD = _rand(16)
REDIS_PASSWORD = _rand(24)
AMQP_PASSWORD = _rand(12)
GENERIC_API_KEY = _rand(32, "abcdef0123456789")
GENERIC_TOKEN = _rand(40, URLSAFE)
GENERIC_SECRET = _rand(48, ALNUM + "+/")
BEARER = _rand(48, URLSAFE)
ID_BEIJING = chinese_id("110105", "19880317", "123")
ID_SHENZHEN_X = next(
    i for i in (chinese_id("440305", "19920704", f"{n:03d}") for n in range(1000)) if i.endswith("X")
)
ID_SHANGHAI = chinese_id("310104", "20010214", "045")
CARD_UNIONPAY_19 = luhn_complete("621700" + _digits(12))
CARD_VISA_16 = luhn_complete("4" + _digits(14))
CARD_MASTER_16 = luhn_complete("5" + _digits(14))


def _pem(label: str, headers: tuple[str, ...] = ()) -> str:
    lines = [f"-----BEGIN {label}-----", *headers, *PEM_BODY, f"-----END {label}-----"]
    return "\n".join(lines)


PEM_RSA = _pem("RSA PRIVATE KEY")
PEM_PKCS8 = _pem("PRIVATE KEY")
PEM_OPENSSH = _pem("OPENSSH PRIVATE KEY")
PEM_ENCRYPTED = _pem("RSA PRIVATE KEY", ("Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,3F2A9C1D4E5B6A7F", ""))
PEM_EC = _pem("EC PRIVATE KEY")

# --- positives ------------------------------------------------------------------

POSITIVES: list[tuple[str, str, list[str]]] = [
    # AWS
    ("AWS access key", f"export AWS_ACCESS_KEY_ID={AWS_KEY_ID}", [AWS_KEY_ID]),
    ("AWS access key", f"用 {AWS_KEY_ID} 这把 key 上传到 S3 了", [AWS_KEY_ID]),
    ("secret", f"aws_secret_access_key = {AWS_SECRET}", [AWS_SECRET]),
    ("AWS access key", f'aws_key = "{AWS_SECRET}"', [AWS_SECRET]),
    # GitHub
    ("GitHub token", f"- 11:05 Rotated the CI bot token: GH_TOKEN={GITHUB_CLASSIC} (in Actions)", [GITHUB_CLASSIC]),
    ("GitHub token", f"OAuth app token {GITHUB_OAUTH} expires tomorrow", [GITHUB_OAUTH]),
    ("GitHub token", f"新的 fine-grained PAT：{GITHUB_FINE}", [GITHUB_FINE]),
    # GitLab
    ("GitLab token", f"gitlab runner uses {GITLAB_PAT}", [GITLAB_PAT]),
    # Slack
    ("Slack token", f"SLACK_BOT_TOKEN={SLACK_BOT}", [SLACK_BOT]),
    ("Slack token", f"user token 是 {SLACK_USER}，別外傳", [SLACK_USER]),
    ("Slack webhook", f"告警发到 {SLACK_HOOK} 这个 webhook", [SLACK_HOOK]),
    # Stripe
    ("Stripe API key", f"STRIPE_SECRET_KEY={STRIPE_LIVE}", [STRIPE_LIVE]),
    ("Stripe API key", f"restricted key for reporting: {STRIPE_RESTRICTED}", [STRIPE_RESTRICTED]),
    # Google
    ("Google API key", f"Maps 用的 key：{GOOGLE_KEY}", [GOOGLE_KEY]),
    ("Google API key", f"GOOGLE_API_KEY={GOOGLE_KEY}", [GOOGLE_KEY]),
    # OpenAI
    ("OpenAI API key", f"OPENAI_API_KEY={OPENAI_PROJECT}", [OPENAI_PROJECT]),
    ("OpenAI API key", f"old key {OPENAI_LEGACY} was revoked", [OPENAI_LEGACY]),
    # Anthropic
    ("Anthropic API key", f"ANTHROPIC_API_KEY={ANTHROPIC}", [ANTHROPIC]),
    ("Anthropic API key", f"dream backend 用 {ANTHROPIC} 跑", [ANTHROPIC]),
    # Hugging Face
    ("Hugging Face token", f"huggingface-cli login --token {HUGGING_FACE}", [HUGGING_FACE]),
    ("Hugging Face token", f"HF_TOKEN：{HUGGING_FACE}", [HUGGING_FACE]),
    # SendGrid
    ("SendGrid API key", f"sendgrid key {SENDGRID} for the newsletter", [SENDGRID]),
    # Telegram
    ("Telegram bot token", f"Telegram bot token：{TELEGRAM}", [TELEGRAM]),
    ("Telegram bot token", f"https://api.telegram.org/bot{TELEGRAM}/getMe", [TELEGRAM]),
    # JWT
    ("JSON Web Token", f"session cookie = {JWT}", [JWT]),
    ("bearer token", f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.internal", [BEARER]),
    # providers only detect-secrets knows
    ("Mailchimp API key", f"mailchimp: {MAILCHIMP}", [MAILCHIMP]),
    ("Twilio API key", f"twilio api key sid {TWILIO} for SMS", [TWILIO]),
    ("Square OAuth secret", f"square oauth {SQUARE}", [SQUARE]),
    ("Azure storage key",
     f"DefaultEndpointsProtocol=https;AccountName=jwbackup;AccountKey={AZURE};EndpointSuffix=core.windows.net",
     [AZURE]),
    ("Discord bot token", f"discord bot 用 {DISCORD} 登录", [DISCORD]),
    ("PyPI token", f"twine upload -p {PYPI}", [PYPI]),
    # PEM private keys (multi-line: every body line must go)
    ("private key", PEM_RSA, PEM_BODY),
    ("private key", PEM_PKCS8, PEM_BODY),
    ("private key", PEM_OPENSSH, PEM_BODY),
    ("private key", PEM_ENCRYPTED, PEM_BODY),
    ("private key", "deploy key:\n" + PEM_EC + "\nthat's the one on h1", PEM_BODY),
    ("private key", '{"key": "' + PEM_PKCS8.replace("\n", "\\n") + '"}', PEM_BODY),
    # connection strings
    ("connection string with credentials",
     f"DATABASE_URL=postgres://app:{DB_PASSWORD}@db.internal:5432/prod", [DB_PASSWORD]),
    ("connection string with credentials",
     f"mongo 连接串：mongodb+srv://admin:{MONGO_PASSWORD}@cluster0.ab1cd.mongodb.net/?retryWrites=true",
     [MONGO_PASSWORD]),
    ("connection string with credentials", f"cache at redis://:{REDIS_PASSWORD}@10.0.0.5:6379/0", [REDIS_PASSWORD]),
    ("connection string with credentials", f"amqp://guest:{AMQP_PASSWORD}@mq.internal:5672/", [AMQP_PASSWORD]),
    ("connection string with credentials", "mysql://root:p@ss-w0rd!@127.0.0.1:3306/app", ["p@ss-w0rd!"]),
    # passwords, English + Simplified + Traditional Chinese
    ("password", "password: Tr0ub4dor&3", ["Tr0ub4dor&3"]),
    ("password", "DB_PASSWORD=s3cr3t-Pa55", ["s3cr3t-Pa55"]),
    ("password", "passwd=qwerty789", ["qwerty789"]),
    ("password", "ssh h1 with pwd: Kx8!pz2Q", ["Kx8!pz2Q"]),
    ("password", 'password = "correct horse battery staple"', ["correct horse battery staple"]),
    ("password", "The admin password is Zq7!mP2x, change it after the demo.", ["Zq7!mP2x"]),
    ("password", "NAS 的密码是 hunter2024，记一下", ["hunter2024"]),
    ("password", "数据库密码：Xk9#pq72", ["Xk9#pq72"]),
    ("password", "路由器密碼：Gr33n-Tea!", ["Gr33n-Tea!"]),
    ("password", "WiFi 密码 Jw2026home", ["Jw2026home"]),
    ("password", "管理后台口令是 Ab12cd34", ["Ab12cd34"]),
    ("password", "登入密碼為「Mao&Mao1998」", ["Mao&Mao1998"]),
    ("password", "JDBC: jdbc:mysql://db:3306/app?user=app&password=Wq3rty9z&ssl=true", ["Wq3rty9z"]),
    # api_key= / token: / secret= assignments
    ("API key", f"api_key={GENERIC_API_KEY}", [GENERIC_API_KEY]),
    ("API key", f'"apiKey": "{GENERIC_API_KEY}"', [GENERIC_API_KEY]),
    ("token", f"token: {GENERIC_TOKEN}", [GENERIC_TOKEN]),
    ("token", f"Notion integration access_token = '{GENERIC_TOKEN}'", [GENERIC_TOKEN]),
    ("secret", f"secret={GENERIC_SECRET}", [GENERIC_SECRET]),
    ("secret", f"client_secret: {GENERIC_SECRET}", [GENERIC_SECRET]),
    ("secret", f"Flask SECRET_KEY：{GENERIC_API_KEY}", [GENERIC_API_KEY]),
    ("token", f"访问令牌：{GENERIC_TOKEN}", [GENERIC_TOKEN]),
    ("secret", f"API 密鑰是 {GENERIC_API_KEY}", [GENERIC_API_KEY]),
    # Chinese resident ID numbers
    ("Chinese ID number", f"身份证号 {ID_BEIJING}", [ID_BEIJING]),
    ("Chinese ID number", f"身份證號碼：{ID_SHENZHEN_X}", [ID_SHENZHEN_X]),
    ("Chinese ID number", f"ID number {ID_SHANGHAI} on the lease", [ID_SHANGHAI]),
    # bank cards
    ("bank card number", f"工资卡 {CARD_UNIONPAY_19}", [CARD_UNIONPAY_19]),
    ("bank card number", f"Visa {_group4(CARD_VISA_16, ' ')} exp 09/29", [_group4(CARD_VISA_16, " ")]),
    ("bank card number", f"信用卡號：{_group4(CARD_MASTER_16, '-')}", [_group4(CARD_MASTER_16, "-")]),
    ("bank card number", f"储蓄卡 {_group4(CARD_UNIONPAY_19, ' ')}", [_group4(CARD_UNIONPAY_19, " ")]),
    # trading figures: Simplified
    ("trading figure (holdings)", "今日 NVDA 持仓 1200 股，成本价 31.5，浮盈 +18,400 元", ["1200", "31.5", "18,400"]),
    ("trading figure (cost basis)", "- 15:00 今日 NVDA 持仓 800 股，成本价 118.4，浮盈 +6,200 元。", ["800", "118.4", "6,200"]),
    ("trading figure (P&L)", "今天盈亏 -3,200，明天再看", ["3,200"]),
    ("trading figure (holdings)", "持仓：600519 20 手，000001 3,000 股", ["20 手", "3,000"]),
    ("trading figure (cost basis)", "买入价 45.2 元，亏损 ¥3,600", ["45.2", "3,600"]),
    ("trading figure (P&L)", "本月已实现收益 +12,500 元", ["12,500"]),
    # trading figures: Traditional
    ("trading figure (holdings)", "今日 TSLA 持倉 300 股，成本價 212.8，浮虧 -3,200 元", ["300 股", "212.8", "3,200"]),
    ("trading figure (P&L)", "騰訊盈虧 +9,870 港元", ["9,870"]),
    ("trading figure (cost basis)", "0700 買入價 HK$320.4", ["320.4"]),
    # trading figures: English
    ("trading figure (holdings)", "Holding 1,500 shares of AAPL at avg cost $172.40, unrealized P&L +$5,400",
     ["1,500", "172.40", "5,400"]),
    ("trading figure (holdings)", "NVDA position: 800 shares, cost basis 118.4, PnL -2,150", ["800", "118.4", "2,150"]),
    ("trading figure (P&L)", "$5,400 unrealized gain on MSFT so far", ["5,400"]),
    ("trading figure (P&L)", "realized profit $12,300 this quarter", ["12,300"]),
    ("trading figure (P&L)", "Today's P&L: -$1,250.50", ["1,250.50"]),
    ("trading figure (P&L)", "+18,400 元浮盈，比昨天多", ["18,400"]),
    ("trading figure (P&L)", "浮盈 +1.8 万元，浮亏 -2,000", ["1.8", "2,000"]),
    ("trading figure (holdings)", "I bought 200 shares of NVDA at $118.4", ["200", "118.4"]),
    ("trading figure (holdings)", "卖出 600519 20 手 @ ¥1,650.5", ["20 手", "1,650.5"]),
    ("trading figure (holdings)", "NVDA 800 shares, cost basis 118.4", ["800", "118.4"]),
    ("trading figure (holdings)", "AAPL 300 股 still held", ["300"]),
    ("basic auth credentials", "Authorization: Basic am93OnMzY3JldC1wYXNz", ["am93OnMzY3JldC1wYXNz"]),
]

# Strings from detect-secrets' own test suite (Yelp/detect-secrets tests/plugins/).
DETECT_SECRETS_POSITIVES: list[tuple[str, str, list[str]]] = [
    ("AWS access key", "AKIAZZZZZZZZZZZZZZZZ", ["AKIAZZZZZZZZZZZZZZZZ"]),
    ("GitHub token", "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", ["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"]),
    ("Slack token", "xoxp-523423-234243-234233-e039d02840a0b9379c", ["e039d02840a0b9379c"]),
    ("Slack token", "xoxb-34532454-e039d02840a0b9379c", ["e039d02840a0b9379c"]),
    ("Slack token", "xoxa-2-511111111-31111111111-3111111111111-e039d02840a0b9379c", ["e039d02840a0b9379c"]),
    ("Slack webhook", "https://hooks.slack.com/services/Txxxxxxxx/Bxxxxxxxx/xxxxxxxxxxxxxxxxxxxxxxxx",
     ["xxxxxxxxxxxxxxxxxxxxxxxx"]),
    ("JSON Web Token",
     ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2"
      "MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
     ["SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"]),
    ("connection string with credentials", "https://username:password@yelp.com", [":password@"]),
    ("Stripe API key", "sk_live_ReTllpYQYfIZu2Jnf2lAPFjD", ["ReTllpYQYfIZu2Jnf2lAPFjD"]),
    ("Stripe API key", "rk_live_5TcWfjKmJgpql9hjpRnwRXbT", ["5TcWfjKmJgpql9hjpRnwRXbT"]),
    ("Telegram bot token", "bot110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw", ["AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw"]),
    ("Telegram bot token", "7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM", ["AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM"]),
    ("GitLab token", "glpat-hellOworld380_testin", ["hellOworld380_testin"]),
    ("GitLab token", "gldt-HwllOuhfw-wu0rlD_yep", ["HwllOuhfw-wu0rlD_yep"]),
    ("SendGrid API key", "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",
     ["ngeVfQFYQlKU0ufo8x5d1A"]),
    ("OpenAI API key", "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", ["Xi8tcNiHV9awbCcvilTeT3BlbkFJ"]),
    ("OpenAI API key", "sk-proj-Xi8tdMjHV6pmbBbwilTeT3BlbkFJ3UDnpdEwNNm6wVBpYM0o", ["Xi8tdMjHV6pmbBbwilTeT3"]),
]

# --- look-alikes that must survive untouched ---------------------------------------

LOOKALIKES: list[str] = [
    # a code that opens nothing, and a small count after it ("code review", a code of conduct)
    "the store code review took 3 hours, it's 2 PRs left",
    "zip code is 94107 for the invoices",
    # versions, hashes, dates, times
    "- [P1] Hermes gateway runs v0.13 behind nginx on h1 (2026-09-02)",
    "- 15:10 Upgraded the Hermes gateway on h1 from v0.13 to v0.17; config migration was painless, /healthz 200.",
    "- [P1] Playwright MCP pinned to 0.0.41 because 0.0.42 broke screenshots (2026-10-10)",
    "Python 3.12.1 and Node 20.11.0-alpine on the runner",
    "fixed in commit 3f2a9c1d",
    "reverted 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b after the incident",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "2026-05-28 08:30 daily run finished",
    "log rotated at 2026-05-28T08:30:00+08:00",
    "request id 550e8400-e29b-41d4-a716-446655440000 timed out once",
    # trading rules, prices and percentages in rules
    "- [P1] 持仓卖出规则：-8% 硬止损，不犹豫 (2026-07-12)",
    "Rule: -8% stop loss, no exceptions",
    "take profit at +15%, trail the rest",
    "止盈 +15%，止损 -8%",
    "Refunds over $500 need a second approver",
    "- [P1] 持仓日报每天 08:30 生成，数据源 Tushare (2026-09-20)",
    "- 08:31 持仓日报 08:30 正常生成。",
    "P&L report goes out at 17:00 every Friday",
    "盈亏日报 17:00 发出，周末不发",
    "cost basis is tracked in the broker app, not here",
    "成本降低 20%，收益率提高 3%",
    "profit margin 12% this year",
    "training loss 0.35, val loss 0.41 after epoch 3",
    "position: absolute; top: 8px; z-index: 10",
    "仓位 30%，单票不超过 10%",
    "position sizing: 2% risk per trade",
    "budget $500, profit share TBD",
    "Costs: $300/month for the NAS; no profit yet",
    "GPU 0 shares memory with the display",
    "I bought 3 coffees at $4.5",
    "she is in position 3 of the queue",
    # passwords and secrets mentioned, not given
    "use a password manager for anything like that",
    "密码这类敏感信息我不会写进长期记忆",
    "口令和密码都不要写进记忆，放 1Password",
    "密碼學課程第 3 講",
    "- Secrets live in 1Password vault \"agent\"; never store them here",
    "password reset link expires in 24 h",
    "password: ********",
    "password: <your password here>",
    "export PWD=/home/jw/projects/memgit",
    "api_key: ${OPENAI_API_KEY}",
    "token: YOUR_TOKEN_HERE",
    "GH_TOKEN is stored in GitHub Actions secrets",
    "- 11:40 Notion MCP 502 終於修好了：原因是 integration token 過期，重新授權 integration 之後 sync 正常。",
    "API key rotation happens monthly",
    "Bearer tokens expire after 1 h",
    "max_tokens = 4096",
    "token count: 1234, token limit 200k",
    "JWT_EXPIRY=3600",
    "postgres://app:${DB_PASSWORD}@db:5432/app",
    "token expiry: 2026-05-28T08:30:00Z",
    "OPENAI_API_KEY is read from the environment",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    'password: os.environ["DB_PASSWORD"]',
    "password = getpass()",
    "DB_PASSWORD=$(cat /run/secrets/db)",
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
    "commit 7bb7120 Core: memory model",
    "docker pull ghcr.io/org/app@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    # URLs, ports, hosts
    "localhost:8080",
    "- 10:40 Cockpit v1 已 push 到 main，并部署到 h1，地址 https://cockpit.example.internal",
    "postgres://localhost:5432/app",
    "redis://cache:6379/0",
    "git clone ssh://git@github.com/jw/memgit.git",
    "https://jw@example.com and 10.0.0.5:6379",
    "see https://github.com/@jw and https://example.com/a?b=c@d",
    # plain numbers with units
    "16 kHz mono, 30 MB per hour of audio",
    "- [P2] Benchmark: FastAPI cold start 1.8 s on h1, fine for now (2026-10-22)",
    "timestamp 1716883200123 ms",
    "call +86 138 0013 8000 if the NAS is down",
    "order 110105194912310021 shipped",  # 18 digits, wrong ID checksum, no card prefix
    "ISBN 978-7-111-54742-6",
    "build 20261130.1 is green",
    # look-alike tokens
    "scikit-learn vs sk-learn-compatible-estimator wrappers",
    "use hf_hub_download(repo_id=...) to fetch it",
    "xoxo, Jw",
    "sk-ant-api03-short",
    "cache key ZmFrZS1jYWNoZS1rZXktZm9yLXRlc3Rz is rebuilt nightly",
    # detect-secrets' own negatives (Yelp/detect-secrets tests/plugins/)
    "akiazzzzzzzzzzzzzzzz",
    "AKIAZZZ",
    "foo_wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx",
    "pk_live_j5krY8XTgIcDaHDb3YrsAfCl",
    "sk_live_",
    "foo:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM",
    "glpat_hellOworld380_testin",
    "gldt-seems_too000Sshorty",
    "http://localhost:5000/<%= @variable %>",
    "eyJAAAA.eyJBBB",
    "eyJBB.eyJCC.eyJDDDD",
    "AG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
    "bm90X3ZhbGlkX2pzb25fYXRfYWxs.bm90X3ZhbGlkX2pzb25fYXRfYWxs.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
]

# --- forms added later: more providers, labelled values, CLI passwords, cards, trading figures ----
# (generated after everything above, so the values above do not change)

HEX = "0123456789abcdef"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def _uuid() -> str:
    h = _rand(32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


MAILGUN = "key-" + _rand(32, HEX)
DOCKER_AUTH = base64.b64encode(b"jw:" + _rand(14).encode()).decode()
DISCORD_HOOK = "https://discord.com/api/webhooks/" + _digits(19) + "/" + _rand(68, URLSAFE)
DIGITALOCEAN = "dop_v1_" + _rand(64, HEX)
SHOPIFY_AT = "shpat_" + _rand(32, HEX)
SHOPIFY_SS = "shpss_" + _rand(32, HEX)
SQUARE_AT = "EAAA" + _rand(60, URLSAFE)
SQUARE_OLD = "sq0atp-" + _rand(22, URLSAFE)
HEROKU = _uuid()
TWILIO_AUTH = _rand(32, HEX)
AZURE_STORAGE = _rand(86, ALNUM + "+/") + "=="
AGE_KEY = "AGE-SECRET-KEY-1" + "".join(_rng.choice(BECH32) for _ in range(58))
VAULT = "hvs." + _rand(95, URLSAFE)
DATABRICKS = "dapi" + _rand(32, HEX)
NOTION_LEGACY = "secret_" + _rand(43)
NOTION = "ntn_" + _digits(11) + _rand(35)
LINEAR = "lin_api_" + _rand(40)
SESSION_COOKIE = _rand(32, string.ascii_lowercase + string.digits)
PERPLEXITY = "pplx-" + _rand(48)
POSTMAN = "PMAK-" + _rand(24, HEX) + "-" + _rand(34, HEX)
PULUMI = "pul-" + _rand(40, HEX)
SENTRY_USER = "sntryu_" + _rand(64, HEX)
GRAFANA_SA = "glsa_" + _rand(32) + "_" + _rand(8, HEX)
ALIBABA = "LTAI" + _rand(20)
SENDINBLUE = "xkeysib-" + _rand(64, HEX) + "-" + _rand(16)
PREFECT = "pnu_" + _rand(36)
RUBYGEMS = "rubygems_" + _rand(48, HEX)
DOPPLER = "dp.pt." + _rand(43)
NEW_RELIC = "NRAK-" + _rand(27, UPPER_DIGITS)
PLANETSCALE = "pscale_tkn_" + _rand(43, URLSAFE)
DB_PASS = _rand(12)
NETRC_PASS = _rand(16)
MYSQL_PASS = _rand(10)
CURL_PASS = _rand(12)
SSHPASS = _rand(10)
ACCOUNT_KEY_B64 = _rand(42, ALNUM + "+/") + "="
CARD_AMEX = luhn_complete("37" + _digits(12))
CARD_DINERS = luhn_complete("3056" + _digits(9))
GENERIC_HIGH_ENTROPY = _rand(40, URLSAFE)


def _amex_group(n: str) -> str:
    return f"{n[:4]} {n[4:10]} {n[10:]}"


MORE_POSITIVES: list[tuple[str, str, list[str]]] = [
    # providers
    ("Mailgun API key", f"MAILGUN_API_KEY={MAILGUN}", [MAILGUN]),
    ("Mailgun API key", f"mailgun 用 {MAILGUN} 发信", [MAILGUN]),
    ("basic auth credentials", '{"auths": {"ghcr.io": {"auth": "' + DOCKER_AUTH + '"}}}', [DOCKER_AUTH]),
    ("Discord webhook", f"告警也发 Discord：{DISCORD_HOOK}", [DISCORD_HOOK]),
    ("DigitalOcean token", f"doctl auth init -t {DIGITALOCEAN}", [DIGITALOCEAN]),
    ("Shopify token", f"SHOPIFY_ACCESS_TOKEN={SHOPIFY_AT}", [SHOPIFY_AT]),
    ("Shopify token", f"shared secret {SHOPIFY_SS} for the webhook", [SHOPIFY_SS]),
    ("Square access token", f"square prod token {SQUARE_AT}", [SQUARE_AT]),
    ("Square access token", f"old square key {SQUARE_OLD} revoked?", [SQUARE_OLD]),
    ("Heroku API key", f"heroku: {HEROKU}", [HEROKU]),
    ("Heroku API key", f"the heroku api key {HEROKU} is on the NAS", [HEROKU]),
    ("Twilio auth token", f"twilio auth token {TWILIO_AUTH}", [TWILIO_AUTH]),
    ("Twilio auth token", f"TWILIO_AUTH_TOKEN={TWILIO_AUTH}", [TWILIO_AUTH]),
    ("secret", f"AZURE_STORAGE_KEY={AZURE_STORAGE}", [AZURE_STORAGE]),
    ("age secret key", f"备份用的 age key：{AGE_KEY}", [AGE_KEY]),
    ("Vault token", f"logged in to vault with {VAULT} this morning", [VAULT]),
    ("Databricks token", f"databricks configure, token {DATABRICKS}", [DATABRICKS]),
    ("Notion token", f"Notion integration secret {NOTION_LEGACY}", [NOTION_LEGACY]),
    ("Notion token", f"NOTION_TOKEN={NOTION}", [NOTION]),
    ("Linear API key", f"linear key {LINEAR}", [LINEAR]),
    ("session cookie", f"Cookie: sessionid={SESSION_COOKIE}; csrftoken=abc", [SESSION_COOKIE]),
    ("Perplexity API key", f"pplx key {PERPLEXITY}", [PERPLEXITY]),
    ("Postman API key", f"postman {POSTMAN}", [POSTMAN]),
    ("Pulumi token", f"PULUMI_ACCESS_TOKEN={PULUMI}", [PULUMI]),
    ("Sentry token", f"sentry-cli uses {SENTRY_USER}", [SENTRY_USER]),
    ("Grafana token", f"grafana service account {GRAFANA_SA}", [GRAFANA_SA]),
    ("Alibaba access key", f"aliyun AccessKeyId {ALIBABA}", [ALIBABA]),
    ("Sendinblue API key", f"brevo {SENDINBLUE}", [SENDINBLUE]),
    ("Prefect API key", f"prefect cloud login -k {PREFECT}", [PREFECT]),
    ("RubyGems API key", f"gem push with {RUBYGEMS}", [RUBYGEMS]),
    ("Doppler token", f"doppler {DOPPLER}", [DOPPLER]),
    ("New Relic API key", f"newrelic user key {NEW_RELIC}", [NEW_RELIC]),
    ("PlanetScale token", f"pscale {PLANETSCALE}", [PLANETSCALE]),
    # a label, in any of its forms, before a high-entropy value
    ("secret", f"**Storage account key:** `{ACCOUNT_KEY_B64}`", [ACCOUNT_KEY_B64]),
    ("token", f"Deploy token (prod, rotated): {GENERIC_HIGH_ENTROPY}", [GENERIC_HIGH_ENTROPY]),
    ("secret", f"webhook_signing_secret = \"{GENERIC_HIGH_ENTROPY}\"", [GENERIC_HIGH_ENTROPY]),
    ("token", f"refreshToken: '{GENERIC_HIGH_ENTROPY}'", [GENERIC_HIGH_ENTROPY]),
    ("secret", f"金鑰：{GENERIC_HIGH_ENTROPY}", [GENERIC_HIGH_ENTROPY]),
    ("token", f"令牌 {GENERIC_HIGH_ENTROPY}", [GENERIC_HIGH_ENTROPY]),
    ("password", f"wachtwoord: {DB_PASS}", [DB_PASS]),
    ("password", f"пароль: {DB_PASS}", [DB_PASS]),
    ("password", f"**Contraseña:** {DB_PASS}", [DB_PASS]),
    # passwords in configs and command lines
    ("password", f"db_pass: {DB_PASS}", [DB_PASS]),
    ("password", f"SMTP_PASS={DB_PASS}", [DB_PASS]),
    ("password", f"machine api.example.internal login jw password {NETRC_PASS}", [NETRC_PASS]),
    ("password", f"mysql -u root -p{MYSQL_PASS} app < dump.sql", [MYSQL_PASS]),
    ("password", f"curl -u jw:{CURL_PASS} https://nas.example.internal/api", [CURL_PASS]),
    ("password", f"sshpass -p '{SSHPASS}' ssh jw@h1", [SSHPASS]),
    ("password", f"pg_dump --password={MYSQL_PASS} app", [MYSQL_PASS]),
    ("password", "NAS 的密码就是 jw19880317", ["jw19880317"]),
    ("password", "路由器密碼就是 Tea4two!", ["Tea4two!"]),
    ("PIN", "银行卡 PIN 码是 4827", ["4827"]),
    ("PIN", "門禁 PIN 碼：906512", ["906512"]),
    # a customer's credit limit
    ("credit limit", "順便記住金滿庭 credit limit 加到 HK$300,000", ["300,000"]),
    ("credit limit", "Acme's credit limit is now $50,000", ["50,000"]),
    ("credit limit", "华丰酒楼信用额度调到 30 万", ["30 万"]),
    # a code that opens a gate, a door, an alarm or a key safe
    ("access code", "Low Farm owner texted new gate code 4471# - forwarded to Dale", ["4471"]),
    ("access code", "key safe code is 0815, front door key inside", ["0815"]),
    ("access code", "alarm code changed to 20931 after the break-in", ["20931"]),
    ("access code", "Door code: 5560*", ["5560"]),
    ("access code", "门禁密码改成 3391# 了", ["3391"]),
    ("access code", "後門門鎖密碼 7720，別外傳", ["7720"]),
    ("access code", "大门密码 860217", ["860217"]),
    # a store's or a shed's code, and a code named first and given later in the line
    ("access code", "bike shed code 2294, tell the new lads", ["2294"]),
    ("access code", "someone asked for the boat store code on the forum, told them ask Kev (it's 5173, not posting it)", ["5173"]),
    # cards: Amex (15 digits) and Diners (14 digits)
    ("bank card number", f"Amex {_amex_group(CARD_AMEX)} exp 11/28", [_amex_group(CARD_AMEX)]),
    ("bank card number", f"公司卡 {CARD_AMEX}", [CARD_AMEX]),
    ("bank card number", f"Diners {CARD_DINERS[:4]} {CARD_DINERS[4:10]} {CARD_DINERS[10:]}",
     [f"{CARD_DINERS[:4]} {CARD_DINERS[4:10]} {CARD_DINERS[10:]}"]),
    ("bank card number", f"diners club card {CARD_DINERS}", [CARD_DINERS]),
    # trading figures: holdings and their value
    ("trading figure (holdings)", "仓位 65 万，明天再加一点", ["65 万"]),
    ("trading figure (holdings)", "倉位 40 萬，先不動", ["40 萬"]),
    ("trading figure (holdings)", "持仓市值 82.4 万元", ["82.4"]),
    ("trading figure (holdings)", "總資產 NT$4,250,000，比上月多", ["4,250,000"]),
    ("trading figure (holdings)", "总资产 153 万", ["153 万"]),
    ("trading figure (holdings)", "台積電持股市值 NT$3,250,000", ["3,250,000"]),
    ("trading figure (holdings)", "portfolio worth $412,000 as of today", ["412,000"]),
    ("trading figure (holdings)", "long 500 TSLA into earnings", ["500 TSLA"]),
    ("trading figure (holdings)", "short 1,200 shares of NIO", ["1,200"]),
    # cost basis
    ("trading figure (cost basis)", "NVDA 成本 318.6，先拿着", ["318.6"]),
    ("trading figure (cost basis)", "摊薄成本 27.35 元", ["27.35"]),
    ("trading figure (cost basis)", "攤薄成本 27.35", ["27.35"]),
    ("trading figure (cost basis)", "my basis is $41.20 on AMD", ["41.20"]),
    ("trading figure (cost basis)", "paid $172 a share for AAPL", ["172"]),
    # P&L
    ("trading figure (P&L)", "这周赚了 2.3 万", ["2.3 万"]),
    ("trading figure (P&L)", "這週賺了 1.2 萬", ["1.2 萬"]),
    ("trading figure (P&L)", "昨天亏损 4200", ["4200"]),
    ("trading figure (P&L)", "昨天虧損 4200", ["4200"]),
    ("trading figure (P&L)", "lost 4,500 dollars on the options", ["4,500"]),
    ("trading figure (P&L)", "NVDA is up $3,200 on the position", ["3,200"]),
    ("trading figure (P&L)", "up $3,200 on NVDA since Monday", ["3,200"]),
    # brokerage account numbers
    ("brokerage account number", "IBKR account U4829173", ["U4829173"]),
    ("brokerage account number", "资金账号 310012345678", ["310012345678"]),
    ("brokerage account number", "證券帳號：9801234567", ["9801234567"]),
]
POSITIVES += MORE_POSITIVES

MORE_LOOKALIKES: list[str] = [
    # versions, commit ids and checksums in prose, dates, times, ports, issue numbers
    "upgraded to v2.3.1, then v2.3.2-rc.1",
    "fixed in a1b2c3d, see the changelog",
    "the regression came in with 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "checksum e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 matches the release page",
    "SHA-256 of the ISO: 5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef",
    "meeting moved to 2026-12-03 14:30 (UTC+8)",
    "the job ran 03:15–03:42",
    "nginx listens on 443 and 8443; grafana on :3000",
    "closes #4821, see also issue 1337",
    # UUIDs used as ids in prose are kept: they name a thing, they grant nothing
    "workspace id 9b2f6c1e-4d7a-4f3e-8a1b-2c3d4e5f6a7b in the dashboard",
    "trace 3f2a9c1d-4e5b-4a7f-8091-a2b3c4d5e6f7 shows the retry",
    # trading rules, targets and percentages are not the user's figures
    "-8% 硬止损，不讨论",
    "stop loss at -8%, take profit at +20%",
    "倉位上限 80%，現金至少留兩成",
    "仓位控制在五成以内",
    "总资产配置：股票 60%，债券 40%",
    "成本降低 20%，收益率提高 3%",
    "VPS 成本 100 元/月，够用",
    "总资产 2026 年目标：先不定",
    "portfolio rebalancing happens quarterly",
    "long-term holders only; short squeeze risk noted",
    "a long 200 ms pause before the retry",
    "up 3% today on the index",
    "the price went up $5 after the announcement of the dividend",
    "lost 3 hours to the flaky test",
    "account U-turn policy changed",
    "资金账号只在券商 app 里查看",
    "PIN 码不要写进记忆",
    "credit limit check failed on the card, retry tomorrow",
    "授信额度由财务核定，不写进记忆 (2026-05-01)",
    "gate code is on the fridge, never text it",
    "door code changed again, ask Sam for it",
    "error code 404 on the booking page",
    "postcode NE46 3AB for the yard",
    "门禁密码只在老板手机里",
    "the access code field on the sign-up form is optional",
    "pin the version to 1.2.3",
    # labelled values that are not secrets
    "sort_key: created_at_desc",
    "primary_key: user_id_v2",
    "auth: enabled",
    "auth: oauth2-proxy",
    "token_limit: 200000",
    "cache_key_prefix = memgit-recall-v1",
    "password_min_length: 12",
    "pass rate: 97.5%",
    "all tests pass: 354 of 354",
    "login with jw, password in 1Password",
    "mysql -u root -p app",
    "curl -u \"$USER:$PASS\" https://example.internal",
    "the machine login page moved",
    "sessionid= is set by Django after login",
    "secret_sauce_recipe is a joke variable name",
    # card-length numbers that are not cards
    "order 371449635398432 is the tracking number",
    "build 30569309025905 finished",
]
LOOKALIKES += MORE_LOOKALIKES

# private key blocks whose every line carries a prefix: a unified diff's "-" / "+" / " ",
# markdown quotes and list items; PGP armour; PuTTY .ppk files
_PGP_B64 = base64.b64encode(_rng.randbytes(240)).decode()
PGP_BODY = [_PGP_B64[i:i + 64] for i in range(0, len(_PGP_B64), 64)]
PGP_PRIVATE = "\n".join(["-----BEGIN PGP PRIVATE KEY BLOCK-----", "Comment: backup of jw@h1", "",
                         *PGP_BODY, "=" + _rand(4), "-----END PGP PRIVATE KEY BLOCK-----"])
PPK_PUBLIC = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519" + _rng.randbytes(36)).decode()
_PPK_PRIVATE_B64 = base64.b64encode(_rng.randbytes(90)).decode()
PPK_PRIVATE = [_PPK_PRIVATE_B64[i:i + 64] for i in range(0, len(_PPK_PRIVATE_B64), 64)]
PPK_MAC = _rand(64, HEX)
PPK = "\n".join(["PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none", "Comment: eddsa-key-20261130",
                 "Public-Lines: 1", PPK_PUBLIC, f"Private-Lines: {len(PPK_PRIVATE)}", *PPK_PRIVATE,
                 f"Private-MAC: {PPK_MAC}"])


def prefixed(block: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in block.split("\n"))


BLOCK_POSITIVES: list[tuple[str, str, list[str]]] = [
    ("private key", PGP_PRIVATE, PGP_BODY),
    ("private key", prefixed(PEM_PKCS8, "-"), PEM_BODY),  # a diff pruning the key
    ("private key", prefixed(PEM_OPENSSH, "+"), PEM_BODY),  # a diff adding it
    ("private key", prefixed(PEM_RSA, " "), PEM_BODY),  # diff context
    ("private key", prefixed(PEM_EC, "> "), PEM_BODY),  # a markdown quote
    ("private key", "- deploy key:\n" + prefixed(PEM_PKCS8, "  - "), PEM_BODY),  # a list item
    ("private key", prefixed(PGP_PRIVATE, "-"), PGP_BODY),
    ("private key", PPK, [*PPK_PRIVATE, PPK_MAC]),
    ("private key", prefixed(PPK, "-"), [*PPK_PRIVATE, PPK_MAC]),
]
POSITIVES += BLOCK_POSITIVES

# --- token kinds real agent transcripts carry (generated after everything above) ----------------
# Shapes from each vendor's docs and gitleaks' / betterleaks' rules: npm "npm_" + 36, PyPI macaroons
# "pypi-AgEIcHlwaS5vcmc…" (TestPyPI "pypi-AgENdGVzdC5weXBpLm9yZw…"), Docker Hub "dckr_pat_" + 27,
# Groq "gsk_" + 52, Replicate "r8_" + 37, OpenRouter "sk-or-v1-" + 64 hex, Tavily "tvly-[dev-]" + 32,
# NVIDIA "nvapi-" + 64, Cloudflare API tokens (40, no prefix) and global keys (37 hex), Brave Search
# keys ("BSA…" or 31 characters, sent as X-Subscription-Token), OpenClaw / Hermes gateway tokens
# (48 or 64 hex: `openssl rand -hex`, gateway.auth.token in openclaw.json, OPENCLAW_GATEWAY_TOKEN).

NPM = "npm_" + _rand(36)
PYPI_LONG = "pypi-AgEIcHlwaS5vcmc" + _rand(150, URLSAFE)
PYPI_SHORT = "pypi-AgEIcHlwaS5vcmc" + _rand(56, URLSAFE)  # shorter than detect-secrets' 70
TESTPYPI = "pypi-AgENdGVzdC5weXBpLm9yZw" + _rand(120, URLSAFE)
DOCKER_PAT = "dckr_pat_" + _rand(27, URLSAFE)
DOCKER_OAT = "dckr_oat_" + _rand(32, URLSAFE)
CLOUDFLARE_TOKEN = _rand(40, URLSAFE)
CLOUDFLARE_GLOBAL = _rand(37, HEX)
NVIDIA = "nvapi-" + _rand(64, URLSAFE)
BRAVE = _rand(31)
BRAVE_BSA = "BSA" + _rand(28)
GATEWAY_48 = _rand(48, HEX)
GATEWAY_64 = _rand(64, HEX)
GATEWAY_URLSAFE = _rand(43, URLSAFE)
HF_NEW = "hf_" + _rand(34, string.ascii_letters)
GROQ = "gsk_" + _rand(52)
REPLICATE = "r8_" + _rand(37)
OPENROUTER = "sk-or-v1-" + _rand(64, HEX)
TAVILY = "tvly-" + _rand(32)
TAVILY_DEV = "tvly-dev-" + _rand(32)
TELEGRAM_2 = _digits(10) + ":AA" + _rand(33, URLSAFE)
LABELLED = _rand(40, URLSAFE)
LABELLED_B64 = _rand(43, ALNUM + "+/") + "="

TRANSCRIPT_POSITIVES: list[tuple[str, str, list[str]]] = [
    # package registries
    ("npm token", f"//registry.npmjs.org/:_authToken={NPM}", [NPM]),
    ("npm token", f"npm 发布用的 token 是 {NPM}", [NPM]),
    ("PyPI token", f"twine upload -u __token__ -p {PYPI_SHORT} dist/*", [PYPI_SHORT]),
    ("PyPI token", f"~/.pypirc: password = {PYPI_LONG}", [PYPI_LONG]),
    ("PyPI token", f"TestPyPI 的 token：{TESTPYPI}", [TESTPYPI]),
    ("Docker Hub token", f"echo {DOCKER_PAT} | docker login -u jw --password-stdin", [DOCKER_PAT]),
    ("Docker Hub token", f"組織 token {DOCKER_OAT} 只給 CI 用", [DOCKER_OAT]),
    # Cloudflare: no prefix, known by its label
    ("Cloudflare API key", f"CLOUDFLARE_API_TOKEN={CLOUDFLARE_TOKEN}", [CLOUDFLARE_TOKEN]),
    ("Cloudflare API key", f"Cloudflare global API key: {CLOUDFLARE_GLOBAL}", [CLOUDFLARE_GLOBAL]),
    ("secret", f"curl -H 'X-Auth-Key: {CLOUDFLARE_GLOBAL}' https://api.cloudflare.com/client/v4/user", [CLOUDFLARE_GLOBAL]),
    # model and search APIs
    ("NVIDIA API key", f"NVIDIA_API_KEY={NVIDIA}", [NVIDIA]),
    ("API key", f"BRAVE_API_KEY={BRAVE}", [BRAVE]),
    ("token", f"curl -H \"X-Subscription-Token: {BRAVE}\" https://api.search.brave.com/res/v1/web/search", [BRAVE]),
    ("Brave Search API key", f"Brave 搜索的 key：{BRAVE_BSA}", [BRAVE_BSA]),
    ("Hugging Face token", f"export HF_TOKEN={HF_NEW}", [HF_NEW]),
    ("Groq API key", f"client = Groq(api_key=\"{GROQ}\")", [GROQ]),
    ("Groq API key", f"换成 {GROQ} 之后 429 没了", [GROQ]),
    ("Replicate API token", f"REPLICATE_API_TOKEN={REPLICATE}", [REPLICATE]),
    ("Replicate API token", f"replicate 用 {REPLICATE} 跑", [REPLICATE]),
    ("OpenRouter API key", f"OPENROUTER_API_KEY={OPENROUTER}", [OPENROUTER]),
    ("OpenRouter API key", f"fallback model via openrouter, key {OPENROUTER}", [OPENROUTER]),
    ("Tavily API key", f"TAVILY_API_KEY={TAVILY_DEV}", [TAVILY_DEV]),
    ("Tavily API key", f"搜尋改用 Tavily，金鑰 {TAVILY}", [TAVILY]),
    ("Telegram bot token", f"channels.telegram.botToken: \"{TELEGRAM_2}\"", [TELEGRAM_2]),
    # OpenClaw / Hermes gateway tokens
    ("token", f"OPENCLAW_GATEWAY_TOKEN={GATEWAY_48}", [GATEWAY_48]),
    ("token", f"Gateway token {GATEWAY_48} (from openclaw onboard)", [GATEWAY_48]),
    ("token", f"openclaw config set gateway.auth.token \"{GATEWAY_64}\"", [GATEWAY_64]),
    ("token", f"openclaw gateway --token {GATEWAY_64}", [GATEWAY_64]),
    ("token", f'  "gateway": {{ "auth": {{ "mode": "token", "token": "{GATEWAY_48}" }} }},', [GATEWAY_48]),
    ("token", f"    \"token\": \"{GATEWAY_URLSAFE}\",", [GATEWAY_URLSAFE]),
    ("token", f"set OPENCLAW_GATEWAY_TOKEN to {GATEWAY_URLSAFE} on h1", [GATEWAY_URLSAFE]),
    ("token", f"Hermes 网关令牌：{GATEWAY_64}", [GATEWAY_64]),
    ("token", f"http://127.0.0.1:18789/?token={GATEWAY_48}", [GATEWAY_48]),
    # labelled high-entropy values, in any language and wrapping
    ("token", f"token: {LABELLED}", [LABELLED]),
    ("secret", f"密钥：{LABELLED}", [LABELLED]),
    ("token", f"令牌={LABELLED}", [LABELLED]),
    ("secret", f"金鑰: {LABELLED}", [LABELLED]),
    ("secret", f"API 密鑰 {LABELLED}", [LABELLED]),
    ("token", f"令牌（生产环境）：{LABELLED}", [LABELLED]),
    ("API key", f'{{"apiKey": "{LABELLED}", "baseUrl": "https://api.example.internal"}}', [LABELLED]),
    ("token", f'{{\\"token\\": \\"{LABELLED}\\", \\"mode\\": \\"token\\"}}', [LABELLED]),
    ("token", f"  access_token: {LABELLED_B64}", [LABELLED_B64]),
    ("token", f"<task-notification><summary>deploy done</summary> token: {LABELLED}</task-notification>",
     [LABELLED]),
    ("token", f"<token>{LABELLED}</token>", [LABELLED]),
    ("secret", f"<apiKey>{LABELLED}</apiKey>", [LABELLED]),
    ("token", f"| gateway token | {LABELLED} |", [LABELLED]),
    ("secret", f"the API key {LABELLED} works again", [LABELLED]),
    ("token", f"Access Token {LABELLED_B64}", [LABELLED_B64]),
    ("token", f"huggingface-cli login --token {LABELLED}", [LABELLED]),
]
POSITIVES += TRANSCRIPT_POSITIVES

TRANSCRIPT_LOOKALIKES: list[str] = [
    # placeholders and truncated examples of the new prefixes
    "npm_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "npm_config_registry=https://registry.npmjs.org/",
    "twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmc…",
    "docker login -u jw -p dckr_pat_xxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "GROQ_API_KEY=gsk_your_groq_api_key_here",
    "r8_**********************************",
    "OPENROUTER_API_KEY=sk-or-v1-...",
    "TAVILY_API_KEY=tvly-YOUR_API_KEY",
    "nvapi-xxxx is what the NGC page shows",
    # labels followed by ordinary words, placeholders, references
    "token: <your-token>",
    "gateway token: <your-gateway-token>",
    "OPENCLAW_GATEWAY_TOKEN=${OPENCLAW_GATEWAY_TOKEN}",
    "X-Subscription-Token: $BRAVE_API_KEY",
    "CLOUDFLARE_API_TOKEN=your-cloudflare-api-token",
    '"token": "replace-me"',
    "apiKey: process.env.BRAVE_API_KEY",
    "密钥：请去 1Password 里找",
    "令牌=已过期，需要重新生成",
    "金鑰: 尚未設定",
    "API 密鑰 每月輪換一次",
    "token: refresh-on-expiry",
    "the gateway token rotated at 03:00 and the agents reconnected",
    "Gateway token is set via gateway.auth.token",
    "openclaw config get gateway.auth.token",
    # short ids, git SHAs and UUIDs after a label in prose
    "api key abc123 is the test tenant",
    "access token 7bb7120 in the changelog",
    "deploy key 9fceb02d0ae598e95dc970b74767f19372d61af8 was the commit that added it",
    "access token 3f2a9c1d-4e5b-4a7f-8091-a2b3c4d5e6f7 was revoked",
    "<task-notification>task 550e8400-e29b-41d4-a716-446655440000 completed</task-notification>",
    "cache key for tokens: memgit-recall-v1",
    "<token>redacted</token>",
    "| token | expires |",
    "--token-limit 200000",
    "gpg --default-key 3AA5C34371567BD2 --sign notes.md",
    "signing key 9FCEB02D0AE598E95DC970B74767F19372D61AF8 (the release key's fingerprint)",
]
LOOKALIKES += TRANSCRIPT_LOOKALIKES
