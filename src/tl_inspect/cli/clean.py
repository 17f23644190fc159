"""`tl-inspect clean`: empty the result cache, as `ruff clean` does."""

from __future__ import annotations

import argparse

from tl_inspect.cli.usage import EXIT_CLEAN
from tl_inspect.files.cache_dir import cache_dir
from tl_inspect.inspector.processes import cache
from tl_inspect.wording import byte_size, plural


def clean(argv: list[str]) -> int:
    argparse.ArgumentParser(
        prog="tl-inspect clean",
        description="Remove every cached inspection result (the calibrated cost tables are kept).",
    ).parse_args(argv)
    removed, size = cache.clean()
    print(f"tl-inspect: removed {plural(removed, 'cached result')} ({byte_size(size)}) from {cache_dir()}")
    return EXIT_CLEAN
