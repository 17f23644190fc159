"""Values shared by the inspector, the rules and the reporters.

The inspector turns a user file into `FileResult`s holding `KernelArtifact`s; rules read artefacts and
return `Finding`s; reporters render both. All of it is plain frozen data that pickles across the worker
process boundary and never imports tilelang.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.tir.nodes import dtype_bits

# the TIR snapshots the inspector keeps, in pipeline order
STAGE_FRONTEND = "frontend"
STAGE_LAYOUT = "layout_inference"
STAGE_VECTORIZE = "vectorize_loop"
STAGE_DEVICE = "device"

SEVERITIES = ("info", "warning", "error")

VERDICTS = ("full", "cheap", "costly", "inherent", "unproven", "unexplained")


class Verdict:
    """The verdicts by name, so that code compares with a declaration rather than a spelling (the
    values stay plain strings: they are what the JSON carries)."""

    FULL, CHEAP, COSTLY, INHERENT, UNPROVEN, UNEXPLAINED = VERDICTS
    # costs 1.10x or more with a cause, proven or still to prove: its cause instance is numbered and weighed
    PROVABLE = (COSTLY, UNPROVEN)


@dataclass(frozen=True)
class Cause:
    """Why a global access is narrower or less coalesced than its footprint allows.

    `kind` names one of `tl_inspect.causes`; the other fields are the facts that kind phrases its
    message from (empty where they do not apply)."""

    kind: str
    width: int = 0  # lanes of the vector the access could have
    buffer: str = ""  # the access whose index or layout is at fault (may be another access of the loop)
    index: str = ""  # that access as the compiler renders it: "A[bx * 1024 + i + 1]"
    index_line: int | None = None  # the line of the statement that makes that access
    loop: str = ""  # the loop as written: "T.Parallel(256)", "T.copy", "T.serial"
    loop_line: int | None = None  # its line
    lane_var: str = ""  # the variable neighbouring lanes step through
    predicate: str = ""  # a bounds check, as written
    inserted: bool = False  # the check is tilelang's own (from a buffer's length), not the user's
    bound: str = ""  # what the check compares with: "2047", "N"
    bound_value: int | None = None  # the bound when it is a constant
    stride: int | None = None  # elements between neighbouring lanes' addresses in the index
    offset: str = ""  # the term that breaks alignment: "1", "pos", "bx * 3"
    offset_value: int | None = None  # a constant offset
    row: str = ""  # the row length of misaligned rows
    row_value: int | None = None
    threads: int = 0
    elements: float = 0  # elements per thread the loop gives
    # the loop's body accumulates into a value the loop does not index (`s += X[r, j]`): tilelang keeps
    # such a loop serial even written as T.vectorized, so its loads are staged through a local instead
    accumulates: bool = False
    origin: Cause | None = None  # for a fragment layout: the cause in the loop that fixed it


@dataclass(frozen=True)
class Proof:
    """The kernel rebuilt with one cause removed, and what became of the access."""

    change: str  # the change in the user's terms: "N = 2047 -> 2048 (a multiple of 8)"
    cuda_before: str  # the access's CUDA line before and after
    cuda_after: str
    bits_before: int
    bits_after: int
    stride_before: int | None  # lane strides in bytes
    stride_after: int | None

    def as_dict(self) -> dict:
        return {"change": self.change, "cuda_before": self.cuda_before, "cuda_after": self.cuda_after,
                "bits_before": self.bits_before, "bits_after": self.bits_after,
                "stride_before": self.stride_before, "stride_after": self.stride_after}


@dataclass(frozen=True)
class Measured:
    """The kernel and its proof's variant timed on this machine's GPU (tl_inspect.inspector.measurement.measure)."""

    slowdown: float  # time per byte moved of the kernel over that of the variant
    ms_before: float  # median of one launch, L2 flushed before it
    ms_after: float
    gpu: str  # "NVIDIA H200"
    spread: float  # the wider form's interquartile range of launch times over its median
    outputs_agree: bool | None = None  # against the kernel's; None: the variant computes another function

    def as_dict(self) -> dict:
        return asdict(self)


def _measurement(measured: Measured | None, unmeasured: str) -> dict:
    return {"measured": measured.as_dict()} if measured else {"unmeasured": unmeasured} if unmeasured else {}


@dataclass(frozen=True)
class Cost:
    """A slowdown factor against the vector form, and the measurement it comes from."""

    estimate: float  # for the whole kernel
    basis: str
    per_access: float | None = None  # the access's own slowdown, before weighing by its share of bytes
    launch_bytes: int | None = None  # what the launch moves, when known before run time
    at_size: float | None = None  # the estimate for a launch of launch_bytes (the launch's own time counted)
    at_size_limit: str = ""  # what keeps `at_size` under `estimate` (tl_inspect.analysis.cost.LAUNCH, WALK)
    measured: Measured | None = None  # after --measure
    unmeasured: str = ""  # after --measure, why this one was not measured
    table: CostTable | None = None  # the cost table the estimate comes from (None: the shipped H200 one)

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "basis": self.basis, "per_access": self.per_access,
                "launch_bytes": self.launch_bytes,
                **({"estimate_at_size": self.at_size} if self.at_size is not None else {}),
                **_measurement(self.measured, self.unmeasured)}


@dataclass(frozen=True)
class Access:
    """One global-memory access of the device code, what the pattern allowed, and its verdict.

    The first group of fields is read off the device code by the inspector; the verdict fields are
    filled by `tl_inspect.analysis.verdicts` (still in the worker, where a cause can be proven by
    recompiling the kernel without it)."""

    kind: str  # "load" | "store"
    buffer: str
    dtype: str  # element dtype, "float16"
    lanes: int  # elements moved by one instruction
    line: int | None  # user's Python line
    cuda_lines: tuple = ()
    index: str = ""
    via: str = ""  # "cp.async" or "tma" for asynchronous copies into shared memory
    # distance in bytes between the addresses neighbouring threads access in one instruction; None for
    # an address loaded from memory
    lane_stride_bytes: int | None = None
    request_bytes: int = 0  # bytes one warp instruction moves (the first warp, every loop at 0)
    sectors: int = 0  # 32-byte sectors that instruction touches
    elements_per_thread: int = 1  # elements one thread moves through this access in one launch
    thread_run_bytes: int = 0  # the longest run of contiguous bytes one thread walks through its loops
    block_bytes: int = 0  # bytes this access moves per thread block
    guard: tuple | None = None  # (condition, bound) of a lane-varying bounds check the access sits under
    atomic: bool = False
    tile_op: str = ""  # "copy" when the access comes from a `T.copy`
    # its statement sits in a loop each thread runs one trip after the other (`T.serial`, `range`): its
    # loads wait one for the last, where a `T.copy` or `T.Parallel` issues them all at once
    walked: bool = False
    # verdict
    max_bits: int | None = None  # widest this access could have
    verdict: str | None = None  # one of VERDICTS
    cause: Cause | None = None
    causes: tuple = ()  # every cause found, the primary first: a proof tries them in turn
    reason: str = ""  # why an `inherent` access cannot be wider
    cost: float | None = None  # slowdown of this access against its vector form
    cost_basis: str = ""
    cost_bound: str = ""  # the resource its cost is time on (tl_inspect.analysis.cost): memory, l1, stores
    cost_term: str = ""  # the cost table's term that priced it (tl_inspect.gpu.cost_table.TERMS)
    cost_after: float | None = None  # what it still costs in the kernel rebuilt without its cause
    share: float = 0.0  # its fraction of the kernel's global bytes
    group: int | None = None  # accesses with the same cause instance share a group (and one proof)
    kernel_cost: float | None = None  # the kernel's slowdown from this access's cause instance
    # the same at this launch's size, and what keeps it under kernel_cost there (cost.LAUNCH or cost.WALK)
    kernel_cost_at_size: float | None = None
    at_size_limit: str = ""
    proof: Proof | None = None
    gain: Gain | None = None  # what the best fix of it gains the whole launch against its floor
    measured: Measured | None = None  # after --measure: its proof's variant timed against the kernel, or
    unmeasured: str = ""  # why it was not

    @property
    def bits(self) -> int:
        return self.lanes * dtype_bits(self.dtype)

    @property
    def json_kind(self) -> str:
        """The contract's access kind: load | store | copy | async | tma."""
        if self.via == "tma":
            return "tma"
        if self.via:
            return "async"
        return "copy" if self.tile_op == "copy" else self.kind

    @property
    def width_class(self) -> str:
        """"128-bit" for full-width vector accesses, "narrow" for 2+ lanes below that, else "scalar"."""
        if self.bits >= 128:
            return "128-bit"
        return "narrow" if self.lanes > 1 else "scalar"

    def as_dict(self) -> dict:
        return {
            "buffer": self.buffer, "kind": self.json_kind, "direction": self.kind, "dtype": self.dtype,
            "line": self.line, "cuda_lines": list(self.cuda_lines), "bits": self.bits,
            "max_bits": self.max_bits, "lane_stride_bytes": self.lane_stride_bytes,
            "request_bytes": self.request_bytes, "sectors": self.sectors,
            "thread_run_bytes": self.thread_run_bytes,
            "elements_per_thread": self.elements_per_thread, "verdict": self.verdict,
            "cause": self.cause.kind if self.cause else None, "reason": self.reason or None,
            "cost": self.cost, "share": round(self.share, 4),
            "proof": self.proof.as_dict() if self.proof else None,
            "gain": self.gain.as_dict() if self.gain else None,
            **_measurement(self.measured, self.unmeasured),
        }


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
    run: int = 0  # typical consecutive elements of a row one thread owns (0: not known)


