"""`tl-inspect explain FILE[::KERNEL]`: the decision chain of every narrow or costly access, then every other
finding with its evidence, reason and fix; results come from the cache as a plain run's do."""

from __future__ import annotations

import argparse
import sys

from tl_inspect.api import inspect
from tl_inspect.cli.usage import EXIT_CLEAN, EXIT_ERROR, UsageError, add_args_option, parse_args_option
from tl_inspect.files.sources import SourceFiles
from tl_inspect.gpu.arch import DEFAULT_ARCH
from tl_inspect.inspector import TargetError
from tl_inspect.reports.explain import explain_kernel


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tl-inspect explain",
        description="Why each narrow or costly global access lost its width: the decision chain step by "
        "step with this access's answers, the proof (its CUDA before and after the change) and the "
        "fix; then every other finding with its evidence, why it matters and its fix.",
    )
    parser.add_argument("paths", nargs="+", metavar="FILE[::KERNEL]")
    parser.add_argument("--arch", default=DEFAULT_ARCH, help=f"CUDA target arch (default {DEFAULT_ARCH})")
    add_args_option(parser)
    parser.add_argument(
        "--show-fixes",
        action="store_true",
        help="verify each finding's automatic fix (one more compile per fix) and show its diff",
    )
    parser.add_argument("--no-cache", action="store_true", help="do not reuse or store inspection results")
    return parser


def explain(argv: list[str]) -> int:
    options = _parser().parse_args(argv)
    args = parse_args_option(options.arg)
    if args and not any("::" in path for path in options.paths):
        raise UsageError("-a/--arg needs a FILE.py::factory target")
    sources = SourceFiles()
    failed = False
    for path in options.paths:
        try:
            report = inspect(
                path,
                arch=options.arch,
                fixes=options.show_fixes,
                cache=not options.no_cache,
                **(args if "::" in path else {}),
            )
        except TargetError as exc:
            raise UsageError(str(exc)) from None
        for file in report.run.files:
            if file.error:  # a kernel's own error is printed in its place below
                print(f"tl-inspect: error: {file.path}: {file.error}", file=sys.stderr)
        failed = failed or bool(report.errors)
        for kernel in report:
            print(explain_kernel(kernel.artifact, sources, kernel.findings), end="\n\n")
    return EXIT_ERROR if failed else EXIT_CLEAN
