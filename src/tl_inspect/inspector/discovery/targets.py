"""Turn command-line paths into worker jobs: files, directories (recursive) and FILE.py::NAME."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from tl_inspect.files.sources import decode_source, read_bounded

_IMPORTS_TILELANG = re.compile(r"^\s*(import\s+tilelang|from\s+tilelang[\s.])", re.M)
_SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist", "site-packages"}


@dataclass(frozen=True)
class Target:
    path: str
    only: str | None = None
    error: str | None = None  # a file or folder that could not be read: reported, not inspected


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
            targets.extend(python_files_importing_tilelang(path))
        elif os.path.isfile(path):
            targets.append(Target(path, name or None))
        elif os.path.exists(path):
            targets.append(Target(path, error="cannot read this file: not a regular file"))
        else:
            raise TargetError(f"{path}: no such file or directory")
    unique: dict = {}
    for target in targets:
        unique.setdefault((os.path.realpath(target.path), target.only), target)
    return list(unique.values())


def python_files_importing_tilelang(directory: str) -> list[Target]:
    """The files to inspect below `directory`, and a target with an error for each file or folder
    that cannot be read (it might import tilelang: never skip it without a word)."""
    found = []

    def unreadable(exc: OSError) -> None:
        found.append(Target(exc.filename, error=f"cannot read this folder: {exc.strerror}"))

    for root, dirs, files in os.walk(directory, onerror=unreadable):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in _SKIPPED_DIRS
            and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))
        )
        found.extend(
            target
            for name in sorted(files)
            if name.endswith(".py")
            for target in tilelang_target(os.path.join(root, name))
        )
    return found


def tilelang_target(path: str) -> list[Target]:
    """[Target(path)] when the file imports tilelang, [] when it does not, an error target when unreadable."""
    try:
        text = decode_source(read_bounded(path))
    except OSError as exc:
        return [Target(path, error=f"cannot read this file: {exc.strerror}")]
    # a byte-order mark must not hide the first line's import
    return [Target(path)] if _IMPORTS_TILELANG.search(text) else []


def shard(targets: list[Target], index: int, count: int) -> list[Target]:
    """Shard `index` (1-based) of `count`: every `count`-th target in path order, so the shards of one
    checkout are disjoint, cover every target, and differ in size by one file at most."""
    ordered = sorted(targets, key=lambda t: (os.path.normpath(t.path), t.only or ""))
    return ordered[index - 1 :: count]