@dataclass(frozen=True)
class Ledger:
    """The book's accounting of one kernel launch, from its accesses and its device code
    (`tl_inspect.analysis.ledger`). None anywhere means "not known before run time" or "not counted"."""

    threads_launched: int  # per block
    threads_working: int  # threads per block that reach a global access
    thread_guard: str  # the device condition that leaves the others idle, "threadIdx.x < 32"
    blocks: int | None  # None: an extent of the grid is only known at run time
    grid: str  # the grid as launched, "8 x 8" or "ceildiv(n, 1024)"
    elements_per_thread: int  # the most elements one working thread moves through one access
    read_bytes_per_block: int
    written_bytes_per_block: int
    flops_per_block: int | None  # tensor-core work: T.gemm shapes (None: none, or known only at run time)
    flops_basis: str  # "T.gemm 128x128x32 x 32 iterations (line 74)"
    peak_flops: float | None  # the arch's tensor-core peak for that work, FLOP/s (docs/verdicts.md cites it)
    peak_bytes: float | None  # the arch's memory bandwidth, B/s
    # each tensor once per launch (None: a size or the grid known only at run time)
    unique_read_bytes: int | None = None
    unique_written_bytes: int | None = None
    # float operations on the CUDA cores per block, a transcendental counted as the 16 its slot costs
    # (tl_inspect.analysis.workload); None: a trip count known only at run time
    float_ops_per_block: int | None = None
    peak_float_ops: float | None = None  # the CUDA cores' float32 peak, FLOP/s
    peaks_of: str = ""  # the GPU whose datasheet figures these peaks are, "H200 SXM"
    sms: int | None = None  # that GPU's streaming multiprocessors
    shared_bytes_per_block: int = 0  # static `__shared__` arrays and dynamic shared memory together

    @property
    def read_bytes(self) -> int | None:
        return None if self.blocks is None else self.read_bytes_per_block * self.blocks

    @property
    def written_bytes(self) -> int | None:
        return None if self.blocks is None else self.written_bytes_per_block * self.blocks

    @property
    def requested_bytes(self) -> int | None:
        return None if self.blocks is None else self.read_bytes + self.written_bytes

    @property
    def unique_bytes(self) -> int | None:
        if self.unique_read_bytes is None or self.unique_written_bytes is None:
            return None
        return self.unique_read_bytes + self.unique_written_bytes

    @property
    def reuse(self) -> float | None:
        """How many times over the launch requests its tensors' bytes: what the caches must serve."""
        unique, requested = self.unique_bytes, self.requested_bytes
        return requested / unique if unique and requested is not None else None

    @property
    def flops(self) -> int | None:
        """FLOPs per launch, tensor cores' and CUDA cores' together; None when neither is counted."""
        if self.blocks is None or (self.flops_per_block is None and not self.float_ops_per_block):
            return None
        return ((self.flops_per_block or 0) + (self.float_ops_per_block or 0)) * self.blocks

    @property
    def compute_seconds(self) -> float | None:
        """The launch's arithmetic at the arch's peaks; None when a peak its work needs is unknown."""
        if self.flops is None:
            return None
        seconds = 0.0
        for work, peak in ((self.flops_per_block, self.peak_flops), (self.float_ops_per_block, self.peak_float_ops)):
            if work:
                if not peak:
                    return None
                seconds += work * self.blocks / peak
        return seconds

    def _intensity(self, moved: int | None) -> float | None:
        return self.flops / moved if self.flops is not None and moved else None

    @property
    def intensity(self) -> float | None:
        """FLOP per unique byte: the roofline's intensity on the traffic DRAM must carry at least."""
        return self._intensity(self.unique_bytes)

    @property
    def requested_intensity(self) -> float | None:
        """FLOP per requested byte: the intensity if no re-read is served by a cache."""
        return self._intensity(self.requested_bytes)

    @property
    def ridge(self) -> float | None:
        """FLOP per byte at which this kernel's mix of work takes as long as its bytes at the arch's peaks."""
        seconds = self.compute_seconds
        return self.flops / (seconds * self.peak_bytes) if seconds and self.peak_bytes else None

    def _bound(self, intensity: float | None) -> str | None:
        if intensity is None or self.ridge is None:
            return None
        return "memory" if intensity < self.ridge else "compute"

    @property
    def bound(self) -> str | None:
        """"memory" or "compute" on unique bytes against the ridge; None when either is unknown."""
        return self._bound(self.intensity)

    @property
    def requested_bound(self) -> str | None:
        """The bound on requested bytes: where the kernel lands if the caches serve none of its re-reads."""
        return self._bound(self.requested_intensity)

    def as_dict(self) -> dict:
        return {
            "threads_launched": self.threads_launched, "threads_working": self.threads_working,
            "thread_guard": self.thread_guard or None, "blocks": self.blocks, "grid": self.grid,
            "elements_per_thread": self.elements_per_thread,
            "read_bytes_per_block": self.read_bytes_per_block,
            "written_bytes_per_block": self.written_bytes_per_block,
            "read_bytes": self.read_bytes, "written_bytes": self.written_bytes,
            "flops_per_block": self.flops_per_block, "flops_basis": self.flops_basis or None,
            "float_ops_per_block": self.float_ops_per_block,
            "unique_read_bytes": self.unique_read_bytes, "unique_written_bytes": self.unique_written_bytes,
            "unique_bytes": self.unique_bytes, "requested_bytes": self.requested_bytes,
            "reuse": None if self.reuse is None else round(self.reuse, 2), "flops": self.flops,
            "intensity": None if self.intensity is None else round(self.intensity, 3),
            "requested_intensity": None if self.requested_intensity is None else round(self.requested_intensity, 3),
            "ridge": None if self.ridge is None else round(self.ridge, 1), "bound": self.bound,
            "requested_bound": self.requested_bound, "peaks_of": self.peaks_of or None, "sms": self.sms,
            "shared_bytes_per_block": self.shared_bytes_per_block,
        }


