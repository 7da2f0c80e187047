"""`memgit ingest`: click only."""
from __future__ import annotations

from pathlib import Path

import click

from memgit.cli.common import echo_json, open_workspace, warn
from memgit.cli.options import json_option
from memgit.ingest import FORMATS


@click.command()
@click.option("--from", "fmt", default="auto", show_default=True, type=click.Choice(FORMATS),
              help="Transcript format of the given paths; auto recognises each file by its content.")
@click.option("--owner", "owners", multiple=True, metavar="ID",
              help="A sender id or name that is you, for group chats (repeatable); "
                   "without it, group members other than you are kept as other people.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option("Print the summary as JSON.")
@click.pass_context
def ingest(ctx, fmt, owners, paths, as_json):
    """Copy agent transcripts into sessions/ in memgit's JSONL format.

    Who said each turn is kept: you, the assistant, another person (named), or a
    model's summary; harness and tool text is left out, and per file memgit says
    what it read and what it left out. Sensitive values are redacted in the stored
    copies; re-ingesting the same input adds nothing. Formats: claude-code (~/.claude/projects/<project>/*.jsonl),
    openclaw (~/.openclaw/agents/<id>/sessions/*.jsonl), hermes (~/.hermes/state.db),
    codex (~/.codex/sessions/**/rollout-*.jsonl),
    events (one JSON event per line), jsonl (memgit's own format, validated).

    Example: memgit ingest --from claude-code ~/.claude/projects/-home-me-agent
    """
    from memgit.ingest import ingest as run

    ws = open_workspace(ctx)
    with ws.repo.lock():
        s = run(ws.root, fmt, list(paths), ws.config.memory.sessions_dir, frozenset(owners))
    if as_json:
        echo_json({"format": s.fmt, "files_read": s.files_read, "sessions_written": s.sessions_written,
                   "turns_added": s.turns_added, "turns_skipped_duplicate": s.turns_skipped_duplicate,
                   "turns_redacted": s.turns_redacted, "warnings": s.warnings,
                   "files": [{"path": f.path, "format": f.fmt, "kept": f.kept, "skipped": f.skipped}
                             for f in s.files]})
        return
    for w in s.warnings:
        warn(w)
    for f in s.files:
        kept = ", ".join(f"{n} {role}" for role, n in f.kept.items()) or "nothing"
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(f.skipped.items(), key=lambda kv: -kv[1]))
        click.echo(f"  {f.path} ({f.fmt or 'skipped'}): read {kept}" + (f"; left out {skipped}" if skipped else ""))
    click.echo(f"Ingested {s.turns_added} turn(s) from {s.files_read} file(s) ({fmt}) into "
               f"{len(s.sessions_written)} session file(s); {s.turns_skipped_duplicate} already there, "
               f"{s.turns_redacted} redacted.")
    for f in s.sessions_written:
        click.echo(f"  {f}")
