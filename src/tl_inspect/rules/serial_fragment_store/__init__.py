"""TLV023 serial-fragment-store: a fragment written out from a `T.serial` loop, where every thread
stores its own element over every cell (tilelang #2396)."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.tir import nodes as ir

SEQUENTIAL = ("serial", "unrolled")


@dataclass(frozen=True)
class SerialFragmentStore(Violation):
    """A store of a thread-distributed fragment element indexed by a sequential loop variable."""

    dst: str
    fragment: str
    loop_var: str
    loop_kind: str

    def message(self) -> str:
        return (
            f"`{self.fragment}` is a fragment spread across the block's threads, but this store reads it at an "
            f"index of the {self.loop_kind} loop variable `{self.loop_var}`, which every thread runs in full: "
            f"tilelang lowers the read to each thread's own element and lets every thread whose element "
            f"comes at or before the cell store into `{self.dst}`, so the cells race and hold another "
            f"thread's value (tilelang #2396)"
        )


class SerialFragmentStoreRule(Rule):
    """A fragment read at a `T.serial` (or `T.grid`) index and stored to memory: threads race on every cell.

    ## What it does
    Flags a store to global or shared memory, outside any `T.Parallel` loop, whose value reads a
    `T.alloc_fragment` buffer at an index that uses the variable of a sequential loop (`T.serial`,
    `T.grid`, `T.unroll`). A fragment whose layout gives every thread every element (fully
    replicated) stays quiet, as do `T.Parallel` loops and `T.copy`.

    ## Why is this wrong?
    A fragment's elements live in different threads; a sequential loop runs in every thread. tilelang
    0.1.15 lowers `for j in T.serial(128): B[j] = f[j]` (a fragment of 128 over 128 threads) to
    `for (j = 0; j < 128; ++j) if (threadIdx.x <= j) B[j] = f[0];`: each thread stores its *own*
    element into every cell from its index on, so `B[j]` ends up holding the element of whichever
    thread wrote last, not `f[j]`. It compiles without a warning; `T.grid(16, 16)` over a 2-D
    fragment gives the same `if (threadIdx.x <= ...)` pattern.
    On an H200, 127 of the 128 outputs were wrong in each of 5 runs; written with `T.Parallel`, none was.

    ## Example
    ```python
    f = T.alloc_fragment((128,), T.float32)
    for i in T.Parallel(128):
        f[i] = A[i] * 2.0
    for j in T.serial(128):
        B[j] = f[j]          # every thread stores its own f element
    ```

    ## Use instead
    ```python
    for j in T.Parallel(128):
        B[j] = f[j]          # or T.copy(f, B)
    ```

    ## References
    - tilelang issue #2396 ("serial write of a fragment to global -> silently wrong (threads
      race-write each cell)", as PR #2462 describes it); that PR narrowed its fix to #2393 and left
      #2396 open, because T.grid and T.serial loops cannot be told apart at that pass.
    - Reproduced on tilelang 0.1.15 from the lowered CUDA (above, `bad_serial_store.py`).
    """

    code = "TLV023"
    slug = "serial-fragment-store"
    severity = "error"
    flags = (
        "a fragment read at a `T.serial`/`T.grid` index and stored to memory: every thread stores its own "
        "element over the cells, which race (tilelang #2396)"
    )
    measured = "127 of 128 outputs wrong on an H200"
    fix = (
        "Write the fragment out with `T.Parallel` (or `T.copy(fragment, dst)`), whose iterations map to the owning "
        "threads"
    )

    def check(self, ctx: RuleContext) -> None:
        facts = ctx.facts
        for store in facts.stores:
            dst = facts.buffer(store.buffer)
            if dst is None or dst.is_register or store.nest or store.line is None:
                continue
            sequential = {loop.var: loop for loop in store.loops if loop.kind in SEQUENTIAL}
            if not sequential:
                continue
            for load in ir.loads_of(store.value):
                fragment = facts.buffer(load[1])
                if fragment is None or fragment.scope != "local.fragment" or _replicated(ctx, fragment.name):
                    continue
                used = [v for index in load[2] for v in ir.vars_of(facts.resolve(index)) if v in sequential]
                if used:
                    loop = sequential[used[0]]
                    ctx.report(store.line, SerialFragmentStore(dst.name, fragment.name, loop.var, loop.kind))
                    break


def _replicated(ctx: RuleContext, name: str) -> bool:
    """Every thread of the block holds every element of the fragment."""
    layout = next((lay for lay in ctx.kernel.layouts if lay.kind == "buffer" and lay.name == name), None)
    return layout is not None and layout.replicate >= ctx.facts.thread_count
