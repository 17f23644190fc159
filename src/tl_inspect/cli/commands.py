"""The commands of `tl-inspect` (`cli` starts the worker, then loads this): `tl-inspect PATH...`,
`tl-inspect explain FILE[::KERNEL]`, `tl-inspect rule CODE-OR-SLUG`, `tl-inspect rules`."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import sys
from contextlib import nullcontext

from tl_inspect._version import __version__
from tl_inspect.lint import baseline
from tl_inspect.lint.baseline import BaselineError
from tl_inspect.lint.changes import ChangesError, changes_since
from tl_inspect.lint.checking import all_rules, check_files
from tl_inspect.gpu.arch import DEFAULT_ARCH
from tl_inspect.lint.settings import ConfigError, Settings, find_config, load_config, resolve_settings
from tl_inspect.tir.deepstack import call_on_deep_stack
from tl_inspect.lint.merge import MergeError
from tl_inspect.model import SEVERITIES, FileResult, RunResult
from tl_inspect.cli.progress import progress_bar
from tl_inspect.files.sources import SourceFiles
from tl_inspect.inspector.discovery.cases import SWEEP_KEY, expand_cases
from tl_inspect.wording import plural

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
MEASURE_BUDGET_SECONDS = 60.0


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    from tl_inspect.reports import formats

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
    p.add_argument("--format", choices=formats(), help="output format (default: full)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the formatted output to FILE")
    p.add_argument("--html", metavar="DIR", help="also write the HTML report to DIR")
    p.add_argument("--dump", metavar="DIR", help="write each kernel's CUDA, TIR snapshots and layouts to DIR")
    p.add_argument("--arch", help=f"CUDA target arch (default {DEFAULT_ARCH}); no GPU is needed")
    p.add_argument("--gpu", metavar="NAME",
                   help="price the estimates with NAME's cost table (default: the table `tl-inspect calibrate` "
                        "fitted for a GPU on this machine, else the shipped H200 one)")
    p.add_argument("--select", help="rules to check: codes, code prefixes or slugs, comma-separated")
    p.add_argument("--ignore", help="rules to skip: codes, code prefixes or slugs, comma-separated")
    p.add_argument("--extend-select", help="rules to add to the selection")
    p.add_argument("-a", "--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="argument for a FILE.py::factory target (repeatable)")
    p.add_argument("--sweep", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="inspect a FILE.py::factory target once per value (repeatable: every combination) "
                        "and show per access which values keep its width")
    p.add_argument("--no-infer", action="store_true",
                   help="do not infer factory cases from the file's own calls (main(), __main__, test_*); "
                        "factories then need TL_INSPECT_CASES or -a")
    p.add_argument("--all-configs", action="store_true",
                   help="inspect every config of an @tilelang.autotune object, not only the first "
                        "(the autotuner is never run)")
    p.add_argument("-j", "--jobs", type=int, help="parallel workers (default: CPU count)")
    p.add_argument("--timeout", type=float,
                   help="seconds a file's import, and then each of its kernels, may take (default 120); a kernel "
                        "that hangs loses only itself")
    p.add_argument("--max-memory", metavar="SIZE",
                   help="memory one worker may use, e.g. 4G or 512M (default: the machine's memory / jobs)")
    p.add_argument("--nvcc", action="store_true", help="also run nvcc and record ptxas registers/spills/smem")
    p.add_argument("--no-proofs", action="store_true",
                   help="do not rebuild kernels to prove causes (faster; then no vectorization finding is reported)")
    p.add_argument("--no-cache", action="store_true", help="do not reuse or store inspection results")
    p.add_argument("--measure", action="store_true",
                   help="on a CUDA GPU of --arch: time each kernel with a costly finding against its proof's "
                        "variant and report the measured slowdown beside the estimate")
    p.add_argument("--measure-budget", type=float, default=MEASURE_BUDGET_SECONDS, metavar="SECONDS",
                   help=f"seconds the run may spend measuring (default {MEASURE_BUDGET_SECONDS:g}); findings "
                        f"left over say so")
    p.add_argument("--fix", action="store_true",
                   help="apply the verified safe fixes to the files (each fix is checked first by inspecting a "
                        "fixed copy: the finding gone, nothing new, every kernel compiling)")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix or --diff, also the verified unsafe fixes (they may change what a kernel computes "
                        "or rest on a promise such as T.assume); alone, verify and show them")
    p.add_argument("--diff", action="store_true",
                   help="print the unified diff of the verified fixes and write nothing (exit 1 when there is one)")
    p.add_argument("--show-fixes", action="store_true",
                   help="verify each finding's fix and show it with the finding; with --fix, also list what was fixed")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--fail-on", choices=SEVERITIES, help="lowest severity that fails the run (default info)")
    p.add_argument("--statistics", action="store_true",
                   help="print the number of findings per rule instead of the findings")
    p.add_argument("--config", metavar="FILE",
                   help="read [tool.tl-inspect] from FILE instead of the nearest pyproject.toml")
    p.add_argument("--baseline", metavar="FILE",
                   help="report and fail only on findings not recorded in FILE; list entries that no longer occur")
    p.add_argument("--write-baseline", metavar="FILE", help="record the current findings in FILE and exit 0")
    p.add_argument("--diff-against", metavar="REV",
                   help="inspect only files changed since REV (from its merge base with HEAD; git)")
    p.add_argument("--new-only", action="store_true",
                   help="with --diff-against: keep only findings on added or changed lines")
    p.add_argument("--shard", metavar="K/N",
                   help="inspect only shard K of N (1-based): the files split evenly in path order, for a CI matrix; "
                        "`tl-inspect merge` combines the shards' JSON or SARIF")
    p.add_argument("--watch", action="store_true",
                   help="check, then check again each time a Python file under PATH changes (until Ctrl-C); "
                        "unchanged files come from the cache, and tilelang stays imported in between")
    p.add_argument("--only-tilelang", action="store_true",
                   help="skip named files that do not import tilelang, as directory scans do (pre-commit)")
    p.add_argument("--version", action="version", version=f"tl-inspect {__version__}")
    return p


def run_command(argv: list[str]) -> int:
    """Run the command `argv` names; its exit status."""
    try:
        if argv and argv[0] == "rules":
            return _list_rules(argv[1:])
        if argv and argv[0] == "explain":
            return _explain(argv[1:])
        if argv and argv[0] == "calibrate":
            return _calibrate(argv[1:])
        if argv and argv[0] == "merge":
            return _merge(argv[1:])
        if argv and argv[0] == "server":
            return _server(argv[1:])
        if argv and argv[0] == "clean":
            return _clean(argv[1:])
        if argv and argv[0] == "rule":
            if len(argv) != 2:
                raise UsageError("usage: tl-inspect rule CODE-OR-SLUG")
            return _explain_rule(argv[1])
        options = build_parser().parse_args(argv)
        return _watch(options) if options.watch else _inspect(options)
    except (UsageError, ConfigError, BaselineError, ChangesError, MergeError) as exc:
        print(f"tl-inspect: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _calibrate(argv: list[str]) -> int:
    """`tl-inspect calibrate`: fit the cost model's terms on this machine's GPU (tl_inspect.gpu.calibration)."""
    from tl_inspect.gpu.cost_table import TERMS
    from tl_inspect.gpu.calibration import calibrate
    from tl_inspect.inspector.measurement.device import NoGpu

    parser = argparse.ArgumentParser(
        prog="tl-inspect calibrate",
        description="Time the cost model's calibration suite on this machine's CUDA GPU (a few minutes), fit "
                    "each term, print the fitted terms against the shipped H200 ones, and write the table that "
                    "later runs on this GPU price their estimates with.")
    parser.add_argument("--term", action="append", default=[], choices=list(TERMS), metavar="TERM",
                        help="only the cases of this term (repeatable; the others keep the shipped values)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the table to FILE (default: the cache's table of this GPU, cost/<GPU>.json)")
    options = parser.parse_args(argv)
    try:
        calibrate(options.term, options.output)
    except NoGpu as exc:
        raise UsageError(str(exc)) from None
    return EXIT_CLEAN


def _clean(argv: list[str]) -> int:
    """`tl-inspect clean`: empty the result cache, as `ruff clean` does."""
    from tl_inspect.inspector.processes import cache
    from tl_inspect.wording import byte_size

    argparse.ArgumentParser(prog="tl-inspect clean",
                            description="Remove every cached inspection result (the calibrated cost tables "
                                        "are kept).").parse_args(argv)
    removed, size = cache.clean()
    print(f"tl-inspect: removed {plural(removed, 'cached result')} ({byte_size(size)}) from {cache.cache_dir()}")
    return EXIT_CLEAN


def _server(argv: list[str]) -> int:
    """`tl-inspect server`: the language server over stdio (tl_inspect.server)."""
    parser = argparse.ArgumentParser(
        prog="tl-inspect server",
        description="A language server over stdio for editors: diagnostics on open and save, hover with the "
                    "verdict, cost and proof, code actions for the verified fixes. Configuration comes from the "
                    "pyproject.toml nearest the folder the editor starts it in.")
    parser.parse_args(argv)
    from tl_inspect.server import serve

    serve()
    return EXIT_CLEAN


def _merge(argv: list[str]) -> int:
    """`tl-inspect merge SHARD... -o FILE`: the shards' reports as one (tl_inspect.lint.merge)."""
    from tl_inspect.lint.merge import merge

    parser = argparse.ArgumentParser(
        prog="tl-inspect merge",
        description="Combine the --format json or --format sarif reports of `--shard K/N` runs into one report "
                    "of the same format, as one run over every file would have written it.")
    parser.add_argument("reports", nargs="+", metavar="REPORT")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the merged report to FILE (default: stdout)")
    options = parser.parse_args(argv)
    text = json.dumps(merge(options.reports), indent=2) + "\n"
    if not options.output:
        sys.stdout.write(text)
        return EXIT_CLEAN
    try:
        with open(options.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"{options.output}: cannot write the merged report: {exc.strerror}") from None
    return EXIT_CLEAN


