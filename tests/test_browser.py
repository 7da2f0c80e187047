"""The review site in a real browser: Debian's headless Chromium driven by Playwright.

Skipped when /usr/bin/chromium or the playwright package is missing. Saves a
screenshot of the review page; docs/review-page.png is (re)written when it is
missing or MEMGIT_SCREENSHOT=1, so a normal run leaves the checkout clean.
"""
from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from memgit import proposals
from memgit.ops import Evidence, Operation
from memgit.review.web import ReviewServer

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DOCS_PNG = Path(__file__).resolve().parent.parent / "docs" / "review-page.png"
COCKPIT_NEW = "[P1] Cockpit v1 已上线，侧栏的 UI bug 已修复 (2026-11-29)"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed at /usr/bin/chromium", allow_module_level=True)


@pytest.fixture
def site(workspace):
    doc = workspace.document("MEMORY.md")
    made = proposals.create(workspace, [
        Operation("refresh", "MEMORY.md", (doc.entry("Cockpit v1").text,), text=COCKPIT_NEW, confidence=0.93,
                  origin="offline", reason="Cockpit v1 was pushed and the sidebar bug is fixed",
                  evidence=(Evidence("memory/2026-11-29.md:3", "09:10 Cockpit v1 pushed to GitHub; 侧栏 bug 已修复"),
                            Evidence("sessions/2026-11-29-a1.jsonl:2", "Pushed Cockpit v1 to GitHub."))),
        Operation("prune", "MEMORY.md", (doc.entry("Temporary: Cloudflare").text,), confidence=0.8,
                  origin="offline", reason="temporary item whose date 2026-11-10 has passed",
                  evidence=(Evidence("MEMORY.md:20", doc.entry("Temporary: Cloudflare").text),)),
        Operation("consolidate", "USER.md", (), section="Schedule", confidence=0.74, origin="offline",
                  text="Weekly review moves to Saturday (2026-11-29)", reason="asked on 2026-11-29",
                  evidence=(Evidence("memory/2026-11-29.md:4", "11:30 Ada asked to switch the weekly review to "
                                                               "Saturday"),)),
    ])
    server = ReviewServer(workspace.root, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield workspace, server, {p.op.op: p for p in made}
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def page():
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1200, "height": 900}, device_scale_factor=1)
            yield context.new_page()
        finally:
            browser.close()


def test_approve_by_clicking_changes_main(site, page, tmp_path: Path) -> None:
    ws, server, made = site
    before = ws.main()
    p = made["refresh"]
    page.goto(server.url)
    assert page.url == server.home                 # the token moved into a cookie
    assert page.locator(".list .row").count() == 4  # header + 3 proposals
    page.click(f"a[href='{server.prefix}/p/{p.id}']")
    page.wait_for_url(f"**/p/{p.id}")
    assert page.locator("ins", has_text="已上线").count() >= 1
    shot = tmp_path / "review-page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    if not DOCS_PNG.exists() or os.environ.get("MEMGIT_SCREENSHOT") == "1":
        DOCS_PNG.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_PNG)
    page.click("button.approve")
    page.wait_for_url("**/?done=approved*")
    assert f"Approved {p.id}" in page.locator(".flash").inner_text()
    assert ws.main() != before
    assert COCKPIT_NEW in ws.repo.read(ws.main(), "MEMORY.md").decode()
    assert COCKPIT_NEW in (ws.root / "MEMORY.md").read_text()
    assert page.locator(f"a[href='{server.prefix}/p/{p.id}']").count() == 0


def test_reject_with_a_reason_and_side_by_side(site, page) -> None:
    ws, server, made = site
    p = made["prune"]
    page.goto(server.url)
    page.goto(f"{server.base}{server.prefix}/p/{made['refresh'].id}?view=split")
    assert page.locator("td.del del").count() >= 1 and page.locator("td.add ins").count() >= 1
    page.goto(f"{server.base}{server.prefix}/p/{p.id}")
    page.click("summary:has-text('Reject')")
    page.fill("input[name=reason]", "the demo was extended")
    page.click("button.reject")
    page.wait_for_url("**/?done=rejected*")
    state = proposals.closed_states(ws)[p.id]
    assert state["status"] == "rejected" and state["reason"] == "the demo was extended"


def test_a_page_without_the_token_is_refused(site, page) -> None:
    _, server, _ = site
    assert page.goto(server.home).status == 403
    assert page.goto(f"{server.base}/?token={server.token}").status == 403   # the token alone, outside the prefix


def test_the_token_never_reaches_another_local_server(site, page) -> None:
    """Cookies ignore ports: a second server on 127.0.0.1 must still receive nothing of memgit's."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    _, server, made = site
    seen: list[str] = []

    class Spy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(f"GET {self.path}\n{self.headers}")
            body = b"<!doctype html><title>other</title><p>another local service</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args) -> None:
            pass

    spy = ThreadingHTTPServer(("127.0.0.1", 0), Spy)
    threading.Thread(target=spy.serve_forever, daemon=True).start()
    try:
        page.goto(server.url)
        assert page.locator(".list .row").count() == 4   # signed in: the cookie is set
        page.goto(f"{server.base}{server.prefix}/p/{made['refresh'].id}")
        assert page.locator("button.approve").count() == 1
        other = f"http://127.0.0.1:{spy.server_address[1]}"
        for path in ("/", f"/p/{made['refresh'].id}", "/history", "/s/"):
            assert page.goto(other + path).status == 200
        assert len(seen) >= 4
        for request in seen:
            assert server.token not in request and server.csrf not in request, request
            assert "cookie:" not in request.lower() and "memgit" not in request.lower(), request
        [cookie] = page.context.cookies()
        assert cookie["path"] == server.prefix and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    finally:
        spy.shutdown()
        spy.server_close()


def _cjk_font() -> bool:
    import subprocess

    try:
        out = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return bool(out.strip())


@pytest.mark.skipif(not _cjk_font(), reason="no CJK font installed (apt-get install fonts-wqy-microhei)")
def test_chinese_on_the_review_page_renders_as_glyphs_not_boxes(site, page) -> None:
    """Without a CJK font Chromium draws every Han character as the same empty box: two different
    characters, in the page's own diff style, must come out as different pictures."""
    ws, server, made = site
    page.goto(server.url)
    page.goto(f"{server.base}{server.prefix}/p/{made['refresh'].id}")
    assert page.locator("ins", has_text="已上线").count() >= 1
    shots = []
    for ch in ("侧", "線"):  # Simplified and Traditional
        page.evaluate("""ch => { const d = document.querySelector('ins') || document.body;
                             let s = document.getElementById('probe');
                             if (!s) { s = document.createElement('span'); s.id = 'probe'; d.after(s); }
                             s.textContent = ch; }""", ch)
        shots.append(page.locator("#probe").screenshot())
    assert shots[0] != shots[1]
