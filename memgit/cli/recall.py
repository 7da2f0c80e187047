"""`memgit recall`: click only."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from memgit.cli.common import echo_json, open_workspace, style, warn
from memgit.cli.options import json_option
from memgit.errors import MemgitError


def _read_queries(path: Path) -> list[str]:
    """One query per line; a final newline does not start another query."""
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
        text = data.decode("utf-8-sig")
    except OSError as e:
        raise MemgitError(f"{path} cannot be read ({e.strerror}); check the path given to --queries.") from None
    except UnicodeDecodeError:
        raise MemgitError(f"{path} is not UTF-8 text; save the queries file as UTF-8.") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


@click.command()
@click.argument("query", nargs=-1)
@click.option("--queries", "queries_file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="A file of queries, one per line ('-' reads stdin).")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Hits per query.")
@json_option("Print the hits as JSON (with --queries: one list of hits per query, in order).")
@click.pass_context
def recall(ctx, query, queries_file, k, as_json):
    """Search memory, reference/, archives and daily logs (BM25, English and Chinese).

    Memory entries and log lines are ranked together; each hit gives its
    path, line, the whole line or entry as written, and its score. Searches
    the files as the agent sees them now.

    Example: memgit recall gateway restart   |   memgit recall --queries questions.txt -k 5 --json
    """
    from memgit.recall import recall as run

    if bool(query) == bool(queries_file):
        raise MemgitError("give either QUERY words or --queries FILE; "
                          "e.g. `memgit recall gateway restart`.")
    queries = _read_queries(queries_file) if queries_file else [" ".join(query)]
    ws = open_workspace(ctx)
    warnings: list[str] = []
    results = run(ws, queries, k, warnings)
    for w in warnings:
        warn(w)
    if as_json:
        lists = [[h.to_dict() for h in hits] for hits in results]
        echo_json(lists if queries_file else lists[0])
        return
    for q, hits in zip(queries, results):
        if queries_file:
            click.echo(style(f"== {q}", bold=True))
        if not hits:
            click.echo("No hits.")
        for h in hits:
            click.echo(f"{style(f'{h.path}:{h.line}', fg='cyan')}  {h.score:.2f}")
            for line in h.text.split("\n"):
                click.echo(f"    {line}")
