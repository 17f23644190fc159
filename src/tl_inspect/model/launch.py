"""What a launch moves and how long it takes: the ledger (the book's accounting of bytes and FLOPs), the
estimate against its floor, and its measured time."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.model.access import rounded_us


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
        """ "memory" or "compute" on unique bytes against the ridge; None when either is unknown."""
        return self._bound(self.intensity)

    @property
    def requested_bound(self) -> str | None:
        """The bound on requested bytes: where the kernel lands if the caches serve none of its re-reads."""
        return self._bound(self.requested_intensity)

    def as_dict(self) -> dict:
        return {
            "threads_launched": self.threads_launched,
            "threads_working": self.threads_working,
            "thread_guard": self.thread_guard or None,
            "blocks": self.blocks,
            "grid": self.grid,
            "elements_per_thread": self.elements_per_thread,
            "read_bytes_per_block": self.read_bytes_per_block,
            "written_bytes_per_block": self.written_bytes_per_block,
            "read_bytes": self.read_bytes,
            "written_bytes": self.written_bytes,
            "flops_per_block": self.flops_per_block,
            "flops_basis": self.flops_basis or None,
            "float_ops_per_block": self.float_ops_per_block,
            "unique_read_bytes": self.unique_read_bytes,
            "unique_written_bytes": self.unique_written_bytes,
            "unique_bytes": self.unique_bytes,
            "requested_bytes": self.requested_bytes,
            "reuse": None if self.reuse is None else round(self.reuse, 2),
            "flops": self.flops,
            "intensity": None if self.intensity is None else round(self.intensity, 3),
            "requested_intensity": None if self.requested_intensity is None else round(self.requested_intensity, 3),
            "ridge": None if self.ridge is None else round(self.ridge, 1),
            "bound": self.bound,
            "requested_bound": self.requested_bound,
            "peaks_of": self.peaks_of or None,
            "sms": self.sms,
            "shared_bytes_per_block": self.shared_bytes_per_block,
        }


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
        return {
            "time_us": rounded_us(self.time_us),
            "floor_us": rounded_us(self.floor_us),
            "gap": None if gap is None else round(gap, 2),
            "limited_by": self.uncounted or self.limited_by,
            "floor_of": self.floor_of or None,
            "parts": {name: rounded_us(us) for name, us in self.parts},
            **({"filled_us": rounded_us(self.filled_us)} if self.filled_us is not None else {}),
        }


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
        return {
            "time_us": rounded_us(self.time_us),
            "gap": None if gap is None else round(gap, 2),
            "achieved_bytes_per_s": None if achieved is None else round(achieved),
            "gpu": self.gpu,
            "spread": self.spread,
        }
