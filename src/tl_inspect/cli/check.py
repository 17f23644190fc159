"""`tl-inspect PATH...`: the lint run (tl_inspect.lint.driver) with the command line's part around it: the
options checked, the targets narrowed (changed files, shards), the fixes, the baseline, the report and the
exit status; and --watch, which checks again after every change."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

import watchfiles

from tl_inspect.cli.output import check_outputs, write_folders, write_report
from tl_inspect.cli.parser import build_parser
from tl_inspect.cli.progress import progress_bar
from tl_inspect.cli.usage import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UsageError, parse_args_option
from tl_inspect.files.sources import SourceFiles
from tl_inspect.fixes import unified_diff
from tl_inspect.fixes.verify import Unwritable, write_fixed
from tl_inspect.inspector import TargetError, parse_targets
from tl_inspect.inspector.discovery.cases import SWEEP_KEY, expand_cases
from tl_inspect.inspector.discovery.targets import shard, tilelang_target
from tl_inspect.inspector.measurement.device import NoGpu
from tl_inspect.inspector.processes.zygote import kept_warm
from tl_inspect.lint import baseline
from tl_inspect.lint.baseline import BaselineError
from tl_inspect.lint.changes import ChangesError, changes_since
from tl_inspect.lint.driver import Inspection, Lint, fixer, lint, load_settings
from tl_inspect.lint.settings import ConfigError, Settings
from tl_inspect.model import SAFE, SEVERITIES, UNSAFE, RunResult
from tl_inspect.reports.common import run_summary
from tl_inspect.tir.deepstack import call_on_deep_stack
from tl_inspect.wording import plural


def check(argv: list[str]) -> int:
    options = build_parser().parse_args(argv)
    return watch(options) if options.watch else check_once(options)


def watch(options: argparse.Namespace) -> int:
    """`--watch`: the whole run again after every change, as `ruff check --watch` does; the changed files
    are compiled again by the one warm zygote, the others are served from the cache."""
    if options.fix or options.diff or options.write_baseline or options.shard:
        raise UsageError(
            "--watch checks again on every change: do not combine it with --fix, --diff, --write-baseline or --shard"
        )
    watched = sorted({os.path.abspath(path.partition("::")[0]) for path in options.paths})
    for path in watched:
        if not os.path.exists(path):
            raise UsageError(f"{os.path.relpath(path)}: no such file or directory")
    # watching starts before the first check and never pauses: a file saved during a check is not missed
    changes = watchfiles.watch(
        *watched,
        watch_filter=watchfiles.PythonFilter(extra_extensions=(".toml",)),
        rust_timeout=1000,
        yield_on_timeout=True,
    )
    next(changes)
    with kept_warm():
        while True:
            try:
                check_once(options)
            except (UsageError, ConfigError, BaselineError, ChangesError) as exc:
                print(f"tl-inspect: error: {exc}", file=sys.stderr)
            print("tl-inspect: watching for changes (Ctrl-C stops)", file=sys.stderr, flush=True)
            changed = set()
            while not changed:
                changed = {os.path.relpath(path) for _, path in next(changes)}
            print(f"tl-inspect: changed: {', '.join(sorted(changed))}", file=sys.stderr)


def check_once(options: argparse.Namespace) -> int:
    """One check of the PATHs: its exit status."""
    # made first: a bad --measure-budget is named before the configuration or any file is read
    inspection = Inspection(
        prove=not options.no_proofs,
        nvcc=options.nvcc,
        all_configs=options.all_configs,
        infer=not options.no_infer,
        measure=options.measure,
        measure_budget=options.measure_budget,
        use_cache=not options.no_cache,
    )
    if options.diff_against is not None and not options.diff_against.strip():
        raise UsageError("--diff-against expects a git revision such as origin/main, got an empty string")
    if options.new_only and not options.diff_against:
        raise UsageError("--new-only needs --diff-against REV")
    if options.write_baseline and (options.baseline or options.diff_against):
        raise UsageError("--write-baseline records every finding: do not combine it with --baseline or --diff-against")
    index, count = parse_shard_option(options.shard) if options.shard else (1, 1)
    settings = load_settings(
        options.config,
        select=options.select,
        ignore=options.ignore,
        extend_select=options.extend_select,
        arch=options.arch,
        gpu=options.gpu,
        timeout=options.timeout,
        max_memory=options.max_memory,
        jobs=options.jobs,
        fail_on=options.fail_on,
    )
    entries = baseline.load(options.baseline) if options.baseline else None
    table = settings.cost_table()
    targets, changes = _targets(options)
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
            print(
                f"tl-inspect: shard {index}/{count} has no file ({plural(everything, 'file')} in all)", file=sys.stderr
            )
    both = sorted(set(args) & set(swept))
    if both:
        raise UsageError(f"{', '.join(both)} given both by -a/--arg and by --sweep")
    try:
        expand_cases({**args, SWEEP_KEY: swept}, "--sweep")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        linted = lint(
            targets, settings, dataclasses.replace(inspection, args=args, swept=swept), table, progress=progress_bar
        )
    except NoGpu as exc:
        raise UsageError(str(exc)) from None
    # the fixes' checks and the renderers recurse on expression depth, as the rules do
    return call_on_deep_stack(_conclude, options, settings, linted, entries, changes)


def _targets(options: argparse.Namespace) -> tuple:
    """The targets the PATHs name, less the files that do not import tilelang (--only-tilelang) or did
    not change (--diff-against), with their outputs checked; and the changes, None without --diff-against."""
    try:
        targets = parse_targets(options.paths)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    if options.only_tilelang:
        targets = [found for t in targets for found in ([t] if t.error else tilelang_target(t.path))]
    changes = changes_since(options.diff_against) if options.diff_against else None
    if changes:
        targets = [t for t in targets if changes.touches(t.path)]
    check_outputs(options, targets)
    return targets, changes


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


def _conclude(options: argparse.Namespace, settings: Settings, linted: Lint, entries, changes) -> int:
    """The fixes, the baseline and every output; the exit status."""
    run, texts = linted.run, linted.texts
    diffs, fix_failed = None, False
    if options.fix or options.diff or options.unsafe_fixes or options.show_fixes:
        run, diffs, fix_failed = _fixes(options, settings, linted)
        if options.fix:
            texts = SourceFiles()  # the fixed files as written
    notes = []
    if options.write_baseline:
        fingerprints = baseline.Fingerprints.for_baseline(options.write_baseline, texts)
        written = baseline.build(run.findings, fingerprints)
        baseline.write(options.write_baseline, written)
        notes.append(f"tl-inspect: wrote {len(run.findings)} finding(s) to {options.write_baseline}")
    if entries is not None:
        run, note = _apply_baseline(run, entries, options.baseline, texts, linted.complete)
        notes.append(note)
    if changes and options.new_only:
        run = _keep(run, lambda f: changes.changed(f.file, f.line, f.end_line or f.line))

    if diffs is None or options.output:
        write_report(run, options)
    if diffs is not None:
        sys.stdout.write("".join(diffs))
    for note in notes:
        print(note, file=sys.stderr)
    write_folders(run, options)
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


def _fixes(options: argparse.Namespace, settings: Settings, linted: Lint) -> tuple:
    """Verify the findings' fixes; with --fix write them, with --diff phrase them. Returns the run to report
    (after --fix, with the fixed files' results), the diffs (None without --diff) and whether a fixed file
    could not be written."""
    verifier = fixer(settings)
    files, reports = linted.run.files, linted.run.reports
    states = verifier.start(linted.jobs, files, reports, linted.texts)
    shown = {state.job.path: state for state in states}
    failed = False
    diffs = None
    if options.fix or options.diff:
        fixed = [s for s in verifier.fix(states, (SAFE, UNSAFE) if options.unsafe_fixes else (SAFE,)) if s.changed]
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
    run = dataclasses.replace(linted.run, files=tuple(results.get(f.path, f) for f in files), reports=tuple(out))
    return run, diffs, failed


def _print_fixed(states: list, each: bool) -> None:
    """ruff's summary of a --fix run on stderr, and with --show-fixes what was fixed in each file."""
    count = sum(len(s.applied) for s in states)
    if not count:
        return
    print(
        f"tl-inspect: fixed {count} finding{'s' if count != 1 else ''} in {len(states)} "
        f"file{'s' if len(states) != 1 else ''}",
        file=sys.stderr,
    )
    if each:
        for state in states:
            print(f"  {state.job.path}:", file=sys.stderr)
            for f in state.applied:
                print(f"    line {f.line}: {f.rule} {f.slug} ({f.autofix.applicability}): {f.fix}", file=sys.stderr)


def _keep(run: RunResult, keep) -> RunResult:
    reports = tuple(dataclasses.replace(r, findings=tuple(f for f in r.findings if keep(f))) for r in run.reports)
    return dataclasses.replace(run, reports=reports)


def _apply_baseline(
    run: RunResult, entries: list, path: str, texts: SourceFiles, complete: dict
) -> tuple[RunResult, str]:
    fingerprints = baseline.Fingerprints.for_baseline(path, texts)
    inspected = {(fingerprints.relative(r.kernel.file), r.kernel.name) for r in run.reports if r.kernel.status == "ok"}
    whole_files = {fingerprints.relative(real) for real, whole in complete.items() if whole}
    result = baseline.match(
        run.findings, entries, fingerprints, judged=lambda e: (e.file, e.kernel) in inspected or e.file in whole_files
    )
    new = set(map(id, result.new))
    lines = [
        f"tl-inspect: baseline {path}: {result.known} finding(s) baselined, "
        f"{len(result.stale)} entr{'y' if len(result.stale) == 1 else 'ies'} no longer occur"
        + (" (refresh with --write-baseline):" if result.stale else "")
    ]
    lines += [
        f"  {e.file} {e.kernel}: {e.rule} {e.slug}" + (f" x{e.count}" if e.count > 1 else "") + f": {e.statement}"
        for e in result.stale
    ]
    return _keep(run, lambda f: id(f) in new), "\n".join(lines)


def exit_status(run: RunResult, fail_on: str, exit_zero: bool) -> int:
    if run.has_errors:
        return EXIT_ERROR
    threshold = SEVERITIES.index(fail_on)
    failing = [f for f in run.findings if SEVERITIES.index(f.severity) >= threshold]
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN
