"""Does a store's index advance with its parallel loops? The one analysis of stores that repeat an element.

Two questions, one per IR. In the frontend: which parallel iterations store to the same element
(`find_collision`, by enumerating a box of iterations). After `tl.VectorizeLoop`: which threads store
to the same address (`LoweredStores.race`, by enumerating threads and their iterations). The
invariant-index-store rule asks both about every read-modify-write (`read_modify_writes`); the
verdicts ask the first about every store of a parallel unit (`advances`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tl_inspect.model import STAGE_VECTORIZE
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.evaluate import evaluate
from tl_inspect.tir.indexing import RUNTIME_VALUE, affine, coefficient
from tl_inspect.tir.render import render, render_access

if TYPE_CHECKING:
    from tl_inspect.analysis.kernel import KernelModel
    from tl_inspect.analysis.statements import Store

# index points tried when looking for two parallel iterations that update the same element
MAX_FRONTEND_POINTS = 1 << 16
# (thread, iteration) points tried when looking for two threads that update the same address
MAX_THREAD_POINTS = 1 << 17


@dataclass(frozen=True)
class Collision:
    variables: tuple  # parallel loop variables the index does not advance with, outermost first
    per_element: int | None  # iterations that update one element, when known


@dataclass(frozen=True)
class ReadModifyWrite:
    """A store in `T.Parallel` that reads the element it writes, where parallel iterations collide."""

    store: Store
    collision: Collision
    lowered: LoweredStores  # its stores after `tl.VectorizeLoop`
    advances: bool  # its index moves with the innermost parallel variable


def read_modify_writes(model: KernelModel) -> list:
    """Every colliding read-modify-write of the kernel, in program order. `T.alloc_reducer` fragments
    are left out: `acc[i] += ...` in `T.Parallel` is their intended use."""
    reducers = {region.buffer for op in model.tile_ops if "reducer" in op.op for region in op.regions}
    snapshot = model.kernel.snapshot(STAGE_VECTORIZE)
    lowered_func = snapshot.func() if snapshot else None
    found = []
    for store in model.stores:
        nest = store.nest
        if not nest or not store.stmt.line or store.buffer in reducers:
            continue
        if not any(load[1] == store.buffer for load in ir.loads_of(store.value)):
            continue
        nest_vars = {loop.var for loop in nest}
        # the guards inside the nest (those outside it cannot use its variables)
        conditions = [c for c in store.conditions if ir.vars_of(c) & nest_vars]
        collision = find_collision([(loop.var, loop.extent) for loop in nest], store.indices, conditions)
        if collision is None:
            continue
        env = {**model.env(), **{loop.var: 0 for loop in store.loops}}
        innermost = nest[-1]
        found.append(
            ReadModifyWrite(
                store,
                collision,
                LoweredStores.of(lowered_func, store.buffer, store.stmt.line, model.thread_vars),
                advances(store.indices, innermost.var, ir.int_value(innermost.extent) or 1, env),
            )
        )
    return found


def advances(indices, var: str, extent: int, env: dict) -> bool:
    """Whether a store's index moves with the loop variable `var`: every one of its `extent` steps
    reaches another element (`y[(i * 8 + j) // 128, (i * 8 + j) % 128]` does along j; `acc[i // 8]`
    does not along i). The other variables take their values in `env`, a run-time length RUNTIME_VALUE."""
    env = {**env, var: np.arange(extent, dtype=np.int64)}
    points = []
    for index in indices:
        try:
            points.append(np.broadcast_to(evaluate(index, env, default=RUNTIME_VALUE), (extent,)))
        except (KeyError, ValueError, ZeroDivisionError, FloatingPointError):
            poly = affine(index)
            return poly is None or bool(coefficient(poly, var))
    if not points:
        return False
    return len({tuple(p) for p in np.stack(points, axis=1).tolist()}) == extent


def find_collision(loops, indices, conditions) -> Collision | None:
    """The loop variables along which iterations of the parallel nest `loops` ((var, extent), ...)
    store to one element, or None.

    Collisions are searched on a box of iterations small enough to enumerate: a collision found there is
    real, and the box is wide enough (twice the largest constant in the index, at least) to expose
    missing variables, `//` and `%`."""
    loop_vars = [var for var, _ in loops]
    extents = [ir.int_value(e) if isinstance(e, tuple) else e for _, e in loops]
    if any(e is None for e in extents):
        return None
    literals = [abs(e[1]) for x in (*indices, *conditions) for e in ir.subexprs(x) if e[0] == "int"]
    reach = 2 * max(literals, default=1) + 2
    box = [min(extent, reach) for extent in extents]
    while math.prod(box) > MAX_FRONTEND_POINTS:
        widest = box.index(max(box))
        box[widest] = max(2, box[widest] // 2)
    axes = np.meshgrid(*(np.arange(n) for n in box), indexing="ij")
    env = {var: axis.ravel() for var, axis in zip(loop_vars, axes)}
    points = math.prod(box)
    try:
        keys = np.stack([np.broadcast_to(evaluate(i, env, default=0), (points,)) for i in indices], axis=1)
        keep = _condition_mask(conditions, env, points)
    except (ValueError, FloatingPointError):
        return None
    keys = keys[keep]
    if not len(keys):
        return None
    _, group, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    group = group.ravel()
    differing = set()
    for var in loop_vars:
        values = env[var][keep]
        low = np.full(len(counts), np.iinfo(np.int64).max)
        high = np.full(len(counts), np.iinfo(np.int64).min)
        np.minimum.at(low, group, values)
        np.maximum.at(high, group, values)
        if np.any(low != high):
            differing.add(var)
    if not differing:
        return None
    variables = tuple(v for v in loop_vars if v in differing)
    if box == extents:
        per_element = int(counts.max())
    elif not conditions and not any(ir.uses(i, v) for i in indices for v in variables):
        per_element = math.prod(e for v, e in zip(loop_vars, extents) if v in differing)
    else:
        per_element = None
    return Collision(variables, per_element)


class LoweredStores:
    """The stores at one Python line after `tl.VectorizeLoop`, with their thread and loop context."""

    def __init__(self, stores: list, thread_vars: dict):
        self.stores = stores  # (Store, ancestors)
        self.thread_vars = thread_vars  # name -> extent

    @classmethod
    def of(cls, func: ir.IRFunc | None, buffer: str, line: int, thread_vars: dict) -> LoweredStores:
        """The stores of `func` (the lowered kernel) to `buffer` at `line`; `thread_vars`: threadIdx
        variable -> extent."""
        found = [
            (stmt, ancestors)
            for stmt, ancestors in ir.walk(func.body if func else ())
            if isinstance(stmt, ir.Store) and stmt.line == line and stmt.buffer == buffer
        ]
        return cls(found, thread_vars)

    def texts(self) -> list:
        """Each lowered store as TIR text, for the evidence."""
        return [f"{render_access(s.buffer, s.indices)} = {render(s.value)}" for s, _ in self.stores]

    def race(self):
        """(thread a, thread b) that store to one address, False when none does, None when unknown."""
        if not self.stores:
            return None
        threads = [name for name, extent in self.thread_vars.items() if extent > 1]
        if not threads:
            return False
        for store, ancestors in self.stores:
            found = self._race_in(store, ancestors, threads)
            if found is not False:
                return found
        return False

    def _race_in(self, store, ancestors, threads):
        loops = [a for a in ancestors if isinstance(a, ir.For) and a.kind != "thread_binding"]
        extents = [ir.int_value(loop.extent) for loop in loops]
        iterations = math.prod(e or 0 for e in extents)
        if any(e is None for e in extents) or iterations > MAX_THREAD_POINTS:
            return None
        conditions = [a.cond for a in ancestors if isinstance(a, ir.If)]
        sample, complete = _thread_sample(
            [self.thread_vars[t] for t in threads], max(2, MAX_THREAD_POINTS // max(iterations, 1))
        )
        # every (sampled thread, loop iteration) pair, thread-major as the threads would be scanned
        loop_axes = np.meshgrid(*(np.arange(n) for n in extents), indexing="ij")
        thread_of = np.repeat(np.arange(len(sample)), iterations)
        env = {name: np.asarray(sample)[thread_of, k] for k, name in enumerate(threads)}
        env.update({loop.var: np.tile(axis.ravel(), len(sample)) for loop, axis in zip(loops, loop_axes)})
        rows = len(thread_of)
        try:
            keep = _condition_mask(conditions, env, rows)
            addresses = _addresses(store.indices, env, rows)
        except (ValueError, FloatingPointError):
            return None
        if addresses is None:
            return None
        lanes = addresses.shape[1]
        writers = np.repeat(thread_of, lanes)[np.repeat(keep, lanes)]
        addresses = addresses[keep].reshape(-1, addresses.shape[2])
        if not len(addresses):
            return False if complete else None
        _, group = np.unique(addresses, axis=0, return_inverse=True)
        group = group.ravel()
        first = np.full(group.max() + 1, len(sample))
        np.minimum.at(first, group, writers)
        clash = np.flatnonzero(writers != first[group])
        if not len(clash):
            return False if complete else None
        # a guard we cannot evaluate (a thread election, a loaded flag) may separate the threads
        if not all(_computable(c) for c in conditions):
            return None
        later = clash[np.argmin(writers[clash])]
        return (_thread_name(threads, sample[first[group[later]]]), _thread_name(threads, sample[writers[later]]))

    def lanes(self) -> int:
        """The widest vector the lowered store writes (1: scalar; 0: no lowered store found)."""
        return max((ir.dtype_lanes(store.dtype) for store, _ in self.stores), default=0)

    def partitioned(self) -> bool:
        """Whether each thread runs only part of the loop (thread variables select its iterations)."""
        for store, ancestors in self.stores:
            exprs = [store.value, *store.indices] + [a.cond for a in ancestors if isinstance(a, ir.If)]
            exprs += [a.extent for a in ancestors if isinstance(a, ir.For)]
            if any(ir.vars_of(e) & set(self.thread_vars) for e in exprs):
                return True
        return False


def _thread_sample(extents: list, budget: int) -> tuple[list, bool]:
    """Thread index tuples to try (all of them when they fit in `budget`) and whether that is all.

    A partial sample keeps the first threads, where neighbours collide, and spreads the rest evenly,
    where threads a warp or a row apart collide."""
    every = list(itertools.product(*(range(n) for n in extents)))
    if len(every) <= budget:
        return every, True
    head = budget // 2
    step = max(1, (len(every) - head) // (budget - head))
    return every[:head] + every[head::step], False


def _thread_name(threads: list, values: tuple) -> str:
    return ", ".join(f"{n}={v}" for n, v in zip(threads, values)) if len(threads) > 1 else str(values[0])


def _condition_mask(conditions, env: dict, rows: int):
    """Which points satisfy every condition that can be computed; a data-dependent condition (a load)
    may hold anywhere, so it does not narrow the search."""
    keep = np.ones(rows, dtype=bool)
    for condition in conditions:
        if _computable(condition):
            keep &= np.broadcast_to(evaluate(condition, env, default=0), (rows,)).astype(bool)
    return keep


def _addresses(indices, env: dict, rows: int):
    """The element every point's store touches, lane by lane: shape (points, lanes, dimensions);
    None when dimensions store different numbers of lanes."""
    per_dim = []
    for index in indices:
        if index[0] == "ramp":
            base = np.broadcast_to(evaluate(index[1], env, default=0), (rows,))
            stride = np.broadcast_to(evaluate(index[2], env, default=0), (rows,))
            per_dim.append(base[:, None] + stride[:, None] * np.arange(index[3]))
        else:
            value = index[1] if index[0] == "bcast" else index
            per_dim.append(np.broadcast_to(evaluate(value, env, default=0), (rows,))[:, None])
    lanes = {d.shape[1] for d in per_dim} - {1}
    if len(lanes) > 1:
        return None
    width = lanes.pop() if lanes else 1
    return np.stack([np.broadcast_to(d, (rows, width)) for d in per_dim], axis=2)


_EVALUABLE = {"var", "int", "cast", "select", "not"} | ir.BINARY_OPS


def _computable(expr) -> bool:
    """Whether an index or condition is integer arithmetic on loop and thread variables (no load)."""
    return all(e[0] in _EVALUABLE or (e[0] == "call" and e[1] == "tirx.if_then_else") for e in ir.subexprs(expr))
