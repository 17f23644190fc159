"""`--format full`: for a person at a terminal (rich). Each kernel gets a summary line (its global
accesses by width), then each finding its Python code frame, the CUDA lines the statement produced,
and the fix title. Colour only when the output is a terminal; rich decides from `out.isatty()` and
honours NO_COLOR / FORCE_COLOR."""

from __future__ import annotations

import textwrap
from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tl_inspect.files.sources import SourceFiles
from tl_inspect.fixes import fix_diff, fix_note
from tl_inspect.gpu import cost_table
from tl_inspect.inspector.processes.errors import printable
from tl_inspect.model import Finding, RunResult
from tl_inspect.reports.common import (
    estimate_phrase,
    file_groups,
    ledger_short,
    measured_phrase,
    run_summary,
    severity_counts,
)
from tl_inspect.reports.difference import differing_pair
from tl_inspect.reports.phrases import headline
from tl_inspect.reports.registry import reporter
from tl_inspect.reports.sweep import Sweep, sweeps
from tl_inspect.wording import plural

SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}
GUTTER = "blue"
MAX_SPAN_LINES = 6
MAX_CUDA_LINES = 6
MAX_CUDA_WIDTH = 140
MIN_WIDTH, DEFAULT_WIDTH = 20, 80


@reporter("full")
def write_full(run: RunResult, out: TextIO) -> None:
    # on a terminal rich wraps at its width, between words; piped or to a file, a finding stays one line for grep
    console = Console(file=out, highlight=False, markup=False, emoji=False, soft_wrap=not out.isatty())
    if console.width < MIN_WIDTH:  # COLUMNS=0 or a tiny terminal: rich would print nothing
        console.width = DEFAULT_WIDTH
    for text in run_texts(run):
        console.print(text)


def run_texts(run: RunResult, sources: SourceFiles | None = None) -> list:
    """The whole `--format full` output, one renderable per printed block (also the API's `__rich__`)."""
    sources = sources or SourceFiles()
    texts = []
    failed = 0
    for file, reports in file_groups(run):
        if file.error:
            failed += 1
            where = f"{printable(file.path)}:{file.error_line}" if file.error_line else printable(file.path)
            texts.append(_problem(f"{where}: could not import the file", file.error))
        for note in file.notes:
            texts.append(Text.assemble(("note", "dim"), f" {printable(file.path)}: {printable(note)}"))
        for report in reports:
            failed += report.kernel.status != "ok"
            texts.extend(kernel_texts(report, sources))
    texts.extend(_sweep_table(sweep) for sweep in sweeps(run))
    texts.append(_totals(run, failed))
    return texts


def kernel_texts(report, sources: SourceFiles) -> list[Text]:
    """One kernel's summary line and its findings, or why it could not be compiled."""
    k = report.kernel
    where = f"{printable(k.file)}:{k.line}" if k.line else printable(k.file)
    if k.status != "ok":
        at = f"{printable(k.file)}:{k.error_line}" if k.error_line else where
        problem = [_problem(f"{at}: kernel {printable(k.name)} could not be compiled", k.error or "")]
        return problem + ([Text(textwrap.indent(k.error_detail, "  ") + "\n")] if k.error_detail else [])
    return [_kernel_line(report, where)] + [_finding(finding, k, sources) for finding in report.findings]


def _problem(what: str, cause: str) -> Text:
    return Text.assemble(("error", SEVERITY_STYLE["error"]), f" {what}: ", cause)


def _kernel_line(report, where: str) -> Text:
    s = report.kernel.access_summary()
    kernel = report.kernel
    gpu = cost_table.of(kernel.cost_table).on_gpu
    floor_line = "; ".join(p for p in (estimate_phrase(kernel.estimate, gpu), measured_phrase(kernel)) if p)
    return Text.assemble(
        (printable(report.kernel.name), "bold"),
        f"  {where}  vector accesses: ",
        (f"{s['128-bit']} 128-bit", "green"),
        " / ",
        (f"{s['narrow']} narrower", "yellow"),
        " / ",
        (f"{s['scalar']} scalar", "red"),
        f"  {plural(len(report.findings), 'finding')}",
        *((f"  ({ledger_short(report.kernel.ledger)})", "dim"),) if report.kernel.ledger else (),
        *((f"\n  {floor_line}", "dim"),) if floor_line else (),
    )