@dataclass(frozen=True)
class Gain:
    """What one fix gains the whole launch, against the launch's floor (tl_inspect.analysis.estimate):
    the launch's estimated time as it is and once the fix is made, and the evidence that prices it."""

    time_us: float
    fixed_us: float
    floor_us: float
    evidence: str  # "rebuild": a rebuilt kernel without the cause; "static": the launch and the index algebra
    cause: Cause  # the cause the fix removes
    shows: str  # the facts and the arithmetic behind it, in the user's terms

    @property
    def factor(self) -> float:
        return self.time_us / self.fixed_us if self.fixed_us else 1.0

    def as_dict(self) -> dict:
        return {"factor": round(self.factor, 2), "time_us": _us(self.time_us), "fixed_us": _us(self.fixed_us),
                "floor_us": _us(self.floor_us)}


@dataclass(frozen=True)
class Estimate:
    """One launch's time on the cost table's GPU against its floor (tl_inspect.analysis.estimate).

    The floor is the book's ideal: the launch's unique bytes at full bandwidth or its arithmetic at the
    peak that applies, whichever is longer, plus one launch. The time is the cost model's: each resource
    the launch keeps busy (memory, the L1, partial-sector stores, the cores, blocks, the bytes its threads
    keep in flight, one thread's walk), the busiest one's, plus one launch."""

    time_us: float | None  # None: the ledger cannot count what the launch does (a run-time grid or length)
    floor_us: float | None
    limited_by: str  # the busiest resource, in the user's terms; or why there is no estimate
    floor_of: str = ""  # what sets the floor: "2.1 MB at 4.3 TB/s"
    parts: tuple = ()  # ((resource, us), ...) every resource's time, longest first, the launch's own last
    # the ledger under-counts the launch's work (a loop's trip count known only at run time): the gap
    # would be wrong, so there is none
    uncounted: str = ""
    # a grid of fewer blocks than the GPU has SMs: the launch's time with its work over one block per SM
    filled_us: float | None = None

    @property
    def gap(self) -> float | None:
        if self.uncounted or not self.time_us or not self.floor_us:
            return None
        return self.time_us / self.floor_us

    def as_dict(self) -> dict:
        gap = self.gap
        return {"time_us": _us(self.time_us), "floor_us": _us(self.floor_us),
                "gap": None if gap is None else round(gap, 2),
                "limited_by": self.uncounted or self.limited_by, "floor_of": self.floor_of or None,
                "parts": {name: _us(us) for name, us in self.parts},
                **({"filled_us": _us(self.filled_us)} if self.filled_us is not None else {})}


