"""Reading and deciding proposals: `proposals`, `show`, `approve`, `reject`, `revert`, `review`, `pr`, `serve`."""
from __future__ import annotations

import sys
import threading

import click

from memgit.cli.common import echo_json, flush_warnings, open_workspace, style, use_color, warn
from memgit.cli.options import json_option
from memgit.errors import MemgitError


@click.command("proposals")
@click.option("--all", "show_all", is_flag=True, help="Include approved, rejected and reverted ones.")
@click.option("--sort", "order", type=click.Choice(["time", "confidence"]), default="time", show_default=True,
              help="Newest first, or most confident first (ties: newest first).")
@json_option("Print a JSON list.")
@click.pass_context
def proposals_cmd(ctx, show_all, order, as_json):
    """List open proposals, like `gh pr list`: newest first, or by confidence.

    Example: memgit proposals --all   |   memgit proposals --sort confidence
    """
    from memgit import proposals
    from memgit.review.common import age

    ws = open_workspace(ctx)
    items = proposals.sorted_proposals(proposals.list_proposals(ws, include_closed=show_all), order)
    bad = proposals.unreadable(ws)
    if as_json:
        echo_json([p.to_dict() for p in items] + [{"id": i, "status": "unreadable", "why": why}
                                                  for i, why in bad])
        return
    for i, why in bad:
        click.echo(f"{style(i, fg='red')}  unreadable: {why}; `memgit reject {i}` closes it")
    if not items:
        if not bad:
            click.echo("No open proposals." if not show_all else "No proposals.")
        return
    for p in items:
        conf = f"{p.op.confidence:.2f}" if p.op.confidence is not None else "  - "
        applies = "" if p.status != "open" else ("" if p.applies else style("  [stale: " + p.why_not + "]",
                                                                             fg="red"))
        status = "" if p.status == "open" else style(f"[{p.status}] ", fg="cyan")
        click.echo(f"{style(p.id, fg='yellow')}  {p.op.op:<11} {p.op.file:<10} {conf}  {age(p.created):>4}  "
                   f"{status}{p.title}{applies}")


@click.command()
@click.argument("proposal_id")
@json_option("Print the proposal and its diff as JSON.")
@click.pass_context
def show(ctx, proposal_id, as_json):
    """Show one proposal like a pull request: reason, evidence and diff.

    Example: memgit show 1a2b3c4d
    """
    from memgit import proposals
    from memgit.review.terminal import render_show

    ws = open_workspace(ctx)
    p = proposals.get(ws, proposal_id)
    d = proposals.diff(ws, p)
    if as_json:
        echo_json({**p.to_dict(), "diff": d})
        return
    click.echo(render_show(p, d, use_color()))


