"""Which command `argv` names, and the one place where a command's usage error becomes exit status 2.

A first word that names no subcommand starts a check of the PATHs (`tl-inspect PATH...`), as ruff's
`ruff PATH` once did: the check has no subcommand word of its own."""

from __future__ import annotations

import sys

from tl_inspect.cli.calibrate import calibrate
from tl_inspect.cli.check import check
from tl_inspect.cli.clean import clean
from tl_inspect.cli.explain import explain
from tl_inspect.cli.merge import merge
from tl_inspect.cli.rules import explain_rule, list_rules
from tl_inspect.cli.server import server
from tl_inspect.cli.usage import EXIT_ERROR, UsageError
from tl_inspect.lint.baseline import BaselineError
from tl_inspect.lint.changes import ChangesError
from tl_inspect.lint.merge import MergeError
from tl_inspect.lint.settings import ConfigError

SUBCOMMANDS = {
    "rules": list_rules,
    "rule": explain_rule,
    "explain": explain,
    "calibrate": calibrate,
    "merge": merge,
    "server": server,
    "clean": clean,
}


def run_command(argv: list[str]) -> int:
    """Run the command `argv` names; its exit status."""
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return SUBCOMMANDS[argv[0]](argv[1:])
        return check(argv)
    except (UsageError, ConfigError, BaselineError, ChangesError, MergeError) as exc:
        print(f"tl-inspect: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
