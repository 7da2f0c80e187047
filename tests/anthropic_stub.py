"""A local stand-in for Anthropic's Messages API, for tests.

A real HTTP server on 127.0.0.1 (a thread running `http.server`) that answers
POST /v1/messages with recorded answers and keeps every request it received,
so tests drive the real `anthropic` SDK (its retries, timeouts and parsing)
and can check exactly which bytes would have left the machine.

A recorded answer is a JSON file in tests/fixtures/anthropic/:
``{"status": 200, "headers": {...}, "body": {...}}`` (the Messages API's JSON),
or ``"body_text": "..."`` for a body that is not JSON at all.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Self

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b"{}"
    headers: dict = field(default_factory=dict)
    delay: float = 0.0     # seconds to wait before answering (a slow or hung API)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict
    raw: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.raw)


def recorded(name: str, delay: float = 0.0) -> Reply:
    """The recorded answer tests/fixtures/anthropic/<name>.json."""
    rec = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    if "body_text" in rec:
        body = rec["body_text"].encode("utf-8")
    else:
        body = json.dumps(rec["body"], ensure_ascii=False).encode("utf-8")
    headers = {"content-type": "application/json", **rec.get("headers", {})}
    return Reply(rec.get("status", 200), body, headers, delay)


def message(operations: list, **usage: int) -> Reply:
    """A 200 answer calling propose_operations with `operations`."""
    body = {
        "id": "msg_stub", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "tool_use", "id": "toolu_stub", "name": "propose_operations",
                     "input": {"operations": operations}}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": usage.get("input_tokens", 100), "output_tokens": usage.get("output_tokens", 50),
                  "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
                  "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0)},
    }
    return Reply(200, json.dumps(body, ensure_ascii=False).encode("utf-8"), {"content-type": "application/json"})


class StubAPI:
    """`with StubAPI() as api:` … `api.url` for ANTHROPIC_BASE_URL, `api.answer(reply, …)`, `api.requests`.

    Replies are used in order; the last one repeats (so retries see it again).
    """

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                reply = stub._next(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, raw))
                if reply.delay and stub._stopping.wait(reply.delay):
                    return
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def answer(self, *replies: Reply) -> None:
        with self._lock:
            self._replies = list(replies)

    def _next(self, received: Received) -> Reply:
        with self._lock:
            self.requests.append(received)
            if received.path.split("?")[0] != "/v1/messages":
                return Reply(404, b'{"type": "error", "error": {"type": "not_found_error", "message": "no route"}}',
                             {"content-type": "application/json"})
            if not self._replies:
                return Reply(500, b'{"type": "error", "error": {"type": "api_error", "message": "no answer"}}',
                             {"content-type": "application/json", "x-should-retry": "false"})
            return self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
