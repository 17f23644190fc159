"""`[tool.tl-inspect]` in the nearest pyproject.toml, and its merge with the command line.

Precedence, lowest first: built-in defaults, the file, command-line flags. Rule selection is layered
the way ruff layers it: the file's `select` / `extend-select` / `ignore` give a selection, then the
command line's `--select` replaces it, `--extend-select` adds to it and `--ignore` removes from it.
Paths in the file (`per-file-ignores` patterns, `cases` keys) are relative to the file's directory.
"""

from __future__ import annotations

import difflib
import fnmatch
import math
import os
import re
from dataclasses import dataclass, field

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

from tl_inspect.files.sources import read_bounded
from tl_inspect.gpu.arch import DEFAULT_ARCH
from tl_inspect.inspector.discovery.cases import expand_cases, shown
from tl_inspect.inspector.processes.cache import DEFAULT_MAX_MB
from tl_inspect.lint.selection import SelectionError, check_selectors, matches, parse_list, select_rules
from tl_inspect.model import SEVERITIES

SECTION = "tl-inspect"
KEYS = (
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "arch",
    "gpu",
    "timeout",
    "max-memory",
    "jobs",
    "fail-on",
    "cases",
    "infer-cases",
    "max-inferred-cases",
    "cache-max-mb",
)
_ARCH = re.compile(r"^sm_\d+[a-z]?$")


class ConfigError(ValueError):
    """Bad configuration or flag value: printed as one line, exit status 2."""


@dataclass(frozen=True)
class Config:
    """The `[tool.tl-inspect]` table, validated; every field None/empty when the file does not set it."""

    path: str | None = None  # the pyproject.toml read, None when there is none
    root: str = "."  # directory that relative paths in the file are relative to
    select: tuple | None = None
    ignore: tuple = ()
    extend_select: tuple = ()
    per_file_ignores: tuple = ()  # (pattern, (selector, ...)), in file order
    arch: str | None = None
    gpu: str | None = None  # the GPU whose cost table prices the estimates
    timeout: float | None = None
    max_memory: int | None = None  # MiB
    jobs: int | None = None
    fail_on: str | None = None
    cases: dict = field(default_factory=dict)  # (real path, factory) -> [kwargs, ...]
    infer_cases: bool = True  # cases of factories from the file's own calls (docs/discovery.md)
    max_inferred_cases: int = 16  # per factory
    cache_max_mb: int = DEFAULT_MAX_MB  # the result cache's bound

    def ignored_for(self, path: str) -> list[str]:
        """Selectors that `per-file-ignores` removes for `path`."""
        relative = _relative(path, self.root)
        return [
            s for pattern, selectors in self.per_file_ignores if _path_matches(pattern, relative) for s in selectors
        ]

    def cases_for(self, path: str) -> dict:
        """factory -> [kwargs, ...] that the file sets for the user file at `path`."""
        real = os.path.realpath(path)
        return {factory: cases for (file, factory), cases in self.cases.items() if file == real}


@dataclass(frozen=True)
class Settings:
    """What one run uses, after the command line is laid over the file."""

    config: Config
    rules: tuple  # selected rule classes, before per-file-ignores
    arch: str = DEFAULT_ARCH
    gpu: str | None = None
    timeout: float | None = None
    max_memory: int | None = None  # MiB per worker; None: the machine's memory shared by the workers
    jobs: int = 0  # 0: one worker per CPU
    fail_on: str = "info"

    def cost_table(self):
        """The table estimates are priced with: `gpu`'s, else the fitted table of a GPU on this machine,
        else the shipped H200 one (tl_inspect.gpu.cost_table.select)."""
        from tl_inspect.gpu.cost_table import CostTableError, select
        from tl_inspect.gpu.device import gpu_names

        try:
            return select(self.gpu, local_gpus=gpu_names)
        except CostTableError as exc:
            raise ConfigError(str(exc)) from None

    def rules_for(self, path: str) -> list:
        ignored = self.config.ignored_for(path)
        return [rule for rule in self.rules if not any(matches(rule, s) for s in ignored)]


