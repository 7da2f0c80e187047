"""`memgit mcp`: the agent's side of memgit, as a Model Context Protocol server over stdio.

Built on the official `mcp` Python SDK (`mcp.server.mcpserver.MCPServer`, SDK 2.x); no protocol code
is written here. One workspace is served:

- tools: `recall` (the ranked search of `memgit recall`, with sources), `propose` (prune / refresh /
  consolidate / merge with evidence: the same gate a model's operation passes, then an open proposal a
  person reviews; never a write to main), `proposals` and `show` (what waits, and its diff against
  today's main), `status` (budgets, open proposals);
- resources: each memory file as main has it, `memgit://main/<file>`.

Nothing secret crosses the protocol: every tool result and resource passes `memgit.sensitive.redact`.
No tool approves, rejects or reverts: a request to (an "approve everything" in a prompt) has no tool to
call, and a bad request (an unknown operation, a path outside the workspace, an entry that is not
there) is a clean tool error naming what to do. The agent's proposals have origin "agent": they can
never touch a P0 or protected entry, whatever they claim.
"""
from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from memgit import proposals, sensitive
from memgit.errors import MemgitError
from memgit.workspace import Workspace

MAX_K = 50
ORIGIN = "agent"


def _clean(value: Any) -> Any:
    """`value` with every string redacted, however deep (what crosses the protocol)."""
    if isinstance(value, str):
        return sensitive.redact(value)
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def recall(ws: Workspace, query: str, k: int = 8) -> list[dict]:
    from memgit import recall as r

    if not query.strip():
        raise MemgitError("the query is empty; give the words to search for.")
    k = max(1, min(int(k), MAX_K))
    return [h.to_dict() for h in r.recall(ws, [query], k)[0]]


def propose(ws: Workspace, op: str, file: str, entries: list[str] | None = None, text: str | None = None,
            section: str | None = None, reason: str = "", evidence: list[dict] | None = None,
            confidence: float | None = None, now: date | None = None) -> dict:
    """One open proposal from the agent's request, through the gate every model operation passes."""
    from memgit.dream import gate
    from memgit.dream.collect import collect

    if op not in ("prune", "refresh", "consolidate", "merge"):
        raise MemgitError(f"unknown operation {op!r}; use prune, refresh, consolidate or merge "
                          f"(a person approves; no tool approves).")
    with ws.repo.lock():
        ws.prepare()
        cfg = ws.config
        ground = gate.workspace_ground(ws, collect(ws, now or date.today(), cfg.dream.window_days), cfg, ORIGIN)
        item = {"op": op, "file": file, "targets": list(entries or []), "text": text, "section": section,
                "reason": reason or "asked for by the agent", "evidence": list(evidence or []),
                "confidence": cfg.dream.threshold if confidence is None else confidence}
        try:
            operation = gate.check(item, ground)
        except gate.Drop as e:
            raise MemgitError(f"the {op} was refused: {e}.") from None
        if operation.fingerprint in ground.known:
            raise MemgitError("the same change is already open or was refused before; nothing proposed.")
        made = proposals.create(ws, [operation])
    p = made[0]
    return {**p.to_dict(), "note": "open until a person approves it; main is unchanged"}


def list_open(ws: Workspace) -> list[dict]:
    return [p.to_dict() for p in proposals.sorted_proposals(proposals.list_proposals(ws))]


def show(ws: Workspace, proposal_id: str) -> dict:
    p = proposals.get(ws, proposal_id)
    return {**p.to_dict(), "diff": proposals.diff(ws, p)}


def status(ws: Workspace) -> dict:
    props = proposals.list_proposals(ws, check=False)
    return {"workspace": str(ws.root), "files": [c.to_dict() for c in ws.capacity(live=False)],
            "open_proposals": [p.id for p in props],
            "direct_writes": ws.config.agent.direct_writes}


def memory_text(ws: Workspace, name: str) -> str:
    if name not in ws.memory_files:
        raise MemgitError(f"{name} is not a memory file of this workspace ({', '.join(ws.memory_files)}).")
    main = ws.main()
    data = ws.repo.read(main, name) if main else None
    return "" if data is None else data.decode("utf-8", errors="replace")


def build(root: Path):
    """The MCP server for the workspace at `root` (opened once, to learn its memory files)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    first = Workspace.open(root)
    files = tuple(first.memory_files)
    server = MCPServer("memgit", instructions=(
        "Long-term memory under human review. Use recall before answering from memory. To change memory, "
        "call propose: it opens a proposal a person reviews; nothing changes until they approve it. "
        "No tool approves."))

    def run(fn, *args, **kwargs):
        try:
            return _clean(fn(Workspace.open(root), *args, **kwargs))
        except MemgitError as e:
            raise ToolError(sensitive.redact(str(e))) from None

    @server.tool(name="recall", description="Ranked search of memory, reference/, archives, daily logs and "
                                            "transcripts; "
                             "each hit gives path, line, text and score.")
    def recall_(query: str, k: int = 8) -> list[dict]:
        return run(recall, query, k)

    @server.tool(name="propose", description=(
        "Ask for a memory change a person must approve: op is prune, refresh, consolidate or merge; file a "
        "memory file; entries the exact (or a unique, substantial part of the) entries it changes; text the "
        "new entry (refresh, consolidate, merge); section for consolidate; evidence a list of "
        "{source: 'path:line', quote: 'words at that line'}. Returns the open proposal."))
    def propose_(op: str, file: str, entries: list[str] | None = None, text: str | None = None,
                 section: str | None = None, reason: str = "", evidence: list[dict] | None = None,
                 confidence: float | None = None) -> dict:
        return run(propose, op, file, entries, text, section, reason, evidence, confidence)

    @server.tool(name="proposals", description="The open proposals, newest first: id, op, file, confidence, title.")
    def proposals_() -> list[dict]:
        return run(list_open)

    @server.tool(name="show", description="One proposal with its diff against today's main.")
    def show_(id: str) -> dict:  # noqa: A002 - the protocol's own name for it
        return run(show, id)

    @server.tool(name="status", description="Memory files against their budgets, and the open proposals.")
    def status_() -> dict:
        return run(status)

    def reader(name: str):
        def read() -> str:
            return run(memory_text, name)
        return read

    for name in files:
        server.resource(f"memgit://main/{name}", name=name, mime_type="text/markdown",
                        description=f"{name} as main has it (what the agent reads)")(reader(name))
    return server


def serve(root: Path) -> None:
    build(root).run("stdio")
