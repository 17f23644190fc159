"""`--html DIR`: a static, self-contained report (coverage.py's structure, opt-viewer's interleaving).

DIR/index.html lists files and kernels; DIR/<kernel page>.html shows the Python file with each finding
as a row under its line, the generated CUDA beside it, linked both ways through the inspector's line
map, and the kernel's layouts; DIR/rules/<slug>.html holds each rule's documentation so the 'why'
links work offline; DIR/assets/ holds the CSS and JS under content-hashed names.

The page data is built first as plain dataclasses (`html_views`), then rendered by jinja2 templates with autoescape
on; templates hold no logic beyond loops and conditions. No data travels inside <script>: the JS
reads `data-` attributes, so hostile names and source text only ever meet HTML escaping."""

from __future__ import annotations

import hashlib
import os
import re
from importlib import resources

from jinja2 import Environment, PackageLoader, StrictUndefined
from markdown_it import MarkdownIt

from tl_inspect.files.sources import SourceFiles
from tl_inspect.fixes import fix_diff, fix_note
from tl_inspect.gpu import cost_table
from tl_inspect.model import SEVERITIES, Finding, KernelArtifact, KernelReport, RunResult
from tl_inspect.reports.common import (
    estimate_phrase,
    estimate_rows,
    file_groups,
    ledger_rows,
    rule_table,
    run_summary,
    severity_counts,
)
from tl_inspect.reports.explain import explain_view, narrow_accesses
from tl_inspect.reports.html_text import highlighted_lines, inline_markdown
from tl_inspect.reports.html_views import (
    AccessView,
    CudaLine,
    FindingView,
    IndexRow,
    KernelPage,
    PyLine,
    RulePage,
    Site,
    SweepCell,
    SweepRowView,
    SweepView,
)
from tl_inspect.reports.json_report import MODULE_ENTRY
from tl_inspect.reports.layout_view import layout_view
from tl_inspect.reports.phrases import measured_clause
from tl_inspect.reports.sweep import Sweep, sweeps
from tl_inspect.wording import byte_count, plural

ASSET_NAMES = ("report.css", "report.js")


def safe_name(text: str, limit: int = 48) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.")[:limit] or "x"


def kernel_href(inspected: str, kernel: KernelArtifact) -> str:
    """Stable across runs (bookmarks keep working) and unique for a kernel that several inspected
    files import from one helper module."""
    digest = hashlib.sha256(f"{inspected}\0{kernel.file}\0{kernel.name}".encode()).hexdigest()[:10]
    stem = os.path.splitext(os.path.basename(kernel.file))[0]
    return f"k_{safe_name(stem, 32)}_{safe_name(kernel.name)}_{digest}.html"


def rule_href(slug: str) -> str:
    return f"rules/{safe_name(slug, 80)}.html"


def build_site(run: RunResult) -> Site:
    site = Site()
    sources = SourceFiles()
    site.rules = [_rule_page(rule) for rule in rule_table(run)]
    pages: dict[tuple, str] = {}  # (kernel file, kernel name) -> its page, for the sweep matrices
    for file, reports in file_groups(run):
        site.notes.extend((file.path, note) for note in file.notes)
        if file.error:
            site.rows.append(IndexRow(file.path, MODULE_ENTRY, None, "error", file.error, severity_counts(()), 0, None))
        for report in reports:
            page = build_kernel_page(report, kernel_href(file.path, report.kernel), sources)
            pages[(report.kernel.file, report.kernel.name)] = page.href
            site.kernels.append(page)
            site.rows.append(
                IndexRow(
                    file.path,
                    page.name,
                    page.href,
                    page.status,
                    page.error,
                    page.counts,
                    page.findings_total,
                    page.vector if page.status == "ok" else None,
                    max((f.cost.estimate for f in report.findings if f.cost), default=None),
                    report.kernel.estimate.gap if report.kernel.estimate else None,
                    estimate_phrase(report.kernel.estimate, cost_table.of(report.kernel.cost_table).on_gpu),
                )
            )
    site.rows.sort(key=IndexRow.order)
    site.sweeps = [_sweep_view(sweep, pages) for sweep in sweeps(run)]
    return site


