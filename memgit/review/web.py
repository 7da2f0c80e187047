"""`memgit serve`: a local review site on the standard library's http.server.

Pages are jinja2 templates (`templates/review_*.html.j2`, autoescaped: memory
text is untrusted). Security model:

- every page lives under a random secret path prefix (`/s/<random>/…`); a request
  outside it is refused (403);
- every request must carry the server's random access token, as `?token=` or,
  after the first visit, in a cookie (HttpOnly, SameSite=Strict) whose Path is that
  prefix. Cookies ignore ports, so a cookie with Path=/ would also go to every other
  service on the same host; scoped to a path no other server knows, it never leaves;
- GET never changes anything; every change is a POST carrying a second,
  separate CSRF token embedded in the page's forms (and, when the browser
  sends them, a same-origin Origin and Sec-Fetch-Site);
- requests are dispatched through a fixed route table and proposal ids must
  match the id pattern, so no part of a URL ever reaches the filesystem;
- on a loopback address the Host header must name it (no DNS rebinding);
- responses forbid scripts, framing and foreign form targets (CSP).
"""
from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
import socket
import sys
import threading
import traceback
from collections.abc import Callable
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from memgit import journal, proposals, sensitive
from memgit.errors import ConflictError, MemgitError, NotFoundError, SensitiveDataError
from memgit.render import render
from memgit.review import common
from memgit.workspace import Workspace

_ID = r"[0-9a-f]{4,40}"
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("GET", re.compile(r"/"), "index"),
    ("GET", re.compile(rf"/p/(?P<id>{_ID})"), "proposal"),
    ("GET", re.compile(r"/history"), "history"),
    ("POST", re.compile(rf"/p/(?P<id>{_ID})/(?P<action>approve|reject|edit|revert)"), "action"),
]
MAX_BODY = 64 * 1024
HISTORY_LIMIT = 200
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
DONE = {
    "approved": "Approved {id}: main changed.",
    "rejected": "Rejected {id}; the same change will not be proposed again.",
    "edited": "Approved the edited proposal {id}; the original was closed.",
    "reverted": "Reverted {id} with a new commit on main.",
}


class ReviewServer(ThreadingHTTPServer):
    """The review site for one workspace; `url` carries the access token."""

    daemon_threads = True
    allow_reuse_address = True
    # listen backlog: the default 5 resets connections when a page's burst of parallel requests
    # (or a script) arrives faster than the accept loop; the kernel caps it at net.core.somaxconn
    request_queue_size = 256

    def __init__(self, root: Path, host: str = "127.0.0.1", port: int = 0,
                 log: Callable[[str], None] | None = None):
        self.root = Path(root)
        self.host = host
        self.token = secrets.token_urlsafe(32)
        self.prefix = "/s/" + secrets.token_urlsafe(16)  # where every page lives; see the module docstring
        self.csrf = secrets.token_urlsafe(32)
        self.write_lock = threading.Lock()
        self.log = log
        Workspace(self.root)  # a wrong folder fails here, before the port opens
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def home(self) -> str:
        """The list page's address (without the token)."""
        return f"{self.base}{self.prefix}/"

    @property
    def url(self) -> str:
        return f"{self.home}?token={self.token}"

    @property
    def cookie_name(self) -> str:
        return f"memgit_token_{self.port}"  # two servers' cookies never collide, whatever their paths

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def allowed_hosts(self) -> set[str]:
        names = {self.host, "localhost", "127.0.0.1", "[::1]"}
        return {f"{n}:{self.port}" for n in names} | {f"[{self.host}]:{self.port}"}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(root: Path, host: str = "127.0.0.1", port: int = 0) -> ReviewServer:
    """A bound (not yet serving) review server; call `.serve_forever()`."""
    return ReviewServer(root, host, port)


