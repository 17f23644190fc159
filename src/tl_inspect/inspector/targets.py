"""Turn command-line paths into worker jobs: files, directories (recursive) and FILE.py::NAME."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_IMPORTS_TILELANG = re.compile(r"^\s*(import\s+tilelang|from\s+tilelang[\s.])", re.M)
_SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist", "site-packages"}


@dataclass(frozen=True)
class Target:
    path: str
    only: str | None = None


class TargetError(ValueError):
    """A path on the command line that names nothing to inspect."""


def parse_targets(args: list[str]) -> list[Target]:
    targets: list[Target] = []
    for arg in args:
        path, sep, name = arg.partition("::")
        if sep and not name:
            raise TargetError(f"{arg}: expected FILE.py::NAME")
        if os.path.isdir(path):
            if sep:
                raise TargetError(f"{arg}: ::NAME needs a file, not a directory")
            targets.extend(Target(p) for p in python_files_importing_tilelang(path))
        elif os.path.isfile(path):
            targets.append(Target(path, name or None))
        else:
            raise TargetError(f"{path}: no such file or directory")
    unique: dict = {}
    for target in targets:
        unique.setdefault((os.path.realpath(target.path), target.only), target)
    return list(unique.values())


def python_files_importing_tilelang(directory: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS
                         and not os.path.exists(os.path.join(root, d, "pyvenv.cfg")))
        for name in sorted(files):
            path = os.path.join(root, name)
            if name.endswith(".py") and imports_tilelang(path):
                found.append(path)
    return found


def imports_tilelang(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return bool(_IMPORTS_TILELANG.search(f.read()))
    except OSError:
        return False