def _sweep_view(sweep: Sweep, pages: dict) -> SweepView:
    columns = tuple((label, pages.get((sweep.file, name))) for label, name in zip(sweep.columns, sweep.kernels))
    rows = tuple(
        SweepRowView(
            f"{row.buffer} {row.direction}",
            row.line,
            tuple(
                SweepCell("error", "error")
                if cell.error
                else SweepCell("-", "absent")
                if cell.bits is None
                else SweepCell(f"{cell.bits} {cell.verdict or ''}".strip(), cell.verdict or "absent")
                for cell in row.cells
            ),
            row.steady,
        )
        for row in sweep.rows
    )
    return SweepView(sweep.file, sweep.factory, columns, rows)


def build_kernel_page(report: KernelReport, href: str, sources: SourceFiles) -> KernelPage:
    k = report.kernel
    source = sources.lines(k.file)
    py_to_cuda: dict[int, list[int]] = {}
    for index, py in enumerate(k.line_map):
        if py is not None:
            py_to_cuda.setdefault(py, []).append(index + 1)
    cuda_text = k.source.splitlines()
    cuda_lines = tuple(
        CudaLine(n, code, k.line_map[n - 1] if n <= len(k.line_map) else None)
        for n, code in enumerate(highlighted_lines(cuda_text, "cuda"), 1)
    )

    ordered = sorted(report.findings, key=lambda f: (f.line, f.col))
    placed: dict[int, list[Finding]] = {}
    stray = []
    for f in ordered:
        if source is not None and f.file == k.file and 0 < f.line <= len(source):
            placed.setdefault(f.line, []).append(f)
        else:
            stray.append(f)
    # number findings in page order: stray ones sit above the source
    numbers = {id(f): n for n, f in enumerate(stray + [f for line in sorted(placed) for f in placed[line]], 1)}
    py_lines = tuple(
        PyLine(
            n,
            code,
            tuple(py_to_cuda.get(n, ())),
            tuple(_finding_view(f, numbers[id(f)], len(cuda_text), sources) for f in placed.get(n, ())),
            n == k.line,
        )
        for n, code in enumerate(highlighted_lines(source or [], "python"), 1)
    )
    return KernelPage(
        href=href,
        name=k.name,
        file=k.file,
        line=k.line,
        arch=k.arch,
        status=k.status,
        error=k.error,
        discovered_as=k.discovered_as,
        vector=k.access_summary(),
        counts=severity_counts(report.findings),
        py_lines=py_lines,
        source_missing=source is None,
        stray=tuple(_finding_view(f, numbers[id(f)], len(cuda_text), sources) for f in stray),
        cuda_lines=cuda_lines,
        layouts=tuple(layout_view(layout) for layout in k.layouts),
        layout_text=k.layout_text,
        warnings=tuple(k.warnings),
        findings_total=len(report.findings),
        accesses=tuple(_access_view(a, len(cuda_text)) for a in k.accesses),
        error_detail=k.error_detail,
        ledger=tuple(estimate_rows(k, cost_table.of(k.cost_table).on_gpu) + ledger_rows(k.ledger, k.arch))
        if k.ledger
        else (),
        explain=explain_view(k, sources) if k.status == "ok" and narrow_accesses(k.accesses) else None,
    )


def _access_view(a, cuda_count: int) -> AccessView:
    cause = a.cause.kind if a.cause else a.reason
    return AccessView(
        buffer=a.buffer,
        kind=a.json_kind,
        dtype=a.dtype,
        line=a.line,
        cuda=tuple(n for n in a.cuda_lines if 0 < n <= cuda_count)[:3],
        bits=a.bits,
        max_bits=a.max_bits,
        lane_stride="" if a.lane_stride_bytes is None else byte_count(a.lane_stride_bytes),
        sectors=f"{a.request_bytes} B / {a.sectors}" if a.sectors else "",
        elements_per_thread=a.elements_per_thread,
        share=f"{100 * a.share:.0f}%",
        verdict=a.verdict or "",
        cause=cause or "",
        cost=f"{a.cost:.2f}x" if a.cost is not None else "",
    )


def _bank_map(f: Finding) -> tuple:
    """The warp of a shared-bank-conflict finding, lane by lane."""
    args = dict(f.args)
    if f.name != "BankConflict" or "banks" not in args:
        return ()
    hot = set(args.get("colliding", ()))
    return tuple((lane, bank, lane in hot) for lane, bank in enumerate(args["banks"]))


def _finding_view(f: Finding, number: int, cuda_count: int, sources: SourceFiles) -> FindingView:
    bits = f"{f.emitted_bits} of {f.expected_bits} bits" if f.expected_bits is not None else ""
    proof = f.proof
    fix = f.autofix if f.autofix is not None and f.autofix.judged else None
    diff = fix_diff(fix, f.file, sources.text(f.file)).splitlines() if fix and fix.verified else []
    return FindingView(
        fix_note=fix_note(fix) if fix else "",
        fix_diff=tuple(({"+": "add", "-": "del"}.get(line[:1], "ctx"), line) for line in diff),
        number=number,
        rule=f.rule,
        slug=f.slug,
        severity=f.severity if f.severity in SEVERITIES else "info",
        message=f.message,
        fix=f.fix,
        line=f.line,
        end_line=max(f.end_line or f.line, f.line),
        cuda=tuple(n for n in f.cuda_lines if 0 < n <= cuda_count),
        doc_href=rule_href(f.slug),
        bits=bits,
        cost=f"{f.cost.estimate:.2f}x for the kernel: {f.cost.basis}" if f.cost else "",
        measured=measured_clause(f.cost.measured, f.cost.unmeasured).removeprefix("; ") if f.cost else "",
        proof_change=proof.change if proof else "",
        proof_before=proof.cuda_before if proof else "",
        proof_after=proof.cuda_after if proof else "",
        proof_summary=(
            f"{proof.bits_before} → {proof.bits_after} bits, neighbouring threads "
            f"{byte_count(proof.stride_before)} → {byte_count(proof.stride_after)} apart"
        )
        if proof
        else "",
        bank_map=_bank_map(f),
        evidence=tuple(line for line in f.evidence if line.startswith("proof:")),
    )


def _rule_page(rule) -> RulePage:
    body = MarkdownIt("commonmark", {"html": False}).render(rule.documentation) if rule.documentation else ""
    return RulePage(
        href=rule_href(rule.slug),
        code=rule.code,
        slug=rule.slug,
        severity=rule.severity,
        summary=rule.summary,
        body=body,
        fix=rule.fix,
    )


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("tl_inspect.reports", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["plural"] = plural
    env.filters["spaced"] = lambda numbers: " ".join(str(n) for n in numbers)
    env.filters["markdown"] = inline_markdown
    return env


def copy_assets(directory: str) -> dict[str, str]:
    """Copy each asset once under a content-hashed name; return name -> path relative to DIR."""
    folder = os.path.join(directory, "assets")
    os.makedirs(folder, exist_ok=True)
    hrefs = {}
    for name in ASSET_NAMES:
        data = resources.files("tl_inspect.reports").joinpath("assets", name).read_bytes()
        stem, ext = os.path.splitext(name)
        hashed = f"{stem}.{hashlib.sha256(data).hexdigest()[:12]}{ext}"
        target = os.path.join(folder, hashed)
        if not os.path.exists(target):
            with open(target, "wb") as f:
                f.write(data)
        hrefs[stem + ext.replace(".", "_")] = f"assets/{hashed}"
    return hrefs


def write_html(run: RunResult, directory: str) -> list[str]:
    """Write the report; return the pages written, index first."""
    site = build_site(run)
    env = environment()
    os.makedirs(os.path.join(directory, "rules"), exist_ok=True)
    common = {
        "assets": copy_assets(directory),
        "version": run.version,
        "arch": run.arch,
        "anchor": "",
        "rule_links": True,
        "cost_table": cost_table.of(run.cost_table).describe(),
    }
    written = []

    def render(template: str, path: str, root: str, **context) -> None:
        text = env.get_template(template).render(root=root, **common, **context)
        target = os.path.join(directory, path)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
        written.append(target)

    totals = severity_counts(run.findings)
    render(
        "index.html",
        "index.html",
        "",
        site=site,
        totals=totals,
        findings_total=len(run.findings),
        failed=sum(1 for row in site.rows if row.status != "ok"),
        summary=run_summary(run),
    )
    for page in site.kernels:
        render("kernel.html", page.href, "", page=page)
    for rule in site.rules:
        render("rule.html", rule.href, "../", rule=rule)
    return written
