"""The plain data the HTML report's templates render: a kernel page, its findings, accesses and lines, the
index's rows, a rule's page and the sweep tables. Built by `tl_inspect.reports.html`; the templates hold no
logic beyond loops and conditions."""

from __future__ import annotations

from dataclasses import dataclass, field

from tl_inspect.model import SEVERITIES
from tl_inspect.reports.explain import KernelExplain


@dataclass(frozen=True)
class FindingView:
    number: int  # 1-based, in page order; the anchor is finding-<number>
    rule: str
    slug: str
    severity: str
    message: str
    fix: str
    line: int
    end_line: int
    cuda: tuple
    doc_href: str
    bits: str
    cost: str = ""  # "2.93x for the kernel: lanes 16 B apart ..."
    measured: str = ""  # after --measure: "measured 2.63x on this NVIDIA H200 (...)" or why not
    proof_change: str = ""
    proof_before: str = ""
    proof_after: str = ""
    proof_summary: str = ""  # "16 -> 128 bits, lanes 16 B -> 16 B apart"
    fix_note: str = ""  # once fixes are verified: "safe fix, verified: ...", or why the fix is not offered
    fix_diff: tuple = ()  # (css class, line) of the verified fix's diff: "add", "del" or "ctx"
    bank_map: tuple = ()  # a bank conflict's warp: (lane, bank, whether it is in the most loaded bank)
    evidence: tuple = ()  # the finding's own lines of evidence (a bank conflict's proof)


@dataclass(frozen=True)
class AccessView:
    """One row of a kernel page's access table."""

    buffer: str
    kind: str
    dtype: str
    line: int | None
    cuda: tuple
    bits: int
    max_bits: int | None
    lane_stride: str
    sectors: str
    elements_per_thread: int
    share: str
    verdict: str
    cause: str
    cost: str


@dataclass(frozen=True)
class PyLine:
    number: int
    code: str  # the line's highlighted, escaped markup
    cuda: tuple  # CUDA lines this Python line produced
    findings: tuple = ()
    is_def: bool = False


@dataclass(frozen=True)
class CudaLine:
    number: int
    code: str  # the line's highlighted, escaped markup
    py: int | None


@dataclass(frozen=True)
class KernelPage:
    href: str
    name: str
    file: str
    line: int | None
    arch: str
    status: str
    error: str | None
    discovered_as: str
    vector: dict
    counts: dict
    py_lines: tuple
    source_missing: bool
    stray: tuple  # findings that cannot sit under a line of the shown source
    cuda_lines: tuple
    layouts: tuple
    layout_text: str
    warnings: tuple
    findings_total: int
    accesses: tuple = ()
    ledger: tuple = ()  # (label, value) rows
    error_detail: str = ""
    explain: KernelExplain | None = None  # the decision chain of the kernel's narrow accesses


@dataclass(frozen=True)
class IndexRow:
    file: str
    name: str
    href: str | None
    status: str
    error: str | None
    counts: dict
    findings_total: int
    vector: dict | None
    cost: float | None = None  # the largest slowdown estimated by one of the kernel's findings
    gap: float | None = None  # the kernel's estimated time over its floor
    gap_title: str = ""  # the estimate in words, for the cell's tooltip

    def order(self) -> tuple:
        """The index's order, worst first: rows that could not be inspected, then the kernels furthest
        from their floor, then the costliest finding; where those tie, errors before warnings before
        info, as ruff orders severity."""
        return (
            self.status == "ok",
            -(self.gap or 0),
            -(self.cost or 0),
            *(-self.counts.get(s, 0) for s in reversed(SEVERITIES)),
            self.file,
            self.name,
        )


@dataclass(frozen=True)
class RulePage:
    href: str
    code: str
    slug: str
    severity: str
    summary: str
    body: str  # HTML rendered from the rule's markdown with raw HTML disabled, so it is safe
    fix: str


@dataclass
class Site:
    rows: list = field(default_factory=list)
    kernels: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # (file, note)
    sweeps: list = field(default_factory=list)  # SweepView


@dataclass(frozen=True)
class SweepCell:
    text: str  # "128 full", "-" (no such access), "error"
    verdict: str  # CSS class suffix: a verdict, "absent" or "error"


@dataclass(frozen=True)
class SweepRowView:
    access: str  # "A load"
    line: int | None
    cells: tuple
    steady: bool


@dataclass(frozen=True)
class SweepView:
    file: str
    factory: str
    columns: tuple  # (label, href of the case's kernel page or None)
    rows: tuple
