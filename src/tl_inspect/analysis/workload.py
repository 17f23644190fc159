"""What a kernel's time holds besides its global accesses: its arithmetic, which runs beside the
memory traffic rather than after it (docs/verdicts.md, "Arithmetic"). Measured on an H200: fp16
elements with a tail guard given 1, 8, 32, 128 and 512 FMA rounds each in registers cost 4.05x, 4.05x,
2.52x, 1.04x and 1.01x against the aligned twin, which reached 64.5 T float operations per second at
512 rounds. It is expressed as bytes at full memory speed so that `cost.kernel_time` sets it beside
the accesses as one more resource.

Only float arithmetic in the device code counts (index arithmetic is the address's), each operation
once per lane and per trip of the loops around it, over the threads that reach a global access;
tensor-core work counts from `T.gemm` at the arch's dense peak.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tl_inspect.analysis import ledger
from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.model import STAGE_DEVICE, KernelArtifact
from tl_inspect.tir import nodes as ir

# the SFU delivers 16 results per clock per SM against 128 FMAs (CUDA C++ Programming Guide, arithmetic
# instruction throughput, compute capability 9.0): one transcendental takes the slots of 8 FMAs
TRANSCENDENTAL_OPS = 16
TRANSCENDENTAL = re.compile(
    r"(^|\.)(exp|exp2|exp10|log|log2|log10|log1p|expm1|tanh|sinh|cosh|erf|sqrt|rsqrt|"
    r"pow|sin|cos|tan|atan|atan2|asin|acos|sigmoid)$"
)
ARITHMETIC = frozenset({"add", "sub", "mul", "div", "min", "max"})


@dataclass(frozen=True)
class Workload:
    """A kernel's arithmetic per thread block: float operations on the cores, and ns on tensor cores."""

    float_ops: float | None = 0.0  # None: a loop around some runs a trip count known only at run time
    tensor_ns: float = 0.0

    def compute_units(self, block_bytes: float, table: CostTable) -> float:
        """The arithmetic in units of the block's own bytes at full speed (a larger tile moves and
        computes more in the same proportion), at `table`'s rates."""
        if not block_bytes or not (self.float_ops or self.tensor_ns):
            return 0.0
        compute_ns = (self.float_ops or 0.0) / table["float_ops_per_ns"] + self.tensor_ns
        return compute_ns * table["full_speed_bytes_per_ns"] / block_bytes


def of(kernel: KernelArtifact) -> Workload:
    device = kernel.snapshot(STAGE_DEVICE)
    func = device.func() if device else None
    if func is None or not func.launch:
        return Workload()
    threads = ledger.working_threads(kernel) or 0
    ops = _float_ops_per_thread(func)
    flops, _, dtype = ledger.gemm_flops(kernel)
    peak = ledger.peak_flops(kernel.arch, dtype)
    return Workload(
        float_ops=None if ops is None else ops * threads, tensor_ns=flops / peak * 1e9 if flops and peak else 0.0
    )


def _float_ops_per_thread(func) -> int | None:
    """Float operations one thread runs; None when a loop around some has a run-time trip count."""
    total = 0
    for stmt, ancestors in ir.walk(func.body):
        if not isinstance(stmt, ir.Store) or not ir.element_dtype(stmt.dtype).startswith(("float", "bfloat")):
            continue
        ops = _ops(stmt.value)
        if not ops:
            continue
        trips = [ir.int_value(a.extent) for a in ancestors if isinstance(a, ir.For) and a.kind != "thread_binding"]
        if any(n is None for n in trips):
            return None
        total += ops * ir.dtype_lanes(stmt.dtype) * math.prod(trips)
    return total


def _ops(expr) -> int:
    """Float operations an expression evaluates, not counting its addresses or its conditions."""
    kind = expr[0]
    if kind in ("load", "var", "int", "float", "ramp", "other"):
        return 0
    if kind == "select":
        return _ops(expr[2]) + _ops(expr[3])
    if kind == "cast":
        return _ops(expr[2])
    if kind == "bcast":
        return _ops(expr[1])
    if kind == "call":
        own = TRANSCENDENTAL_OPS if TRANSCENDENTAL.search(expr[1]) else 0
        return own + sum(_ops(arg) for arg in expr[2])
    if kind in ARITHMETIC:
        operands = (expr[1], expr[2])
        own = 1 if any(_is_float(o) for o in operands) else 0
        return own + sum(_ops(o) for o in operands)
    return sum(_ops(o) for o in ir.operands(expr))


def _is_float(expr) -> bool:
    kind = expr[0]
    if kind == "float":
        return True
    if kind in ("load", "cast"):
        return ir.element_dtype(expr[3] if kind == "load" else expr[1]).startswith(("float", "bfloat"))
    if kind == "call":
        return bool(TRANSCENDENTAL.search(expr[1]))
    if kind in ARITHMETIC:
        return _is_float(expr[1]) or _is_float(expr[2])
    if kind == "select":
        return _is_float(expr[2]) or _is_float(expr[3])
    if kind == "bcast":
        return _is_float(expr[1])
    return False
