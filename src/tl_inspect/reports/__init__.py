"""Reporters: each output format is one function over a `RunResult`; reporters never analyse."""

from __future__ import annotations

from tl_inspect.reports.registry import REPORTERS, Reporter


def get_reporter(name: str) -> Reporter:
    _load()
    return REPORTERS[name]


def formats() -> list[str]:
    _load()
    return list(REPORTERS)


def _load() -> None:
    # each module registers its format when imported; loaded on first use, so that a run pays only for them
    from tl_inspect.reports import concise, github, gitlab, json_report, junit, sarif, terminal  # noqa: F401
