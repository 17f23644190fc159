"""Reporters: each output format is one function over a `RunResult`; reporters never analyse."""

from __future__ import annotations

from typing import Callable, TextIO

from tl_inspect.model import RunResult

Reporter = Callable[[RunResult, TextIO], None]
_REPORTERS: dict[str, Reporter] = {}


def reporter(name: str):
    def register(func: Reporter) -> Reporter:
        _REPORTERS[name] = func
        return func

    return register


def get_reporter(name: str) -> Reporter:
    _load()
    return _REPORTERS[name]


def formats() -> list[str]:
    _load()
    return list(_REPORTERS)


def _load() -> None:
    from tl_inspect.reports import concise, github, gitlab, json_report, junit, sarif, terminal  # noqa: F401