def _list_rules(argv: list[str]) -> int:
    if argv in (["--format", "markdown"], ["--format=markdown"]):
        from tl_inspect.rules.catalog import rules_table

        print(rules_table(all_rules()), end="")
        return EXIT_CLEAN
    if argv:
        raise UsageError("usage: tl-inspect rules [--format markdown]")
    for rule in all_rules():
        opt_in = "" if rule.default else " (off by default)"
        print(f"{rule.code}  {rule.slug:28} {rule.severity:8} {rule.summary()}{opt_in}")
    return EXIT_CLEAN


def _explain_rule(name: str) -> int:
    rule = next((r for r in all_rules() if name in (r.code, r.slug)), None)
    if rule is None:
        raise UsageError(f"unknown rule {name!r}; `tl-inspect rules` lists them")
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(f"# {rule.code} {rule.slug} ({rule.severity})\n\n{rule.summary()}\n\n"
                             f"{rule.documentation()}\n\n**Fix:** {rule.fix}"))
    return EXIT_CLEAN


def _explain(argv: list[str]) -> int:
    """`tl-inspect explain FILE[::kernel]`: the decision chain of every narrow or costly access, then every
    other finding with its evidence, reason and fix; results come from the cache as a plain run's do."""
    from tl_inspect.api import inspect
    from tl_inspect.inspector import TargetError
    from tl_inspect.reports.explain import explain_kernel
    from tl_inspect.files.sources import SourceFiles

    parser = argparse.ArgumentParser(
        prog="tl-inspect explain",
        description="Why each narrow or costly global access lost its width: the decision chain step by "
                    "step with this access's answers, the proof (its CUDA before and after the change) and the "
                    "fix; then every other finding with its evidence, why it matters and its fix.")
    parser.add_argument("paths", nargs="+", metavar="FILE[::KERNEL]")
    parser.add_argument("--arch", default=DEFAULT_ARCH, help=f"CUDA target arch (default {DEFAULT_ARCH})")
    parser.add_argument("-a", "--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="argument for a FILE.py::factory target (repeatable)")
    parser.add_argument("--show-fixes", action="store_true",
                        help="verify each finding's automatic fix (one more compile per fix) and show its diff")
    parser.add_argument("--no-cache", action="store_true", help="do not reuse or store inspection results")
    options = parser.parse_args(argv)
    args = parse_args_option(options.arg)
    if args and not any("::" in path for path in options.paths):
        raise UsageError("-a/--arg needs a FILE.py::factory target")
    sources = SourceFiles()
    failed = False
    for path in options.paths:
        try:
            report = inspect(path, arch=options.arch, fixes=options.show_fixes, cache=not options.no_cache,
                             **(args if "::" in path else {}))
        except TargetError as exc:
            raise UsageError(str(exc)) from None
        for file in report.run.files:
            if file.error:  # a kernel's own error is printed in its place below
                print(f"tl-inspect: error: {file.path}: {file.error}", file=sys.stderr)
        failed = failed or bool(report.errors)
        for kernel in report:
            print(explain_kernel(kernel.artifact, sources, kernel.findings), end="\n\n")
    return EXIT_ERROR if failed else EXIT_CLEAN


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


def parse_shard_option(value: str) -> tuple[int, int]:
    """`--shard 2/4` -> (2, 4)."""
    index, sep, count = value.partition("/")
    if not (sep and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise UsageError(f"--shard expects K/N with 1 <= K <= N, e.g. 2/4, got {value!r}")
    return int(index), int(count)


def parse_sweep_option(values: list[str]) -> dict:
    """`--sweep N=4096,4095 --sweep dtype=float16,bfloat16` -> {"N": [4096, 4095], "dtype": [...]}."""
    swept = {}
    for item in values:
        name, sep, raw = item.partition("=")
        if not sep or not name.isidentifier() or not raw:
            raise UsageError(f"--sweep expects NAME=VALUE,VALUE,..., got {item!r}")
        if name in swept:
            raise UsageError(f"--sweep {name} given twice; list all its values in one --sweep")
        swept[name] = [parse_args_option([f"{name}={value}"])[name] for value in raw.split(",")]
    return swept


def _target_cases(configured: dict, only: str | None, args: dict, swept: dict) -> dict:
    """A sweep replaces the factory's configured cases: the -a values fixed, the product of the swept ones."""
    return {**configured, only: [{**args, SWEEP_KEY: swept}]} if only and swept else configured


def _watch(options: argparse.Namespace) -> int:
    """`--watch`: the whole run again after every change, as `ruff check --watch` does; the changed files
    are compiled again by the one warm zygote, the others are served from the cache."""
    import watchfiles

    from tl_inspect.inspector.processes.zygote import kept_warm

    if options.fix or options.diff or options.write_baseline or options.shard:
        raise UsageError("--watch checks again on every change: do not combine it with --fix, --diff, "
                         "--write-baseline or --shard")
    watched = sorted({os.path.abspath(path.partition("::")[0]) for path in options.paths})
    for path in watched:
        if not os.path.exists(path):
            raise UsageError(f"{os.path.relpath(path)}: no such file or directory")
    # watching starts before the first check and never pauses: a file saved during a check is not missed
    changes = watchfiles.watch(*watched, watch_filter=watchfiles.PythonFilter(extra_extensions=(".toml",)),
                               rust_timeout=1000, yield_on_timeout=True)
    next(changes)
    with kept_warm():
        while True:
            try:
                _inspect(options)
            except (UsageError, ConfigError, BaselineError, ChangesError) as exc:
                print(f"tl-inspect: error: {exc}", file=sys.stderr)
            print("tl-inspect: watching for changes (Ctrl-C stops)", file=sys.stderr, flush=True)
            changed = set()
            while not changed:
                changed = {os.path.relpath(path) for _, path in next(changes)}
            print(f"tl-inspect: changed: {', '.join(sorted(changed))}", file=sys.stderr)


def _inspect(options: argparse.Namespace) -> int:
    from tl_inspect.inspector import DEFAULT_TIMEOUT_SECONDS, Job, TargetError, inspect_jobs, parse_targets
    from tl_inspect.inspector.measurement.device import NoGpu, measure_timeout, measuring
    from tl_inspect.inspector.discovery.targets import shard, tilelang_target

    if options.measure_budget <= 0:
        raise UsageError(f"--measure-budget expects a number of seconds above 0, got {options.measure_budget:g}")
    if options.diff_against is not None and not options.diff_against.strip():
        raise UsageError("--diff-against expects a git revision such as origin/main, got an empty string")
    if options.new_only and not options.diff_against:
        raise UsageError("--new-only needs --diff-against REV")
    if options.write_baseline and (options.baseline or options.diff_against):
        raise UsageError("--write-baseline records every finding: do not combine it with "
                         "--baseline or --diff-against")
    index, count = parse_shard_option(options.shard) if options.shard else (1, 1)
    rules = all_rules()
    config = load_config(options.config or find_config(os.getcwd()), rules)
    settings = resolve_settings(config, rules, select=options.select, ignore=options.ignore,
                                extend_select=options.extend_select, arch=options.arch, gpu=options.gpu,
                                timeout=options.timeout, max_memory=options.max_memory, jobs=options.jobs,
                                fail_on=options.fail_on)
    entries = baseline.load(options.baseline) if options.baseline else None
    table = settings.cost_table()
    try:
        targets = parse_targets(options.paths)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    if options.only_tilelang:
        targets = [found for t in targets for found in ([t] if t.error else tilelang_target(t.path))]
    changes = changes_since(options.diff_against) if options.diff_against else None
    if changes:
        targets = [t for t in targets if changes.touches(t.path)]
    _check_outputs(options, targets)
    args = parse_args_option(options.arg)
    swept = parse_sweep_option(options.sweep)
    if (args or swept) and not any(t.only for t in targets):
        raise UsageError(f"{'--sweep' if swept else '-a/--arg'} needs a FILE.py::factory target")
    if not targets and changes is None and not options.only_tilelang:
        raise UsageError("no Python file importing tilelang found in " + ", ".join(options.paths))
    if options.shard:
        everything = len(targets)
        targets = shard(targets, index, count)
        if not targets:
            print(f"tl-inspect: shard {index}/{count} has no file ({plural(everything, 'file')} in all)",
                  file=sys.stderr)
    both = sorted(set(args) & set(swept))
    if both:
        raise UsageError(f"{', '.join(both)} given both by -a/--arg and by --sweep")
    try:
        expand_cases({**args, SWEEP_KEY: swept}, "--sweep")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        with measuring(settings.arch, options.measure_budget if options.measure else None) as budget:
            jobs = [Job(path=t.path, arch=settings.arch, run_nvcc=options.nvcc, prove=not options.no_proofs,
                        only=t.only, args=args if t.only and not swept else {}, all_configs=options.all_configs,
                        cases=_target_cases(config.cases_for(t.path), t.only, args, swept),
                        infer=config.infer_cases and not options.no_infer, max_inferred=config.max_inferred_cases,
                        measure_budget=budget, cost_table=table)
                    for t in targets]
            readable = [job for job, target in zip(jobs, targets) if not target.error]
            with progress_bar(readable) as on_done:
                inspected = iter(inspect_jobs(
                    readable, workers=settings.jobs,
                    timeout=measure_timeout(settings.timeout or DEFAULT_TIMEOUT_SECONDS, budget),
                    max_memory=settings.max_memory, on_done=on_done,
                    use_cache=not options.no_cache and not options.measure, cache_max_mb=config.cache_max_mb))
    except NoGpu as exc:
        raise UsageError(str(exc)) from None
    files = [FileResult(path=t.path, error=t.error) if t.error else next(inspected) for t in targets]
    return call_on_deep_stack(_conclude, options, settings, rules, entries, changes, jobs, files, table)


def _conclude(options: argparse.Namespace, settings: Settings, rules: list, entries, changes, jobs: list,
              files: list[FileResult], table) -> int:
    """Check the rules and write every output: rules and renderers recurse on expression depth."""
    texts = SourceFiles()
    reports, complete = check_files(jobs, files, settings, rules, texts)
    diffs, fix_failed = None, False
    if options.fix or options.diff or options.unsafe_fixes or options.show_fixes:
        files, reports, diffs, fix_failed = _fixes(options, settings, rules, jobs, files, reports, texts)
        if options.fix:
            texts = SourceFiles()  # the fixed files as written
    run = RunResult(version=__version__, arch=settings.arch, files=tuple(files), reports=tuple(reports),
                    rules=settings.rules, cost_table=table)
    notes = []
    if options.write_baseline:
        fingerprints = baseline.Fingerprints.for_baseline(options.write_baseline, texts)
        written = baseline.build(run.findings, fingerprints)
        baseline.write(options.write_baseline, written)
        notes.append(f"tl-inspect: wrote {len(run.findings)} finding(s) to {options.write_baseline}")
    if entries is not None:
        run, note = _apply_baseline(run, entries, options.baseline, texts, complete)
        notes.append(note)
    if changes and options.new_only:
        run = _keep(run, lambda f: changes.changed(f.file, f.line, f.end_line or f.line))

    if diffs is None or options.output:
        _write_report(run, options)
    if diffs is not None:
        sys.stdout.write("".join(diffs))
    for note in notes:
        print(note, file=sys.stderr)
    try:
        if options.dump:
            from tl_inspect.reports.dump import write_dump

            write_dump(run, options.dump)
        if options.html:
            from tl_inspect.reports.html import write_html

            write_html(run, options.html)
    except OSError as exc:
        raise UsageError(f"{exc.filename}: cannot write: {exc.strerror}") from None
    from tl_inspect.reports.common import run_summary

    # a gate that compiled nothing must not pass: name what was found instead
    empty = run_summary(run).nothing_inspected(count_bare=not options.only_tilelang)
    if empty:
        print(f"tl-inspect: error: {empty}", file=sys.stderr)
        return EXIT_ERROR
    if options.write_baseline:
        return EXIT_ERROR if run.has_errors else EXIT_CLEAN
    if diffs is not None:
        # ruff's --diff: 1 when there is a fix to apply, whatever else remains
        return EXIT_ERROR if run.has_errors or fix_failed else EXIT_FINDINGS if diffs else EXIT_CLEAN
    return EXIT_ERROR if fix_failed else exit_status(run, settings.fail_on, options.exit_zero)


def _fixes(options: argparse.Namespace, settings: Settings, rules: list, jobs: list, files: list, reports: list,
           texts: SourceFiles):
    """Verify the findings' fixes; with --fix write them, with --diff phrase them. Returns the files and
    reports to report (after --fix, those of the fixed files), the diffs (None without --diff) and whether
    a fixed file could not be written."""
    from tl_inspect.fixes import unified_diff
    from tl_inspect.fixes.verify import Fixer, Unwritable, write_fixed
    from tl_inspect.inspector import DEFAULT_TIMEOUT_SECONDS, inspect_jobs
    from tl_inspect.model import SAFE, UNSAFE

    fixer = Fixer(settings, rules, lambda batch: inspect_jobs(
        batch, workers=settings.jobs, timeout=settings.timeout or DEFAULT_TIMEOUT_SECONDS,
        max_memory=settings.max_memory))
    states = fixer.start(jobs, files, reports, texts)
    shown = {state.job.path: state for state in states}
    failed = False
    diffs = None
    if options.fix or options.diff:
        fixed = [s for s in fixer.fix(states, (SAFE, UNSAFE) if options.unsafe_fixes else (SAFE,)) if s.changed]
        if options.diff:
            diffs = [unified_diff(s.job.path, s.original, s.text) for s in fixed]
        else:
            for state in fixed:
                try:
                    write_fixed(state)
                except Unwritable as exc:
                    print(f"tl-inspect: error: {exc}", file=sys.stderr)
                    failed = True
                    continue
                shown[state.job.path] = state
            _print_fixed([shown[s.job.path] for s in fixed if shown[s.job.path] is s], options.show_fixes)
    by_path = {path: state.reports for path, state in shown.items()}
    results = {path: state.result for path, state in shown.items()}
    seen: set = set()
    out = []
    for report in reports:
        path = report.kernel.file
        if path not in by_path:
            out.append(report)
        elif path not in seen:
            seen.add(path)
            out.extend(by_path[path])
    return [results.get(f.path, f) for f in files], out, diffs, failed


def _print_fixed(states: list, each: bool) -> None:
    """ruff's summary of a --fix run on stderr, and with --show-fixes what was fixed in each file."""
    count = sum(len(s.applied) for s in states)
    if not count:
        return
    print(f"tl-inspect: fixed {count} finding{'s' if count != 1 else ''} in {len(states)} "
          f"file{'s' if len(states) != 1 else ''}", file=sys.stderr)
    if each:
        for state in states:
            print(f"  {state.job.path}:", file=sys.stderr)
            for f in state.applied:
                print(f"    line {f.line}: {f.rule} {f.slug} ({f.autofix.applicability}): {f.fix}", file=sys.stderr)


def _keep(run: RunResult, keep) -> RunResult:
    reports = tuple(dataclasses.replace(r, findings=tuple(f for f in r.findings if keep(f))) for r in run.reports)
    return dataclasses.replace(run, reports=reports)


def _apply_baseline(run: RunResult, entries: list, path: str, texts: SourceFiles,
                    complete: dict) -> tuple[RunResult, str]:
    fingerprints = baseline.Fingerprints.for_baseline(path, texts)
    inspected = {(fingerprints.relative(r.kernel.file), r.kernel.name) for r in run.reports
                 if r.kernel.status == "ok"}
    whole_files = {fingerprints.relative(real) for real, whole in complete.items() if whole}
    result = baseline.match(run.findings, entries, fingerprints,
                            judged=lambda e: (e.file, e.kernel) in inspected or e.file in whole_files)
    new = set(map(id, result.new))
    lines = [f"tl-inspect: baseline {path}: {result.known} finding(s) baselined, "
             f"{len(result.stale)} entr{'y' if len(result.stale) == 1 else 'ies'} no longer occur"
             + (" (refresh with --write-baseline):" if result.stale else "")]
    lines += [f"  {e.file} {e.kernel}: {e.rule} {e.slug}" + (f" x{e.count}" if e.count > 1 else "")
              + f": {e.statement}" for e in result.stale]
    return _keep(run, lambda f: id(f) in new), "\n".join(lines)


def _check_outputs(options: argparse.Namespace, targets: list) -> None:
    """Every output must be writable before anything is compiled: a bad path costs a second, not the run.
    Nor may a report or a baseline replace the user's code (`-o good.py`)."""
    if not options.output and sys.stdout is None:
        raise UsageError("standard output is closed: give -o FILE for the report")
    inspected = {os.path.realpath(t.path) for t in targets}
    for flag, path in (("-o", options.output), ("--write-baseline", options.write_baseline)):
        if path and os.path.isfile(path) and (path.endswith((".py", ".pyi"))
                                              or os.path.realpath(path) in inspected):
            raise UsageError(f"{flag} {path}: this is a Python file; tl-inspect does not overwrite code, "
                             f"give another file")
        if path:
            try:
                with open(path, "a", encoding="utf-8"):
                    pass
            except OSError as exc:
                raise UsageError(f"{path}: cannot write to this file: {exc.strerror}") from None
    for flag, folder in (("--html", options.html), ("--dump", options.dump)):
        if folder and os.path.exists(folder) and not os.path.isdir(folder):
            raise UsageError(f"{flag} {folder}: this is a file; give a folder")
        if folder:
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as exc:
                raise UsageError(f"{flag} {folder}: cannot create this folder: {exc.strerror}") from None
            if not os.access(folder, os.W_OK):
                raise UsageError(f"{flag} {folder}: cannot write into this folder")


def _write_report(run: RunResult, options: argparse.Namespace) -> None:
    from tl_inspect.reports import get_reporter

    fmt = options.format or "full"
    try:
        with open(options.output, "w", encoding="utf-8") if options.output else nullcontext(sys.stdout) as out:
            if options.statistics:
                _print_statistics(run, out, as_json=fmt in ("json", "json-lines"))
            else:
                get_reporter(fmt)(run, out)
            out.flush()  # a full disk or a closed pipe shows here, not at exit
    except BrokenPipeError:
        # the reader stopped early (`| head`): nothing more to say to it, and nothing at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise UsageError("the output was closed before the whole report was written") from None
    except OSError as exc:
        raise UsageError(f"{options.output or 'standard output'}: cannot write the report: {exc.strerror}") from None
    if not (options.statistics or options.output):
        return
    # the report went elsewhere or has no room for them: errors still reach the terminal
    for file in run.files:
        if file.error:
            print(f"tl-inspect: error: {file.path}: {file.error}", file=sys.stderr)
    for report in run.reports:
        if report.kernel.status != "ok":
            print(f"tl-inspect: error: {report.kernel.file} kernel {report.kernel.name}: {report.kernel.error}",
                  file=sys.stderr)


def _print_statistics(run: RunResult, out, as_json: bool) -> None:
    """Findings per rule, most frequent first, as ruff prints them (`--statistics`)."""
    counts: dict[tuple, int] = {}
    for finding in run.findings:
        counts[(finding.rule, finding.slug)] = counts.get((finding.rule, finding.slug), 0) + 1
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if as_json:
        json.dump([{"code": code, "name": slug, "count": count} for (code, slug), count in rows], out, indent=2)
        out.write("\n")
        return
    for (code, slug), count in rows:
        out.write(f"{count:5d}  {code}  {slug}\n")


def exit_status(run: RunResult, fail_on: str, exit_zero: bool) -> int:
    if run.has_errors:
        return EXIT_ERROR
    threshold = SEVERITIES.index(fail_on)
    failing = [f for f in run.findings if SEVERITIES.index(f.severity) >= threshold]
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN
