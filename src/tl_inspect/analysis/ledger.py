"""The ledger: the book's accounting of one kernel launch, computed once, in the worker, from the
judged accesses and the device code.

Bytes are what the kernel's global accesses request per block (each access's `block_bytes`, capped
by the threads that reach it), times the blocks of the grid. Threads that work are those a device
condition on `threadIdx` lets reach a global access: `T.Parallel(256)` over 256 fp16 elements on 256
threads can lower to 32 threads moving 8 elements each under `if (threadIdx.x < 32)`. FLOPs are
counted only where the work is written down as shapes (`T.gemm`); element-wise arithmetic is not
counted, so such a kernel gets no intensity and no bound rather than a guess.
"""

from __future__ import annotations

import math
import re

from tl_inspect import ir
from tl_inspect.model import STAGE_DEVICE, STAGE_FRONTEND, KernelArtifact, Ledger

# NVIDIA H200 SXM datasheet (docs/verdicts.md, "The ledger"): HBM3e bandwidth and dense Tensor Core
# peaks (the datasheet's headline figures are with 2:4 sparsity, twice these; TF32 for float32)
H200_BANDWIDTH = 4.8e12
H200_DENSE_PEAKS = {"float16": 989.5e12, "bfloat16": 989.5e12, "float8_e4m3": 1979e12,
                    "float8_e5m2": 1979e12, "int8": 1979e12, "float32": 494.5e12}
PEAKS = {"sm_90": (H200_BANDWIDTH, H200_DENSE_PEAKS), "sm_90a": (H200_BANDWIDTH, H200_DENSE_PEAKS)}


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


def account(kernel: KernelArtifact) -> Ledger | None:
    func, threads = _launched(kernel)
    if func is None:
        return None
    blocks = grid_blocks(func)
    grid = " x ".join(ir.render(e) for e in _block_extents(func)) or "1"

    working, guard = _working_threads(func, threads)
    variables = _thread_vars(func)
    read = written = 0
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

    flops, basis, dtype = gemm_flops(kernel)
    return Ledger(
        threads_launched=threads, threads_working=working, thread_guard=guard, blocks=blocks, grid=grid,
        # a broadcast (every lane at one address) is not work a thread moves, unless one thread works
        elements_per_thread=max((a.elements_per_thread for a in kernel.accesses
                                 if a.lane_stride_bytes != 0 or working == 1), default=0),
        read_bytes_per_block=read, written_bytes_per_block=written, flops_per_block=flops, flops_basis=basis,
        peak_flops=peak_flops(kernel.arch, dtype), peak_bytes=PEAKS.get(kernel.arch, (None, {}))[0],
    )


def peak_flops(arch: str, dtype: str | None) -> float | None:
    """The arch's dense tensor-core peak for operands of `dtype`; None where not known."""
    peaks = PEAKS.get(arch, (None, {}))[1]
    # tilelang spells fp8 with suffixes ("float8_e4m3fn")
    return next((peak for name, peak in peaks.items() if dtype and dtype.startswith(name)), None)


def _block_extents(func) -> list:
    return [e for tag, e in sorted(func.launch.items()) if tag.startswith("blockIdx")]


def grid_blocks(func) -> int | None:
    """Thread blocks the device function launches; None when the grid is known only at run time."""
    counted = [ir.int_value(e) for e in _block_extents(func)]
    return math.prod(counted) if all(n is not None for n in counted) else None


def _thread_vars(func) -> dict:
    """Thread variable -> (its tag, the threads launched along it)."""
    return {stmt.node: (stmt.tag, ir.int_value(stmt.value) or 1) for stmt, _ in ir.walk(func.body)
            if isinstance(stmt, ir.Attr) and stmt.tag.startswith("threadIdx")}


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
    text = ir.render(cond)
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
    return any((sub[0] in ("load", "var") and sub[1] in func.buffers and func.scope_of(sub[1]) == "global")
               or (sub[0] == "call" and ("tma_load" in sub[1] or "tma_store" in sub[1]))
               for expr in exprs for sub in ir.subexprs(expr))


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
    low, high = {"lt": (0, k), "le": (0, k + 1), "gt": (k + 1, extent), "ge": (k, extent),
                 "eq": (k, k + 1)}[op]
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
        trips = [ir.int_value(loop.extent) for loop in ancestors
                 if isinstance(loop, ir.For) and loop.kind != "thread_binding"]
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
