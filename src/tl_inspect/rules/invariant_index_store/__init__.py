"""TLV003 invariant-index-store: a read-modify-write in `T.Parallel` whose index repeats across iterations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tl_inspect.analysis.collisions import ReadModifyWrite, read_modify_writes
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.render import render, render_access, render_store

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
    - tl-inspect H200 measurements (docs/gpu-impact.md): row sum with `O[i] += X[i, j]` in
      `T.Parallel`, 16383/16384 rows wrong; the `T.reduce_sum` form runs at 3980 GB/s with `float4`.
    - tl-inspect H200 measurements (docs/gpu-impact.md): a group sum `acc[i // 8] += V[bx, i]` into a
      fragment ran at 1110 GB/s, the same sum as `T.reduce_sum` over `(N / 8, 8)` at 3271 GB/s (2.9x).
    - docs/tilelang-facts.md, G.3 (`rmw_global`: 8 scalar loads instead of one `uint4`, planner
      `must-scalarize`) and C.2 (`acc[i // 16] += V[i]`: fragment replicated twice, half the threads
      redo the sum).
    """

    code = "TLV003"
    slug = "invariant-index-store"
    severity = "error"
    flags = "a read-modify-write in `T.Parallel` whose index does not advance with the loop (`O[i] += X[i, j]`)"
    measured = (
        "on global memory a race: 16383 of 16384 row sums wrong; in a fragment 1110 vs 3271 GB/s with `T.reduce_sum`"
    )
    fix = (
        "Reduce in a fragment with `T.reduce_sum`/`T.reduce_max` (or `T.atomic_add` across blocks) "
        "instead of `+=` in `T.Parallel`"
    )
    # its findings come from its own analysis of the collisions (analysis/collisions), not from the verdicts
    reports_causes = ("invariant-store",)

    def check(self, ctx: RuleContext) -> None:
        reported: set[int] = set()
        for rmw in read_modify_writes(ctx.facts):
            store = rmw.store
            if store.stmt.line in reported:
                continue
            violation = self._violation(ctx, rmw)
            if violation is not None:
                evidence = [f"TIR: {render_access(store.buffer, store.indices)} = {render(store.value)}"]
                evidence += [f"TIR after tl.VectorizeLoop: {text}" for text in rmw.lowered.texts()[:2]]
                ctx.report(store.stmt.line, violation, evidence=evidence)
                reported.add(store.stmt.line)

    def _violation(self, ctx: RuleContext, rmw: ReadModifyWrite) -> RepeatedIndex | None:
        """What the collision does, None when it is harmless.

        A store that advances with the innermost variable still vectorizes: on a fragment tilelang
        gives each element to one thread (a column sum `acc[j] += X[i, j]` is its efficient form), so
        only a global or shared target with a proven race is reported then."""
        store, lowered = rmw.store, rmw.lowered
        scope = ctx.facts.func.scope_of(store.buffer)
        resolved = ir.Store(store.buffer, store.indices, store.value, store.stmt.dtype, store.stmt.line)
        where = (render_store(resolved), rmw.collision.variables, rmw.collision.per_element, scope, store.buffer)
        if scope in SHARED_OR_GLOBAL:
            race = lowered.race()
            if race is False and not rmw.advances:
                return SerialStore(*where)
            if race or (race is None and not rmw.advances):
                return LostUpdates(*where, threads=race or None)
            return None
        if rmw.advances:
            return None
        if scope in THREAD_PRIVATE and lowered.partitioned():
            return PartialResults(*where)
        return SerialisedReduction(*where, replicas=_replication(ctx, store.buffer), scalar=lowered.lanes() == 1)


@dataclass(frozen=True)
class RepeatedIndex(Violation):
    """Several parallel iterations update one element: what every TLV003 remark starts with."""

    statement: str  # `O[i] += X[i, j]`
    variables: tuple  # the parallel loop variables the index does not advance with
    iterations: int | None  # parallel iterations per element, when known
    scope: str
    buffer: str

    def _collision(self) -> str:
        frozen = ", ".join(f"`{v}`" for v in self.variables)
        return (
            f"`{self.statement}` in `T.Parallel`: the index repeats along {frozen}, so "
            f"{self.iterations or 'several'} parallel iterations update the same element of "
            f"{_scope_word(self.scope)} `{self.buffer}`"
        )


@dataclass(frozen=True)
class LostUpdates(RepeatedIndex):
    """A global or shared element that several threads read, add to and write back: a race."""

    severity: ClassVar[str] = "error"
    threads: tuple | None = None  # two threads of the lowered loop that store to one address

    def message(self) -> str:
        detail = f" (threads {self.threads[0]} and {self.threads[1]} update one address)" if self.threads else ""
        return f"{self._collision()}: threads race on it and updates are lost{detail}"


@dataclass(frozen=True)
class SerialStore(RepeatedIndex):
    """A global or shared element that stays on one thread: correct, but scalar and serial."""

    severity: ClassVar[str] = "warning"

    def message(self) -> str:
        return f"{self._collision()}; each element stays on one thread here, but the store is scalar and serial"


@dataclass(frozen=True)
class PartialResults(RepeatedIndex):
    """A thread-private target of a loop split over threads: each thread sums only its share."""

    severity: ClassVar[str] = "error"

    def message(self) -> str:
        return (
            f"{self._collision()}: the loop is split over threads and `{self.buffer}` is private to each "
            f"thread, so every thread keeps only a partial result"
        )


@dataclass(frozen=True)
class SerialisedReduction(RepeatedIndex):
    """A fragment or private element tilelang keeps correct by running the iterations one by one."""

    severity: ClassVar[str] = "warning"
    replicas: int = 1  # threads holding a copy of the element
    scalar: bool = False  # the lowered store writes one element at a time

    def message(self) -> str:
        if self.scope in THREAD_PRIVATE:
            owners = "every thread, each on its own copy"
        elif self.replicas > 1:
            owners = f"each of the {self.replicas} threads holding a copy of it"
        else:
            owners = "the thread that owns it"
        scalar = " (scalar store)" if self.scalar else ""
        return (
            f"{self._collision()}: tilelang keeps this correct only by running those iterations one after "
            f"another on {owners}{scalar}, instead of a parallel reduction"
        )


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