@click.command()
@click.argument("ids", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Approve every open proposal.")
@click.option("--min-confidence", type=click.FloatRange(0, 1), help="With --all: only these confident ones.")
@click.option("--allow-p0", is_flag=True,
              help="Let the proposals named by id change P0 entries or protected sections.")
@json_option("Print the result as JSON.")
@click.pass_context
def approve(ctx, ids, all_, min_confidence, allow_p0, as_json):
    """Merge proposals into main (re-applied to the current main).

    A proposal whose target entry changed or vanished is refused with its
    reason and stays open. With --all, refused ones are reported and the rest
    approved; naming an id that is refused exits 1. Every guard runs again
    here: a proposal whose commit shows another change than its record, that
    changes a file other than memory, or writes sensitive data is refused; one
    that changes a P0 entry or a protected section needs its id and --allow-p0.

    Example: memgit approve 1a2b3c4d   |   memgit approve --all --min-confidence 0.8
    """
    from memgit import proposals

    if bool(ids) == bool(all_):
        raise MemgitError("name proposal ids or give --all (not both); `memgit proposals` lists them.")
    if min_confidence is not None and not all_:
        raise MemgitError("--min-confidence applies only with --all; named proposals are approved as named.")
    if allow_p0 and all_:
        raise MemgitError("--allow-p0 applies only to proposals named by id; give their ids.")
    for i in ids:
        proposals.check_id(i)
    ws = open_workspace(ctx)
    if all_ and not proposals.list_proposals(ws, check=False):
        if as_json:
            echo_json({"approved": [], "refused": [], "commit": None})
        else:
            click.echo("Nothing to approve: no open proposals.")
        return
    r = proposals.approve(ws, list(ids), min_confidence, allow_p0=allow_p0)
    wake = _wake_check(ws, r.approved)
    flush_warnings(ws)
    if as_json:
        echo_json({"approved": [p.id for p in r.approved], "refused": [{"id": i, "reason": why}
                                                                        for i, why in r.refused],
                   "commit": r.commit, "wake_check_missing": wake})
    else:
        for p in r.approved:
            click.echo(f"Approved {style(p.id, fg='green')}: {p.title}")
        for i, why in r.refused:
            # a named proposal refused fails the command (exit 1); under --all the others went ahead
            lead = "Error: refused" if ids else "Warning: refused"
            click.echo(f"{lead} {style(i, fg='red')} (still open): {why}", err=True)
        for i in wake:
            warn(f"wake check: recall does not find the change of {i} by its own key terms.")
        if r.commit:
            click.echo(f"main is now {r.commit[:8]}")
    if r.refused and ids:
        sys.exit(1)


def _wake_check(ws, approved) -> list[str]:
    from memgit.recall import wake_check

    return wake_check(ws, approved)


@click.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("--reason", default="", help="Why (remembered; the same change is not proposed again).")
@click.pass_context
def reject(ctx, ids, reason):
    """Close proposals without merging; a later dream will not propose them again.

    Example: memgit reject 1a2b3c4d --reason "still pending, the log was wrong"
    """
    from memgit import proposals

    for i in ids:
        proposals.check_id(i)
    ws = open_workspace(ctx)
    bad = dict(proposals.unreadable(ws))
    done = proposals.reject(ws, list(ids), reason)
    for i in ids:
        for pid in bad:
            if pid.startswith(i):
                click.echo(f"Rejected {style(pid, fg='red')}: unreadable ({bad[pid]})")
    for p in done:
        click.echo(f"Rejected {style(p.id, fg='red')}: {p.title}")


@click.command()
@click.argument("proposal_id")
@click.pass_context
def revert(ctx, proposal_id):
    """Roll back an approved proposal with a new commit, keeping later changes.

    Example: memgit revert 1a2b3c4d
    """
    from memgit import proposals

    ws = open_workspace(ctx)
    sha = proposals.revert(ws, proposal_id)
    flush_warnings(ws)
    click.echo(f"Reverted {proposal_id}; main is now {sha[:8]}")



class ClickTerminal:
    """Keys, lines and the editor through click; one key without Enter on a TTY, a line otherwise."""

    def write(self, text: str) -> None:
        click.echo(text, nl=False)

    def key(self, prompt: str) -> str:
        click.echo(prompt, nl=False)
        if sys.stdin.isatty():
            try:
                ch = click.getchar()
            except EOFError:
                ch = ""
            click.echo(ch if ch.isprintable() else "")
            return ch.lower()
        line = sys.stdin.readline()
        click.echo("")
        return line.strip()[:1].lower()

    def ask(self, prompt: str) -> str:
        # input(), not click.prompt: click turns Ctrl-C into Abort, and Ctrl-C here means "stop",
        # never "reject with no reason"; KeyboardInterrupt reaches review(), which stops and sums up
        click.echo(prompt, nl=False)
        try:
            return input()
        except EOFError:
            return ""

    def edit(self, text: str) -> str | None:
        try:
            return click.edit(text, extension=".md", require_save=True)
        except click.ClickException as e:
            warn(f"{e.format_message()}; set $EDITOR to your editor.")
            return None


@click.command()
@click.argument("ids", nargs=-1)
@json_option("Print the summary as JSON at the end.")
@click.pass_context
def review(ctx, ids, as_json):
    """Review open proposals one by one: approve, reject, edit or skip each.

    \b
    Each proposal shows its operation, file, confidence, age and reason,
    the evidence with its sources, and the diff with the words that changed
    inside a line highlighted ([-old-] / {+new+} without colour). Keys:
      a  approve into main
      r  reject (asks a reason; the same change is not proposed again)
      e  edit the proposed text in $EDITOR, then approve the edited version
         (a new proposal replaces the original, which is closed as rejected)
      s  skip for now        q  quit
    Colours are off under NO_COLOR or when stdout is not a terminal.

    Example: memgit review
    """
    from memgit.review.terminal import review as run

    ws = open_workspace(ctx)
    summary = run(ws, ClickTerminal(), use_color(), list(ids))
    if as_json:
        echo_json(summary.to_dict())
    else:
        click.echo(summary.line())


@click.command()
@click.argument("proposal_id")
@click.option("--title", "title_only", is_flag=True, help="Print the title line (with --body: both).")
@click.option("--body", "body_only", is_flag=True, help="Print the markdown body (with --title: both).")
@json_option("Print id, branch, title and body as JSON.")
@click.pass_context
def pr(ctx, proposal_id, title_only, body_only, as_json):
    """Print a proposal as a pull request: a title line, a blank line, a markdown body.

    The body holds the operation, confidence, reason, evidence and the diff in
    a ```diff block; secrets are redacted everywhere. Push the branch and open
    it on any forge, e.g. with GitHub's CLI:

    \b
      git push origin memgit/ID
      memgit pr ID --body | gh pr create --head memgit/ID \\
          --title "$(memgit pr ID --title)" --body-file -

    Example: memgit pr 1a2b3c4d
    """
    from memgit.review.pr import build

    if as_json and (title_only or body_only):
        raise MemgitError("--json prints the title and the body already; drop --title/--body.")
    p = build(open_workspace(ctx), proposal_id)
    if as_json:
        echo_json(p.to_dict())
    elif title_only and not body_only:
        click.echo(p.title)
    elif body_only and not title_only:
        click.echo(p.body, nl=False)
    else:
        click.echo(p.text(), nl=False)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but loopback exposes memory to the network.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--no-open", is_flag=True, help="Do not open a browser; just print the address.")
@click.pass_context
def serve(ctx, host, port, no_open):
    """Review proposals in the browser: a local site with approve, reject, edit and revert.

    Prints its address: a random secret path and access token
    (http://127.0.0.1:PORT/s/SECRET/?token=…); requests outside that path or
    without the token are refused, and changes need the page's own CSRF token.
    Stop it with Ctrl-C.

    Example: memgit serve --port 8765
    """
    import webbrowser

    from memgit.review.web import is_loopback
    from memgit.review.web import serve as make

    ws = open_workspace(ctx)
    try:
        server = make(ws.root, host, port)
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host}:{port} ({e.strerror or e}); "
                                   f"pick another --port.") from None
    if not is_loopback(host):
        warn(f"listening on {host}: anyone who can reach it and learns the token can change this memory.")
    click.echo(f"memgit review for {ws.root}")
    click.echo(f"  {server.url}")
    try:  # from the prompt on: a Ctrl-C that lands before serve_forever starts still stops cleanly
        click.echo("Press Ctrl-C to stop.")
        if not no_open:
            threading.Timer(0.3, webbrowser.open, args=(server.url,)).start()
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("\nStopped serving the review.")
    finally:
        server.server_close()
