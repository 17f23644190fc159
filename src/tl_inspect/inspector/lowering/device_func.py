"""One device function's threads as the accesses and the shared-memory requests are read against them: the
thread variables and their extents, the lane variable, the `let` values, and how one thread's loops and
its neighbours walk an index (`tl_inspect.inspector.lowering.accesses`, `...banks`)."""

from __future__ import annotations

import math

import numpy as np

from tl_inspect.tir import nodes as ir
from tl_inspect.tir.evaluate import evaluate, substitute
from tl_inspect.tir.indexing import flatten, unique

LANE_TAG = "threadIdx.x"
WARP_SIZE = 32
SECTOR_BYTES = 32
RUN_ENUMERATION_LIMIT = 1 << 16


class DeviceFunc:
    """Thread variables, their extents and `let` values of one device function."""

    def __init__(self, func: ir.IRFunc):
        self.func = func
        self.lane_var = None
        self.threads = 1
        self.thread_axes: dict[str, tuple] = {}  # "threadIdx.x" -> (variable, extent)
        self.aliases: dict[str, str] = {}  # a second launch of a thread index (`T.thread_binding`) -> the first
        self.block_vars: set[str] = set()
        self.lets: dict = {}
        for stmt, _ in ir.walk(func.body):
            if isinstance(stmt, ir.Attr) and stmt.key == "thread_extent":
                extent = ir.int_value(stmt.value) or 1
                if stmt.tag.startswith("threadIdx") and stmt.tag in self.thread_axes:
                    self.aliases[stmt.node] = self.thread_axes[stmt.tag][0]
                elif stmt.tag.startswith("threadIdx"):
                    self.threads *= extent
                    self.thread_axes[stmt.tag] = (stmt.node, extent)
                    if stmt.tag == LANE_TAG:
                        self.lane_var = stmt.node
                else:
                    self.block_vars.add(stmt.node)
            elif isinstance(stmt, ir.Let):
                self.lets[stmt.var] = stmt.value
        self.warp = self._first_warp()

    def _first_warp(self) -> dict:
        """The thread variables of the first warp's lanes, as arrays: threadIdx.x runs fastest."""
        lanes = np.arange(min(WARP_SIZE, self.threads), dtype=np.int64)
        env, step = {}, 1
        for tag in ("threadIdx.x", "threadIdx.y", "threadIdx.z"):
            var, extent = self.thread_axes.get(tag, (None, 1))
            if var is not None:
                env[var] = (lanes // step) % extent
            step *= extent
        return env

    def sectors(self, flat, dtype: str, access_bits: int) -> tuple:
        """(bytes one warp instruction moves, 32-byte sectors it touches) for the first warp, every loop
        and block variable at 0; (0, 0) when the address comes from memory (`flat` is None)."""
        if flat is None or not self.warp:
            return 0, 0
        env = {**{v: 0 for v in self.block_vars}, **self.warp}
        lanes = len(next(iter(self.warp.values())))
        try:
            first = np.broadcast_to(evaluate(flat, env, default=0), (lanes,)) * ir.dtype_bits(dtype) // 8
        except (KeyError, ValueError, ZeroDivisionError, FloatingPointError):
            return 0, 0
        size = max(1, access_bits // 8)
        touched = set()
        for start in unique(first).tolist():
            touched.update(range(start // SECTOR_BYTES, (start + size - 1) // SECTOR_BYTES + 1))
        return lanes * size, len(touched)

    def resolve(self, expr, depth: int = 0):
        """`expr` with `let`-bound names replaced by their values (a few levels deep), and every launch
        of a thread index named as its first."""
        if self.aliases and ir.vars_of(expr) & self.aliases.keys():
            expr = substitute(expr, {alias: ("var", first) for alias, first in self.aliases.items()})
        if depth > 6 or not self.lets or not (ir.vars_of(expr) & self.lets.keys()):
            return expr
        return self.resolve(substitute(expr, self.lets), depth + 1)

    def address(self, buffer: str, indices: tuple):
        """The flat element index of an access's first lane; None when it is loaded per thread (a
        gather). A value loaded at an address every thread shares (`C[P[0] + t]`) is an offset like
        any other and counts as 0."""
        info = self.func.buffers.get(buffer)
        flat = self.resolve(flatten(indices, info.shape if info else ()))
        if flat[0] == "ramp":
            flat = flat[1]
        threads = {var for var, _ in self.thread_axes.values()}
        shared = {}
        for load in ir.loads_of(flat):
            if any(ir.vars_of(self.resolve(i)) & threads for i in load[2]):
                return None
            shared[load] = ("int", 0)
        return _replace(flat, shared) if shared else flat

    def thread_run(self, flat, dtype: str, lanes: int, loops: tuple) -> int:
        """The longest run of contiguous bytes thread 0 walks through this access over its loops."""
        if (
            flat is None
            or any(extent is None for _, extent in loops)
            or math.prod(extent for _, extent in loops) > RUN_ENUMERATION_LIMIT
        ):
            return 0
        env = {v: 0 for v in self.block_vars} | {v: 0 for v, _ in self.thread_axes.values()}
        for k, (var, extent) in enumerate(loops):
            shape = [1] * len(loops)
            shape[k] = extent
            env[var] = np.arange(extent, dtype=np.int64).reshape(shape)
        try:
            starts = unique(np.asarray(evaluate(flat, env, default=0), dtype=np.int64))
        except (KeyError, ValueError, ZeroDivisionError, FloatingPointError):
            return 0
        elements = unique(starts[:, None] + np.arange(lanes))
        breaks = np.flatnonzero(np.diff(elements) != 1)
        runs = np.diff(np.concatenate(([-1], breaks, [len(elements) - 1])))
        return int(runs.max()) * ir.dtype_bits(dtype) // 8 if len(runs) else 0

    def size(self, buffer: str) -> int:
        """Elements of a buffer (a block cannot move more distinct ones: a 2-entry table read in a loop
        is 2 elements), or a bound that never binds when the shape is only known at run time."""
        info = self.func.buffers.get(buffer)
        if info is None or not all(isinstance(d, int) for d in info.shape):
            return 1 << 62
        return math.prod(info.shape)

    def lane_stride(self, flat, dtype: str) -> int | None:
        """Bytes between the elements threads x = 0 and x = 1 access; None when the index is loaded."""
        if flat is None or self.lane_var is None:
            return None if flat is None else 0
        env = {self.lane_var: np.array([0, 1], dtype=np.int64)}
        env.update({v: 0 for v in self.block_vars})
        try:
            values = np.broadcast_to(evaluate(flat, env, default=0), (2,))
        except (KeyError, ValueError, ZeroDivisionError, FloatingPointError):
            return None
        return abs(int(values[1]) - int(values[0])) * ir.dtype_bits(dtype) // 8


def _replace(expr, found: dict):
    """`expr` with each sub-expression that is a key of `found` replaced by its value."""
    if expr in found:
        return found[expr]
    if not isinstance(expr, tuple) or not expr or expr[0] in ("var", "int", "float", "other"):
        return expr
    return tuple(
        _replace(item, found)
        if isinstance(item, tuple) and item and isinstance(item[0], str)
        else tuple(_replace(i, found) for i in item)
        if isinstance(item, tuple)
        else item
        for item in expr
    )
