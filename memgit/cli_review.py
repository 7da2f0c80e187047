"""`memgit review`, `memgit pr`, `memgit serve`: click only."""
from __future__ import annotations

import sys
import threading

import click

from memgit.cli import _color, _ws, echo_json, warn
from memgit.errors import MemgitError


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
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON at the end.")
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

    ws = _ws(ctx)
    summary = run(ws, ClickTerminal(), _color(), list(ids))
    if as_json:
        echo_json(summary.to_dict())
    else:
        click.echo(summary.line())


@click.command()
@click.argument("proposal_id")
@click.option("--title", "title_only", is_flag=True, help="Print the title line (with --body: both).")
@click.option("--body", "body_only", is_flag=True, help="Print the markdown body (with --title: both).")
@click.option("--json", "as_json", is_flag=True, help="Print id, branch, title and body as JSON.")
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
    p = build(_ws(ctx), proposal_id)
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

    ws = _ws(ctx)
    try:
        server = make(ws.root, host, port)
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host}:{port} ({e.strerror or e}); "
                                   f"pick another --port.") from None
    if not is_loopback(host):
        warn(f"listening on {host}: anyone who can reach it and learns the token can change this memory.")
    click.echo(f"memgit review for {ws.root}")
    click.echo(f"  {server.url}")
    click.echo("Press Ctrl-C to stop.")
    if not no_open:
        threading.Timer(0.3, webbrowser.open, args=(server.url,)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("\nStopped serving the review.")
    finally:
        server.server_close()


COMMANDS = [review, pr, serve]
