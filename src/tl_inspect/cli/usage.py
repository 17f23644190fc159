"""What the subcommands share: the exit statuses, the usage error and `-a NAME=VALUE`."""

from __future__ import annotations

import argparse
import ast

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


def add_args_option(parser: argparse.ArgumentParser) -> None:
    """`-a NAME=VALUE`, read by `parse_args_option`."""
    parser.add_argument(
        "-a",
        "--arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="argument for a FILE.py::factory target (repeatable)",
    )


def parse_args_option(values: list[str]) -> dict:
    """`-a N=4096 -a dtype=float16` -> {"N": 4096, "dtype": "float16"}: Python literals, else strings."""
    parsed = {}
    for item in values:
        name, sep, raw = item.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"-a/--arg expects NAME=VALUE, got {item!r}")
        try:
            parsed[name] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            parsed[name] = raw
    return parsed
