"""What a global access costs on an H200 against its best form, and what one cause costs its kernel.

Each factor is a row of the H200 calibration (docs/gpu-impact.md, "Calibration of the cost model";
`benchmarks/gpu_calibrate.py` re-measures them) and is time on one of the GPU's resources, in units
of the time the access's bytes take at full memory speed:
  * `memory` (DRAM and L2 bytes): coalesced accesses narrower than 32 bits 1.12x, one or two 16-bit
    elements per thread 2.06x and 1.27x, transposed walks 2.74x (loads) and up to 12.8x (stores);
  * `l1` (L1 wavefronts): loads whose lanes each touch a line of their own, hundreds per thread
    (a thread walking its own row): 14.5x over the bytes one wavefront delivers;
  * `stores` (partial-sector stores, a tail guard or a serial loop keeping each thread's elements
    contiguous): priced by the lane stride, 4.1x to 7.8x for the store's own bytes;
  * a lone thread per block walking its row: 8.77x against the row spread over the block's threads.
A kernel's time is the busiest resource's, its arithmetic among them (tl_inspect.analysis.workload),
and never under the block floor: about 0.6 ns per thread block whatever it moves (2580 bytes at
4.3 TB/s). A cause's estimate is the kernel's time
with its accesses as they are over its time once the one change is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect import ir
from tl_inspect.model import Access

# a cause whose kernel-level estimate is below this is not worth a default warning
COSTLY = 1.10
SECTOR_BYTES = 32
LINE_BYTES = 128
# 0.60 ns per block (2^19-2^21 blocks of Y = 3X: 0.319, 0.633, 1.263 ms) at 4.3 TB/s: a block that
# moves fewer bytes than this waits on the launch, not on memory
BLOCK_FLOOR_BYTES = 2580
# an L1-bound load (lanes in lines of their own) delivers this many bytes per wavefront at full
# memory speed: one wavefront per SM cycle (132 SMs at 1.98 GHz) against 4.3 TB/s, fitted over five
# kernels (row walks 4.0x and 8.1x, chunk sums 3.22x, split-K GEMVs 6.46x and 6.77x)
L1_BYTES_PER_WAVEFRONT = 14.5
# loads per thread from which a thread's loads keep the L1 busy rather than wait on memory
L1_BOUND_LOADS = 32
MEMORY, L1, STORES = "memory", "l1", "stores"
# a launch takes about 2.5 us before its bytes move (fp16 add with a tail guard against its aligned twin:
# 1.05x at 2^16 elements, 1.17x at 2^18, 1.63x at 2^20, 2.5x from 2^22 on): below the bytes that take as
# long, the launch hides most of what an access loses, and an estimate holds for larger sizes
LAUNCH_NS = 2500


@dataclass(frozen=True)
class Measured:
    factor: float
    basis: str  # the row of the H200 table the factor comes from
    bound: str = MEMORY  # the resource the factor is time on


TWO_BYTES_PER_THREAD = Measured(2.06, "one 16-bit element per thread: 2.06x (fp16 add, 1 per thread)")
FOUR_BYTES_PER_THREAD = Measured(1.27, "4 bytes per thread: 1.27x (fp16 add, 2 per thread)")
# the median of nine coalesced 16-bit kernels (1.08-1.22x: misaligned copy, ragged fragment copy,
# thread-strided layout, user bounds check, odd rows, thread-strided serial loop)
NARROW_COALESCED = Measured(1.12, "coalesced accesses narrower than 32 bits: 1.12x (1.08-1.22x measured)")
# TileOPs' reduce over bf16 rows of 4095: each element loaded on its own under `j < N` into a float32
# fragment, 131072 rows against rows of 4096: 1.19-1.22x at 8 and 16 per thread, 1.77x at 32, 1.57x
# at 64, 5.38x at 128 (TileOPs' own mean, var and layer norm 1.69x, 1.81x, 1.40x); ncu on the mean:
# 56 registers against 26, so 56 % occupancy against 100 %
HELD_NARROW_LOADS = Measured(1.67, "coalesced narrow loads held in registers, 32-127 per thread: 1.67x "
                                   "(1.40-1.81x measured; twice the registers of vector loads)")
HELD_NARROW_LOADS_SPILLED = Measured(5.38, "coalesced narrow loads held in registers, 128 or more per thread: "
                                           "5.38x (bf16 rows of 4095 reduced, 4 rows per 128 threads)")
HELD_LOADS, SPILLED_LOADS = 32, 128
# SwiGLU over interleaved gate/up pairs (`GU[r, 2c]`, `GU[r, 2c + 1]`), 32768 x 8192 fp16: 0.420 ms against
# 0.256 ms reading contiguous halves; the two loads move two thirds of the kernel's bytes
INTERLEAVED_LOADS = Measured(1.96, "narrow loads of every other element (interleaved pairs): 1.96x (SwiGLU "
                                   "gate/up pairs: 1.64x for a kernel moving two thirds of its bytes so)")
WIDE_COALESCED = Measured(1.0, "coalesced accesses of 32 bits or more: 1.00-1.03x")
# one uint2 load per thread into shared memory before a barrier: 16 KB in flight per SM against 32 KB;
# the kernel measured 1.16x with the load half its bytes
STAGED_HALF_VECTOR = Measured(1.32, "one 64-bit load per thread staged before a barrier: 1.32x (half the "
                                    "bytes in flight of uint4; 1.16x for a copy through shared memory)")
# measured on kernels that move half their bytes this way (the other half a coalesced 16-bit access):
# 1.93x for the kernel is 2.74x for the load, 6.97x for the kernel 12.8x for the 2-byte store
TRANSPOSED_LOAD = Measured(2.74, "loads with lanes a row apart: 2.74x (1.93x for a kernel moving half its "
                                 "bytes so)")
TRANSPOSED_STORE = Measured(12.8, "stores with lanes a row apart: 12.8x (6.97x for a kernel moving half its "
                                  "bytes so)")
BULK_COPY = Measured(1.0, "a TMA bulk tensor copy")
# bytes per SM cycle the partial-sector stores of spread lanes drain at, by lane stride: fp16 add at
# N = 2^28 + 1 with 4, 8 and 16 elements per thread (0.506, 0.973, 0.851 ms), fp8 stores 8 B apart
SPREAD_STORE_BYTES_PER_CYCLE = ((8, 4.0), (16, 2.1), (1 << 62, 2.4))
SM_CYCLES_PER_NS = 132 * 1.98
FULL_SPEED_BYTES_PER_NS = 4300.0
LAUNCH_BYTES = int(LAUNCH_NS * FULL_SPEED_BYTES_PER_NS)


def access_cost(access: Access, staged: bool = False, held: bool = False) -> Measured | None:
    """The access's slowdown against its best form; None when the lane stride is unknown (a gather)
    or zero (every lane reads the same element), where no vector form exists. `staged`: a load whose
    value goes to shared memory, which a barrier then waits for; `held`: one whose value stays in a
    register fragment (a row loaded to be reduced)."""
    if access.via == "tma":
        return BULK_COPY
    if not access.lane_stride_bytes or not access.sectors:
        return None
    access_bytes = access.bits // 8
    lanes = access.request_bytes // max(1, access_bytes)
    # the part of the 32-byte sectors one warp instruction touches that it uses
    used = access.request_bytes / (access.sectors * SECTOR_BYTES)
    if lanes > 1 and access.sectors >= lanes:  # every lane in a sector of its own
        if access.kind == "store":
            return _transposed_store(used)
        if access.elements_per_thread >= L1_BOUND_LOADS:
            return _l1_bound_load(access, lanes)
        if used < 0.5:
            return TRANSPOSED_LOAD
    # using half of each sector or more measured no loss (64-bit fp8 stores two per thread, lanes 16 B
    # apart; loads widened from 8 to 16 bytes a lane in sectors of their own gained nothing): the
    # thread's next access uses the rest
    if used >= 0.5:
        bytes_per_thread = access.elements_per_thread * ir.dtype_bits(access.dtype) // 8
        if bytes_per_thread <= 2:
            return TWO_BYTES_PER_THREAD
        if bytes_per_thread <= 4:
            return FOUR_BYTES_PER_THREAD
        if access.bits < 32:
            return _narrow_coalesced(access, held)
        if staged and access.kind == "load" and access.bits < 128 and access.elements_per_thread == access.lanes:
            return STAGED_HALF_VECTOR
        return WIDE_COALESCED
    if access.kind == "store":
        return _spread_store(access.lane_stride_bytes)
    # the L1 serves the rest of each sector to the thread's next iterations: what is left is the
    # instructions of a narrow access
    return NARROW_COALESCED


def _narrow_coalesced(access: Access, held: bool) -> Measured:
    """Narrow loads of every other element need two requests for the sectors one vector would read.
    Narrow loads held in registers need a register per element where a vector packs several: with
    dozens per thread the occupancy halves, and past a hundred the registers run out."""
    if access.kind == "load" and access.lanes == 1 and access.lane_stride_bytes == 2 * ir.dtype_bits(access.dtype) // 8:
        return INTERLEAVED_LOADS
    if held and access.kind == "load" and access.elements_per_thread >= HELD_LOADS:
        return HELD_NARROW_LOADS_SPILLED if access.elements_per_thread >= SPILLED_LOADS else HELD_NARROW_LOADS
    return NARROW_COALESCED


def _transposed_store(used: float) -> Measured:
    """A store whose lanes each write part of a sector of their own costs in proportion to the part
    left unwritten: 12.8x at 2 bytes of 32, and twice as fast per doubling of the width (a 4 -> 8-byte
    row-per-lane store measured 1.95x faster)."""
    factor = round(max(1.0, TRANSPOSED_STORE.factor * (2 / SECTOR_BYTES) / used), 2)
    return Measured(factor, f"stores with lanes in sectors of their own, {used * SECTOR_BYTES:.0f} of 32 bytes "
                            f"written: {factor}x (12.8x at 2 bytes)")


def _l1_bound_load(access: Access, lanes: int) -> Measured:
    """Lanes in lines of their own cost one L1 wavefront per line a warp instruction touches; with
    hundreds of loads per thread the L1, not memory, sets the time (ncu: L1 at 98-100 % of peak)."""
    lines = min(lanes, max(1, -(-lanes * min(access.lane_stride_bytes, LINE_BYTES) // LINE_BYTES)))
    per_wavefront = access.request_bytes / lines
    if per_wavefront >= VECTOR_BYTES:
        return VECTOR_ROW_WALK
    factor = round(max(1.0, L1_BYTES_PER_WAVEFRONT / per_wavefront), 2)
    return Measured(factor, f"{access.elements_per_thread} loads per thread with lanes in {lines} lines of their "
                            f"own, {per_wavefront:g} B per L1 wavefront: {factor}x (L1-bound; a bf16 row walk "
                            f"measured 8.1x)", L1)


# a lone thread per block walking its row (docs/gpu-impact.md, calibration): 8192 fp32 rows of 16384,
# 1.038 ms against 0.118 ms for 128 threads reducing a T.copy'd row (8.49x-9.52x over three runs)
LONE_THREAD_WALK = Measured(8.77, "one thread per block walking its row alone: 8.77x (fp32 rows of 16384)")
# the same walk with its loads staged as float4 (the lone-thread proof's kernel): 0.620 ms against 0.120 ms
LONE_THREAD_VECTOR_WALK = Measured(5.17, "one thread per block walking its row alone with 128-bit loads: 5.17x "
                                         "(fp32 rows of 16384; 8.77x with 32-bit loads)")
# a thread walking its own row a whole vector a load (the row-walk proof's staged kernel, bf16 rows of
# 256): 0.382 ms against 0.249 ms for rows T.copy'd into a fragment; the L1 keeps up, the half-used
# sectors of lanes a row apart do not
VECTOR_BYTES = 16
VECTOR_ROW_WALK = Measured(1.53, "a thread walking its own row with 16-byte loads: 1.53x (bf16 rows of 256)", L1)


def lone_walk_cost(bits: int) -> Measured:
    """A lone thread's walk against the row spread over the block's threads, as measured with 32-bit
    and with 128-bit loads (the lone thread waits on each load in turn: wider ones help only so much)."""
    return LONE_THREAD_VECTOR_WALK if bits >= 128 else LONE_THREAD_WALK


def _spread_store(stride: int) -> Measured:
    """Stores whose lanes sit `stride` bytes apart write part of each sector; the partial writes drain
    at a rate set by the stride, whatever the element type."""
    rate = next(r for limit, r in SPREAD_STORE_BYTES_PER_CYCLE if stride <= limit)
    factor = round(FULL_SPEED_BYTES_PER_NS / (rate * SM_CYCLES_PER_NS), 2)
    return Measured(factor, f"stores with lanes {stride} B apart, each thread's elements contiguous: {factor}x "
                            f"for the store's bytes ({rate} B per SM cycle; fp16 add with a tail guard 2.63x)",
                    STORES)


def kernel_time(accesses, replaced: dict | None = None, block_scale: float = 1.0, workload=None) -> float:
    """The kernel's time in units of its bytes at full speed: its busiest resource (its arithmetic
    among them), or the block floor. `replaced`: id(access) -> (factor, bound) for
    accesses a change would make cheaper; `block_scale`: how much more each block would move after the
    change (a larger tile); `workload`: the kernel's arithmetic (tl_inspect.analysis.workload)."""
    replaced = replaced or {}
    busy = {MEMORY: 0.0, L1: 0.0, STORES: 0.0}
    block_bytes = 0
    for a in accesses:
        factor, bound = replaced.get(id(a), (a.cost or 1.0, a.cost_bound or MEMORY))
        busy[MEMORY] += a.share * (factor if bound == MEMORY else 1.0)
        if bound != MEMORY:
            busy[bound] += a.share * factor
        block_bytes += a.block_bytes
    floor = BLOCK_FLOOR_BYTES / (block_bytes * block_scale) if block_bytes else 0.0
    compute = workload.compute_units(block_bytes) if workload else 0.0
    return max(max(busy.values()), floor, compute)


def kernel_slowdown(accesses, members, block_scale: float = 1.0, workload=None) -> float:
    """What removing one cause would gain the kernel: its time as it is over its time with `members`
    (the accesses the one change fixes) at what they still cost once the cause is gone (measured on
    the rebuilt kernel where there is one)."""
    after = {id(a): (min(a.cost or 1.0, a.cost_after or 1.0), MEMORY) for a in members}
    return kernel_time(accesses, workload=workload) / kernel_time(accesses, after, block_scale, workload)
