"""What a global access costs against its best form, and what one cause costs its kernel.

Each factor is a term of the run's cost table (tl_inspect.gpu.cost_table: the H200's ships, from
docs/gpu-impact.md, "Calibration of the cost model"; `tl-inspect calibrate` fits a table for the local
GPU) and is time on one of the GPU's resources, in units of the time the access's bytes take at full
memory speed:
  * `memory` (DRAM and L2 bytes): coalesced accesses narrower than 32 bits, one or two 16-bit elements
    per thread, transposed walks (loads, and stores by the part of each sector they write);
  * `l1` (L1 wavefronts): loads whose lanes each touch a line of their own, hundreds per thread
    (a thread walking its own row), priced by the bytes one wavefront delivers;
  * `stores` (partial-sector stores, a tail guard or a serial loop keeping each thread's elements
    contiguous): priced by the lane stride, for the store's own bytes;
  * a lone thread per block walking its row, against the row spread over the block's threads.
A kernel's time is the busiest resource's, its arithmetic among them (tl_inspect.analysis.workload),
and never under the block floor: the bytes a block could move in the time the block itself takes
(on the H200 0.6 ns, 2580 bytes at 4.3 TB/s: 2^19-2^21 blocks of Y = 3X took 0.319, 0.633, 1.263 ms).
A cause's estimate is the kernel's time with its accesses as they are over its time once the one
change is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.model import Access
from tl_inspect.tir import nodes as ir

# a cause whose kernel-level estimate is below this is not worth a default warning
COSTLY = 1.10
SECTOR_BYTES = 32
LINE_BYTES = 128
# loads per thread from which a thread's loads keep the L1 busy rather than wait on memory
L1_BOUND_LOADS = 32
MEMORY, L1, STORES = "memory", "l1", "stores"


@dataclass(frozen=True)
class Measured:
    factor: float
    basis: str  # the term of the cost table the factor comes from, and the case that calibrates it
    bound: str = MEMORY  # the resource the factor is time on
    term: str = ""  # its name in the cost table (tl_inspect.gpu.cost_table.TERMS)


def _term(table: CostTable, name: str, what: str, case: str, bound: str = MEMORY, of_what: str = "") -> Measured:
    """`table`'s value of `name`, with the sentence that says what it prices (`of_what`: the bytes the
    factor is for, when not the access's) and the case `tl-inspect calibrate` measures it on."""
    factor = table[name]
    return Measured(factor, f"{what}: {factor:g}x{of_what} ({case})", bound, name)


