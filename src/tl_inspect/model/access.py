"""What the analysis says of one global or shared access: its verdict, the cause of a narrow or
uncoalesced one, the proof that rebuilt the kernel without it, what it costs and what its fix gains."""

from __future__ import annotations

from dataclasses import asdict, dataclass

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
        return {
            "change": self.change,
            "cuda_before": self.cuda_before,
            "cuda_after": self.cuda_after,
            "bits_before": self.bits_before,
            "bits_after": self.bits_after,
            "stride_before": self.stride_before,
            "stride_after": self.stride_after,
        }


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
        return {
            "estimate": self.estimate,
            "basis": self.basis,
            "per_access": self.per_access,
            "launch_bytes": self.launch_bytes,
            **({"estimate_at_size": self.at_size} if self.at_size is not None else {}),
            **_measurement(self.measured, self.unmeasured),
        }


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
        """ "128-bit" for full-width vector accesses, "narrow" for 2+ lanes below that, else "scalar"."""
        if self.bits >= 128:
            return "128-bit"
        return "narrow" if self.lanes > 1 else "scalar"

    def as_dict(self) -> dict:
        return {
            "buffer": self.buffer,
            "kind": self.json_kind,
            "direction": self.kind,
            "dtype": self.dtype,
            "line": self.line,
            "cuda_lines": list(self.cuda_lines),
            "bits": self.bits,
            "max_bits": self.max_bits,
            "lane_stride_bytes": self.lane_stride_bytes,
            "request_bytes": self.request_bytes,
            "sectors": self.sectors,
            "thread_run_bytes": self.thread_run_bytes,
            "elements_per_thread": self.elements_per_thread,
            "verdict": self.verdict,
            "cause": self.cause.kind if self.cause else None,
            "reason": self.reason or None,
            "cost": self.cost,
            "share": round(self.share, 4),
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
        return {
            "factor": round(self.factor, 2),
            "time_us": rounded_us(self.time_us),
            "fixed_us": rounded_us(self.fixed_us),
            "floor_us": rounded_us(self.floor_us),
        }


def rounded_us(value: float | None) -> float | None:
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
        return {
            "kind": self.kind,
            "buffer": self.buffer,
            "dtype": self.dtype,
            "bits": self.bits,
            "line": self.line,
            "cuda_lines": list(self.cuda_lines),
            "wavefronts": self.wavefronts,
            "phases": self.phases,
            "degree": self.degree,
            "banks": list(self.banks),
            "colliding": list(self.colliding),
            "proof": None
            if self.proof_wavefronts is None
            else {"change": self.proof_change, "degree": self.proof_degree},
        }
