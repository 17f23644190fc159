"""Command line: `tl-inspect PATH...`, `tl-inspect rule CODE-OR-SLUG`, `tl-inspect rules`."""

from __future__ import annotations

import argparse
import ast
import sys
from contextlib import nullcontext

from tl_inspect import __version__
from tl_inspect.model import SEVERITIES, FileResult, KernelReport, RunResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
DEFAULT_ARCH = "sm_90"


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    from tl_inspect.reports import formats

    p = argparse.ArgumentParser(
        prog="tl-inspect",
        description="Inspect TileLang kernels: compile them for CUDA without a GPU and flag lost "
                    "128-bit accesses, racy stores and numerical traps.",
        epilog="Also: `tl-inspect rules` lists the rules, `tl-inspect rule CODE-OR-SLUG` explains one.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories (recursive *.py) or FILE.py::NAME")
    p.add_argument("--format", choices=formats(), help="output format (default: full)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the formatted output to FILE")
    p.add_argument("--html", metavar="DIR", help="also write the HTML report to DIR")
    p.add_argument("--dump", metavar="DIR", help="write each kernel's CUDA, TIR snapshots and layouts to DIR")
    p.add_argument("--arch", help=f"CUDA target arch (default {DEFAULT_ARCH}); no GPU is needed")
    p.add_argument("--select", help="rules to check: codes, code prefixes or slugs, comma-separated")
    p.add_argument("--ignore", help="rules to skip: codes, code prefixes or slugs, comma-separated")
    p.add_argument("--extend-select", help="rules to add to the selection")
    p.add_argument("-a", "--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="argument for a FILE.py::factory target (repeatable)")
    p.add_argument("-j", "--jobs", type=int, help="parallel workers (default: CPU count)")
    p.add_argument("--timeout", type=float, help="seconds allowed per file (default 120)")
    p.add_argument("--nvcc", action="store_true", help="also run nvcc and record ptxas registers/spills/smem")
    p.add_argument("--no-cache", action="store_true", help="do not reuse or store inspection results")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--fail-on", choices=SEVERITIES, help="lowest severity that fails the run (default info)")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    p.add_argument("--version", action="version", version=f"tl-inspect {__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "rules":
            return _list_rules()
        if argv and argv[0] == "rule":
            if len(argv) != 2:
                raise UsageError("usage: tl-inspect rule CODE-OR-SLUG")
            return _explain_rule(argv[1])
        return _inspect(build_parser().parse_args(argv))
    except UsageError as exc:
        print(f"tl-inspect: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("tl-inspect: interrupted", file=sys.stderr)
        return 130


def _list_rules() -> int:
    from tl_inspect.rules import registered_rules

    for rule in registered_rules():
        print(f"{rule.code}  {rule.slug:28} {rule.severity:8} {rule.summary()}")
    return EXIT_CLEAN


def _explain_rule(name: str) -> int:
    from tl_inspect.rules import find_rule

    rule = find_rule(name)
    if rule is None:
        raise UsageError(f"unknown rule {name!r}; `tl-inspect rules` lists them")
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(f"# {rule.code} {rule.slug} ({rule.severity})\n\n{rule.summary()}\n\n"
                             f"{rule.documentation()}\n\n**Fix:** {rule.fix}"))
    return EXIT_CLEAN


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


def _inspect(options: argparse.Namespace) -> int:
    from tl_inspect.inspector import DEFAULT_TIMEOUT_SECONDS, Job, TargetError, inspect_jobs, parse_targets
    from tl_inspect.reports import get_reporter
    from tl_inspect.rules import registered_rules
    from tl_inspect.selection import SelectionError, select_rules

    arch = options.arch or DEFAULT_ARCH
    if not arch.startswith("sm_"):
        raise UsageError(f"--arch expects a CUDA arch such as sm_90, got {arch!r}")
    try:
        targets = parse_targets(options.paths)
        rules = select_rules(registered_rules(), options.select, options.ignore, options.extend_select)
    except (TargetError, SelectionError) as exc:
        raise UsageError(str(exc)) from None
    args = parse_args_option(options.arg)
    if args and not any(t.only for t in targets):
        raise UsageError("-a/--arg needs a FILE.py::factory target")
    if not targets:
        raise UsageError("no Python file importing tilelang found in " + ", ".join(options.paths))
    jobs = [Job(path=t.path, arch=arch, run_nvcc=options.nvcc, only=t.only, args=args if t.only else {})
            for t in targets]
    files = inspect_jobs(jobs, workers=options.jobs or 0, timeout=options.timeout or DEFAULT_TIMEOUT_SECONDS,
                         use_cache=not options.no_cache)
    run = RunResult(version=__version__, arch=arch, files=tuple(files),
                    reports=tuple(_check(files, rules)), rules=tuple(rules))

    fmt = options.format or "full"
    with (open(options.output, "w", encoding="utf-8") if options.output else nullcontext(sys.stdout)) as out:
        get_reporter(fmt)(run, out)
        if options.statistics:
            _print_statistics(run, out)
    if options.dump:
        from tl_inspect.inspector.dump import write_dump

        write_dump(run, options.dump)
    if options.html:
        from tl_inspect.reports.html import write_html

        write_html(run, options.html)
    return exit_status(run, options.fail_on or "info", options.exit_zero)


def _check(files: list[FileResult], rules: list) -> list[KernelReport]:
    from tl_inspect.rules import check_kernel

    reports = []
    sources: dict[str, str] = {}
    for file in files:
        for kernel in file.kernels:
            if kernel.file not in sources:
                sources[kernel.file] = _read(kernel.file)
            reports.append(KernelReport(kernel, tuple(check_kernel(kernel, sources[kernel.file], rules))))
    return reports


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _print_statistics(run: RunResult, out) -> None:
    counts: dict[tuple, int] = {}
    for finding in run.findings:
        counts[(finding.rule, finding.slug)] = counts.get((finding.rule, finding.slug), 0) + 1
    for (code, slug), count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        out.write(f"{count:5d}  {code}  {slug}\n")


def exit_status(run: RunResult, fail_on: str, exit_zero: bool) -> int:
    if run.has_errors:
        return EXIT_ERROR
    threshold = SEVERITIES.index(fail_on)
    failing = [f for f in run.findings if SEVERITIES.index(f.severity) >= threshold]
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())
