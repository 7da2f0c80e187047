"""memgit.config: one typed Config from memgit.toml, defaults in one place, ConfigError naming the key."""
from __future__ import annotations

import dataclasses

import pytest

from memgit.config import DEFAULT_TOML, Config, load_config, parse_config
from memgit.errors import ConfigError


def test_default_toml_is_exactly_the_defaults():
    assert dataclasses.replace(parse_config(DEFAULT_TOML), path=None) == Config()


def test_no_file_gives_defaults(tmp_path):
    cfg = load_config(tmp_path)
    assert cfg == Config()
    assert cfg.path is None
    assert cfg.memory.files == ("MEMORY.md", "USER.md")
    assert cfg.dream.threshold == 0.7 and cfg.dream.max_ops == 10 and cfg.dream.forced_prune_pct == 90
    assert (cfg.lifecycle.log_days, cfg.lifecycle.p2_days, cfg.lifecycle.p1_days) == (30, 30, 90)
    assert cfg.llm.backend == "offline"


def test_values_are_read_and_typed(tmp_path):
    (tmp_path / "memgit.toml").write_text(
        '\ufeff[memory]\nfiles = ["CLAUDE.md"]\nprotected_sections = ["Agent Cases"]\n'
        '[capacity]\n"CLAUDE.md" = 40000\n"notes/TEAM.md" = 900\n'
        '[dream]\nthreshold = 1\nforced_prune_pct = 80\n'
        '[llm]\nbackend = "anthropic"\ntimeout = 5\n', encoding="utf-8")
    cfg = load_config(tmp_path)
    assert cfg.path == tmp_path / "memgit.toml"
    assert cfg.memory.files == ("CLAUDE.md",)
    assert cfg.memory.protected_sections == ("Agent Cases",)
    assert cfg.memory_files == ("CLAUDE.md", "notes/TEAM.md")  # a file with a budget is a memory file
    assert cfg.budget("CLAUDE.md") == 40000 and cfg.budget("USER.md") is None
    assert cfg.dream.threshold == 1.0 and isinstance(cfg.dream.threshold, float)
    assert cfg.llm.timeout == 5.0 and isinstance(cfg.llm.timeout, float)
    assert cfg.dream.max_ops == 10  # untouched keys keep their defaults


@pytest.mark.parametrize("toml, names", [
    ("[dream]\nthreshold = \"high\"\n", "dream.threshold"),
    ("[dream]\nmax_ops = 2.5\n", "dream.max_ops"),
    ("[dream]\nassociate = 1\n", "dream.associate"),
    ("[lifecycle]\nlog_days = true\n", "lifecycle.log_days"),
    ("[memory]\nfiles = \"MEMORY.md\"\n", "memory.files"),
    ("[memory]\nfiles = [1, 2]\n", "memory.files"),
    ("[llm]\nmodel = 4\n", "llm.model"),
    ("[dream]\nwindow = 7\n", "dream.window"),
    ("[dreams]\nwindow_days = 7\n", "dreams"),
    ("[llm]\nbackend = \"openai\"\n", "llm.backend"),
    ("[capacity]\n\"MEMORY.md\" = \"2k\"\n", "MEMORY.md"),
    ("[capacity]\n\"MEMORY.md\" = 0\n", "MEMORY.md"),
    ("[capacity]\n\"../etc/passwd\" = 10\n", "../etc/passwd"),
    ("[memory]\nlogs_dir = \"../elsewhere\"\n", "../elsewhere"),
    ("[memory]\nfiles = [\"/etc/MEMORY.md\"]\n", "/etc/MEMORY.md"),
    ("[dream]\nthreshold = 1.5\n", "dream.threshold"),
    ("[dream]\nforced_prune_pct = 0\n", "dream.forced_prune_pct"),
    ("[dream]\nwindow_days = 0\n", "dream.window_days"),
    ("dream = 3\n", "dream"),
    ("capacity = 3\n", "capacity"),
])
def test_bad_values_name_the_key(toml, names):
    with pytest.raises(ConfigError) as ei:
        parse_config(toml, "memgit.toml")
    msg = str(ei.value)
    assert names in msg
    assert msg.startswith("memgit.toml")
    assert "\n" not in msg


def test_invalid_toml_is_a_config_error(tmp_path):
    (tmp_path / "memgit.toml").write_text("[dream\nthreshold = 0.7\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(tmp_path)


def test_undecodable_file_is_a_config_error(tmp_path):
    (tmp_path / "memgit.toml").write_bytes(b"[dream]\nthreshold = \xff\n")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(tmp_path)


def test_config_is_frozen():
    cfg = Config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.dream = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.dream.threshold = 0.1  # type: ignore[misc]


@pytest.mark.parametrize("toml, key", [
    ("[dream]\nthreshold = \"high\"\n", "dream.threshold"),
    ("[dream]\nbogus = 1\n", "dream.bogus"),
])
def test_cli_reports_a_bad_config_cleanly(workspace, run_cli, toml, key):
    (workspace.root / "memgit.toml").write_text(toml, encoding="utf-8")
    code, out, err = run_cli(workspace, "status")
    assert code == 1
    assert err.startswith("Error: ") and key in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert out == ""


def test_init_refuses_a_broken_config_before_committing(tmp_path, run_cli, git):
    (tmp_path / "MEMORY.md").write_text("- a\n", encoding="utf-8")
    (tmp_path / "memgit.toml").write_text("[capacity]\n\"MEMORY.md\" = -1\n", encoding="utf-8")
    code, _out, err = run_cli(tmp_path, "init")
    assert code == 1 and err.startswith("Error: ") and "MEMORY.md" in err and "Traceback" not in err
    assert git(tmp_path, "rev-parse", "-q", "--verify", "refs/heads/main", check=False).returncode != 0


def _numbers():
    from dataclasses import fields

    from memgit.config import _SECTIONS

    for name, cls in _SECTIONS.items():
        for f in fields(cls):
            v = getattr(cls(), f.name)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                yield name, f.name, v


@pytest.mark.parametrize("name,key,default", list(_numbers()))
def test_every_number_has_bounds_naming_the_key_and_its_range(name, key, default):
    from memgit.config import _RANGES

    assert (name, key) in _RANGES, f"{name}.{key} has no range"
    lo, hi, _ = _RANGES[(name, key)]
    assert lo <= default <= hi
    for bad in (999999999999, -1, *(("nan", "inf") if isinstance(default, float) else ())):
        with pytest.raises(ConfigError) as ei:
            parse_config(f"[{name}]\n{key} = {bad}\n", "memgit.toml")
        msg = str(ei.value)
        assert f"'{name}.{key}'" in msg and f"at most {hi:g}" in msg and "\n" not in msg
    assert parse_config(f"[{name}]\n{key} = {hi!r}\n").__getattribute__(name).__getattribute__(key) == hi


def test_capacity_has_an_upper_bound():
    with pytest.raises(ConfigError, match="MEMORY.md.*100,000,000"):
        parse_config('[capacity]\n"MEMORY.md" = 999999999999\n')
