"""A launch's time against its floor: the book's ledger method (count the bytes, compute the ideal time,
then compare), with the cost table's GPU as the machine.

    floor = one launch + the longer of the launch's unique bytes at full memory speed and its arithmetic
            at the peak that applies (tensor cores for `T.gemm`, CUDA cores for float arithmetic)
    time  = one launch + the longest of what the launch keeps busy:
      memory     the requested bytes, each access at its cost (tl_inspect.analysis.cost), re-reads that
                 the L2 serves at the L2's speed
      l1, stores L1 wavefronts of lanes in lines of their own; partial-sector stores
      compute    the arithmetic at the peak, over the SMs the grid keeps busy
      blocks     the block floor: every block takes its own time across the GPU
      in flight  the bytes the resident working threads keep in flight, against the bytes in flight the
                 GPU needs to reach full speed (Little's law: latency x bandwidth). This one law prices
                 lone threads, idle lanes, too few blocks and one element per thread
      walk       the longest chain of loads one thread makes one after another

Each term is in the cost table (`tl-inspect calibrate` fits them; the H200's ship). `spread` gives the
launch once a fix has spread its work (a row over a block's threads, a whole vector per thread, enough
blocks for every SM): what the kernel could be, which a finding's gain is priced against.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from tl_inspect.analysis import cost
from tl_inspect.causes import instance_key, kind_of, root
from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.model import Cause, Estimate, Gain, Ledger, Verdict
from tl_inspect.tir import nodes as ir
from tl_inspect.wording import byte_size, plural

LAUNCH, MEMORY, L1, STORES = "launch", cost.MEMORY, cost.L1, cost.STORES
COMPUTE, BLOCKS, IN_FLIGHT, WALK = "compute", "blocks", "in flight", "walk"
# what an SM holds at once on sm_80 to sm_100 (CUDA C++ Programming Guide, table of technical
# specifications per compute capability)
THREADS_PER_SM, BLOCKS_PER_SM, SHARED_PER_SM = 2048, 32, 228 * 1024


@dataclass(frozen=True)
class Spread:
    """What a fix changes in the launch: the accesses it makes full-width and coalesced (their walk
    gone), how many times more each block moves, and whether it puts every lane to work and fills the
    GPU (a restructuring: a row over a block's threads, more blocks)."""

    members: tuple = ()
    block_scale: float = 1.0
    restructured: bool = False
    # how much of each thread's walk is left: split over more blocks (split-K), a walk is that much shorter
    walk_scale: float = 1.0


def of(accesses, ledger: Ledger | None, workload, table: CostTable, uncounted: str = "") -> Estimate:
    """The launch's estimate, priced with `table`; `uncounted`: why the ledger under-counts its work (no gap
    then)."""
    if ledger is None:
        return Estimate(None, None, "no launch to estimate")
    if ledger.blocks is None:
        return Estimate(None, None, f"a grid known only at run time ({ledger.grid})")
    floor, floor_of = floor_ns(ledger, table)
    if floor is None:
        return Estimate(None, None, "a tensor whose size is known only at run time")
    parts = launch_parts(accesses, ledger, workload, table)
    filled = None
    if ledger.sms and ledger.blocks < ledger.sms:
        # the same work over one block per SM (split-K, smaller tiles): what a grid that fills the GPU takes
        share = ledger.blocks / ledger.sms
        filled = total_ns(launch_parts(accesses, ledger, workload, table, Spread(block_scale=share, walk_scale=share)))
    return Estimate(
        round(max(total_ns(parts), floor) / 1e3, 4),
        round(floor / 1e3, 4),
        limited_by(parts, accesses, ledger, table),
        floor_of,
        tuple((name, round(ns / 1e3, 4)) for name, ns in _ranked(parts)),
        uncounted,
        None if filled is None else round(max(filled, floor) / 1e3, 4),
    )


def floor_ns(ledger: Ledger, table: CostTable) -> tuple:
    """(ns of the book's ideal launch, what sets it), or (None, "") without the unique bytes."""
    if ledger.unique_bytes is None:
        return None, ""
    moving = ledger.unique_bytes / table["full_speed_bytes_per_ns"]
    options = [(moving, f"{byte_size(ledger.unique_bytes)} at {_rate(table['full_speed_bytes_per_ns'])}")]
    if ledger.flops_per_block and ledger.peak_flops:
        work = ledger.flops_per_block * ledger.blocks
        options.append(
            (work / ledger.peak_flops * 1e9, f"{_flop(work)} on the tensor cores at {_flop(ledger.peak_flops)}/s")
        )
    if ledger.float_ops_per_block:
        work = ledger.float_ops_per_block * ledger.blocks
        options.append(
            (
                work / table["float_ops_per_ns"],
                f"{_flop(work)} on the CUDA cores at {_flop(table['float_ops_per_ns'] * 1e9)}/s",
            )
        )
    ns, what = max(options, key=lambda option: option[0])
    return table["launch_ns"] + ns, what


def launch_parts(accesses, ledger: Ledger, workload, table: CostTable, spread: Spread = Spread()) -> dict:
    """Resource -> ns it is busy for one launch (the launch's own time under LAUNCH)."""
    members = {id(a) for a in spread.members}
    replaced = {
        id(a): (min(a.cost or 1.0, a.cost_after or 1.0) if not spread.restructured else 1.0, MEMORY)
        for a in spread.members
    }
    busy = cost.resource_units(accesses, replaced)
    requested = ledger.requested_bytes or 0
    unique = ledger.unique_bytes if ledger.unique_bytes is not None else requested
    # what a launch that keeps enough in flight moves (writes slower than reads: an fp32 copy of 537 MB
    # took 135 us, a read of 1.07 GB 240 us), against the peak the floor counts; re-reads (a GEMM's
    # blocks reading the same rows) come from the L2 at its own speed
    streaming_ns = (
        ledger.unique_read_bytes / table["streaming_read_bytes_per_ns"]
        + ledger.unique_written_bytes / table["streaming_write_bytes_per_ns"]
    )
    bandwidth = unique / streaming_ns if streaming_ns else table["full_speed_bytes_per_ns"]
    traffic_ns = max(streaming_ns, requested / table["l2_bytes_per_ns"])
    blocks = ledger.blocks / spread.block_scale
    parts = {
        LAUNCH: table["launch_ns"],
        MEMORY: busy[MEMORY] * traffic_ns,
        L1: busy[L1] * requested / bandwidth,
        STORES: busy[STORES] * requested / bandwidth,
        BLOCKS: blocks * table["block_floor_bytes"] / table["full_speed_bytes_per_ns"],
        COMPUTE: _compute_ns(ledger, workload, table, blocks, spread.restructured),
        WALK: spread.walk_scale
        * cost.walk_ns(
            [a for a in accesses if id(a) not in members or not spread.restructured],
            table,
            {id(a): cost.VECTOR_BYTES * 8 for a in spread.members},
            ledger.threads_working,
        ),
    }
    in_flight = bytes_in_flight(accesses, ledger, table, spread)
    if in_flight is not None and unique:
        parts[IN_FLIGHT] = unique / bandwidth * max(1.0, table["bytes_in_flight"] / max(in_flight, 1.0))
    return parts


def total_ns(parts: dict) -> float:
    return parts[LAUNCH] + max(ns for name, ns in parts.items() if name != LAUNCH)


def _ranked(parts: dict) -> list:
    busy = sorted(((name, ns) for name, ns in parts.items() if name != LAUNCH and ns > 0), key=lambda p: -p[1])
    return busy + [(LAUNCH, parts[LAUNCH])]


def _compute_ns(ledger: Ledger, workload, table: CostTable, blocks: float, restructured: bool) -> float:
    """The launch's arithmetic at the peaks, over the SMs its blocks keep busy (a grid of 4 blocks uses
    4 SMs' cores)."""
    # T.gemm kernels sustain about half the tensor cores' dense peak (a 4096^3 fp16 GEMM: 537 of 989 TFLOP/s)
    per_block = (
        ((workload.float_ops or 0.0) / table["float_ops_per_ns"] + workload.tensor_ns / table["tensor_peak_fraction"])
        if workload
        else 0.0
    )
    if not per_block:
        return 0.0
    work = per_block * ledger.blocks
    busy_sms = min(blocks, ledger.sms or blocks) if not restructured else (ledger.sms or blocks)
    return work * (ledger.sms or busy_sms) / max(busy_sms, 1)


def resident_blocks(ledger: Ledger, blocks: float) -> float:
    """Blocks the GPU holds at once: each SM holds as many as its threads, block slots and shared memory
    allow."""
    per_sm = min(
        BLOCKS_PER_SM,
        THREADS_PER_SM // max(ledger.threads_launched, 1),
        SHARED_PER_SM // ledger.shared_bytes_per_block if ledger.shared_bytes_per_block else BLOCKS_PER_SM,
    )
    return min(blocks, max(per_sm, 1) * (ledger.sms or 1))


def bytes_in_flight(accesses, ledger: Ledger, table: CostTable, spread: Spread = Spread()) -> float | None:
    """The bytes the launch's resident working threads have requested and wait for at once: each
    thread's loads of one loop (up to `loop_loads_in_flight` of each), a bulk copy's whole tile. None
    without such loads: stores do not hold a thread, and a thread's walk is priced as a walk."""
    members = {id(a) for a in spread.members}
    depth = table["loop_loads_in_flight"]
    per_thread = 0.0
    working = ledger.threads_working
    for a in accesses:
        if a.kind != "load" or (a.lane_stride_bytes == 0 and working > 1) or (cost.walks(a) and id(a) not in members):
            continue
        if a.via:
            per_thread += a.block_bytes / max(working, 1)
            continue
        width = cost.VECTOR_BYTES if id(a) in members else a.bits / 8
        instructions = max(1.0, a.elements_per_thread * ir.dtype_bits(a.dtype) / 8 / width)
        per_thread += width * min(depth, instructions)
    if not per_thread:
        return None
    if spread.restructured:
        # every lane works, each on a whole vector, on as many threads as the work gives and the GPU holds
        vectors = max(
            (
                a.elements_per_thread * ir.dtype_bits(a.dtype) / 8 / cost.VECTOR_BYTES * working * ledger.blocks
                for a in spread.members
            ),
            default=0.0,
        )
        threads = min(max(vectors, ledger.threads_launched * ledger.blocks), THREADS_PER_SM * (ledger.sms or 1))
        return threads * per_thread
    return resident_blocks(ledger, ledger.blocks / spread.block_scale) * working * per_thread


def limited_by(parts: dict, accesses, ledger: Ledger, table: CostTable) -> str:
    """The busiest resource, in the user's terms."""
    name, ns = _ranked(parts)[0]
    if name == LAUNCH or ns < parts[LAUNCH] / 2:
        return "the launch itself (it moves too little for its own time to hide)"
    if name == IN_FLIGHT:
        threads = int(resident_blocks(ledger, ledger.blocks) * ledger.threads_working)
        flight = bytes_in_flight(accesses, ledger, table) or 0
        return (
            f"{plural(threads, 'working thread')} keeping {byte_size(int(flight))} in flight, where the "
            f"{table.short_name} needs {byte_size(int(table['bytes_in_flight']))} for full speed"
        )
    if name == WALK:
        return "one thread's walk, each load waiting for the last"
    if name == COMPUTE:
        cores = "tensor cores" if ledger.flops_per_block else "CUDA cores"
        if ledger.sms and ledger.blocks < ledger.sms:
            return f"the {cores} of {ledger.blocks} of {ledger.sms} SMs (one block each)"
        return f"the {cores}"
    if name == BLOCKS:
        return f"{ledger.blocks:,} blocks, each taking its own time"
    if name == L1:
        return "L1 wavefronts: lanes in lines of their own"
    if name == STORES:
        return "partial-sector stores"
    if ledger.requested_bytes and ledger.unique_bytes and ledger.requested_bytes > 2 * ledger.unique_bytes:
        return (
            f"memory traffic: {byte_size(ledger.requested_bytes)} requested of {byte_size(ledger.unique_bytes)} "
            f"unique, the re-reads served by the L2"
        )
    return "memory traffic"


def _rate(bytes_per_ns: float) -> str:
    return f"{bytes_per_ns / 1e3:.1f} TB/s"


def _flop(value: float) -> str:
    for scale, unit in ((1e15, "PFLOP"), (1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{math.floor(value)} FLOP"


REBUILD, STATIC, MEASURED = "rebuild", "static", "measured"
# a kernel that moves this much and is estimated this close to its floor gets no finding on static evidence
# alone: expert kernels carry narrow accesses that cost them nothing (the H200's expert memory-bound kernels
# measured 1.0-1.4x of floor + launch)
NEAR_FLOOR_BYTES, NEAR_FLOOR_GAP = 16_000_000, 1.3


def price_fixes(accesses, ledger: Ledger | None, workload, table: CostTable) -> tuple:
    """`accesses` with `gain`: what the best fix of each gains the whole launch, its time as it is against
    its time once the fix is made. Two kinds of fix are priced: a cause a rebuilt kernel removed (its proof),
    and a cause whose evidence is the launch and the index algebra (a row per thread, a lone thread, one
    element per thread), which spreads the work; where both apply to an access, the one that gains more."""
    if ledger is None or ledger.blocks is None or ledger.unique_bytes is None:
        return tuple(accesses)
    before_parts = launch_parts(accesses, ledger, workload, table)
    floor = floor_ns(ledger, table)[0]
    before = max(total_ns(before_parts), floor)
    candidates: dict = {}
    for a in accesses:
        if a.verdict == Verdict.COSTLY and a.cause is not None:
            cause = root(a.cause)
            candidates.setdefault((REBUILD, instance_key(cause)), (cause, REBUILD, []))[2].append(a)
        cause = static_cause(a)
        if cause is not None:
            candidates.setdefault((STATIC, fix_key(cause)), (cause, STATIC, []))[2].append(a)
    best: dict = {}
    for cause, evidence, members in candidates.values():
        kind = kind_of(cause)
        spread = Spread(tuple(members), kind.block_scale(cause), kind.restructures)
        parts = launch_parts(accesses, ledger, workload, table, spread)
        # the streaming rates a fixed launch is priced at run a few percent above the floor's bandwidth
        after = max(total_ns(parts), floor)
        shows = _shows(cause, evidence, members, accesses, ledger, table, (before_parts, before), (parts, after))
        gain = Gain(round(before / 1e3, 4), round(after / 1e3, 4), round(floor / 1e3, 4), evidence, cause, shows)
        for a in members:
            if id(a) not in best or gain.factor > best[id(a)].factor:
                best[id(a)] = gain
    return tuple(dataclasses.replace(a, gain=best[id(a)]) if id(a) in best else a for a in accesses)


def fix_key(cause: Cause) -> tuple:
    """What identifies one fix of a cause: its instance, or for a restructuring of the launch its kind
    (spreading the rows over the blocks' threads fixes a softmax's three passes at once)."""
    cause = root(cause)
    return (cause.kind,) if kind_of(cause).restructures else instance_key(cause)


def static_cause(access) -> Cause | None:
    """The access's cause whose evidence is the launch and the index algebra, if it has one."""
    if access.verdict not in Verdict.PROVABLE:
        return None
    return next(
        (c for c in access.causes or (access.cause,) if c is not None and kind_of(c).has_static_evidence(c)), None
    )


def _shows(cause, evidence, members, accesses, ledger, table, before, after) -> str:
    """The facts and the arithmetic behind a gain, in the user's terms; `before` and `after` are each the
    launch's parts and its time."""
    (before_parts, before_ns), (after_parts, after_ns) = before, after
    was, now = limited_by(before_parts, accesses, ledger, table), limited_by(after_parts, accesses, ledger, table)
    if evidence == STATIC:
        facts = kind_of(cause).launch_facts(cause, members[0], ledger)
        return (
            f"{facts}: estimated {before_ns / 1e3:.4g} us, limited by {was}; "
            f"{after_ns / 1e3:.4g} us once spread, limited by {now}"
        )
    return (
        f"the rebuilt kernel's accesses priced in the launch: {before_ns / 1e3:.4g} us, limited by "
        f"{was}, against {after_ns / 1e3:.4g} us, limited by {now}"
    )
