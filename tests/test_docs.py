"""Docs cannot drift (sqlite-utils style): every command has help with an example, and every
top-level command is documented in the README."""
from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memgit import cli as cli_module

README = Path(__file__).resolve().parent.parent / "README.md"


def _commands() -> list[tuple[str, click.Command]]:
    """Every visible command and subcommand, by its full name ("propose prune"), feature modules included."""

    def walk(group: click.Group, prefix: str):
        for name, cmd in sorted(group.commands.items()):
            if cmd.hidden:  # internal entry points (the git hook) are not user commands
                continue
            full = f"{prefix} {name}".strip()
            yield full, cmd
            if isinstance(cmd, click.Group):
                yield from walk(cmd, full)

    return list(walk(cli_module.cli, ""))


COMMANDS = _commands()
TOP_LEVEL = sorted(name for name, _ in COMMANDS if " " not in name)


def test_the_core_commands_are_all_there():
    names = {name for name, _ in COMMANDS}
    assert {"init", "propose", "propose prune", "propose refresh", "propose consolidate", "propose merge",
            "proposals", "show", "approve", "reject", "revert", "log", "status"} <= names


@pytest.mark.parametrize("name, cmd", COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_has_help_with_an_example(name, cmd):
    help_text = cmd.help or ""
    assert help_text.strip(), f"`memgit {name}` has no help text"
    assert (cmd.short_help or help_text.strip().splitlines()[0]).strip()
    examples = [ln.strip() for ln in help_text.splitlines() if ln.strip().startswith("Example:")]
    assert examples, f"`memgit {name}` help has no `Example:` line"
    assert all("memgit " in ex for ex in examples), examples
    result = CliRunner().invoke(cli_module.cli, [*name.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert "Example:" in result.output


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_every_top_level_command_is_in_the_readme(name):
    text = README.read_text(encoding="utf-8")
    assert re.search(rf"memgit {re.escape(name)}\b", text), f"README.md does not show `memgit {name}`"


def test_the_readme_test_command_is_what_ci_runs():
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m pytest -q" in README.read_text(encoding="utf-8")
    assert ci.rstrip().splitlines()[-1].strip() == "python3 -m pytest -q"


def test_the_readme_sample_dream_is_what_the_sample_gives(tmp_path):
    """The README shows a real dream over sample_memory/: it must not drift from what memgit prints."""
    import shutil
    import subprocess
    import sys

    from memgit.adopt import init

    ws = tmp_path / "sample"
    shutil.copytree(README.parent / "sample_memory", ws)
    init(ws)
    p = subprocess.run([sys.executable, "-m", "memgit", "-C", str(ws), "dream", "--now", "2026-11-30"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    text = README.read_text(encoding="utf-8")
    block = text.split("## A dream, for real", 1)[1].split("```", 2)[1]
    shown = [ln for ln in block.splitlines() if ln.strip()]
    assert shown and all(ln in p.stdout.splitlines() for ln in shown), p.stdout
