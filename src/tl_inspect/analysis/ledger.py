"""The ledger: the book's accounting of one kernel launch, computed once, in the worker, from the
judged accesses, the device code and the kernel's arithmetic (tl_inspect.analysis.workload).

Requested bytes are what the kernel's global accesses request per block (each access's `block_bytes`,
capped by the threads that reach it), times the blocks of the grid; unique bytes count each tensor once,
never more than the tensor holds (a GEMM's blocks re-read A and B: the requested bytes are L2 traffic,
the unique ones what DRAM must move at least). Threads that work are those a device condition on
`threadIdx` lets reach a global access: `T.Parallel(256)` over 256 fp16 elements on 256 threads can
lower to 32 threads moving 8 elements each under `if (threadIdx.x < 32)`. FLOPs are the `T.gemm` shapes'
(tensor cores) and the float arithmetic of the device code (CUDA cores), and the bound is the roofline's:
the longer of the arithmetic at the arch's peaks and the bytes at its memory bandwidth.
"""

from __future__ import annotations

import math
import re

from tl_inspect.gpu import arch
from tl_inspect.model import STAGE_DEVICE, STAGE_FRONTEND, KernelArtifact, Ledger
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.render import render


def _launched(kernel: KernelArtifact) -> tuple:
    """(the device function, threads launched per block), or (None, 0) without a launch."""
    device = kernel.snapshot(STAGE_DEVICE)
    func = device.func() if device else None
    if func is None or not func.launch:
        return None, 0
    return func, math.prod(ir.int_value(e) or 1 for tag, e in func.launch.items() if tag.startswith("threadIdx"))


def working_threads(kernel: KernelArtifact) -> int | None:
    """Threads of a block that reach some global access; None without a launch."""
    func, threads = _launched(kernel)
    return _working_threads(func, threads)[0] if func is not None else None


