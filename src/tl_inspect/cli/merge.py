"""`tl-inspect merge REPORT... -o FILE`: the --shard runs' reports as one (tl_inspect.lint.merge)."""

from __future__ import annotations

import argparse
import json
import sys

from tl_inspect.cli.usage import EXIT_CLEAN, UsageError
from tl_inspect.lint.merge import merge as merge_reports


def merge(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tl-inspect merge",
        description="Combine the --format json or --format sarif reports of `--shard K/N` runs into one report "
        "of the same format, as one run over every file would have written it.",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the merged report to FILE (default: stdout)")
    options = parser.parse_args(argv)
    text = json.dumps(merge_reports(options.reports), indent=2) + "\n"
    if not options.output:
        sys.stdout.write(text)
        return EXIT_CLEAN
    try:
        with open(options.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"{options.output}: cannot write the merged report: {exc.strerror}") from None
    return EXIT_CLEAN
