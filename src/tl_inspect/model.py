"""Values shared by the inspector, the rules and the reporters.

The inspector turns a user file into `FileResult`s holding `KernelArtifact`s; rules read artefacts and
return `Finding`s; reporters render both. All of it is plain frozen data that pickles across the worker
process boundary and never imports tilelang.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Stages of the TIR pipeline that the inspector snapshots, in pipeline order.
STAGE_FRONTEND = "frontend"
STAGE_LAYOUT = "layout_inference"
STAGE_VECTORIZE = "vectorize_loop"
STAGE_DEVICE = "device"
STAGES = (STAGE_FRONTEND, STAGE_LAYOUT, STAGE_VECTORIZE, STAGE_DEVICE)

SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True)
class Access:
    """One global-memory load or store as emitted in the device code."""

    kind: str  # "load" | "store"
    buffer: str
    dtype: str  # element dtype, "float16"
    lanes: int  # elements moved by one instruction
    line: int | None  # user's Python line
    cuda_lines: tuple = ()
    index: str = ""
    via: str = ""  # "cp.async" or "tma" for asynchronous copies into shared memory

    @property
    def bits(self) -> int:
        from tl_inspect.ir import dtype_bits

        return self.lanes * dtype_bits(self.dtype)

    @property
    def width_class(self) -> str:
        """"128-bit" for full-width vector accesses, "narrow" for 2+ lanes below that, else "scalar"."""
        if self.bits >= 128:
            return "128-bit"
        return "narrow" if self.lanes > 1 else "scalar"


@dataclass(frozen=True)
class Layout:
    """A fragment buffer's layout or a `T.Parallel` loop's layout after `tl.LayoutInference`."""

    kind: str  # "buffer" | "loop"
    name: str  # buffer name, or loop variable
    scope: str
    line: int | None
    layout_type: str  # "Fragment" | "Layout"
    input_shape: tuple
    output_shape: tuple
    thread: str = ""
    index: tuple = ()
    replicate: int = 1
    thread_size: int = 0
    # thread owning each element, row by row, for 1-D/2-D fragments small enough to draw
    thread_grid: tuple | None = None


@dataclass(frozen=True)
class KernelArtifact:
    name: str
    file: str  # the path as the user gave it
    line: int | None  # def line of the kernel function
    arch: str
    status: str = "ok"  # "ok" | "error"
    error: str | None = None
    error_line: int | None = None  # the line of the user's file the error points at, when known
    discovered_as: str = ""  # prim_func | jit_kernel | jit_factory | autotune | factory
    source: str = ""  # get_kernel_source() text as users see it (no #line directives)
    source_with_directives: str = ""
    # line_map[i] = Python line of CUDA line i + 1 (None where no user line applies)
    line_map: tuple = ()
    snapshots: dict = field(default_factory=dict)  # stage -> tl_inspect.ir.Snapshot
    accesses: tuple = ()
    layouts: tuple = ()
    layout_text: str = ""
    warnings: tuple = ()  # compiler diagnostics printed on fd 2, one entry per message
    compile_ms: float = 0.0
    ptxas: dict | None = None

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
    warnings: tuple = ()  # compiler diagnostics printed while importing the module
    peak_rss_mb: float = 0.0
    seconds: float = 0.0
    cached: bool = False  # served from tl-inspect's result cache, not compiled in this run
    dependencies: tuple = ()  # (kind, name, digest) of the sources, files and variables read (inspector.inputs)


@dataclass(frozen=True)
class Finding:
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

    def as_dict(self) -> dict:
        data = {
            "rule": self.rule, "slug": self.slug, "severity": self.severity, "message": self.message,
            "fix": self.fix, "file": self.file, "line": self.line,
            "end_line": self.end_line if self.end_line is not None else self.line,
            "cuda_lines": list(self.cuda_lines), "kernel": self.kernel, "col": self.col,
            "evidence": list(self.evidence),
        }
        if self.expected_bits is not None:
            data["expected_bits"] = self.expected_bits
            data["emitted_bits"] = self.emitted_bits
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

    @property
    def findings(self) -> list:
        return [f for report in self.reports for f in report.findings]

    @property
    def has_errors(self) -> bool:
        return any(f.error for f in self.files) or any(r.kernel.status != "ok" for r in self.reports)
