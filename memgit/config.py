"""memgit.toml → one typed, validated Config. Defaults live here and nowhere else."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from memgit.errors import ConfigError

CONFIG_NAME = "memgit.toml"



@dataclass(frozen=True)
class MemorySettings:
    files: tuple[str, ...] = ("MEMORY.md", "USER.md")
    logs_dir: str = "memory"
    sessions_dir: str = "sessions"
    archive_dir: str = "memory"
    reference_dir: str = "reference"
    protected_sections: tuple[str, ...] = ()


@dataclass(frozen=True)
class DreamSettings:
    window_days: int = 7
    threshold: float = 0.7
    max_ops: int = 10
    forced_prune_pct: float = 90.0
    associate: bool = False


@dataclass(frozen=True)
class LifecycleSettings:
    log_days: int = 30
    p2_days: int = 30
    p1_days: int = 90
    events_days: int = 90


@dataclass(frozen=True)
class ScheduleSettings:
    dream: str = "1d"
    janitor: str = "1d"
    reflect: str = "1d"
    expire: str = "30d"


@dataclass(frozen=True)
class LLMSettings:
    backend: str = "offline"
    model: str = "claude-sonnet-4-6"
    max_tokens: int = 4096
    token_budget: int = 200000
    timeout: float = 60.0
    max_retries: int = 2
    fallback_offline: bool = False


@dataclass(frozen=True)
class AgentSettings:
    # true: the agent writes its memory files itself and memgit commits those edits to main (as today);
    # false: the agent must go through review: an edit it makes to a memory file becomes a proposal
    direct_writes: bool = True


@dataclass(frozen=True)
class Config:
    memory: MemorySettings = field(default_factory=MemorySettings)
    capacity: dict[str, int] = field(default_factory=lambda: {"MEMORY.md": 2200, "USER.md": 1375})
    dream: DreamSettings = field(default_factory=DreamSettings)
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    path: Path | None = None

    @property
    def memory_files(self) -> tuple[str, ...]:
        """Memory files: the configured list plus any file given a capacity."""
        extra = tuple(f for f in self.capacity if f not in self.memory.files)
        return self.memory.files + extra

    def budget(self, name: str) -> int | None:
        return self.capacity.get(name)


_COMMENTS = {
    ("memory", "archive_dir"): "archives go to <archive_dir>/archive-YYYY-MM/",
    ("memory", "protected_sections"): 'e.g. ["Agent Cases"]: never changed, like P0',
    ("dream", "associate"): "true: every dream also writes the memgit-diary.md diary",
    ("schedule", "dream"): 'cadences for `memgit schedule install`; "off" drops a job',
    ("llm", "backend"): '"offline" (embedded) or "anthropic"',
    ("agent", "direct_writes"): "false: the agent's edits to memory files become proposals",
}


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, tuple):
        return "[" + ", ".join(f'"{x}"' for x in v) + "]"
    return f'"{v}"'


def default_toml(capacity: dict[str, int] | None = None, files: tuple[str, ...] | None = None) -> str:
    """The memgit.toml `memgit init` writes: every setting at its default, rendered from the dataclasses."""
    cfg = Config()
    out = ["# memgit configuration (see README: Configuration)"]
    for name in ("memory", "capacity", "dream", "lifecycle", "schedule", "llm", "agent"):
        out.append(f"[{name}]")
        if name == "capacity":
            for f, n in (capacity or cfg.capacity).items():
                out.append(f'"{f}" = {n}')
        else:
            section = getattr(cfg, name)
            for fld in fields(section):
                value = getattr(section, fld.name)
                if name == "memory" and fld.name == "files" and files is not None:
                    value = tuple(files)
                line = f"{fld.name} = {_toml_value(value)}"
                note = _COMMENTS.get((name, fld.name))
                out.append(f"{line:<30}# {note}" if note else line)
        out.append("")
    return "\n".join(out)


_SECTIONS = {
    "memory": MemorySettings,
    "dream": DreamSettings,
    "lifecycle": LifecycleSettings,
    "schedule": ScheduleSettings,
    "llm": LLMSettings,
    "agent": AgentSettings,
}
_CHOICES = {("llm", "backend"): ("offline", "anthropic")}
# Every number memgit.toml may hold, with the range it must lie in (low end excluded where marked):
# past these a date computed from a span, a timeout or a loop bound overflows or runs for ever.
_RANGES: dict[tuple[str, str], tuple[float, float, bool]] = {
    ("dream", "window_days"): (1, 3650, False),
    ("dream", "threshold"): (0.0, 1.0, False),
    ("dream", "max_ops"): (0, 1000, False),
    ("dream", "forced_prune_pct"): (0.0, 100.0, True),
    ("lifecycle", "log_days"): (1, 36500, False),
    ("lifecycle", "p2_days"): (1, 36500, False),
    ("lifecycle", "p1_days"): (1, 36500, False),
    ("lifecycle", "events_days"): (1, 36500, False),
    ("llm", "max_tokens"): (1, 1_000_000, False),
    ("llm", "token_budget"): (1, 100_000_000, False),
    ("llm", "timeout"): (0.0, 3600.0, True),
    ("llm", "max_retries"): (0, 100, False),
}
MAX_CAPACITY = 100_000_000  # characters: a memory file's budget


def _check_range(where: str, key: str, v: float, lo: float, hi: float, open_lo: bool) -> None:
    if not ((lo < v if open_lo else lo <= v) and v <= hi):  # also refuses nan
        low = f"greater than {lo:g}" if open_lo else f"at least {lo:g}"
        raise ConfigError(f"{where}: '{key}' must be {low} and at most {hi:g}, not {v!r}; fix it in memgit.toml.")


def _coerce(where: str, key: str, value: Any, default: Any) -> Any:
    """Check one value against the type of its default; ints are accepted for floats."""
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, tuple):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        value = tuple(value) if ok else value
    else:  # pragma: no cover - every default has one of the types above
        ok = True
    if not ok:
        kind = type(default).__name__.replace("tuple", "list of strings")
        raise ConfigError(f"{where}: [{key}] must be a {kind}, not {value!r}; fix it in memgit.toml.")
    return value


def _section(where: str, name: str, cls: type, raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [{name}] must be a table; fix it in memgit.toml.")
    defaults = cls()
    known = {f.name for f in fields(cls)}
    values = {}
    for key, value in raw.items():
        if key not in known:
            raise ConfigError(
                f"{where}: unknown key '{name}.{key}'; use one of {', '.join(sorted(known))}.")
        v = _coerce(where, f"{name}.{key}", value, getattr(defaults, key))
        choices = _CHOICES.get((name, key))
        if choices and v not in choices:
            raise ConfigError(f"{where}: '{name}.{key}' must be one of {', '.join(choices)}, not {v!r}.")
        bounds = _RANGES.get((name, key))
        if bounds:
            _check_range(where, f"{name}.{key}", v, *bounds)
        values[key] = v
    result = cls(**values)
    _check_ranges(where, name, result)
    return result


def _check_ranges(where: str, name: str, s: Any) -> None:
    if isinstance(s, MemorySettings):
        for rel in (*s.files, s.logs_dir, s.sessions_dir, s.archive_dir, s.reference_dir):
            if rel.startswith(("/", "\\")) or ".." in Path(rel).parts or not rel:
                raise ConfigError(f"{where}: path '{rel}' in [memory] must be relative to the workspace.")


def parse_config(text: str, where: str = CONFIG_NAME) -> Config:
    """Validate the TOML text of a memgit.toml."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where} is not valid TOML ({e}); fix the syntax.") from None
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _SECTIONS:
            kwargs[key] = _section(where, key, _SECTIONS[key], value)
        elif key == "capacity":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: [capacity] must be a table of file = characters.")
            for f, n in value.items():
                if not isinstance(n, int) or isinstance(n, bool) or not 0 < n <= MAX_CAPACITY:
                    raise ConfigError(
                        f"{where}: capacity of '{f}' must be a whole number of characters from 1 to "
                        f"{MAX_CAPACITY:,}, not {n!r}; fix it in memgit.toml.")
                if f.startswith("/") or ".." in Path(f).parts:
                    raise ConfigError(f"{where}: capacity file '{f}' must be relative to the workspace.")
            kwargs["capacity"] = dict(value)
        else:
            raise ConfigError(
                f"{where}: unknown section [{key}]; use one of "
                f"{', '.join(sorted([*_SECTIONS, 'capacity']))}.")
    return Config(**kwargs)


DEFAULT_TOML = default_toml()


def load_config(root: Path) -> Config:
    """Read <root>/memgit.toml, or defaults when there is none."""
    path = root / CONFIG_NAME
    if not path.exists():
        return Config()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path} cannot be read ({e.__class__.__name__}); save it as UTF-8 text.") from None
    cfg = parse_config(text, str(path))
    return Config(**{f.name: getattr(cfg, f.name) for f in fields(Config) if f.name != "path"}, path=path)
