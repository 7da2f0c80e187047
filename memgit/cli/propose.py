"""`memgit propose prune|refresh|consolidate|merge`: click only."""
from __future__ import annotations

import click

from memgit.cli.common import echo_json, flush_warnings, open_workspace, style
from memgit.cli.options import json_option
from memgit.errors import MemgitError


@click.group()
def propose() -> None:
    """Ask for a memory change that a person must approve.

    Each subcommand makes one proposal branch (memgit/<id>) and never touches
    main or the files the agent reads.

    Example: memgit propose prune MEMORY.md --entry "Cloudflare tunnel" --reason "demo is over"
    """


def _propose(ctx: click.Context, make, as_json: bool, again: bool = False) -> None:
    from memgit import proposals

    ws = open_workspace(ctx)
    with ws.repo.lock():
        ws.prepare()
        op = make(ws)
        made = proposals.create(ws, [op], again=again)
    flush_warnings(ws)
    p = made[0]
    if as_json:
        echo_json(p.to_dict())
    else:
        click.echo(f"Proposed {style(p.id, fg='yellow')} ({p.branch}): {p.title}")
        click.echo(f"  review it with `memgit show {p.id}`")


def _entry(ws, file: str, needle: str) -> str:
    return ws.document(ws.check_memory_file(file)).entry(needle).text


_reason = click.option("--reason", default="", help="Why this change (shown to the reviewer).")
_json = json_option("Print the proposal as JSON.")
_again = click.option("--again", is_flag=True,
                      help="Propose it even though the same change was rejected or reverted before "
                           "(the dream itself never proposes it again).")


@propose.command("prune")
@click.argument("file")
@click.option("--entry", "needle", required=True, help="Text of the entry to remove (a unique substring).")
@_reason
@_again
@_json
@click.pass_context
def propose_prune(ctx, file, needle, reason, as_json, again):
    """Propose removing one entry.

    Example: memgit propose prune MEMORY.md --entry "tunnel for the demo"
    """
    from memgit.ops import Operation

    _propose(ctx, lambda ws: Operation("prune", file, (_entry(ws, file, needle),), reason=reason),
             as_json, again)


@propose.command("refresh")
@click.argument("file")
@click.option("--entry", "needle", required=True, help="Text of the entry to replace (a unique substring).")
@click.option("--to", "new", required=True, help="The entry's new text.")
@_reason
@_again
@_json
@click.pass_context
def propose_refresh(ctx, file, needle, new, reason, as_json, again):
    """Propose replacing an entry's text.

    Example: memgit propose refresh MEMORY.md --entry "Cockpit v1" --to "[P1] Cockpit v1 deployed (2026-06-01)"
    """
    from memgit.ops import Operation

    _propose(ctx, lambda ws: Operation("refresh", file, (_entry(ws, file, needle),), text=new,
                                       reason=reason), as_json, again)


@propose.command("consolidate")
@click.argument("file")
@click.option("--section", help="Heading text of the section (tag not needed); §-separated files have none.")
@click.option("--text", "new", required=True, help="The new entry.")
@_reason
@_again
@_json
@click.pass_context
def propose_consolidate(ctx, file, section, new, reason, as_json, again):
    """Propose adding an entry to a section.

    Example: memgit propose consolidate MEMORY.md --section Projects --text "[P1] Blog moved to Astro (2026-06-01)"
    """
    from memgit.ops import Operation

    def make(ws):
        doc = ws.document(ws.check_memory_file(file))
        if doc.hermes or not (section or doc.sections):
            title = None  # a §-separated file (or one without headings) takes the entry at its end
        elif not section:
            raise MemgitError(f"name the section of {file} with --section "
                              f"({', '.join(s.title for s in doc.sections)}).")
        else:
            title = doc.section(section).title
        return Operation("consolidate", file, (), text=new, section=title, reason=reason)

    _propose(ctx, make, as_json, again)


@propose.command("merge")
@click.argument("file")
@click.option("--entry", "needles", multiple=True, required=True,
              help="An entry to merge (give two or more).")
@click.option("--to", "new", required=True, help="The merged entry.")
@_reason
@_again
@_json
@click.pass_context
def propose_merge(ctx, file, needles, new, reason, as_json, again):
    """Propose merging several entries into one.

    Example: memgit propose merge MEMORY.md --entry "export the" --entry "To export" --to "[P1] Export: CSV"
    """
    from memgit.ops import Operation

    def make(ws):
        if len(needles) < 2:
            raise MemgitError("merge needs two or more --entry options.")
        targets = tuple(dict.fromkeys(_entry(ws, file, n) for n in needles))
        if len(targets) < 2:
            raise MemgitError("the --entry options name the same entry; give two different entries.")
        return Operation("merge", file, targets, text=new, reason=reason)

    _propose(ctx, make, as_json, again)