# The shipped H200 values, and what they were measured on (docs/gpu-impact.md, calibration):
#   two_bytes_per_thread 2.06, four_bytes_per_thread 1.27: fp16 add with 1 and 2 elements per thread;
#   narrow_coalesced 1.12: the median of nine coalesced 16-bit kernels (1.08-1.22x: misaligned copy, ragged
#     fragment copy, thread-strided layout, user bounds check, odd rows, thread-strided serial loop);
#   held_narrow_loads 1.67, _spilled 5.38: TileOPs' reduce over bf16 rows of 4095, each element loaded on its
#     own under `j < N` into a float32 fragment, against rows of 4096: 1.19-1.22x at 8 and 16 per thread, 1.77x
#     at 32, 1.57x at 64, 5.38x at 128 (ncu on the mean: 56 registers against 26, 56 % occupancy against 100 %);
#   interleaved_loads 1.27: the median of SwiGLU over gate/up pairs against contiguous halves (32768 x 8192 fp16,
#     1.146-1.159x for the kernel in `tl-inspect calibrate` runs: 1.16) and GPT-J RoPE against NeoX halves
#     (65536 x 32 x 128 bf16, 0.444 / 0.375 ms: 1.38); an earlier 1.96 timed a halves kernel at 5.9 TB/s,
#     above the H200's peak: it read less than it was credited with;
#   staged_half_vector 1.32: one uint2 load per thread into shared memory before a barrier (16 KB in flight per
#     SM against 32 KB), 1.16x for a copy whose load is half its bytes;
#   transposed_load 2.74, transposed_store 12.8 (at 2 bytes): kernels moving half their bytes so, 1.93x and
#     6.97x (a bf16 KV append); an fp32 transpose written by column measured 2.98x, which would give 10.0;
#   spread_store_*: fp16 add at N = 2^28 + 1 with 4, 8 and 16 elements per thread (0.506, 0.973, 0.851 ms),
#     fp8 stores 8 B apart: 4.0, 2.1 and 2.4 bytes per SM cycle;
#   lone_thread_walk 8.77: 8192 fp32 rows of 16384, 1.038 ms against 0.118 ms for 128 threads reducing a
#     T.copy'd row; lone_thread_vector_walk 5.17: the same walk with float4 loads, 0.620 ms;
#   vector_row_walk 1.62: bf16 rows of 256 walked a whole vector a load, 0.382 ms against 0.249 ms (1.53), and
#     1.56-1.70 in six `tl-inspect calibrate` runs;
#   l1_bytes_per_wavefront 16.6: `tl-inspect calibrate`'s 16.35-16.7 in six runs (14.5 before, from one wavefront
#     per SM cycle (132 SMs at 1.98 GHz) against 4.3 TB/s), first fitted
#     over five kernels (row walks 4.0x and 8.1x, chunk sums 3.22x, split-K GEMVs 6.46x and 6.77x);
#   float_ops_per_ns 64500: 2^26 elements x 512 rounds x (a multiply and an add) in 1.065 ms;
#   launch_ns 3850: `tl-inspect calibrate`'s fit from a 1.5 MB launch (an aligned fp16 add took 3.7 us at 0.1 MB,
#     4.4 us at 1.6 MB, 96.8 us at 403 MB);
#   lone_thread_element_ns 18.4, walk_load_ns 65, walk_vector_load_ns 148: a thread's walk on a grid too small
#     to fill the GPU (docs/gpu-impact.md, "Estimates at a launch's own size").
def two_bytes_per_thread(table: CostTable) -> Measured:
    return _term(table, "two_bytes_per_thread", "one 16-bit element per thread", "fp16 add, 1 per thread")


def four_bytes_per_thread(table: CostTable) -> Measured:
    return _term(table, "four_bytes_per_thread", "4 bytes per thread", "fp16 add, 2 per thread")


def narrow_coalesced(table: CostTable) -> Measured:
    return _term(table, "narrow_coalesced", "coalesced accesses narrower than 32 bits", "fp16 rows of 1023 added")


def held_narrow_loads(table: CostTable, spilled: bool) -> Measured:
    if spilled:
        return _term(
            table,
            "held_narrow_loads_spilled",
            "coalesced narrow loads held in registers, 128 or more per thread",
            "bf16 rows of 4095 reduced, 4 rows per 128 threads",
        )
    return _term(
        table,
        "held_narrow_loads",
        "coalesced narrow loads held in registers, 32-127 per thread",
        "bf16 rows of 4095 reduced; twice the registers of vector loads",
    )


HELD_LOADS, SPILLED_LOADS = 32, 128


def interleaved_loads(table: CostTable) -> Measured:
    return _term(
        table,
        "interleaved_loads",
        "narrow loads of every other element (interleaved pairs)",
        "SwiGLU over gate/up pairs",
    )


def wide_coalesced() -> Measured:
    return Measured(1.0, "coalesced accesses of 32 bits or more: 1x")


def staged_half_vector(table: CostTable) -> Measured:
    return _term(
        table,
        "staged_half_vector",
        "one 64-bit load per thread staged before a barrier",
        "half the bytes in flight of uint4; a copy through shared memory",
    )


def transposed_load(table: CostTable) -> Measured:
    return _term(table, "transposed_load", "loads with lanes a row apart", "a transposing copy")


def bulk_copy() -> Measured:
    return Measured(1.0, "a TMA bulk tensor copy: 1x")


