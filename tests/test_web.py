"""`memgit serve`: the review site through a real HTTP client against a server on a free port."""
from __future__ import annotations

import re
import threading

import httpx
import pytest

from memgit import proposals
from memgit.ops import Evidence, Operation
from memgit.review.web import ReviewServer

BLOG_NEW = "[P1] Blog runs on Astro, deploys on push via Cloudflare Pages (2026-11-29)"
XSS = "<script>alert('memgit')</script>"


@pytest.fixture
def site(workspace):
    ops = [
        Operation("refresh", "MEMORY.md", (workspace.document("MEMORY.md").entry("Blog runs on Astro").text,),
                  text=BLOG_NEW, confidence=0.91, origin="offline", reason="the blog moved",
                  evidence=(Evidence("memory/2026-11-29.md:3", "Blog now deploys from Cloudflare Pages"),)),
        Operation("prune", "MEMORY.md", (workspace.document("MEMORY.md").entry("Temporary: Cloudflare").text,),
                  confidence=0.8, reason="the demo is over", origin="offline"),
    ]
    made = {p.op.op: p for p in proposals.create(workspace, ops)}
    server = ReviewServer(workspace.root, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield workspace, server, made
    finally:
        server.shutdown()
        server.server_close()


def anon(server) -> httpx.Client:
    """A client whose paths are under the server's secret prefix ("/p/…" is "/s/<secret>/p/…")."""
    return httpx.Client(base_url=server.base + server.prefix, follow_redirects=False, timeout=10)


def client(server) -> httpx.Client:
    """A client that entered through the printed URL, so it holds the cookie."""
    c = anon(server)
    r = c.get(f"/?token={server.token}")
    assert r.status_code == 303 and r.headers["location"] == f"{server.prefix}/"
    return c


def post(c: httpx.Client, path: str, server, **form) -> httpx.Response:
    return c.post(path, data={"csrf": server.csrf, **form})


def test_url_is_loopback_with_a_random_token(site) -> None:
    ws, server, _ = site
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/s/[A-Za-z0-9_-]{20,}/\?token=[A-Za-z0-9_-]{40,}", server.url)
    assert server.url == f"{server.base}{server.prefix}/?token={server.token}"
    other = ReviewServer(ws.root, "127.0.0.1", 0)
    try:
        assert other.token != server.token and other.csrf != server.csrf and server.csrf != server.token
        assert other.prefix != server.prefix and server.token not in server.prefix
    finally:
        other.server_close()


def test_every_request_without_the_token_is_refused(site) -> None:
    ws, server, made = site
    pid = made["refresh"].id
    c = anon(server)
    for path in ("/", f"/p/{pid}", "/history", "/nope", "/?token=wrong"):
        assert c.get(path).status_code == 403, path
    c.cookies.set(server.cookie_name, "wrong")
    assert c.get("/").status_code == 403
    before = ws.main()
    r = anon(server).post(f"/p/{pid}/approve", data={"csrf": server.csrf})
    assert r.status_code == 403 and ws.main() == before


def test_nothing_is_served_outside_the_secret_prefix(site) -> None:
    ws, server, made = site
    pid = made["refresh"].id
    signed_in = client(server)
    outside = httpx.Client(base_url=server.base, follow_redirects=False, timeout=10)
    cookie = {"Cookie": f"{server.cookie_name}={server.token}"}
    wrong = "/s/" + "A" * len(server.prefix[3:])
    for path in ("/", f"/p/{pid}", "/history", f"/?token={server.token}", f"/p/{pid}?token={server.token}",
                 f"{wrong}/?token={server.token}", f"{server.prefix}x/?token={server.token}", "/s/",
                 server.prefix[:-1] + "/"):
        r = outside.get(path, headers=cookie)
        assert r.status_code == 403, path
        assert server.token not in r.text and server.csrf not in r.text and "set-cookie" not in r.headers
    before = ws.main()
    r = outside.post(f"/p/{pid}/approve", data={"csrf": server.csrf}, headers=cookie)
    assert r.status_code == 403 and ws.main() == before
    assert signed_in.get("/").status_code == 200   # the same cookie, inside the prefix
    bare = outside.get(server.prefix, headers=cookie)
    assert bare.status_code == 200 and "Open proposals" in bare.text


def test_first_visit_sets_a_strict_cookie_and_drops_the_token_from_the_address(site) -> None:
    _, server, made = site
    c = anon(server)
    r = c.get(f"/p/{made['refresh'].id}?view=split&token={server.token}")
    assert r.status_code == 303
    assert r.headers["location"] == f"{server.prefix}/p/{made['refresh'].id}?view=split"
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{server.cookie_name}={server.token};")
    assert f"; Path={server.prefix};" in cookie and "Path=/;" not in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert c.get(server.base + r.headers["location"]).status_code == 200


def test_list_shows_open_proposals_and_capacity(site) -> None:
    _, server, made = site
    r = client(server).get("/")
    assert r.status_code == 200
    html = r.text
    for p in made.values():
        assert f'href="{server.prefix}/p/{p.id}"' in html
    assert 'class="badge op-refresh"' in html and 'class="badge op-prune"' in html
    assert "0.91" in html and "0.80" in html
    assert "MEMORY.md" in html and "USER.md" in html and "/ 4000 chars" in html
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp and "form-action 'self'" in csp
    assert r.headers["x-frame-options"] == "DENY"


def test_proposal_page_unified_and_side_by_side(site) -> None:
    _, server, made = site
    c = client(server)
    pid = made["refresh"].id
    html = c.get(f"/p/{pid}").text
    assert "the blog moved" in html and "memory/2026-11-29.md:3" in html
    assert "Blog now deploys from Cloudflare Pages" in html
    assert "<del>GitHub Actions</del>" in html and "<ins>Cloudflare Pages</ins>" in html
    assert f'action="{server.prefix}/p/{pid}/approve"' in html and f'value="{server.csrf}"' in html
    assert f'action="{server.prefix}/p/{pid}/edit"' in html and f'action="{server.prefix}/p/{pid}/reject"' in html
    split = c.get(f"/p/{pid}?view=split").text
    assert split.count("<del>GitHub Actions</del>") == 1 and "<ins>Cloudflare Pages</ins>" in split
    row = re.search(r"<tr>\s*<td class=\"num\">(\d+)</td><td class=\"del\">(.*?)</td>\s*"
                    r"<td class=\"num\">(\d+)</td><td class=\"add\">(.*?)</td>\s*</tr>", split, re.DOTALL)
    assert row and "GitHub Actions" in row.group(2) and "Cloudflare Pages" in row.group(4)
    prune = c.get(f"/p/{made['prune'].id}").text
    assert f'action="{server.prefix}/p/{made["prune"].id}/edit"' not in prune   # a prune has no text to edit


def test_get_never_changes_anything(site) -> None:
    ws, server, made = site
    c = client(server)
    before = ws.main()
    for action in ("approve", "reject", "edit", "revert"):
        assert c.get(f"/p/{made['refresh'].id}/{action}").status_code == 405
    assert ws.main() == before and len(proposals.list_proposals(ws)) == 2


def test_posts_need_the_csrf_token_and_the_same_origin(site) -> None:
    ws, server, made = site
    c = client(server)
    before = ws.main()
    path = f"/p/{made['refresh'].id}/approve"
    assert c.post(path).status_code == 403
    assert c.post(path, data={"csrf": server.token}).status_code == 403
    assert c.post(path, data={"csrf": server.csrf}, headers={"Origin": "http://evil.example"}).status_code == 403
    assert c.post(path, data={"csrf": server.csrf}, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert c.post(path, content=b"x" * (70 * 1024),
                  headers={"Content-Type": "application/x-www-form-urlencoded"}).status_code == 413
    assert ws.main() == before


def test_foreign_host_header_is_refused(site) -> None:
    _, server, _ = site
    c = client(server)
    assert c.get("/", headers={"Host": f"attacker.example:{server.port}"}).status_code == 403
    assert c.get("/", headers={"Host": f"localhost:{server.port}"}).status_code == 200


def test_approve_changes_main_and_the_working_tree(site) -> None:
    ws, server, made = site
    c = client(server)
    before = ws.main()
    pid = made["refresh"].id
    r = post(c, f"/p/{pid}/approve", server, )
    assert r.status_code == 303 and r.headers["location"] == f"{server.prefix}/?done=approved&id={pid}"
    assert ws.main() != before
    assert BLOG_NEW in ws.repo.read(ws.main(), "MEMORY.md").decode()
    assert BLOG_NEW in (ws.root / "MEMORY.md").read_text()
    page = c.get(f"/?done=approved&id={pid}").text
    assert f"Approved {pid}" in page and f'href="{server.prefix}/p/{pid}"' not in page
    again = post(c, f"/p/{pid}/approve", server)
    assert again.status_code == 409 and "not open" in again.text


def test_reject_with_reason(site) -> None:
    ws, server, made = site
    pid = made["prune"].id
    r = post(client(server), f"/p/{pid}/reject", server, reason="the demo was extended")
    assert r.status_code == 303
    state = proposals.closed_states(ws)[pid]
    assert state["status"] == "rejected" and state["reason"] == "the demo was extended"


def test_edit_approves_the_edited_text_and_refuses_secrets(site) -> None:
    ws, server, made = site
    c = client(server)
    pid = made["refresh"].id
    before = ws.main()
    secret = "ghp_" + "Po9Iu8Yt7Re6Wq5As4Df3Gh2Jk1Lz0Xc9Vb8"
    bad = post(c, f"/p/{pid}/edit", server, text=f"Blog deploy token {secret}")
    assert bad.status_code == 400 and "sensitive data" in bad.text and secret not in bad.text
    assert ws.main() == before
    r = post(c, f"/p/{pid}/edit", server, text=BLOG_NEW.replace("Pages", "Pages + wrangler"))
    assert r.status_code == 303
    new_id = re.search(r"id=([0-9a-f]+)", r.headers["location"]).group(1)
    assert new_id != pid
    assert "Cloudflare Pages + wrangler" in ws.repo.read(ws.main(), "MEMORY.md").decode()
    states = proposals.closed_states(ws)
    assert states[new_id]["status"] == "approved" and states[pid]["status"] == "rejected"


def test_history_lists_events_and_reverts(site) -> None:
    ws, server, made = site
    c = client(server)
    pid = made["prune"].id
    assert post(c, f"/p/{pid}/approve", server).status_code == 303
    assert "Temporary: Cloudflare" not in ws.repo.read(ws.main(), "MEMORY.md").decode()
    html = c.get("/history").text
    assert f'action="{server.prefix}/p/{pid}/revert"' in html and "approve" in html and "propose" in html
    main = ws.main()
    ask = post(c, f"/p/{pid}/revert", server)  # one click only asks
    assert ask.status_code == 200 and "Yes, revert it" in ask.text and 'name="confirm" value="yes"' in ask.text
    assert ws.main() == main and proposals.closed_states(ws)[pid]["status"] == "approved"
    r = post(c, f"/p/{pid}/revert", server, confirm="yes")
    assert r.status_code == 303 and r.headers["location"].startswith(f"{server.prefix}/history?done=reverted")
    assert "Temporary: Cloudflare" in ws.repo.read(ws.main(), "MEMORY.md").decode()
    assert proposals.closed_states(ws)[pid]["status"] == "reverted"
    assert f'action="{server.prefix}/p/{pid}/revert"' not in c.get("/history").text


def test_no_request_path_reaches_the_filesystem(site) -> None:
    ws, server, _ = site
    c = client(server)
    (ws.root / "secret.txt").write_text("do not serve me")
    for path in ("/secret.txt", "/MEMORY.md", "/../../etc/passwd", "/p/../MEMORY.md", "/p/%2e%2e%2fMEMORY.md",
                 "/p/ZZZZ", "/p/abcd/../../etc/passwd", "/static/style.css", "//etc/passwd", "/p/1234"):
        r = c.get(path)
        # 403 where the client resolved the dots out of the secret prefix, 404 inside it
        assert r.status_code == (403 if path.startswith("/..") else 404), path
        assert "do not serve me" not in r.text and "root:" not in r.text
    assert post(c, "/p/../approve", server).status_code == 404


def test_memory_text_is_escaped_everywhere(workspace) -> None:
    path = workspace.root / "MEMORY.md"
    path.write_text(path.read_text().replace("Tried Zed editor", f"Tried {XSS} editor"))
    [p] = proposals.create(workspace, [Operation(
        "refresh", "MEMORY.md", (workspace.document("MEMORY.md").entry("editor for a week").text,),
        text=f"Back to helix after {XSS} (2026-11-29)", reason=f"reason {XSS}",
        evidence=(Evidence("memory/2026-11-29.md:1", f"quote {XSS}"),))])
    server = ReviewServer(workspace.root, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        c = client(server)
        for page in ("/", f"/p/{p.id}", f"/p/{p.id}?view=split", "/history"):
            html = c.get(page).text
            assert "<script>" not in html, page
        html = c.get(f"/p/{p.id}").text
        assert "&lt;script&gt;" in html
        assert html.count("&lt;script&gt;") >= 4   # title, reason, evidence, diff, textarea
    finally:
        server.shutdown()
        server.server_close()


def test_serve_cli_prints_the_url(workspace) -> None:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "memgit", "-C", str(workspace.root), "serve", "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()
        url = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/s/[A-Za-z0-9_-]+/\?token=\S+", url)
        r = httpx.get(url, follow_redirects=True, timeout=10)
        assert r.status_code == 200 and "Open proposals" in r.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_proposal_pages_render_for_every_status(site) -> None:
    ws, server, made = site
    c = client(server)
    refresh, prune = made["refresh"].id, made["prune"].id
    page = c.get(f"/p/{refresh}")
    assert page.status_code == 200 and 'class="badge st-open"' in page.text
    assert post(c, f"/p/{prune}/reject", server, reason="the demo was extended").status_code == 303
    assert post(c, f"/p/{refresh}/approve", server).status_code == 303
    expect = {refresh: ("approved", None), prune: ("rejected", "the demo was extended")}
    for pid, (status, reason) in expect.items():
        page = c.get(f"/p/{pid}")
        assert page.status_code == 200, (status, page.text)
        meta = re.search(r'<p class="muted closed">(.*?)</p>', page.text, re.DOTALL).group(1)
        assert f'class="badge st-{status}"' in page.text
        assert meta.startswith(status.capitalize()) and "by Test Reviewer" in meta
        assert re.search(r" at \d{4}-\d\d-\d\d \d\d:\d\d", meta), meta
        assert (reason in meta) if reason else ":" not in meta.split(" by ")[-1]
    assert f'action="{server.prefix}/p/{refresh}/revert"' in c.get(f"/p/{refresh}").text
    assert post(c, f"/p/{refresh}/revert", server, confirm="yes").status_code == 303
    html = c.get("/history").text
    assert f'href="{server.prefix}/p/{refresh}"' in html and f'href="{server.prefix}/p/{prune}"' in html
    page = c.get(f"/p/{refresh}")
    assert page.status_code == 200 and 'class="badge st-reverted"' in page.text
    meta = re.search(r'<p class="muted closed">(.*?)</p>', page.text, re.DOTALL).group(1)
    assert meta.startswith("Reverted") and "by Test Reviewer" in meta and re.search(r" at \d{4}-", meta)
    assert f'action="{server.prefix}/p/{refresh}/revert"' not in page.text


def test_a_burst_of_parallel_requests_is_served_without_resets(site) -> None:
    import http.client

    _, server, made = site
    cookie = f"{server.cookie_name}={server.token}"
    paths = ["/", f"/p/{made['refresh'].id}", "/history"]
    n = 200
    start = threading.Barrier(n)
    statuses: list[int] = []
    errors: list[str] = []

    def one(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        start.wait()
        try:
            conn.request("GET", server.prefix + paths[i % len(paths)], headers={"Cookie": cookie})
            statuses.append(conn.getresponse().status)
        except OSError as e:  # ConnectionResetError, BrokenPipeError, …
            errors.append(type(e).__name__)
        finally:
            conn.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and statuses == [200] * n, (len(errors), sorted(set(errors)))


def test_ctrl_c_right_after_the_prompt_still_stops_serving_cleanly(workspace, monkeypatch) -> None:
    """A Ctrl-C that lands between 'Press Ctrl-C to stop.' and serve_forever (a loaded machine) is a clean stop."""
    import click
    from click.testing import CliRunner

    from memgit.cli import cli

    real_echo = click.echo

    def echo(message=None, *a, **k):
        real_echo(message, *a, **k)
        if message == "Press Ctrl-C to stop.":
            raise KeyboardInterrupt

    monkeypatch.setattr(click, "echo", echo)
    result = CliRunner().invoke(cli, ["-C", str(workspace.root), "serve", "--no-open", "--port", "0"])
    assert result.exit_code == 0, result.output
    assert "Stopped serving" in result.output
