"""Options several commands share, declared once (sqlite-utils' `output_options`)."""
from __future__ import annotations

from typing import Callable

import click

now_option = click.option("--now", "now", metavar="YYYY-MM-DD", help="Pin 'today' (default: the real date).")


def json_option(help: str) -> Callable:
    """`--json`, with what it prints in this command's words."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def dry_run_option(help: str = "Show what would be proposed; make no proposal.") -> Callable:
    """`--dry-run`: report what would happen, change nothing."""
    return click.option("--dry-run", is_flag=True, help=help)