def _finding(f: Finding, kernel, sources: SourceFiles) -> Text:
    style = SEVERITY_STYLE.get(f.severity, "bold")
    end = max(f.end_line or f.line, f.line)
    span = list(range(f.line, min(end, f.line + MAX_SPAN_LINES - 1) + 1))
    frame = [(n, sources.line(f.file, n)) for n in [f.line - 1, *span]]
    frame = [(n, text) for n, text in frame if text is not None]
    cuda_source = kernel.source.splitlines()
    cuda = [(n, cuda_source[n - 1]) for n in f.cuda_lines if 0 < n <= len(cuda_source)]
    shown_cuda = cuda[:MAX_CUDA_LINES]
    width = len(str(max([n for n, _ in frame + shown_cuda] or [f.line])))
    bar = " " * width + " |"
    note = " " * width + " = "

    text = Text()
    text.append(f.severity, style)
    text.append(f" {f.rule} [{f.slug}] {headline(f)}\n", "bold")
    text.append(" " * width + "--> ", GUTTER)
    text.append(f"{printable(f.file)}:{f.line}:{f.col}  kernel {printable(kernel.name)}\n")
    text.append(bar + "\n", GUTTER)
    for number, line in frame:
        text.append(f"{number:>{width}} | ", GUTTER)
        text.append(printable(line) + "\n")
        if number in span and line.strip():
            start = f.col - 1 if number == f.line else len(line) - len(line.lstrip())
            start = min(max(start, 0), len(line.rstrip()) - 1)
            text.append(bar + " ", GUTTER)
            text.append(" " * start + "^" * (len(line.rstrip()) - start) + "\n", style)
    if not frame:
        text.append(bar + " ", GUTTER)
        text.append("(source not available)\n", "dim")
        text.append(bar + "\n", GUTTER)
    text.append(note, GUTTER)
    if not cuda:
        text.append("CUDA: no generated line comes from this statement\n", "magenta")
    else:
        text.append(f"CUDA: {plural(len(cuda), 'line')} generated from this statement\n", "magenta")
        body = textwrap.dedent("\n".join(line for _, line in shown_cuda)).splitlines()
        for (number, _), line in zip(shown_cuda, body):
            text.append(f"{number:>{width}} | ", "magenta")
            text.append(_clip(line) + "\n")
        if len(cuda) > len(shown_cuda):
            text.append(note, GUTTER)
            text.append(f"… {plural(len(cuda) - len(shown_cuda), 'more CUDA line')} (--html shows them all)\n", "dim")
    if f.proof is not None:
        text.append(note, GUTTER)
        text.append("proof: ", "bold cyan")
        text.append(
            f"rebuilt with {f.proof.change}, the access goes from {f.proof.bits_before} to "
            f"{f.proof.bits_after} bits, lanes {f.proof.stride_before} B -> {f.proof.stride_after} B apart\n"
        )
        before, after = differing_pair(f.proof.cuda_before, f.proof.cuda_after, MAX_CUDA_WIDTH)
        for label, line, colour in (("before", before, "red"), ("after ", after, "green")):
            text.append(bar + f"   {label} ", GUTTER)
            text.append(line + "\n", colour)
    text.append(note, GUTTER)
    text.append("fix: ", "bold green")
    text.append(f.fix + "\n")  # a blank line after each finding
    if f.autofix is not None and f.autofix.judged:
        text.append(note, GUTTER)
        text.append(fix_note(f.autofix) + "\n", "green" if f.autofix.verified else "dim")
        if f.autofix.verified:
            for line in fix_diff(f.autofix, f.file, sources.text(f.file)).splitlines():
                text.append(bar + "   ", GUTTER)
                text.append(line + "\n", "green" if line.startswith("+") else "red" if line.startswith("-") else "")
    return text


VERDICT_STYLE = {
    "full": "green",
    "inherent": "cyan",
    "cheap": "cyan",
    "unproven": "yellow",
    "unexplained": "yellow",
    "costly": "red",
}


def _sweep_table(sweep: Sweep) -> Table:
    """Accesses by the swept values: the bits and verdict each value gives, so the values that lose a
    width stand out against those that keep it."""
    table = Table(
        title=f"sweep {printable(sweep.factory)}  {printable(sweep.file)}", title_justify="left", title_style="bold"
    )
    table.add_column("access")
    table.add_column("line", justify="right")
    for column in sweep.columns:
        table.add_column(printable(column), justify="right")
    table.add_column("")
    for row in sweep.rows:
        cells = []
        for cell in row.cells:
            if cell.error:
                cells.append(Text("error", SEVERITY_STYLE["error"]))
            elif cell.bits is None:
                cells.append(Text("-", "dim"))
            else:
                cells.append(Text(f"{cell.bits} {cell.verdict or ''}".strip(), VERDICT_STYLE.get(cell.verdict, "")))
        table.add_row(
            f"{row.buffer} {row.direction}",
            str(row.line or ""),
            *cells,
            Text("changes", "bold yellow")
            if not row.steady
            else Text("same where compiled" if row.partial else "same", "dim"),
        )
    return table


def _clip(line: str) -> str:
    return line if len(line) <= MAX_CUDA_WIDTH else line[: MAX_CUDA_WIDTH - 1] + "…"


def _totals(run: RunResult, failed: int) -> Text:
    counts = severity_counts(run.findings)
    files = len(run.files) or len({r.kernel.file for r in run.reports})
    text = Text(
        f"Checked {plural(len(run.reports), 'kernel')} in {plural(files, 'file')}: "
        f"{plural(len(run.findings), 'finding')}"
    )
    if run.findings:
        parts = [plural(n, severity) for severity, n in counts.items() if n]
        text.append(f" ({', '.join(parts)})")
    if failed:
        text.append("; ")
        text.append(f"{failed} could not be inspected", SEVERITY_STYLE["error"])
    # every estimate's sentence names its GPU; a table other than the shipped one also says where it came from
    if (
        run.cost_table is not None
        and run.cost_table.origin != cost_table.SHIPPED
        and any(f.cost is not None for f in run.findings)
    ):
        text.append(f"\nEstimates priced with {run.cost_table.describe()}")
    summary = run_summary(run)
    text.append(f"\nFiles: {summary.phrase()}")
    for path, line in summary.needing_cases:
        text.append(f"\n  {path}: add {line}")
    return text