def access_cost(access: Access, table: CostTable, staged: bool = False, held: bool = False) -> Measured | None:
    """The access's slowdown against its best form; None when the lane stride is unknown (a gather)
    or zero (every lane reads the same element), where no vector form exists. `staged`: a load whose
    value goes to shared memory, which a barrier then waits for; `held`: one whose value stays in a
    register fragment (a row loaded to be reduced)."""
    if access.via == "tma":
        return bulk_copy()
    if not access.lane_stride_bytes or not access.sectors:
        return None
    access_bytes = access.bits // 8
    lanes = access.request_bytes // max(1, access_bytes)
    # the part of the 32-byte sectors one warp instruction touches that it uses
    used = access.request_bytes / (access.sectors * SECTOR_BYTES)
    if lanes > 1 and access.sectors >= lanes:  # every lane in a sector of its own
        if access.kind == "store":
            return _transposed_store(used, table)
        if access.elements_per_thread >= L1_BOUND_LOADS:
            return _l1_bound_load(access, lanes, table)
        if used < 0.5:
            return transposed_load(table)
    # using half of each sector or more measured no loss (64-bit fp8 stores two per thread, lanes 16 B
    # apart; loads widened from 8 to 16 bytes a lane in sectors of their own gained nothing): the
    # thread's next access uses the rest
    if used >= 0.5:
        bytes_per_thread = access.elements_per_thread * ir.dtype_bits(access.dtype) // 8
        if bytes_per_thread <= 2:
            return two_bytes_per_thread(table)
        if bytes_per_thread <= 4:
            return four_bytes_per_thread(table)
        if access.bits < 32:
            return _narrow_coalesced(access, table, held)
        if staged and access.kind == "load" and access.bits < 128 and access.elements_per_thread == access.lanes:
            return staged_half_vector(table)
        return wide_coalesced()
    if access.kind == "store":
        return _spread_store(access.lane_stride_bytes, table)
    # the L1 serves the rest of each sector to the thread's next iterations: what is left is the
    # instructions of a narrow access
    return narrow_coalesced(table)


def _narrow_coalesced(access: Access, table: CostTable, held: bool) -> Measured:
    """Narrow loads of every other element need two requests for the sectors one vector would read.
    Narrow loads held in registers need a register per element where a vector packs several: with
    dozens per thread the occupancy halves, and past a hundred the registers run out."""
    if access.kind == "load" and access.lanes == 1 and access.lane_stride_bytes == 2 * ir.dtype_bits(access.dtype) // 8:
        return interleaved_loads(table)
    if held and access.kind == "load" and access.elements_per_thread >= HELD_LOADS:
        return held_narrow_loads(table, spilled=access.elements_per_thread >= SPILLED_LOADS)
    return narrow_coalesced(table)


def _transposed_store(used: float, table: CostTable) -> Measured:
    """A store whose lanes each write part of a sector of their own costs in proportion to the part
    left unwritten: the table's factor at 2 bytes of 32, and twice as fast per doubling of the width
    (a 4 -> 8-byte row-per-lane store measured 1.95x faster on the H200)."""
    at_two_bytes = table["transposed_store"]
    factor = round(max(1.0, at_two_bytes * (2 / SECTOR_BYTES) / used), 2)
    return Measured(
        factor,
        f"stores with lanes in sectors of their own, {used * SECTOR_BYTES:.0f} of 32 bytes "
        f"written: {factor}x ({at_two_bytes:g}x at 2 bytes)",
        MEMORY,
        "transposed_store",
    )


