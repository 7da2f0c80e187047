"""memgit.cli: a package of command modules registered explicitly, sharing only `common` and `options`."""
from __future__ import annotations

import ast
from pathlib import Path

import click

import memgit
from memgit import cli
from memgit.adopt import LAYOUTS
from memgit.dream import BACKENDS
from memgit.ingest import FORMATS

PACKAGE = Path(memgit.__file__).resolve().parent
CLI = PACKAGE / "cli"
SHARED = {"common", "options"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _command_modules() -> list[str]:
    return sorted(p.stem for p in CLI.glob("*.py") if p.stem != "__init__" and p.stem not in SHARED)


def test_the_cli_is_a_package_and_the_old_modules_are_gone():
    assert (CLI / "__init__.py").is_file()
    assert not list(PACKAGE.glob("cli_*.py")) and not (PACKAGE / "cli.py").exists()
    assert not (PACKAGE / "commands.py").exists()


def test_init_imports_every_command_module_by_name_and_nothing_loads_one_by_string():
    imported = set()
    for node in ast.walk(_tree(CLI / "__init__.py")):
        if isinstance(node, ast.ImportFrom) and node.module == "memgit.cli":
            imported |= {a.name for a in node.names}
    assert imported == set(_command_modules())
    for path in CLI.glob("*.py"):
        assert "importlib" not in path.read_text(encoding="utf-8"), path.name


def test_every_command_a_module_defines_is_registered():
    from importlib import import_module

    reachable = set()
    for cmd in cli.cli.commands.values():
        reachable.add(cmd)
        if isinstance(cmd, click.Group):
            reachable |= set(cmd.commands.values())
    for name in _command_modules():
        mod = import_module(f"memgit.cli.{name}")
        defined = [v for v in vars(mod).values() if isinstance(v, click.Command)]
        assert defined, name
        assert all(c in reachable for c in defined), (name, [c.name for c in defined if c not in reachable])


def test_no_cli_module_imports_a_private_name_or_another_command_module():
    for path in CLI.glob("*.py"):
        if path.stem == "__init__":
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memgit"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, (path.name, node.module, private)
                assert node.module != "memgit.cli", (path.name, "imports back from memgit.cli")
                if node.module.startswith("memgit.cli."):
                    assert node.module.rsplit(".", 1)[1] in SHARED, (path.name, node.module)


def test_now_is_declared_in_exactly_one_place():
    places = [f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno}"
              for path in PACKAGE.rglob("*.py") for node in ast.walk(_tree(path))
              if isinstance(node, ast.Call) and any(isinstance(a, ast.Constant) and a.value == "--now"
                                                    for a in node.args)]
    assert len(places) == 1 and places[0].startswith("cli/options.py:"), places


def test_choices_come_from_the_library_registries():
    def choices(path: list[str], option: str) -> list[str]:
        cmd: click.Command = cli.cli
        for name in path:
            cmd = cmd.commands[name]
        [param] = [p for p in cmd.params if option in p.opts]
        return list(param.type.choices)

    assert choices(["dream"], "--backend") == list(BACKENDS)
    assert choices(["init"], "--layout") == list(LAYOUTS)
    assert choices(["ingest"], "--from") == list(FORMATS)
