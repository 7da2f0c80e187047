"""`memgit mcp` as a subprocess, driven by the official MCP SDK's own stdio client: the agent recalls,
proposes (a person approves), and gets clean errors; no secret crosses the protocol and no tool approves."""
from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from memgit import proposals

mcp_client = pytest.importorskip("mcp.client")
from mcp.client.stdio import StdioServerParameters  # noqa: E402

TOKEN = "ghp_" + "Zq8R2mV7xK4pL9sT1wY6nB3cH5jD0fG8aE2u"


def params(ws) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME", "PATH", "PYTHON", "MEMGIT"))}
    return StdioServerParameters(command=sys.executable, args=["-m", "memgit", "-C", str(ws.root), "mcp"], env=env)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def payload(result) -> object:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content.get("result", result.structured_content)
    return json.loads(result.content[0].text)


def test_the_agent_recalls_proposes_and_cannot_approve(workspace, git):
    mem = workspace.root / "MEMORY.md"
    mem.write_text(mem.read_text() + f"- [P2] CI deploy token {TOKEN} (2026-11-20)\n")
    with workspace.repo.lock():
        workspace.prepare()
    main = workspace.main()
    seen: list[str] = []

    async def session():
        async with mcp_client.Client(params(workspace)) as c:
            tools = {t.name for t in (await c.list_tools()).tools}
            assert tools == {"recall", "propose", "proposals", "show", "status"}  # no approve, reject, revert
            hits = payload(await c.call_tool("recall", {"query": "Cockpit push"}))
            assert any(h["path"] == "MEMORY.md" and "Cockpit v1" in h["text"] for h in hits)
            hits = payload(await c.call_tool("recall", {"query": "CI deploy token"}))
            seen.append(json.dumps(hits))
            tunnel = workspace.document("MEMORY.md").entry("Cloudflare tunnel for the demo")
            made = payload(await c.call_tool("propose", {
                "op": "prune", "file": "MEMORY.md", "entries": ["Cloudflare tunnel for the demo"],
                "reason": "the demo is over",
                "evidence": [{"source": f"MEMORY.md:{tunnel.line}", "quote": tunnel.text}]}))
            seen.append(json.dumps(made))
            listed = payload(await c.call_tool("proposals", {}))
            assert [p["id"] for p in listed] == [made["id"]]
            shown = payload(await c.call_tool("show", {"id": made["id"]}))
            assert "-- [P2] Temporary: Cloudflare tunnel for the demo" in shown["diff"]
            seen.append(json.dumps(shown))
            status = payload(await c.call_tool("status", {}))
            assert status["open_proposals"] == [made["id"]]
            bad = []
            for args in ({"op": "prune", "file": "MEMORY.md", "entries": ["no such entry anywhere"],
                          "evidence": [{"source": "MEMORY.md:1", "quote": "# MEMORY"}]},
                         {"op": "approve", "file": "MEMORY.md"},
                         {"op": "prune", "file": "../../etc/passwd", "entries": ["root"],
                          "evidence": [{"source": "MEMORY.md:1", "quote": "# MEMORY"}]},
                         {"op": "consolidate", "file": "MEMORY.md", "section": "Tools", "text": f"token {TOKEN}",
                          "evidence": [{"source": "MEMORY.md:1", "quote": "# MEMORY"}]}):
                r = await c.call_tool("propose", args)
                assert r.is_error
                bad.append(r.content[0].text)
            r = await c.call_tool("approve", {"id": made["id"]})
            assert r.is_error
            resources = {str(x.uri) for x in (await c.list_resources()).resources}
            assert resources == {"memgit://main/MEMORY.md", "memgit://main/USER.md"}
            text = (await c.read_resource("memgit://main/MEMORY.md")).contents[0].text
            assert "Cockpit v1" in text
            seen.append(text)
            return made, bad

    made, bad = run(session())
    assert "is not an entry of MEMORY.md" in bad[0]
    assert "unknown operation 'approve'" in bad[1]
    assert "is not a memory file" in bad[2]
    assert "sensitive" in bad[3]
    # the proposal waits for a person: listed by memgit, main unchanged
    assert [p.id for p in proposals.list_proposals(workspace)] == [made["id"]]
    assert workspace.main() == main
    assert proposals.get(workspace, made["id"]).op.origin == "agent"
    for text in [*seen, *bad]:
        assert TOKEN not in text
    assert any("[REDACTED]" in t for t in seen)
