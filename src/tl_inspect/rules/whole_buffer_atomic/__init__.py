"""TLV022 whole-buffer-atomic: `T.atomic_add(buffer, per_thread_value)` keeps only thread 0's value
(tilelang #2959)."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.analysis.statements import AtomicAdd
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.render import render


@dataclass(frozen=True)
class WholeBufferAtomic(Violation):
    """A tile atomic whose destination is a whole buffer and whose value differs between threads."""

    op: str  # "atomic_add"
    dst: str
    value: str
    threads: int

    def message(self) -> str:
        return (
            f"`T.{self.op}({self.dst}, {self.value})` with the whole buffer `{self.dst}` as destination and a "
            f"value that differs per thread is lowered as a tile operation over `{self.dst}`'s elements: one "
            f"thread per element updates it, with its own `{self.value}`, and the values of the other threads "
            f"of the {self.threads} are dropped (tilelang #2959)"
        )

    def fix_title(self) -> str:
        return f"Name the element: `T.{self.op}({self.dst}[0], {self.value})` is one atomic per thread"


class WholeBufferAtomicRule(Rule):
    """`T.atomic_add(buffer, value)` with a per-thread value keeps only thread 0's contribution.

    ## What it does
    Flags a tile atomic (`T.atomic_add`, `T.atomic_max`, `T.atomic_min`) whose destination is a whole
    buffer (or a region) and whose source is a single value that depends on the thread, the
    "parallel reduction" form `T.atomic_add(Out, A[tid])`. An element destination (`Out[0]`) and a
    source that is the same for every thread stay quiet.

    ## Why is this wrong?
    tilelang treats a region destination as a tile operation over the region's elements and maps
    them onto threads, so a one-element `Out` is updated by one thread with its own value. tilelang
    0.1.15 lowers `T.atomic_add(Out, A[tid])` (128 threads, `Out` of shape (1,)) to
    `if (threadIdx.x < 1) { AtomicAdd(&Out[0], A[0], 0); }`: the sum is `A[0]` instead of the sum of
    `A`. `T.atomic_add(Out[0], A[tid])` lowers to `AtomicAdd(&Out[0], A[threadIdx.x])` in every thread.
    On an H200, 128 threads adding the values 1 to 128 this way left `Out` at 1, not 8256; with `Out[0]`
    it was 8256.

    ## Example
    ```python
    tid = T.get_thread_binding()
    T.atomic_add(Out, A[tid])      # only thread 0 adds
    ```

    ## Use instead
    ```python
    tid = T.get_thread_binding()
    T.atomic_add(Out[0], A[tid])   # one atomic per thread
    ```

    ## References
    - tilelang issue #2959 ("`T.atomic_add`/`atomic_max`/`atomic_min` silently drop all threads but 0
      for the documented whole-buffer parallel reduction form"), open: measured 1 instead of 128 for a
      sum of ones on an L40S.
    - Reproduced on tilelang 0.1.15 from the lowered CUDA (above, `bad_atomic.py`).
    """

    code = "TLV022"
    slug = "whole-buffer-atomic"
    severity = "error"
    flags = (
        "`T.atomic_add(Out, A[tid])`: a whole-buffer destination with a per-thread value, lowered so that only "
        "thread 0 adds (tilelang #2959)"
    )
    measured = "sum of 1..128: 1 instead of 8256 on an H200"
    fix = "Name the element of the destination (`Out[0]`), so that every thread issues its own atomic"

    def check(self, ctx: RuleContext) -> None:
        facts = ctx.facts
        threads = set(facts.thread_vars)
        for op in facts.tile_ops:
            if not isinstance(op, AtomicAdd) or op.line is None or not op.regions:
                continue
            args = op.call[2]
            value = next((a for a in args if not (a[0] == "call" and a[1] == "tl.region")), None)
            if value is None or not ir.vars_of(facts.resolve(value)) & threads:
                continue
            name = op.op.replace("atomic", "atomic_", 1) if not op.op.startswith("atomic_") else op.op
            ctx.report(op.line, WholeBufferAtomic(name, op.regions[0].buffer, render(value), facts.thread_count))
