"""Where a check's report goes: the outputs checked before anything is compiled, then the report, its
--statistics form, the HTML and the dump written."""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import nullcontext

from tl_inspect.cli.usage import UsageError
from tl_inspect.model import RunResult
from tl_inspect.reports import get_reporter
from tl_inspect.reports.dump import write_dump


def check_outputs(options: argparse.Namespace, targets: list) -> None:
    """Every output must be writable before anything is compiled: a bad path costs a second, not the run.
    Nor may a report or a baseline replace the user's code (`-o good.py`)."""
    if not options.output and sys.stdout is None:
        raise UsageError("standard output is closed: give -o FILE for the report")
    inspected = {os.path.realpath(t.path) for t in targets}
    for flag, path in (("-o", options.output), ("--write-baseline", options.write_baseline)):
        if path and os.path.isfile(path) and (path.endswith((".py", ".pyi")) or os.path.realpath(path) in inspected):
            raise UsageError(
                f"{flag} {path}: this is a Python file; tl-inspect does not overwrite code, give another file"
            )
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


def write_report(run: RunResult, options: argparse.Namespace) -> None:
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
            print(
                f"tl-inspect: error: {report.kernel.file} kernel {report.kernel.name}: {report.kernel.error}",
                file=sys.stderr,
            )


def write_folders(run: RunResult, options: argparse.Namespace) -> None:
    """--dump and --html."""
    try:
        if options.dump:
            write_dump(run, options.dump)
        if options.html:
            # the HTML report's templates, highlighter and Markdown take a while to load: only --html needs them
            from tl_inspect.reports.html import write_html

            write_html(run, options.html)
    except OSError as exc:
        raise UsageError(f"{exc.filename}: cannot write: {exc.strerror}") from None


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
