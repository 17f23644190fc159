"""What a run produces: each kernel's artefact and each file's result from the worker, the findings the
rules make of them and the fixes they carry, and the run as the reporters receive it."""

from __future__ import annotations

from dataclasses import dataclass, field

from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.model.access import Cost, Gain, Proof
from tl_inspect.model.launch import Estimate, KernelTiming, Ledger


@dataclass(frozen=True)
class KernelArtifact:
    name: str
    file: str  # the path as the user gave it
    line: int | None  # def line of the kernel function
    arch: str
    status: str = "ok"  # "ok" | "error"
    error: str | None = None
    error_line: int | None = None  # the line of the user's file the error points at, when known
    error_detail: str = ""  # several lines explaining the error, for the full output and the HTML page
    discovered_as: str = ""  # prim_func | jit_kernel | jit_factory | autotune | factory
    # for a factory's case: its name and the arguments as (name, str(value)), which sweeps group by
    factory: str = ""
    case: tuple = ()
    source: str = ""  # get_kernel_source() text as users see it (no #line directives)
    source_with_directives: str = ""
    # line_map[i] = Python line of CUDA line i + 1 (None where no user line applies)
    line_map: tuple = ()
    snapshots: dict = field(default_factory=dict)  # stage -> tl_inspect.tir.nodes.Snapshot
    accesses: tuple = ()
    shared_accesses: tuple = ()  # SharedAccess, the device code's shared-memory loads and stores
    layouts: tuple = ()
    layout_text: str = ""
    warnings: tuple = ()  # compiler diagnostics printed on fd 2, one entry per message
    compile_ms: float = 0.0
    ptxas: dict | None = None
    ledger: Ledger | None = None
    cost_table: CostTable | None = None  # the table its accesses were priced with (None: the shipped one)
    estimate: Estimate | None = None  # its time against its floor on that table's GPU
    timing: KernelTiming | None = None  # after --measure: the kernel timed on this machine's GPU
    untimed: str = ""  # after --measure, why it was not timed

    def cuda_lines_for(self, py_lines) -> tuple:
        """1-based CUDA lines whose statements came from any of the given Python lines."""
        wanted = set(py_lines)
        return tuple(i + 1 for i, py in enumerate(self.line_map) if py in wanted)

    def snapshot(self, stage: str):
        return self.snapshots.get(stage)

    def access_summary(self) -> dict:
        summary = {"128-bit": 0, "narrow": 0, "scalar": 0}
        for access in self.accesses:
            summary[access.width_class] += 1
        return summary


@dataclass(frozen=True)
class FileResult:
    path: str  # as given
    kernels: tuple = ()
    error: str | None = None  # the module could not be imported (kernels found before it are kept)
    error_line: int | None = None
    notes: tuple = ()  # e.g. factories skipped for lack of arguments
    needs_cases: tuple = ()  # (factory, (parameter, ...)) of each factory left without a case
    warnings: tuple = ()  # compiler diagnostics printed while importing the module
    peak_rss_mb: float = 0.0
    seconds: float = 0.0
    cached: bool = False  # served from tl-inspect's result cache, not compiled in this run
    dependencies: tuple = ()  # (kind, name, digest) of the sources, files and variables read (inspector.inputs)


SAFE, UNSAFE = "safe", "unsafe"  # a fix's applicability, in ruff's meaning


@dataclass(frozen=True)
class Edit:
    """Lines `line` up to `end_line` (not included) of the user's file replaced by `content`, whole lines
    each ending in a newline; `end_line == line` inserts before `line`."""

    line: int
    end_line: int
    content: str

    def as_dict(self) -> dict:
        # ruff's edit: 1-based rows and columns, the end exclusive
        return {
            "content": self.content,
            "location": {"row": self.line, "column": 1},
            "end_location": {"row": self.end_line, "column": 1},
        }


