"""`memgit mcp`: click only."""
from __future__ import annotations

import click

from memgit.cli.common import open_workspace


@click.command()
@click.pass_context
def mcp(ctx):
    """Serve this workspace to the agent over MCP (stdio): recall, propose, proposals, show, status.

    The agent recalls from memory and asks for changes; every change is a proposal a person
    approves (no tool approves), and no secret crosses the protocol. Register it with your agent,
    e.g. `claude mcp add memgit -- memgit -C ~/agent-workspace mcp` (see README).

    Example: memgit -C ~/agent-workspace mcp
    """
    from memgit.mcp_server import serve

    ws = open_workspace(ctx)
    serve(ws.root)
