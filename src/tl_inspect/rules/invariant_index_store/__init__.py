"""TLV003 invariant-index-store: a read-modify-write in `T.Parallel` whose index repeats across iterations."""

from __future__ import annotations

import itertools

import numpy as np

from tl_inspect import ir
from tl_inspect.model import STAGE_FRONTEND, STAGE_VECTORIZE
from tl_inspect.rules.base import Rule, RuleContext

# index points tried when looking for two parallel iterations that update the same element
MAX_FRONTEND_POINTS = 1 << 16
# (thread, iteration) points tried when looking for two threads that update the same address
MAX_THREAD_POINTS = 1 << 17
SHARED_OR_GLOBAL = ("global", "shared", "shared.dyn")
THREAD_PRIVATE = ("local", "local.var")


class InvariantIndexStore(Rule):
    """A read-modify-write inside `T.Parallel` whose index does not advance with the loop.

    ## What it does
    Flags a store inside a `T.Parallel` loop nest that reads the element it writes
    (`acc[i // 8] += v[i]`, `O[i] += X[i, j]` in `for i, j in T.Parallel(M, N)`) when several
    parallel iterations land on the same element: the index drops a loop variable, or folds it with
    `//` or `%`. tl-inspect enumerates the iterations to prove the collision, then checks the
    thread-partitioned loop after `tl.VectorizeLoop` to see which threads update the same address.
    A fragment update whose index still advances with the innermost variable (the column sum
    `acc[j] += X[i, j]`) is tilelang's efficient form and is not reported; on global or shared memory
    it is reported when two threads of the lowered loop update one address.

    ## Why is this wrong?
    `T.Parallel` declares the iterations independent. On a global or shared target tilelang spreads
    them over threads and every thread reads, adds and writes the same element: updates are lost. On an
    H200, `O[i] += X[i, j]` gave wrong sums for 16383 of 16384 rows. On a fragment tilelang keeps it
    correct by replicating the element on every thread that needs it and serialising the loop: the
    store is usually scalar (planner: `must-scalarize`) and the work is done several times. A
    `T.alloc_var` or `T.alloc_local` target is private to each thread, so a partitioned loop leaves
    every thread with a partial sum.

    ## Example
    ```python
    for i, j in T.Parallel(block_M, N):
        O[bx * block_M + i] += X[bx * block_M + i, j]
    ```

    ## Use instead
    ```python
    x = T.alloc_fragment((block_M, N), "float32")
    s = T.alloc_fragment((block_M,), "float32")
    T.copy(X[bx * block_M, 0], x)
    T.reduce_sum(x, s, dim=1)
    T.copy(s, O[bx * block_M])
    ```
    For a sum across thread blocks, use `T.atomic_add`.

    ## References
    - tl-inspect H200 measurements (facts/h200-impact.md): row sum with `O[i] += X[i, j]` in
      `T.Parallel`, 16383/16384 rows wrong; the `T.reduce_sum` form runs at 3980 GB/s with `float4`.
    - tl-inspect H200 measurements (docs/gpu-impact.md): a group sum `acc[i // 8] += V[bx, i]` into a
      fragment ran at 1110 GB/s, the same sum as `T.reduce_sum` over `(N / 8, 8)` at 3271 GB/s (2.9x).
    - tl-inspect facts memo G.3 (`rmw_global`: 8 scalar loads instead of one `uint4`, planner
      `must-scalarize`) and C.2 (`acc[i // 16] += V[i]`: fragment replicated twice, half the threads
      redo the sum).
    """

    code = "TLV003"
    slug = "invariant-index-store"
    severity = "error"
    flags = "a read-modify-write in `T.Parallel` whose index does not advance with the loop (`O[i] += X[i, j]`)"
    measured = ("on global memory a race: 16383 of 16384 row sums wrong; in a fragment 1110 vs 3271 GB/s with "
                "`T.reduce_sum`")
    fix = ("Reduce in a fragment with `T.reduce_sum`/`T.reduce_max` (or `T.atomic_add` across blocks) "
           "instead of `+=` in `T.Parallel`")
    # its findings come from its own analysis of the collisions (analysis/collisions), not from the verdicts
    reports_causes = ("invariant-store",)

    def check(self, ctx: RuleContext) -> None:
        frontend = ctx.kernel.snapshot(STAGE_FRONTEND)
        func = frontend.func() if frontend else None
        if func is None:
            return
        reducers = _reducer_buffers(func)
        lets: dict[str, ir.Expr] = {}
        reported: set[int] = set()
        for stmt, ancestors in ir.walk(func.body):
            if isinstance(stmt, ir.Let):
                lets[stmt.var] = ir.substitute(stmt.value, lets)
                continue
            if not isinstance(stmt, ir.Store) or not stmt.line or stmt.line in reported:
                continue
            if stmt.buffer in reducers:
                continue
            value = ir.substitute(stmt.value, lets)
            if not any(load[1] == stmt.buffer for load in ir.loads_of(value)):
                continue
            nest = [n for n, a in enumerate(ancestors) if isinstance(a, ir.For) and a.kind == "parallel"]
            if not nest:
                continue
            loops = [ancestors[n] for n in nest]
            indices = tuple(ir.substitute(i, lets) for i in stmt.indices)
            conditions = [ir.substitute(a.cond, lets) for a in ancestors[nest[0]:] if isinstance(a, ir.If)]
            collision = _find_collision(loops, indices, conditions)
            resolved = ir.Store(stmt.buffer, indices, value, stmt.dtype, stmt.line)
            if collision is not None and self._report(ctx, func, resolved, loops[-1].var, collision):
                reported.add(stmt.line)

    def _report(self, ctx: RuleContext, func: ir.IRFunc, stmt: ir.Store, innermost: str,
                collision: _Collision) -> bool:
        """Report the store unless the collision is harmless; whether it was reported.

        A store that advances with the innermost variable still vectorizes: on a fragment tilelang
        gives each element to one thread (a column sum `acc[j] += X[i, j]` is its efficient form), so
        only a global or shared target with a proven race is reported then."""
        scope = func.scope_of(stmt.buffer)
        vectorizable = innermost not in collision.variables
        target = f"{stmt.buffer}[{', '.join(ir.render(i) for i in stmt.indices)}]"
        frozen = ", ".join(f"`{v}`" for v in collision.variables)
        head = (f"`{ir.render_store(stmt)}` in `T.Parallel`: the index repeats along {frozen}, so "
                f"{collision.describe()} update the same element of {_scope_word(scope)} `{stmt.buffer}`")
        lowered = _lowered_stores(ctx, stmt)
        evidence = [f"TIR: {target} = {ir.render(stmt.value)}"]
        evidence += [f"TIR after tl.VectorizeLoop: {text}" for text in lowered.texts[:2]]
        if scope in SHARED_OR_GLOBAL:
            race = lowered.race()
            if race is False and not vectorizable:
                message = (f"{head}; each element stays on one thread here, but the store is scalar "
                           f"and serial")
                ctx.report(stmt.line, message, severity="warning", evidence=evidence)
            elif race or (race is None and not vectorizable):
                detail = f" (threads {race[0]} and {race[1]} update one address)" if race else ""
                message = f"{head}: threads race on it and updates are lost{detail}"
                ctx.report(stmt.line, message, severity="error", evidence=evidence)
            else:
                return False
        elif vectorizable:
            return False
        elif scope in THREAD_PRIVATE and lowered.partitioned():
            message = (f"{head}: the loop is split over threads and `{stmt.buffer}` is private to each "
                       f"thread, so every thread keeps only a partial result")
            ctx.report(stmt.line, message, severity="error", evidence=evidence)
        else:
            replicas = _replication(ctx, stmt.buffer)
            if scope in THREAD_PRIVATE:
                owners = "every thread, each on its own copy"
            elif replicas > 1:
                owners = f"each of the {replicas} threads holding a copy of it"
            else:
                owners = "the thread that owns it"
            scalar = " (scalar store)" if lowered.lanes() == 1 else ""
            message = (f"{head}: tilelang keeps this correct only by running those iterations one after "
                       f"another on {owners}{scalar}, instead of a parallel reduction")
            ctx.report(stmt.line, message, severity="warning", evidence=evidence)
        return True