@dataclass(frozen=True)
class KernelTiming:
    """The kernel itself timed on this machine's GPU by `--measure` (tl_inspect.inspector.measurement.measure)."""

    time_us: float  # the mean of the middle 80 % of single launches, the L2 flushed before each
    gpu: str
    moved_bytes: int | None  # the ledger's unique bytes, what achieved bandwidth is counted over
    spread: float

    def gap(self, estimate: Estimate | None) -> float | None:
        return self.time_us / estimate.floor_us if estimate is not None and estimate.floor_us else None

    @property
    def achieved_bytes_per_s(self) -> float | None:
        return self.moved_bytes / (self.time_us * 1e-6) if self.moved_bytes else None

    def as_dict(self, estimate: Estimate | None) -> dict:
        gap = self.gap(estimate)
        achieved = self.achieved_bytes_per_s
        return {"time_us": _us(self.time_us), "gap": None if gap is None else round(gap, 2),
                "achieved_bytes_per_s": None if achieved is None else round(achieved),
                "gpu": self.gpu, "spread": self.spread}


def _us(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.4g}")


@dataclass(frozen=True)
class SharedAccess:
    """One shared-memory load or store of the device code and the passes one warp's request takes
    (tl_inspect.inspector.lowering.banks)."""

    kind: str  # "load" | "store"
    buffer: str
    dtype: str  # element dtype
    bits: int  # bits one lane moves
    line: int | None
    cuda_lines: tuple = ()
    index: str = ""
    lane_stride_bytes: int = 0  # bytes between the addresses of lanes 0 and 1
    wavefronts: int = 1  # passes the first warp's request takes
    phases: int = 1  # the fewest passes its width needs
    banks: tuple = ()  # the bank of each lane's first word
    colliding: tuple = ()  # the lanes of the most loaded bank, when it holds more than one word
    # the rebuilt kernel with the buffer's rows one element longer (the proof): its passes, the change
    proof_wavefronts: int | None = None
    proof_change: str = ""

    @property
    def degree(self) -> float:
        """The conflict degree: passes over the fewest the request's width needs (1: no conflict)."""
        return self.wavefronts / self.phases

    @property
    def proof_degree(self) -> float | None:
        return None if self.proof_wavefronts is None else self.proof_wavefronts / self.phases

    def as_dict(self) -> dict:
        return {"kind": self.kind, "buffer": self.buffer, "dtype": self.dtype, "bits": self.bits, "line": self.line,
                "cuda_lines": list(self.cuda_lines), "wavefronts": self.wavefronts, "phases": self.phases,
                "degree": self.degree, "banks": list(self.banks), "colliding": list(self.colliding),
                "proof": None if self.proof_wavefronts is None else
                {"change": self.proof_change, "degree": self.proof_degree}}


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
        return {"content": self.content, "location": {"row": self.line, "column": 1},
                "end_location": {"row": self.end_line, "column": 1}}


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
            "rule": self.rule, "slug": self.slug, "severity": self.severity, "name": self.name,
            "args": dict(self.args), "message": self.message, "fix": self.fix, "file": self.file, "line": self.line,
            "end_line": self.end_line if self.end_line is not None else self.line,
            "cuda_lines": list(self.cuda_lines), "kernel": self.kernel, "col": self.col,
            "evidence": list(self.evidence) if self.gain is None else
            {"kind": self.evidence_kind, "shows": self.gain.shows, "lines": list(self.evidence)},
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
