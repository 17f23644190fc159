"""The parser of `tl-inspect PATH...`, its options in the groups a reader looks for them in (the
subcommands parse their own arguments)."""

from __future__ import annotations

import argparse

from tl_inspect._version import __version__
from tl_inspect.cli.usage import add_args_option
from tl_inspect.gpu.arch import DEFAULT_ARCH
from tl_inspect.lint.driver import MEASURE_BUDGET_SECONDS
from tl_inspect.model import SEVERITIES
from tl_inspect.reports import formats


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tl-inspect",
        description="Inspect TileLang kernels: compile them for CUDA without a GPU and flag lost "
        "128-bit accesses, racy stores and numerical traps.",
        epilog="Also: `tl-inspect rules` lists the rules, `tl-inspect rule CODE-OR-SLUG` explains one, "
        "`tl-inspect explain FILE[::KERNEL]` walks the decision chain of each narrow access, "
        "`tl-inspect merge REPORT...` combines the reports of --shard runs, `tl-inspect server` is a "
        "language server, `tl-inspect clean` empties the result cache.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories (recursive *.py) or FILE.py::NAME")
    _add_output_options(p)
    _add_target_options(p)
    _add_inspection_options(p)
    _add_fix_options(p)
    _add_gate_options(p)
    p.add_argument("--version", action="version", version=f"tl-inspect {__version__}")
    return p


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=formats(), help="output format (default: full)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the formatted output to FILE")
    p.add_argument("--html", metavar="DIR", help="also write the HTML report to DIR")
    p.add_argument("--dump", metavar="DIR", help="write each kernel's CUDA, TIR snapshots and layouts to DIR")


def _add_target_options(p: argparse.ArgumentParser) -> None:
    """The arch, the cost table, the rules and the cases the kernels are built with."""
    p.add_argument("--arch", help=f"CUDA target arch (default {DEFAULT_ARCH}); no GPU is needed")
    p.add_argument(
        "--gpu",
        metavar="NAME",
        help="price the estimates with NAME's cost table (default: the table `tl-inspect calibrate` "
        "fitted for a GPU on this machine, else the shipped H200 one)",
    )
    p.add_argument("--select", help="rules to check: codes, code prefixes or slugs, comma-separated")
    p.add_argument("--ignore", help="rules to skip: codes, code prefixes or slugs, comma-separated")
    p.add_argument("--extend-select", help="rules to add to the selection")
    add_args_option(p)
    p.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="NAME=V1,V2,...",
        help="inspect a FILE.py::factory target once per value (repeatable: every combination) "
        "and show per access which values keep its width",
    )
    p.add_argument(
        "--no-infer",
        action="store_true",
        help="do not infer factory cases from the file's own calls (main(), __main__, test_*); "
        "factories then need TL_INSPECT_CASES or -a",
    )
    p.add_argument(
        "--all-configs",
        action="store_true",
        help="inspect every config of an @tilelang.autotune object, not only the first (the autotuner is never run)",
    )


def _add_inspection_options(p: argparse.ArgumentParser) -> None:
    """The workers, their limits, and what each does beyond compiling."""
    p.add_argument("-j", "--jobs", type=int, help="parallel workers (default: CPU count)")
    p.add_argument(
        "--timeout",
        type=float,
        help="seconds a file's import, and then each of its kernels, may take (default 120); a kernel "
        "that hangs loses only itself",
    )
    p.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="memory one worker may use, e.g. 4G or 512M (default: the machine's memory / jobs)",
    )
    p.add_argument("--nvcc", action="store_true", help="also run nvcc and record ptxas registers/spills/smem")
    p.add_argument(
        "--no-proofs",
        action="store_true",
        help="do not rebuild kernels to prove causes (faster; then no vectorization finding is reported)",
    )
    p.add_argument("--no-cache", action="store_true", help="do not reuse or store inspection results")
    p.add_argument(
        "--measure",
        action="store_true",
        help="on a CUDA GPU of --arch: time each kernel with a costly finding against its proof's "
        "variant and report the measured slowdown beside the estimate",
    )
    p.add_argument(
        "--measure-budget",
        type=float,
        default=MEASURE_BUDGET_SECONDS,
        metavar="SECONDS",
        help=f"seconds the run may spend measuring (default {MEASURE_BUDGET_SECONDS:g}); findings left over say so",
    )


def _add_fix_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fix",
        action="store_true",
        help="apply the verified safe fixes to the files (each fix is checked first by inspecting a "
        "fixed copy: the finding gone, nothing new, every kernel compiling)",
    )
    p.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, also the verified unsafe fixes (they may change what a kernel computes "
        "or rest on a promise such as T.assume); alone, verify and show them",
    )
    p.add_argument(
        "--diff",
        action="store_true",
        help="print the unified diff of the verified fixes and write nothing (exit 1 when there is one)",
    )
    p.add_argument(
        "--show-fixes",
        action="store_true",
        help="verify each finding's fix and show it with the finding; with --fix, also list what was fixed",
    )


def _add_gate_options(p: argparse.ArgumentParser) -> None:
    """The gate: what fails the run, which files and findings count (the configuration, baselines, changed
    files, shards), and --watch."""
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--fail-on", choices=SEVERITIES, help="lowest severity that fails the run (default info)")
    p.add_argument(
        "--statistics", action="store_true", help="print the number of findings per rule instead of the findings"
    )
    p.add_argument(
        "--config", metavar="FILE", help="read [tool.tl-inspect] from FILE instead of the nearest pyproject.toml"
    )
    p.add_argument(
        "--baseline",
        metavar="FILE",
        help="report and fail only on findings not recorded in FILE; list entries that no longer occur",
    )
    p.add_argument("--write-baseline", metavar="FILE", help="record the current findings in FILE and exit 0")
    p.add_argument(
        "--diff-against",
        metavar="REV",
        help="inspect only files changed since REV (from its merge base with HEAD; git)",
    )
    p.add_argument(
        "--new-only", action="store_true", help="with --diff-against: keep only findings on added or changed lines"
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="inspect only shard K of N (1-based): the files split evenly in path order, for a CI matrix; "
        "`tl-inspect merge` combines the shards' JSON or SARIF",
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="check, then check again each time a Python file under PATH changes (until Ctrl-C); "
        "unchanged files come from the cache, and tilelang stays imported in between",
    )
    p.add_argument(
        "--only-tilelang",
        action="store_true",
        help="skip named files that do not import tilelang, as directory scans do (pre-commit)",
    )