def find_config(start: str) -> str | None:
    """The nearest pyproject.toml at or above `start` that has a `[tool.tl-inspect]` table."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate) and SECTION in _tool_table(_read_toml(candidate)):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_config(path: str | None, all_rules: list) -> Config:
    """Parse and validate the `[tool.tl-inspect]` table of `path` (None: no configuration)."""
    if path is None:
        return Config(root=os.getcwd())
    table = _tool_table(_read_toml(path)).get(SECTION, {})
    where = f"{path}: [tool.{SECTION}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    for key in table:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(KEYS)}"
            raise ConfigError(f"{where}: unknown key {shown(key)}{hint}")
    root = os.path.dirname(os.path.abspath(path))

    def value(key, check):
        if key not in table:
            return None
        try:
            return check(table[key])
        except (ConfigError, SelectionError) as exc:
            raise ConfigError(f"{where} {key}: {exc}") from None

    def selectors(raw):
        items = _string_list(raw)
        check_selectors(all_rules, items)
        return tuple(items)

    return Config(
        path=path,
        root=root,
        select=value("select", selectors),
        ignore=value("ignore", selectors) or (),
        extend_select=value("extend-select", selectors) or (),
        per_file_ignores=value("per-file-ignores", lambda raw: _per_file_ignores(raw, all_rules)) or (),
        arch=value("arch", check_arch),
        gpu=value("gpu", check_gpu),
        timeout=value("timeout", check_timeout),
        max_memory=value("max-memory", check_memory),
        jobs=value("jobs", check_jobs),
        fail_on=value("fail-on", check_fail_on),
        cases=value("cases", lambda raw: _cases(raw, root)) or {},
        **{
            name: checked
            for name, checked in (
                ("infer_cases", value("infer-cases", check_bool)),
                ("max_inferred_cases", value("max-inferred-cases", check_count)),
                ("cache_max_mb", value("cache-max-mb", check_count)),
            )
            if checked is not None
        },
    )


def resolve_settings(
    config: Config,
    all_rules: list,
    *,
    select=None,
    ignore=None,
    extend_select=None,
    arch=None,
    gpu=None,
    timeout=None,
    max_memory=None,
    jobs=None,
    fail_on=None,
) -> Settings:
    """Lay command-line values (None: not given) over the configuration file."""
    from_file = select_rules(all_rules, config.select, config.ignore, config.extend_select)
    try:
        rules = select_rules(all_rules, select, ignore, extend_select, base=from_file)
    except SelectionError as exc:
        raise ConfigError(str(exc)) from None
    flag = {"arch": arch, "gpu": gpu, "timeout": timeout, "max_memory": max_memory, "jobs": jobs, "fail_on": fail_on}
    checks = {
        "arch": check_arch,
        "gpu": check_gpu,
        "timeout": check_timeout,
        "max_memory": check_memory,
        "jobs": check_jobs,
        "fail_on": check_fail_on,
    }
    chosen = {}
    for name, given in flag.items():
        if given is not None:
            try:
                chosen[name] = checks[name](given)
            except ConfigError as exc:
                raise ConfigError(f"--{name.replace('_', '-')}: {exc}") from None
        elif getattr(config, name) is not None:
            chosen[name] = getattr(config, name)
    return Settings(config=config, rules=tuple(rules), **chosen)


def check_gpu(raw) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(f"expected a GPU name such as 'H200', got {raw!r}")
    return raw.strip()


def check_arch(raw) -> str:
    if not isinstance(raw, str) or not _ARCH.match(raw):
        raise ConfigError(f"expected a CUDA arch such as 'sm_90', got {shown(raw)}")
    return raw


def check_timeout(raw) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or raw <= 0:
        raise ConfigError(f"expected a number of seconds above 0, got {shown(raw)}")
    return float(raw)


MIN_MEMORY_MIB, MAX_MEMORY_MIB = 256, 1 << 30
_MEMORY = re.compile(r"^\s*(\d+)\s*([MG]i?B?)?\s*$", re.I)


def check_memory(raw) -> int:
    """MiB from 4096, "4096M", "4G" or "4GiB"."""
    match = _MEMORY.match(str(raw)) if isinstance(raw, (int, str)) and not isinstance(raw, bool) else None
    if not match:
        raise ConfigError(f"expected a size such as 4096 (MiB), '512M' or '4G', got {shown(raw)}")
    mib = int(match.group(1)) * (1024 if (match.group(2) or "M")[0].upper() == "G" else 1)
    if not MIN_MEMORY_MIB <= mib <= MAX_MEMORY_MIB:
        raise ConfigError(
            f"expected a size from {MIN_MEMORY_MIB}M (what a worker needs beyond tilelang) to "
            f"{MAX_MEMORY_MIB >> 10}G, got {shown(raw)}"
        )
    return mib


def check_jobs(raw) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise ConfigError(f"expected a whole number of workers (0: one per CPU), got {shown(raw)}")
    return raw


def check_bool(raw) -> bool:
    if not isinstance(raw, bool):
        raise ConfigError(f"expected true or false, got {shown(raw)}")
    return raw


def check_count(raw) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ConfigError(f"expected a whole number above 0, got {shown(raw)}")
    return raw


def check_fail_on(raw) -> str:
    if raw not in SEVERITIES:
        raise ConfigError(f"expected one of {', '.join(SEVERITIES)}, got {shown(raw)}")
    return raw


def _string_list(raw) -> list[str]:
    if isinstance(raw, str) or (isinstance(raw, list) and all(isinstance(item, str) for item in raw)):
        return parse_list(raw)
    raise ConfigError(f"expected a list of strings, got {shown(raw)}")


def _per_file_ignores(raw, all_rules: list) -> tuple:
    if not isinstance(raw, dict):
        raise ConfigError('expected a table such as {"tests/*" = ["TLV001"]}')
    entries = []
    for pattern, value in raw.items():
        try:
            items = _string_list(value)
            check_selectors(all_rules, items)
        except (ConfigError, SelectionError) as exc:
            raise ConfigError(f"{shown(pattern)}: {exc}") from None
        entries.append((pattern, tuple(items)))
    return tuple(entries)


def _cases(raw, root: str) -> dict:
    if not isinstance(raw, dict):
        raise ConfigError('expected a table such as {"kernels/add.py::add" = [{N = 4096}]}')
    cases = {}
    for key, value in raw.items():
        file, sep, factory = key.rpartition("::")
        if not sep or not file or not factory.isidentifier():
            raise ConfigError(f"{shown(key)}: expected a key of the form 'file.py::factory'")
        path = os.path.join(root, file)
        if not os.path.isfile(path):
            raise ConfigError(f"{shown(key)}: no file {file!r} (relative to {root})")
        try:
            expanded = expand_cases(value, repr(key))
        except ValueError as exc:
            raise ConfigError(f"{exc} (such as [{{N = 4096}}] or {{sweep = {{N = [4096, 4095]}}}})") from None
        if not expanded or not all(name.isidentifier() for case in expanded for name in case):
            raise ConfigError(
                f"{shown(key)}: expected a list of argument tables such as [{{N = 4096}}], got {shown(value)}"
            )
        cases[(os.path.realpath(path), factory)] = expanded
    return cases


def _tool_table(document: dict) -> dict:
    """The `[tool]` table; a pyproject whose `tool` is not a table (`tool = 5`) has no tl-inspect table."""
    tool = document.get("tool", {})
    return tool if isinstance(tool, dict) else {}


def _read_toml(path: str) -> dict:
    try:
        return tomllib.loads(read_bounded(path).decode("utf-8"))
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None


def _relative(path: str, root: str) -> str:
    return os.path.relpath(os.path.realpath(path), os.path.realpath(root)).replace(os.sep, "/")


def _path_matches(pattern: str, relative: str) -> bool:
    """ruff-style file patterns: a bare name matches the file's name anywhere; `**/` may match no folder."""
    if "/" not in pattern and fnmatch.fnmatchcase(relative.rsplit("/", 1)[-1], pattern):
        return True
    return fnmatch.fnmatchcase(relative, pattern) or (
        pattern.startswith("**/") and fnmatch.fnmatchcase(relative, pattern[3:])
    )
