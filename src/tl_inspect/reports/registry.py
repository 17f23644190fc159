"""The reporters by format name: each reporter module registers itself with `@reporter("name")`."""

from __future__ import annotations

from typing import Callable, TextIO

from tl_inspect.model import RunResult

Reporter = Callable[[RunResult, TextIO], None]
REPORTERS: dict[str, Reporter] = {}


def reporter(name: str):
    def register(func: Reporter) -> Reporter:
        REPORTERS[name] = func
        return func

    return register
