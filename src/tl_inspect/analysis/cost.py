"""What a global access costs on an H200 against its best form, from the measured table.

The model has two factors, both read off the access as the device code emitted it
(docs/gpu-impact.md, "Narrow accesses"):
  * coalescing: the part of the 32-byte sectors one warp instruction touches that it uses. Lanes 16 B
    apart with 2-byte accesses (a tail guard; 1/8 used) cost 2.93x; lanes a row apart (a transposed
    walk; every lane in a sector of its own) cost a kernel 1.93x when its loads walk so and 6.97x
    when its stores do;
  * work per thread: 2 bytes per thread cost 2.06x, 4 bytes 1.27x, whatever the width.
Coalesced accesses narrower than 32 bits with enough work per thread cost 1.08-1.15x (1.12 here);
coalesced accesses of 32 bits or more cost 1.00-1.03x: vector width by itself costs nothing.
Coalesced means one instruction uses at least half of each 32-byte sector it touches: lanes two
accesses apart (64-bit fp8 stores, two per thread) measured 1.00x.

An access's share of the kernel's global bytes weighs its cost into the kernel's slowdown: time
spent on memory is taken as proportional to bytes moved, each access's bytes slowed by its factor.
"""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect import ir
from tl_inspect.model import Access

# a cause whose kernel-level estimate is below this is not worth a default warning
COSTLY = 1.10
SECTOR_BYTES = 32


@dataclass(frozen=True)
class Measured:
    factor: float
    basis: str  # the row of the H200 table the factor comes from


TWO_BYTES_PER_THREAD = Measured(2.06, "one 16-bit element per thread: 2.06x (fp16 add, 1 per thread)")
FOUR_BYTES_PER_THREAD = Measured(1.27, "4 bytes per thread: 1.27x (fp16 add, 2 per thread)")
# the median of nine coalesced 16-bit kernels (1.08-1.22x: misaligned copy, ragged fragment copy,
# thread-strided layout, user bounds check, odd rows, thread-strided serial loop)
NARROW_COALESCED = Measured(1.12, "coalesced accesses narrower than 32 bits: 1.12x (1.08-1.22x measured)")
WIDE_COALESCED = Measured(1.0, "coalesced accesses of 32 bits or more: 1.00-1.03x")
SPREAD_LANES = Measured(2.93, "lanes 16 B apart, each thread's elements contiguous: 2.93x (tail guard)")
# measured on kernels that move half their bytes this way (the other half a coalesced 16-bit access):
# 1.93x for the kernel is 2.74x for the load, 6.97x for the kernel 12.8x for the 2-byte store
TRANSPOSED_LOAD = Measured(2.74, "loads with lanes a row apart: 2.74x (1.93x for a kernel moving half its "
                                 "bytes so)")
TRANSPOSED_STORE = Measured(12.8, "stores with lanes a row apart: 12.8x (6.97x for a kernel moving half its "
                                  "bytes so)")
# each thread sums its own 4 x 8 contiguous fp32 (lanes 128 B apart): 1.04x; the L1 cache serves the rest
# of each line the thread's next iterations read
LINE_PER_THREAD_LOAD = Measured(1.04, "loads where each thread walks whole 128-byte lines: 1.04x (chunk sums)")
BULK_COPY = Measured(1.0, "a TMA bulk tensor copy")
CACHE_LINE_BYTES = 128


def access_cost(access: Access) -> Measured | None:
    """The access's slowdown against its best form; None when the lane stride is unknown (a gather)
    or zero (every lane reads the same element), where no vector form exists."""
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
        if access.thread_run_bytes >= CACHE_LINE_BYTES:
            return LINE_PER_THREAD_LOAD
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
        return NARROW_COALESCED if access.bits < 32 else WIDE_COALESCED
    return SPREAD_LANES


def _transposed_store(used: float) -> Measured:
    """A store whose lanes each write part of a sector of their own costs in proportion to the part
    left unwritten: 12.8x at 2 bytes of 32, and twice as fast per doubling of the width (a 4 -> 8-byte
    row-per-lane store measured 1.95x faster)."""
    factor = round(max(1.0, TRANSPOSED_STORE.factor * (2 / SECTOR_BYTES) / used), 2)
    return Measured(factor, f"stores with lanes in sectors of their own, {used * SECTOR_BYTES:.0f} of 32 bytes "
                            f"written: {factor}x (12.8x at 2 bytes)")


def kernel_slowdown(accesses) -> float:
    """What removing one cause would gain the kernel: each access's cost less what it still costs once
    the cause is gone (measured on the rebuilt kernel where there is one), weighed by its share of the
    kernel's global bytes."""
    return 1.0 + sum(a.share * max(0.0, (a.cost or 1.0) - (a.cost_after or 1.0)) for a in accesses)
