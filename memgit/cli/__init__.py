"""The click layer: the `memgit` group, its commands (one module per group of them) and `main()`.

Nothing below this package prints. Each module parses, calls the library and formats; they share only
`common` and `options`, never each other's names.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from memgit.cli import dream, hooks, ingest, lifecycle, mcp, propose, recall, reflect, remote, review, workspace
from memgit.cli.common import os_error_message
from memgit.errors import MemgitError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "directory", type=click.Path(file_okay=False, path_type=Path),
              help="Run as if memgit was started in this workspace folder.")
@click.version_option(package_name="memgit", message="memgit %(version)s")
@click.pass_context
def cli(ctx: click.Context, directory: Path | None) -> None:
    """memgit: your agent's memory as a git repo, changed only through reviewed proposals.

    \b
    Quick start:
      memgit init                  # adopt the workspace in this folder
      memgit dream                 # propose what should change in memory
      memgit proposals             # list them like pull requests
      memgit show ID               # read one, with its evidence and diff
      memgit approve ID            # merge it into main (or: reject, revert)
    """
    ctx.ensure_object(dict)
    ctx.obj["dir"] = directory


# every command, by its module: no command is found by name or loaded only if present
for command in (workspace.init, workspace.status, workspace.log_cmd, workspace.help_,
                propose.propose,
                review.proposals_cmd, review.show, review.approve, review.reject, review.revert,
                review.review, review.pr, review.serve,
                dream.dream, lifecycle.expire, lifecycle.janitor, lifecycle.schedule, reflect.reflect,
                recall.recall, remote.push, remote.pull, remote.scrub, ingest.ingest, mcp.mcp, hooks.hook):
    cli.add_command(command)


def main() -> None:
    try:
        cli.main(standalone_mode=False, prog_name="memgit")
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except MemgitError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            sys.exit(0)
        click.echo(f"Error: {os_error_message(e)}", err=True)
        sys.exit(1)
    except Exception:  # a bug, not a user error: keep the traceback, and an exit code scripts can tell apart
        import traceback

        traceback.print_exc()
        sys.exit(3)