# ---------------------------------------------------------------- frontend: do iterations collide?

class _Collision:
    def __init__(self, variables: list, per_element: int | None):
        self.variables = variables  # parallel loop variables the index does not advance with
        self.per_element = per_element  # iterations that update one element, when known

    def describe(self) -> str:
        return f"{self.per_element or 'several'} parallel iterations"


def _find_collision(loops, indices, conditions):
    """The loop variables along which iterations of the parallel nest store to one element, or None.

    Collisions are searched on a box of iterations small enough to enumerate: a collision found there is
    real, and the box is wide enough (twice the largest constant in the index, at least) to expose
    missing variables, `//` and `%`."""
    loop_vars = [loop.var for loop in loops]
    extents = [ir.int_value(loop.extent) for loop in loops]
    if any(e is None for e in extents):
        return None
    literals = [abs(e[1]) for x in (*indices, *conditions) for e in ir.subexprs(x) if e[0] == "int"]
    reach = 2 * max(literals, default=1) + 2
    box = [min(extent, reach) for extent in extents]
    while _product(box) > MAX_FRONTEND_POINTS:
        widest = box.index(max(box))
        box[widest] = max(2, box[widest] // 2)
    axes = np.meshgrid(*(np.arange(n) for n in box), indexing="ij")
    env = {var: axis.ravel() for var, axis in zip(loop_vars, axes)}
    points = _product(box)
    try:
        keys = np.stack([np.broadcast_to(ir.evaluate(i, env, default=0), (points,)) for i in indices], axis=1)
        # a data-dependent condition (a load) may hold anywhere: it does not narrow the search
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
    variables = [v for v in loop_vars if v in differing]
    if box == extents:
        per_element = int(counts.max())
    elif not conditions and not any(ir.uses(i, v) for i in indices for v in variables):
        per_element = _product(e for v, e in zip(loop_vars, extents) if v in differing)
    else:
        per_element = None
    return _Collision(variables, per_element)


# ---------------------------------------------------------------- lowered IR: which threads collide?

class _Lowered:
    """The stores at one Python line after `tl.VectorizeLoop`, with their thread and loop context."""

    def __init__(self, stores: list, thread_vars: dict):
        self.stores = stores  # (Store, ancestors)
        self.thread_vars = thread_vars  # name -> extent
        self.texts = [f"{s.buffer}[{', '.join(ir.render(i) for i in s.indices)}] = {ir.render(s.value)}"
                      for s, _ in stores]

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
        iterations = _product(e or 0 for e in extents)
        if any(e is None for e in extents) or iterations > MAX_THREAD_POINTS:
            return None
        conditions = [a.cond for a in ancestors if isinstance(a, ir.If)]
        sample, complete = _thread_sample([self.thread_vars[t] for t in threads],
                                          max(2, MAX_THREAD_POINTS // max(iterations, 1)))
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


def _lowered_stores(ctx: RuleContext, store: ir.Store) -> _Lowered:
    snapshot = ctx.kernel.snapshot(STAGE_VECTORIZE)
    func = snapshot.func() if snapshot else None
    if func is None:
        return _Lowered([], {})
    thread_names = _thread_var_names(ctx)
    found = []
    extents: dict[str, int] = {}
    for stmt, ancestors in ir.walk(func.body):
        if isinstance(stmt, ir.Attr) and stmt.key == "thread_extent" and stmt.node in thread_names:
            extents[stmt.node] = ir.int_value(stmt.value) or 1
        if isinstance(stmt, ir.Store) and stmt.line == store.line and stmt.buffer == store.buffer:
            found.append((stmt, ancestors))
    return _Lowered(found, extents)


def _thread_var_names(ctx: RuleContext) -> set:
    """Names of the threadIdx variables: the frontend binds them with `tl.launch_thread_idx`."""
    func = ctx.kernel.snapshot(STAGE_FRONTEND).func()
    return {stmt.var for stmt, _ in ir.walk(func.body)
            if isinstance(stmt, ir.Let) and stmt.value[:2] == ("call", "tl.launch_thread_idx")}


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


# ---------------------------------------------------------------- helpers

def _reducer_buffers(func: ir.IRFunc) -> set:
    """Legacy `T.alloc_reducer` fragments: `acc[i] += ...` in `T.Parallel` is their intended use."""
    out = set()
    for stmt, _ in ir.walk(func.body):
        if isinstance(stmt, ir.Eval) and "reducer" in (ir.tile_op(stmt.expr) or ""):
            out.update(region.buffer for region in ir.regions(stmt.expr))
    return out


def _replication(ctx: RuleContext, buffer: str) -> int:
    for layout in ctx.kernel.layouts:
        if layout.kind == "buffer" and layout.name == buffer:
            return layout.replicate
    return 1


def _scope_word(scope: str) -> str:
    if scope.startswith("shared"):
        return "shared buffer"
    if scope == "local.fragment":
        return "fragment"
    return "global buffer" if scope == "global" else "local variable"


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _condition_mask(conditions, env: dict, rows: int):
    """Which points satisfy every condition that can be computed; a data-dependent condition (a load)
    may hold anywhere, so it does not narrow the search."""
    keep = np.ones(rows, dtype=bool)
    for condition in conditions:
        if _computable(condition):
            keep &= np.broadcast_to(ir.evaluate(condition, env, default=0), (rows,)).astype(bool)
    return keep


def _addresses(indices, env: dict, rows: int):
    """The element every point's store touches, lane by lane: shape (points, lanes, dimensions);
    None when dimensions store different numbers of lanes."""
    per_dim = []
    for index in indices:
        if index[0] == "ramp":
            base = np.broadcast_to(ir.evaluate(index[1], env, default=0), (rows,))
            stride = np.broadcast_to(ir.evaluate(index[2], env, default=0), (rows,))
            per_dim.append(base[:, None] + stride[:, None] * np.arange(index[3]))
        else:
            value = index[1] if index[0] == "bcast" else index
            per_dim.append(np.broadcast_to(ir.evaluate(value, env, default=0), (rows,))[:, None])
    lanes = {d.shape[1] for d in per_dim} - {1}
    if len(lanes) > 1:
        return None
    width = lanes.pop() if lanes else 1
    return np.stack([np.broadcast_to(d, (rows, width)) for d in per_dim], axis=2)


_EVALUABLE = {"var", "int", "cast", "select", "not"} | ir.BINARY_OPS


def _computable(expr) -> bool:
    """Whether an index or condition is integer arithmetic on loop and thread variables (no load)."""
    return all(e[0] in _EVALUABLE or (e[0] == "call" and e[1] == "tirx.if_then_else") for e in ir.subexprs(expr))


