"""Feature commands live in cli_<feature>.py modules (click only, no logic);
each module that exists adds its commands to the group."""
from __future__ import annotations

import importlib

import click

FEATURES = ("cli_dream", "cli_lifecycle", "cli_recall", "cli_reflect", "cli_review", "cli_remote", "cli_ingest")


def register(group: click.Group) -> None:
    for name in FEATURES:
        try:
            mod = importlib.import_module(f"memgit.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"memgit.{name}":
                raise
            continue
        for cmd in getattr(mod, "COMMANDS", ()):
            group.add_command(cmd)
