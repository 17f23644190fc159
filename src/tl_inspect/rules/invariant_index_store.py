"""TLV003 invariant-index-store: a read-modify-write in `T.Parallel` whose index repeats across iterations."""

from __future__ import annotations

import itertools

from tl_inspect import ir
from tl_inspect.model import STAGE_FRONTEND, STAGE_VECTORIZE
from tl_inspect.rules.base import Example, Rule, RuleContext

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
    kind = "ir"
    fix = ("Reduce in a fragment with `T.reduce_sum`/`T.reduce_max` (or `T.atomic_add` across blocks) "
           "instead of `+=` in `T.Parallel`")

    BAD = [
        Example("""
            import tilelang.language as T

            M, N, BLOCK_M = 1024, 4096, 64


            @T.prim_func
            def row_sum(X: T.Tensor((M, N), T.float32), O: T.Tensor((M,), T.float32)):
                with T.Kernel(M // BLOCK_M, threads=128) as bx:
                    for i, j in T.Parallel(BLOCK_M, N):
                        O[bx * BLOCK_M + i] += X[bx * BLOCK_M + i, j]  # expect: invariant-index-store
        """),
        Example("""
            import tilelang.language as T

            M, N, G = 256, 1024, 8


            @T.prim_func
            def group_sum(V: T.Tensor((M, N), T.float16), Out: T.Tensor((M, N // G), T.float32)):
                with T.Kernel(M, threads=128) as bx:
                    acc = T.alloc_fragment((N // G,), T.float32)
                    T.clear(acc)
                    for i in T.Parallel(N):
                        acc[i // G] += V[bx, i]  # expect: invariant-index-store
                    T.copy(acc, Out[bx, :])
        """),
        Example("""
            import tilelang.language as T

            M, N, BLOCK_M = 512, 256, 16


            @T.prim_func
            def row_max(X: T.Tensor((M, N), T.bfloat16), O: T.Tensor((M,), T.float32)):
                with T.Kernel(M // BLOCK_M, threads=128) as bx:
                    x = T.alloc_fragment((BLOCK_M, N), T.float32)
                    m = T.alloc_fragment((BLOCK_M,), T.float32)
                    T.copy(X[bx * BLOCK_M, 0], x)
                    T.fill(m, -T.infinity(T.float32))
                    for i, j in T.Parallel(BLOCK_M, N):
                        m[i] = T.max(m[i], x[i, j])  # expect: invariant-index-store
                    T.copy(m, O[bx * BLOCK_M])
        """),
        Example("""
            import tilelang.language as T

            M, N = 128, 1024


            @T.prim_func
            def row_sum_var(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
                with T.Kernel(M, threads=128) as bx:
                    s = T.alloc_var(T.float32)
                    for i in T.Parallel(N):
                        s += X[bx, i]  # expect: invariant-index-store
                    Y[bx] = s
        """),
    ]
    GOOD = [
        Example("""
            import tilelang.language as T

            M, N, BLOCK_M = 1024, 4096, 64


            @T.prim_func
            def row_sum(X: T.Tensor((M, N), T.float32), O: T.Tensor((M,), T.float32)):
                with T.Kernel(M // BLOCK_M, threads=128) as bx:
                    x = T.alloc_fragment((BLOCK_M, N), T.float32)
                    s = T.alloc_fragment((BLOCK_M,), T.float32)
                    T.copy(X[bx * BLOCK_M, 0], x)
                    T.reduce_sum(x, s, dim=1)
                    T.copy(s, O[bx * BLOCK_M])
        """),
        Example("""
            import tilelang.language as T

            M, N, BLOCK_M = 4096, 1024, 64


            @T.prim_func
            def column_sum(X: T.Tensor((M, N), T.float32), O: T.Tensor((N,), T.float32)):
                with T.Kernel(M // BLOCK_M, threads=128) as bx:
                    acc = T.alloc_fragment((N,), T.float32)
                    T.clear(acc)
                    for i, j in T.Parallel(BLOCK_M, N):
                        acc[j] += X[bx * BLOCK_M + i, j]
                    for j in T.Parallel(N):
                        T.atomic_add(O[j], acc[j])
        """),
        Example("""
            import tilelang.language as T

            M, N, BLOCK_M = 1024, 64, 128


            @T.prim_func
            def row_sum_serial(X: T.Tensor((M, N), T.float32), O: T.Tensor((M,), T.float32)):
                with T.Kernel(M // BLOCK_M, threads=128) as bx:
                    x = T.alloc_fragment((BLOCK_M, N), T.float32)
                    s = T.alloc_fragment((BLOCK_M,), T.float32)
                    T.copy(X[bx * BLOCK_M, 0], x)
                    T.clear(s)
                    for i in T.Parallel(BLOCK_M):
                        for j in T.serial(N):
                            s[i] += x[i, j]
                    T.copy(s, O[bx * BLOCK_M])
        """),
    ]

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
    try:
        index_fn = _compile(indices, loop_vars)
    except _Unsupported:
        return None
    # a data-dependent condition (a load) may hold anywhere: it does not narrow the search
    cond_fns = [_compile((c,), loop_vars) for c in conditions if _computable(c)]
    owner: dict = {}
    counts: dict = {}
    differing: set = set()
    for point in itertools.product(*(range(n) for n in box)):
        try:
            if not all(fn(*point)[0] for fn in cond_fns):
                continue
            key = index_fn(*point)
        except ZeroDivisionError:
            return None
        counts[key] = counts.get(key, 0) + 1
        first = owner.setdefault(key, point)
        differing.update(v for v, x, y in zip(loop_vars, first, point) if x != y)
    if not differing:
        return None
    variables = [v for v in loop_vars if v in differing]
    if box == extents:
        per_element = max(counts.values())
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
        names = threads + [loop.var for loop in loops]
        conditions = [a.cond for a in ancestors if isinstance(a, ir.If)]
        try:
            index_fn = _compile(store.indices, names)
        except _Unsupported:
            return None
        cond_fns = [_compile((c,), names) for c in conditions if _computable(c)]
        sample, complete = _thread_sample([self.thread_vars[t] for t in threads],
                                          max(2, MAX_THREAD_POINTS // max(iterations, 1)))
        writer: dict = {}
        for thread in sample:
            for point in itertools.product(*(range(n) for n in extents)):
                args = thread + point
                try:
                    if not all(fn(*args)[0] for fn in cond_fns):
                        continue
                    keys = index_fn(*args)
                except ZeroDivisionError:
                    return None
                for key in _lanes(keys):
                    other = writer.setdefault(key, thread)
                    if other != thread:
                        # a guard we cannot evaluate (a thread election, a loaded flag) may separate them
                        if len(cond_fns) < len(conditions):
                            return None
                        return _thread_name(threads, other), _thread_name(threads, thread)
        return False if complete else None

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


def _lanes(keys: tuple):
    """Every address one (possibly vector) store touches."""
    expanded = [k if isinstance(k, tuple) else (k,) for k in keys]
    return itertools.product(*expanded)


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


class _Unsupported(Exception):
    """An expression the evaluator cannot compute (a load, a call)."""


_PY_OPS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%", "eq": "==", "ne": "!=",
           "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _compile(exprs, names: list):
    """A Python function of `names` returning the tuple of the integer values of `exprs`; variables
    that are not in `names` (block indices, outer serial loops) are held at 0."""
    args = [f"v{i}" for i in range(len(names))]
    env = dict(zip(names, args))
    body = ", ".join(_py(e, env) for e in exprs)
    code = f"lambda {', '.join(args)}: ({body},)"
    # one compiled lambda per expression: the collision search evaluates it up to 2^17 times; the code is
    # built only from the operator table above, integers and generated argument names
    return eval(code, {"_tdiv": _tdiv, "_tmod": _tmod, "_lanes": _lane_values})  # noqa: S307


def _py(e, env: dict) -> str:
    head = e[0]
    if head == "var":
        return env.get(e[1], "0")
    if head == "int":
        return str(e[1])
    if head == "cast":
        return _py(e[2], env)
    if head in _PY_OPS:
        return f"({_py(e[1], env)} {_PY_OPS[head]} {_py(e[2], env)})"
    if head == "div":
        return f"_tdiv({_py(e[1], env)}, {_py(e[2], env)})"
    if head == "mod":
        return f"_tmod({_py(e[1], env)}, {_py(e[2], env)})"
    if head in ("min", "max"):
        return f"{head}({_py(e[1], env)}, {_py(e[2], env)})"
    if head in ("and", "or"):
        return f"(bool({_py(e[1], env)}) {head} bool({_py(e[2], env)}))"
    if head == "not":
        return f"(not {_py(e[1], env)})"
    if head == "select":
        return f"({_py(e[2], env)} if {_py(e[1], env)} else {_py(e[3], env)})"
    if head == "call" and e[1] == "tirx.if_then_else":
        cond, then, orelse = e[2][:3]
        return f"({_py(then, env)} if {_py(cond, env)} else {_py(orelse, env)})"
    if head == "ramp":
        return f"_lanes({_py(e[1], env)}, {_py(e[2], env)}, {e[3]})"
    if head == "bcast":
        return _py(e[1], env)
    # a data-dependent index or condition (a load, a call)
    raise _Unsupported(ir.render(e))


def _computable(expr) -> bool:
    try:
        _py(expr, {})
    except _Unsupported:
        return False
    return True


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _tmod(a: int, b: int) -> int:
    return a - b * _tdiv(a, b)


def _lane_values(base: int, stride: int, lanes: int) -> tuple:
    return tuple(base + stride * k for k in range(lanes))