@dataclass(frozen=True)
class Fix:
    """A rule's source edit that removes its finding (tl_inspect.fixes). `unsafe` may change what the kernel
    computes or rests on a promise only the user can make. Offered only once `verified`: applied to a copy of
    the file that was then inspected again; `refused` says why a fix failed that."""

    applicability: str  # SAFE | UNSAFE
    edits: tuple  # Edit, in line order
    verified: bool = False
    refused: str = ""

    @property
    def judged(self) -> bool:
        return self.verified or bool(self.refused)

    def as_dict(self) -> dict:
        if not self.verified:
            return {"applicability": self.applicability, "verified": False, "edits": [], "refused": self.refused}
        return {"applicability": self.applicability, "verified": True, "edits": [e.as_dict() for e in self.edits]}


@dataclass(frozen=True)
class Finding:
    """One rule's remark on one line: `name` and `args` are its structured form (LLVM's remark name and
    arguments), `message` and `fix` the sentences phrased from them. `message` states the problem only:
    the cost and the proof are `cost` and `proof`, and every renderer adds them itself."""

    rule: str  # code, "TLV001"
    slug: str
    severity: str
    message: str
    fix: str
    file: str
    line: int
    kernel: str = ""
    end_line: int | None = None
    cuda_lines: tuple = ()
    evidence: tuple = ()  # generated lines (CUDA or TIR) that prove the finding
    expected_bits: int | None = None
    emitted_bits: int | None = None
    col: int = 1
    cost: Cost | None = None  # vectorization findings: the kernel's slowdown from this cause
    proof: Proof | None = None  # vectorization findings: the kernel rebuilt without the cause
    gain: Gain | None = None  # performance findings: what the fix gains the whole launch against its floor
    name: str = ""  # CamelCase remark name, "MisalignedRows"
    args: tuple = ()  # (field, value) pairs of the remark, values JSON-ready
    autofix: Fix | None = None  # the rule's source edit; reported once judged (--fix, --diff, --show-fixes)

    @property
    def evidence_kind(self) -> str:
        """What shows a performance finding's gain: "measured" once --measure timed its fix, else its gain's."""
        if self.cost is not None and self.cost.measured is not None:
            return "measured"
        return self.gain.evidence if self.gain is not None else ""

    def as_dict(self) -> dict:
        data = {
            "rule": self.rule,
            "slug": self.slug,
            "severity": self.severity,
            "name": self.name,
            "args": dict(self.args),
            "message": self.message,
            "fix": self.fix,
            "file": self.file,
            "line": self.line,
            "end_line": self.end_line if self.end_line is not None else self.line,
            "cuda_lines": list(self.cuda_lines),
            "kernel": self.kernel,
            "col": self.col,
            "evidence": list(self.evidence)
            if self.gain is None
            else {"kind": self.evidence_kind, "shows": self.gain.shows, "lines": list(self.evidence)},
        }
        if self.gain is not None:
            data["gain"] = self.gain.as_dict()
        if self.expected_bits is not None:
            data["expected_bits"] = self.expected_bits
            data["emitted_bits"] = self.emitted_bits
        if self.cost is not None:
            data["cost"] = self.cost.as_dict()
        if self.proof is not None:
            data["proof"] = self.proof.as_dict()
        if self.autofix is not None and self.autofix.judged:
            data["autofix"] = self.autofix.as_dict()
        return data


@dataclass(frozen=True)
class KernelReport:
    """One kernel with the findings selected for it."""

    kernel: KernelArtifact
    findings: tuple = ()


@dataclass(frozen=True)
class RunResult:
    """Everything one `tl-inspect` run produced; the only input of every reporter."""

    version: str
    arch: str
    files: tuple  # FileResult, in the order inspected
    reports: tuple  # KernelReport, in file then kernel order
    rules: tuple = ()  # the selected rule classes
    cost_table: CostTable | None = None  # the table the run priced with (None: the shipped H200 one)

    @property
    def findings(self) -> list:
        return [f for report in self.reports for f in report.findings]

    @property
    def has_errors(self) -> bool:
        return any(f.error for f in self.files) or any(r.kernel.status != "ok" for r in self.reports)
