"""`--format concise`: one line per finding, `path:line:col: CODE [slug] kernel: message`, for grep and
editors; the kernel (or factory case, `add[N=4095]`) tells apart the cases of one factory on one line.

Files and kernels that could not be inspected get a line of the same `path:line:col:` shape, so an
editor's error list shows them too."""

from __future__ import annotations

from typing import TextIO

from tl_inspect.inspector.processes.errors import printable
from tl_inspect.model import RunResult
from tl_inspect.reports.common import file_groups, one_line, run_summary
from tl_inspect.reports.phrases import headline
from tl_inspect.reports.registry import reporter


@reporter("concise")
def write_concise(run: RunResult, out: TextIO) -> None:
    for file, reports in file_groups(run):
        if file.error:
            out.write(
                f"{printable(file.path)}:{file.error_line or 1}:1: error: could not import the file: "
                f"{one_line(file.error)}\n"
            )
        for report in reports:
            k = report.kernel
            if k.status != "ok":
                out.write(
                    f"{printable(k.file)}:{k.error_line or k.line or 1}:1: error: kernel "
                    f"{printable(k.name)} could not be compiled: {one_line(k.error or 'unknown error')}\n"
                )
            for f in report.findings:
                out.write(
                    f"{printable(f.file)}:{f.line}:{f.col}: {f.rule} [{f.slug}] {printable(f.kernel)}: "
                    f"{one_line(headline(f))}\n"
                )
    summary = run_summary(run)
    for path, line in summary.needing_cases:
        out.write(f"{printable(path)}:1:1: note: no call of its factories could be inferred; add {line}\n")
    out.write(f"Files: {summary.phrase()}\n")