class Handler(BaseHTTPRequestHandler):
    server: ReviewServer
    server_version = "memgit"

    def version_string(self) -> str:
        return self.server_version

    # -- plumbing -------------------------------------------------------
    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def log_message(self, format: str, *args) -> None:
        if self.server.log:
            self.server.log(format % args)

    def _handle(self, method: str) -> None:
        try:
            self._dispatch(method)
        except Exception:  # noqa: BLE001 (a bug: keep the traceback on the server's stderr, answer 500)
            traceback.print_exc(file=sys.stderr)
            self._page("review_error.html.j2", HTTPStatus.INTERNAL_SERVER_ERROR,
                       title="Internal error", message="memgit hit an unexpected error; see the terminal "
                                                       "running `memgit serve`.")

    def _dispatch(self, method: str) -> None:
        if self.server.loopback and self.headers.get("Host", "") not in self.server.allowed_hosts():
            return self._plain(HTTPStatus.FORBIDDEN, "Forbidden: unexpected Host header.")
        url = urlsplit(self.path)
        path = self._inside(url.path)
        query = parse_qs(url.query, keep_blank_values=True)
        from_query = query.get("token", [""])[0]
        given = from_query or self._cookie()
        if path is None or not given or not hmac.compare_digest(given.encode(), self.server.token.encode()):
            return self._plain(HTTPStatus.FORBIDDEN, "Forbidden: open the address that `memgit serve` printed "
                                                     "(it carries the access token).")
        if method == "GET" and from_query:
            # keep the token out of the address bar and history: a cookie carries it from now on
            rest = urlencode([(k, v) for k, vs in query.items() if k != "token" for v in vs])
            return self._redirect(path + ("?" + rest if rest else ""), set_cookie=True)
        for m, pattern, name in ROUTES:  # noqa: B007 - name is used after the loop
            match = pattern.fullmatch(path)
            if match and m == method:
                break
        else:
            known = any(p.fullmatch(path) for _, p, _ in ROUTES)
            status = HTTPStatus.METHOD_NOT_ALLOWED if known else HTTPStatus.NOT_FOUND
            return self._page("review_error.html.j2", status, title=status.phrase,
                              message="There is no such page." if not known else "Use the page's buttons.")
        args = match.groupdict()
        if method == "POST":
            form = self._form()
            if form is None:
                return None
            return self._action(args["id"], args["action"], form)
        return getattr(self, "_get_" + name)(query, **args)

    def _inside(self, path: str) -> str | None:
        """The route part of a path under the server's secret prefix ("/" for the prefix itself), or None."""
        prefix = self.server.prefix
        head, rest = path[:len(prefix)], path[len(prefix):]
        if not hmac.compare_digest(head.encode(), prefix.encode()) or (rest and not rest.startswith("/")):
            return None
        return rest or "/"

    def _cookie(self) -> str:
        raw = self.headers.get("Cookie")
        if not raw:
            return ""
        try:
            jar = SimpleCookie(raw)
        except CookieError:
            return ""
        morsel = jar.get(self.server.cookie_name)
        return morsel.value if morsel else ""

    def _form(self) -> dict[str, str] | None:
        origin = self.headers.get("Origin")
        host = self.headers.get("Host", "")
        if origin is not None and origin != f"http://{host}":
            self._plain(HTTPStatus.FORBIDDEN, "Forbidden: cross-origin request.")
            return None
        if self.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            self._plain(HTTPStatus.FORBIDDEN, "Forbidden: cross-site request.")
            return None
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self._plain(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "Request too large.")
            return None
        raw = self.rfile.read(length).decode("utf-8", "replace")
        form = {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}
        if not hmac.compare_digest(form.get("csrf", "").encode(), self.server.csrf.encode()):
            self._plain(HTTPStatus.FORBIDDEN, "Forbidden: the form's CSRF token is missing or stale; "
                                              "reload the page.")
            return None
        return form

    def _headers(self, status: int, ctype: str, length: int, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "same-origin")  # "no-referrer" makes Chromium send Origin: null
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def _plain(self, status: int, text: str) -> None:
        body = (text + "\n").encode()
        self._headers(status, "text/plain; charset=utf-8", len(body))
        self.wfile.write(body)

    def _redirect(self, location: str, set_cookie: bool = False) -> None:
        """A 303 to `location`, a route path; the address sent is under the secret prefix."""
        extra = {"Location": self.server.prefix + location}
        if set_cookie:
            # Path without a trailing slash: it matches the prefix and everything below it, nothing else
            extra["Set-Cookie"] = (f"{self.server.cookie_name}={self.server.token}; Path={self.server.prefix}; "
                                   f"HttpOnly; SameSite=Strict")
        self._headers(HTTPStatus.SEE_OTHER, "text/plain; charset=utf-8", 0, extra)

    def _page(self, template: str, status: int = HTTPStatus.OK, **ctx) -> None:
        ws = ctx.pop("ws", None)
        base = {"root": str(self.server.root), "csrf": self.server.csrf, "flash": "", "nopen": None,
                "prefix": self.server.prefix}
        if ws is not None:
            base["nopen"] = len(proposals.list_proposals(ws, check=False))
        body = render(template, **{**base, **ctx}).encode("utf-8")
        self._headers(status, "text/html; charset=utf-8", len(body))
        self.wfile.write(body)

    def _ws(self) -> Workspace:
        return Workspace(self.server.root)  # per request: no GitPython object is shared across threads

    @staticmethod
    def _flash(query: dict[str, list[str]]) -> str:
        done = query.get("done", [""])[0]
        pid = query.get("id", [""])[0]
        if done in DONE and re.fullmatch(_ID, pid):
            return DONE[done].format(id=pid)
        return ""

    # -- pages -----------------------------------------------------------
    def _get_index(self, query: dict) -> None:
        ws = self._ws()
        items = [_summary(p) for p in proposals.list_proposals(ws)]
        caps = [_capacity(c) for c in ws.capacity(live=True)]
        self._page("review_list.html.j2", title="Open proposals", proposals=items, capacity=caps,
                   flash=self._flash(query), nopen=len(items))

    def _get_proposal(self, query: dict, id: str) -> None:
        ws = self._ws()
        try:
            p = proposals.get(ws, id)
        except NotFoundError as e:
            return self._page("review_error.html.j2", HTTPStatus.NOT_FOUND, ws=ws, title="Not found",
                              message=str(e))
        view = "split" if query.get("view", [""])[0] == "split" else "unified"
        lines = common.parse_diff(common.redacted_diff(ws, p))
        self._page("review_proposal.html.j2", ws=ws, title=f"Proposal {p.id}", p=_summary(p),
                   evidence=[{"source": sensitive.redact(e.source), "quote": sensitive.redact(e.quote)}
                             for e in p.op.evidence],
                   reason=sensitive.redact(p.op.reason), view=view, lines=lines,
                   rows=common.side_by_side(lines) if view == "split" else [],
                   editable=common.editable(p), text=sensitive.redact(p.op.text or ""),
                   closed=_closed(p),
                   flash=self._flash(query))

    def _get_history(self, query: dict) -> None:
        ws = self._ws()
        events = [{"at": e.at[:19].replace("T", " "), "kind": e.kind, "summary": sensitive.redact(e.summary)}
                  for e in journal.events(ws.repo, limit=HISTORY_LIMIT)]
        closed = [{**_summary(p), **_closed(p)}
                  for p in proposals.list_proposals(ws, include_closed=True, check=False) if p.status != "open"]
        closed.sort(key=lambda d: d["at"], reverse=True)
        self._page("review_history.html.j2", ws=ws, title="History", events=events, closed=closed,
                   flash=self._flash(query))

    # -- changes (POST only) ------------------------------------------------
    def _action(self, pid: str, action: str, form: dict[str, str]) -> None:
        with self.server.write_lock:
            ws = self._ws()
            try:
                if action == "approve":
                    r = proposals.approve(ws, [pid])
                    if r.refused:
                        raise ConflictError(r.refused[0][1])
                    done, target, back = "approved", r.approved[0].id, "/"
                elif action == "reject":
                    p = proposals.reject(ws, [pid], form.get("reason", "")[:1000])[0]
                    done, target, back = "rejected", p.id, "/"
                elif action == "edit":
                    res = common.edit_and_approve(ws, pid, form.get("text", ""))
                    done, target, back = "edited", res.edited.id, "/"
                else:
                    if form.get("confirm") != "yes":  # one click asks; only the confirmation reverts
                        p = proposals.get(ws, pid, check=False)
                        return self._page("review_confirm_revert.html.j2", ws=ws, title="Revert?", id=p.id,
                                          title_text=sensitive.redact(p.title))
                    proposals.revert(ws, pid)
                    done, target, back = "reverted", pid, "/history"
            except NotFoundError as e:
                return self._page("review_error.html.j2", HTTPStatus.NOT_FOUND, ws=ws, title="Not found",
                                  message=str(e))
            except SensitiveDataError as e:
                return self._page("review_error.html.j2", HTTPStatus.BAD_REQUEST, ws=ws, title="Refused",
                                  message=str(e), back=f"/p/{pid}")
            except MemgitError as e:
                return self._page("review_error.html.j2", HTTPStatus.CONFLICT, ws=ws, title="Not done",
                                  message=str(e), back=f"/p/{pid}")
        self._redirect(f"{back}?{urlencode({'done': done, 'id': target})}")


def _summary(p: proposals.Proposal) -> dict:
    return {"id": p.id, "op": p.op.op, "file": p.op.file, "dest": p.op.dest or "",
            "title": sensitive.redact(p.title), "confidence": common.confidence(p), "age": common.age(p.created),
            "origin": p.op.origin, "status": p.status, "applies": p.applies is not False,
            "why_not": sensitive.redact(p.why_not), "branch": p.branch}


def _closed(p: proposals.Proposal) -> dict:
    """Who closed it, when and why; every key present, since approvals and reverts carry no reason."""
    if p.status == "open":
        return {}
    return {"at": str(p.closed.get("at", ""))[:19].replace("T", " "),
            "by": sensitive.redact(str(p.closed.get("by", ""))),
            "reason": sensitive.redact(str(p.closed.get("reason", "")))}


def _capacity(c) -> dict:
    pct = c.pct
    level = "none" if pct is None else "full" if pct > 90 else "high" if pct > 75 else "ok"
    return {"file": c.file, "chars": c.chars, "budget": c.budget, "pct": None if pct is None else round(pct, 1),
            "width": 0 if pct is None else max(0, min(100, round(pct))), "level": level}