def _l1_bound_load(access: Access, lanes: int, table: CostTable) -> Measured:
    """Lanes in lines of their own cost one L1 wavefront per line a warp instruction touches; with
    hundreds of loads per thread the L1, not memory, sets the time (ncu: L1 at 98-100 % of peak)."""
    lines = min(lanes, max(1, -(-lanes * min(access.lane_stride_bytes, LINE_BYTES) // LINE_BYTES)))
    per_wavefront = access.request_bytes / lines
    if per_wavefront >= VECTOR_BYTES:
        return vector_row_walk(table)
    factor = round(max(1.0, table["l1_bytes_per_wavefront"] / per_wavefront), 2)
    return Measured(
        factor,
        f"{access.elements_per_thread} loads per thread with lanes in {lines} lines of their "
        f"own, {per_wavefront:g} B per L1 wavefront: {factor}x (L1-bound; a bf16 row walk)",
        L1,
        "l1_bytes_per_wavefront",
    )


VECTOR_BYTES = 16


def vector_row_walk(table: CostTable) -> Measured:
    return _term(table, "vector_row_walk", "a thread walking its own row with 16-byte loads", "bf16 rows of 256", L1)


def lone_walk_cost(bits: int, dtype: str, table: CostTable) -> Measured:
    """A lone thread's walk against the row spread over the block's threads, as measured with 32-bit
    and with 128-bit loads of fp32 (the lone thread waits on each load in turn: wider ones help only so
    much). The walk's time goes by elements, not bytes: 4096 lone rows of 512 took 37.5, 46.2 and 33.6 ns
    an element in fp32, bf16 and fp16, so a 16-bit row loses twice as much per byte."""
    name, what = (
        ("lone_thread_vector_walk", "one thread per block walking its row alone with 128-bit loads")
        if bits >= 128
        else ("lone_thread_walk", "one thread per block walking its row alone")
    )
    measured = _term(table, name, what, "fp32 rows of 16384")
    per_byte = 32 / ir.dtype_bits(dtype)
    if per_byte == 1:
        return measured
    factor = round(max(1.0, measured.factor * per_byte), 2)
    return Measured(
        factor,
        f"{what}: {factor:g}x ({measured.factor:g}x for fp32 rows of 16384, the walk's time going by elements)",
        measured.bound,
        name,
    )


# the lane strides up to which each spread-store term applies
SPREAD_STORE_TERMS = ((8, "spread_store_8"), (16, "spread_store_16"), (1 << 62, "spread_store_wide"))


def _spread_store(stride: int, table: CostTable) -> Measured:
    """Stores whose lanes sit `stride` bytes apart write part of each sector; the partial writes drain
    at a rate set by the stride, whatever the element type."""
    name = next(term for limit, term in SPREAD_STORE_TERMS if stride <= limit)
    return _term(
        table,
        name,
        f"stores with lanes {stride} B apart, each thread's elements contiguous",
        "fp16 add with a tail guard",
        STORES,
        " for the store's bytes",
    )


def resource_units(accesses, replaced: dict | None = None) -> dict:
    """Resource -> the time its accesses keep it busy, in units of the kernel's bytes at full speed.
    `replaced`: id(access) -> (factor, bound) for accesses a change would make cheaper."""
    replaced = replaced or {}
    busy = {MEMORY: 0.0, L1: 0.0, STORES: 0.0}
    for a in accesses:
        factor, bound = replaced.get(id(a), (a.cost or 1.0, a.cost_bound or MEMORY))
        busy[MEMORY] += a.share * (factor if bound == MEMORY else 1.0)
        if bound != MEMORY:
            busy[bound] += a.share * factor
    return busy


def kernel_time(
    accesses, table: CostTable, replaced: dict | None = None, block_scale: float = 1.0, workload=None
) -> float:
    """The kernel's time in units of its bytes at full speed: its busiest resource (its arithmetic
    among them), or the block floor. `replaced`: id(access) -> (factor, bound) for
    accesses a change would make cheaper; `block_scale`: how much more each block would move after the
    change (a larger tile); `workload`: the kernel's arithmetic (tl_inspect.analysis.workload)."""
    busy = resource_units(accesses, replaced)
    block_bytes = sum(a.block_bytes for a in accesses)
    floor = table["block_floor_bytes"] / (block_bytes * block_scale) if block_bytes else 0.0
    compute = workload.compute_units(block_bytes, table) if workload else 0.0
    return max(max(busy.values()), floor, compute)


def kernel_slowdown(accesses, members, table: CostTable, block_scale: float = 1.0, workload=None) -> float:
    """What removing one cause would gain the kernel: its time as it is over its time with `members`
    (the accesses the one change fixes) at what they still cost once the cause is gone (measured on
    the rebuilt kernel where there is one)."""
    return kernel_time(accesses, table, workload=workload) / kernel_time(
        accesses, table, _fixed(members), block_scale, workload
    )


def _fixed(members) -> dict:
    return {id(a): (min(a.cost or 1.0, a.cost_after or 1.0), MEMORY) for a in members}


LAUNCH, WALK = "launch", "walk"
LONE_WALK_TERMS = ("lone_thread_walk", "lone_thread_vector_walk")
ROW_WALK_TERMS = ("l1_bytes_per_wavefront", "vector_row_walk")


def launch_ns(
    accesses,
    launch_bytes: int,
    table: CostTable,
    replaced: dict | None = None,
    block_scale: float = 1.0,
    workload=None,
    widened: dict | None = None,
) -> float:
    """One launch moving `launch_bytes`, in ns: the launch's own time, then the busiest resource's or one
    thread's walk, whichever is longer (`widened`: id(access) -> its bits once a change is made)."""
    return table["launch_ns"] + max(
        _launch_parts(accesses, launch_bytes, table, replaced, block_scale, workload, widened)
    )


def _launch_parts(accesses, launch_bytes, table, replaced, block_scale, workload, widened) -> tuple[float, float]:
    """(ns its busiest resource takes over `launch_bytes`, ns of its longest walk)."""
    units = kernel_time(accesses, table, replaced, block_scale, workload)
    return units * launch_bytes / table["full_speed_bytes_per_ns"], walk_ns(accesses, table, widened)


def walk_ns(accesses, table: CostTable, widened: dict | None = None, working: int | None = None) -> float:
    """The walk one thread makes, one load waiting for the last, which no number of blocks shortens: each
    instruction of its loops after the other, so the walks of its accesses add up (a softmax's three
    passes over its row; a load and a store in one loop).
      * A thread alone in its block: measured the same with scalar and float4 loads (64 to 2048 fp32 rows
        of 16384, one thread each: 0.30-0.33 ms and 0.29 ms).
      * A thread walking its own row beside others (lanes in lines of their own): per instruction, scalar
        or 16 bytes (bf16 rows of 256, 256 to 16384 rows: 20.5-21.9 us with scalar loads, 8.3-10.6 us
        with 16-byte ones), in proportion to the lines one warp's instruction touches (16 working
        threads: half), and a store a line per lane costs `walk_store_ns` (a LayerNorm whose threads each
        walk a row of 4096 fp16 three times, the last pass storing: 1.41 ms, 345 ns a trip of the three)."""
    widened = widened or {}
    total = 0.0
    for a in accesses:
        if not a.walked:
            continue
        if a.cost_term in LONE_WALK_TERMS:
            total += a.elements_per_thread * table["lone_thread_element_ns"]
            continue
        if a.cost_term in ROW_WALK_TERMS:
            bits = widened.get(id(a), a.lanes * ir.dtype_bits(a.dtype))
            per_instruction = table["walk_vector_load_ns" if bits >= 128 else "walk_load_ns"]
        elif a.cost_term == "transposed_store" and a.elements_per_thread >= L1_BOUND_LOADS:
            bits, per_instruction = a.bits, table["walk_store_ns"]
        else:
            continue
        instructions = a.elements_per_thread * ir.dtype_bits(a.dtype) / bits
        total += instructions * per_instruction * min(warp_lines(a), working or WARP) / WARP
    return total


WARP = 32


def warp_lines(access: Access) -> int:
    """The cache lines one warp's instruction touches when every working lane has a line of its own: its
    working lanes (a row per thread over 16 threads: 16)."""
    return max(1, min(WARP, access.request_bytes // max(1, access.bits // 8)))


def walks(access: Access) -> bool:
    """Whether the access is one thread's walk (priced by `walk_ns`, not by the bytes it keeps in flight)."""
    return access.walked and (
        access.cost_term in LONE_WALK_TERMS + ROW_WALK_TERMS
        or (access.cost_term == "transposed_store" and access.elements_per_thread >= L1_BOUND_LOADS)
    )


def kernel_slowdown_at(
    launch_bytes: int, accesses, members, table: CostTable, block_scale: float = 1.0, workload=None
) -> tuple[float, str]:
    """`kernel_slowdown` for a launch of `launch_bytes`, with what keeps it lower: LAUNCH (the launch's own
    time counts against the little the launch moves) or WALK (a thread's walk, longer than the memory
    traffic at this size)."""
    moving, walk = _launch_parts(accesses, launch_bytes, table, None, 1.0, workload, None)
    before = table["launch_ns"] + max(moving, walk)
    widened = {id(a): a.proof.bits_after if a.proof is not None else a.max_bits or a.bits for a in members}
    after = launch_ns(accesses, launch_bytes, table, _fixed(members), block_scale, workload, widened)
    return before / after, WALK if walk > moving else LAUNCH