def account(kernel: KernelArtifact, workload=None) -> Ledger | None:
    """`workload`: the kernel's arithmetic (tl_inspect.analysis.workload.Workload), whose float operations
    the ledger counts beside the `T.gemm` FLOPs."""
    func, threads = _launched(kernel)
    if func is None:
        return None
    blocks = grid_blocks(func)
    grid = " x ".join(render(e) for e in _block_extents(func)) or "1"

    working, guard = _working_threads(func, threads)
    variables = _thread_vars(func)
    read = written = 0
    by_tensor: dict = {}  # (buffer, kind) -> bytes per block
    for a in kernel.accesses:
        moved = a.block_bytes
        if a.lane_stride_bytes and not a.via:
            # a block's bytes assume every launched thread moves its elements; no access reaches more
            # threads than the kernel's working ones, nor more than its own thread guard lets through
            guarded = _guard_threads(a.guard[0], variables) if a.guard else None
            reach = working if guarded is None else min(working, guarded * (threads // _x_extent(variables)))
            moved = min(moved, a.elements_per_thread * reach * ir.dtype_bits(a.dtype) // 8)
        if a.kind == "store":
            written += moved
        else:
            read += moved
        side = (a.buffer, "store" if a.kind == "store" else "load")
        by_tensor[side] = by_tensor.get(side, 0) + moved

    flops, basis, dtype = gemm_flops(kernel)
    target = arch.of(kernel.arch)
    # the device function names a TMA copy's tensor only through its descriptor: the shapes are the frontend's
    frontend = kernel.snapshot(STAGE_FRONTEND)
    unique_read, unique_written = _unique_bytes(frontend.func() if frontend else None, by_tensor, blocks)
    return Ledger(
        threads_launched=threads,
        threads_working=working,
        thread_guard=guard,
        blocks=blocks,
        grid=grid,
        # a broadcast (every lane at one address) is not work a thread moves, unless one thread works
        elements_per_thread=max(
            (a.elements_per_thread for a in kernel.accesses if a.lane_stride_bytes != 0 or working == 1), default=0
        ),
        read_bytes_per_block=read,
        written_bytes_per_block=written,
        flops_per_block=flops,
        flops_basis=basis,
        peak_flops=peak_flops(kernel.arch, dtype),
        peak_bytes=target.bandwidth,
        unique_read_bytes=unique_read,
        unique_written_bytes=unique_written,
        float_ops_per_block=workload.float_ops if workload is not None else None,
        peak_float_ops=target.float32,
        peaks_of=target.gpu,
        sms=target.sms,
        shared_bytes_per_block=shared_bytes(func),
    )


def uncounted(kernel: KernelArtifact, workload=None) -> str:
    """Why the ledger under-counts the launch's work, or "": a `T.gemm` or float arithmetic inside a loop
    whose trip count is known only at run time (causal attention's loop over the keys before the query)."""
    frontend = kernel.snapshot(STAGE_FRONTEND)
    func = frontend.func() if frontend else None
    has_gemm = func is not None and any(
        isinstance(stmt, ir.Eval) and (ir.tile_op(stmt.expr) or "").startswith("gemm") for stmt, _ in ir.walk(func.body)
    )
    if has_gemm and gemm_flops(kernel)[0] is None:
        return "a T.gemm in a loop whose trip count is known only at run time: the ledger cannot count its FLOPs"
    if workload is not None and workload.float_ops is None:
        return "arithmetic in a loop whose trip count is known only at run time: the ledger cannot count it"
    return ""


def shared_bytes(func) -> int:
    """Shared memory one block of the device function holds: its `__shared__` arrays and the dynamic
    shared memory tilelang requests for its tiles."""
    static = 0
    for info in func.buffers.values():
        sizes = [ir.int_value(d) if isinstance(d, tuple) else d for d in info.shape]
        if info.scope == "shared" and sizes and all(isinstance(n, int) for n in sizes):
            static += math.prod(sizes) * ir.dtype_bits(info.dtype) // 8
    return static + func.dyn_shared_bytes


def peak_flops(spelling: str, dtype: str | None) -> float | None:
    """The arch's dense tensor-core peak for operands of `dtype`; None where not known."""
    tensor = arch.of(spelling).tensor or {}
    # tilelang spells fp8 with suffixes ("float8_e4m3fn")
    return next((peak for name, peak in tensor.items() if dtype and dtype.startswith(name)), None)


def tensor_bytes(func, name: str) -> int | None:
    """The bytes of a global tensor of `func` (an ir function) whose shape is known before run time."""
    info = func.buffers.get(name) if func else None
    sizes = [ir.int_value(d) if isinstance(d, tuple) else d for d in (info.shape if info else ())]
    if not sizes or any(not isinstance(n, int) for n in sizes):
        return None
    return math.prod(sizes) * ir.dtype_bits(info.dtype) // 8


def _unique_bytes(func, by_tensor: dict, blocks: int | None) -> tuple:
    """(bytes read, bytes written) with each tensor counted once per side: what the launch requests of
    it, never more than it holds. (None, None) when the grid or a touched tensor's size is known only at
    run time."""
    if blocks is None:
        return None, None
    totals = {"load": 0, "store": 0}
    for (buffer, side), per_block in by_tensor.items():
        held = tensor_bytes(func, buffer)
        if held is None:
            return None, None
        totals[side] += min(per_block * blocks, held)
    return totals["load"], totals["store"]


def _block_extents(func) -> list:
    return [e for tag, e in sorted(func.launch.items()) if tag.startswith("blockIdx")]


def grid_blocks(func) -> int | None:
    """Thread blocks the device function launches; None when the grid is known only at run time."""
    counted = [ir.int_value(e) for e in _block_extents(func)]
    return math.prod(counted) if all(n is not None for n in counted) else None


def _thread_vars(func) -> dict:
    """Thread variable -> (its tag, the threads launched along it)."""
    return {
        stmt.node: (stmt.tag, ir.int_value(stmt.value) or 1)
        for stmt, _ in ir.walk(func.body)
        if isinstance(stmt, ir.Attr) and stmt.tag.startswith("threadIdx")
    }


def _x_extent(variables: dict) -> int:
    return max(next((n for tag, n in variables.values() if tag == "threadIdx.x"), 1), 1)


def _working_threads(func, threads: int) -> tuple:
    """(threads of a block that reach some global access, the condition that idles the rest or "")."""
    variables = _thread_vars(func)
    x_extent = _x_extent(variables)
    others = threads // x_extent
    reached: set = set()
    guards: set = set()

    def visit(stmts, interval, conds):
        for stmt in stmts:
            if isinstance(stmt, ir.If):
                bounds = _interval(stmt.cond, variables)
                inside = _meet(interval, bounds) if bounds else interval
                outside = _complement(interval, bounds, x_extent) if bounds else interval
                text = _render(stmt.cond, variables)
                visit(stmt.then, inside, conds + ((text,) if bounds else ()))
                visit(stmt.orelse, outside, conds + ((f"not ({text})",) if bounds else ()))
                continue
            if _touches_global(stmt, func) and interval:
                reached.update(range(*interval))
                guards.update(conds)
            visit(ir.children(stmt), interval, conds)

    visit(func.body, (0, x_extent), ())
    working = len(reached) * others if reached else threads
    # name the condition only when it is what idles threads, not a tail check on the data
    guard = " or ".join(sorted(guards)) if working < threads else ""
    return working, guard


def _render(cond, variables: dict) -> str:
    """The condition as the CUDA reads it: `threadIdx.x < 32`, not the TIR variable `tx`."""
    text = render(cond)
    for var, (tag, _) in variables.items():
        text = re.sub(rf"\b{re.escape(var)}\b", tag, text)
    return text


def _touches_global(stmt, func) -> bool:
    """Whether the statement itself (not its body) reads or writes global memory. A TMA copy names its
    global tensor only through a descriptor, so it counts by the call."""
    exprs = []
    if isinstance(stmt, ir.Store):
        if func.scope_of(stmt.buffer) == "global" and stmt.buffer in func.buffers:
            return True
        exprs = [stmt.value, *stmt.indices]
    elif isinstance(stmt, ir.Eval):
        exprs = [stmt.expr]
    return any(
        (sub[0] in ("load", "var") and sub[1] in func.buffers and func.scope_of(sub[1]) == "global")
        or (sub[0] == "call" and ("tma_load" in sub[1] or "tma_store" in sub[1]))
        for expr in exprs
        for sub in ir.subexprs(expr)
    )


def _guard_threads(cond, variables: dict) -> int | None:
    bounds = _interval(cond, variables)
    return None if bounds is None else max(bounds[1] - bounds[0], 0)


def _interval(cond, variables: dict) -> tuple | None:
    """[low, high) of threadIdx.x a condition admits, when it is a comparison of threadIdx.x with a
    constant (or a conjunction of such); None for any other condition."""
    if cond[0] == "and":
        left, right = _interval(cond[1], variables), _interval(cond[2], variables)
        if left and right:
            return _meet(left, right)
        return left or right
    if cond[0] not in ("lt", "le", "gt", "ge", "eq") or len(cond) != 3:
        return None
    op, a, b = cond
    if b[0] == "var" and a[0] == "int":  # 32 > tx
        op, a, b = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq"}[op], b, a
    if a[0] != "var" or variables.get(a[1], ("",))[0] != "threadIdx.x" or ir.int_value(b) is None:
        return None
    extent, k = variables[a[1]][1], ir.int_value(b)
    low, high = {"lt": (0, k), "le": (0, k + 1), "gt": (k + 1, extent), "ge": (k, extent), "eq": (k, k + 1)}[op]
    return max(low, 0), min(high, extent)


def _meet(a, b):
    low, high = max(a[0], b[0]), min(a[1], b[1])
    return (low, high) if low < high else None


def _complement(interval, bounds, extent: int):
    """The part of `interval` outside `bounds`, when that is one range; else all of `interval`."""
    if interval is None:
        return None
    if bounds[0] <= interval[0]:
        return _meet(interval, (bounds[1], extent))
    if bounds[1] >= interval[1]:
        return _meet(interval, (0, bounds[0]))
    return interval


def gemm_flops(kernel: KernelArtifact) -> tuple:
    """(FLOPs per block, how they were counted, the operands' dtype) from the kernel's `T.gemm` calls:
    2*M*N*K each, times the trips of the loops around it. (None, "", None) when there is no gemm or
    a shape or a trip count is known only at run time."""
    frontend = kernel.snapshot(STAGE_FRONTEND)
    func = frontend.func() if frontend else None
    if func is None:
        return None, "", None
    total, parts, dtype = 0, [], None
    for stmt, ancestors in ir.walk(func.body):
        if not (isinstance(stmt, ir.Eval) and (ir.tile_op(stmt.expr) or "").startswith("gemm")):
            continue
        regions = ir.regions(stmt.expr)
        if len(regions) < 3:
            return None, "", None
        sizes = [[ir.int_value(e) for e in r.extents] for r in regions[:3]]
        if any(n is None for dims in sizes for n in dims):
            return None, "", None
        a, b, c = (math.prod(dims) for dims in sizes)
        # A is M*K and B is K*N whichever way either is transposed, and C is M*N
        k = math.isqrt(a * b // c) if c else 0
        if not k or k * k * c != a * b:
            return None, "", None
        trips = [
            ir.int_value(loop.extent)
            for loop in ancestors
            if isinstance(loop, ir.For) and loop.kind != "thread_binding"
        ]
        if any(n is None for n in trips):
            return None, "", None
        total += 2 * c * k * math.prod(trips)
        m, n = sizes[2][0], c // sizes[2][0]
        loops = f" x {math.prod(trips)} iterations" if trips else ""
        parts.append(f"T.gemm {m}x{n}x{k}{loops}" + (f" (line {stmt.line})" if stmt.line else ""))
        info = func.buffers.get(regions[0].buffer)
        dtype = info.dtype if info else None
    if not parts:
        return None, "", None
    return total, ", ".join(parts), dtype
