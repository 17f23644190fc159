"""TLV021 truncated-fragment-loop: a `T.Parallel` loop cut to the extent of a smaller loop over the same
fragment (tilelang #2957)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.tir import nodes as ir


@dataclass(frozen=True)
class TruncatedLoop(Violation):
    """A parallel loop whose layout covers fewer iterations than the loop has."""

    extent: tuple
    covered: tuple
    fragments: tuple

    def message(self) -> str:
        size = " x ".join(map(str, self.extent))
        kept = " x ".join(map(str, self.covered))
        return (
            f"This `T.Parallel` loop has {size} iterations but tilelang laid it out for {kept}: the layout "
            f"of {', '.join(f'`{f}`' for f in self.fragments)}, fixed by a smaller loop over the same fragment, "
            f"gates it to the first {kept}, and the other {math.prod(self.extent) - math.prod(self.covered)} "
            f"iterations are silently dropped (tilelang #2957)"
        )


class TruncatedFragmentLoop(Rule):
    """A `T.Parallel` loop silently cut to the extent of a smaller loop over the same fragment.

    ## What it does
    Compares the extent of every `T.Parallel` loop with the loop layout tilelang inferred for it
    (`tl.LayoutInference`): when the layout covers fewer iterations than the loop has, the loop runs
    only the covered ones. That happens when a smaller `T.Parallel` loop over the same fragment came
    first and fixed the fragment's layout, which the larger loop then inherits. Loops whose layout
    covers them, even with padding, stay quiet.

    ## Why is this wrong?
    The kernel compiles with no warning and runs without a fault; the missing iterations just never
    happen. tilelang 0.1.15 lowers
    `for i in T.Parallel(100): f[i] = 5.0` followed by `for i in T.Parallel(256): C[i] = f[i] + 1.0`
    (fragment of 256, 128 threads) to `float f[1]; if (threadIdx.x < 100) { f[0] = 5; C[threadIdx.x] =
    f[0] + 1; }`: `C[100:256]` is never written. With the first loop over 256, every element is written.
    On an H200 the kernel above left 156 of its 256 outputs wrong (`C[99:102]` read
    `[6.0, 0.0, 0.0]`); with the first loop over 256 as well, none.

    ## Example
    ```python
    f = T.alloc_fragment((256,), T.float32)
    for i in T.Parallel(100):
        f[i] = 5.0
    for i in T.Parallel(256):
        C[i] = f[i] + 1.0   # only C[0:100] is written
    ```

    ## Use instead
    ```python
    f = T.alloc_fragment((256,), T.float32)
    for i in T.Parallel(256):
        f[i] = T.if_then_else(i < 100, 5.0, 0.0)   # every loop over `f` has its full extent
    for i in T.Parallel(256):
        C[i] = f[i] + 1.0
    ```

    ## References
    - tilelang issue #2957 ("A `T.Parallel` loop larger than the smallest loop sharing its fragment
      silently drops its out-of-range iterations"), open; fix proposed in PR #3063, which rejects loop
      layouts whose input shape is smaller than the loop extent: the condition this rule checks.
    - Reproduced on tilelang 0.1.15 from the lowered CUDA (above, `bad_truncated.py`).
    """

    code = "TLV021"
    slug = "truncated-fragment-loop"
    severity = "error"
    flags = (
        "a `T.Parallel` loop whose inferred layout covers fewer iterations than it has, because a smaller loop "
        "fixed its fragment's layout: the rest are silently dropped (tilelang #2957)"
    )
    measured = "156 of 256 outputs wrong on an H200"
    fix = "Give every `T.Parallel` loop over the fragment the same extent (guard the smaller one with `T.if_then_else`)"

    def check(self, ctx: RuleContext) -> None:
        nests = _parallel_nests(ctx.facts.func)
        for layout in ctx.kernel.layouts:
            if layout.kind != "loop" or layout.line is None or layout.line not in nests:
                continue
            loops, fragments = nests[layout.line]
            extents = tuple(ir.int_value(loop.extent) for loop in loops)
            if None in extents or None in layout.input_shape or len(extents) != len(layout.input_shape):
                continue
            if all(have >= want for have, want in zip(layout.input_shape, extents)):
                continue
            ctx.report(layout.line, TruncatedLoop(extents, tuple(layout.input_shape), tuple(sorted(fragments))))


def _parallel_nests(func: ir.IRFunc) -> dict:
    """Line of each outermost `T.Parallel` nest -> (its parallel loops, the fragments its body touches);
    only nests that touch a fragment, and lines that start one nest."""
    nests: dict = {}
    repeated: set = set()
    for stmt, ancestors in ir.walk(func.body):
        if not isinstance(stmt, ir.For) or stmt.kind != "parallel":
            continue
        if any(isinstance(a, ir.For) and a.kind == "parallel" for a in ancestors):
            continue
        loops, inner = [stmt], stmt
        while len(inner.body) == 1 and isinstance(inner.body[0], ir.For) and inner.body[0].kind == "parallel":
            inner = inner.body[0]
            loops.append(inner)
        fragments = _fragments(stmt, func)
        if not fragments or stmt.line is None:
            continue
        if stmt.line in nests:
            repeated.add(stmt.line)
        nests[stmt.line] = (tuple(loops), fragments)
    for line in repeated:
        nests.pop(line)
    return nests


def _fragments(loop: ir.For, func: ir.IRFunc) -> set:
    names: set = set()
    for stmt, _ in ir.walk(loop.body):
        if isinstance(stmt, ir.Store):
            names.add(stmt.buffer)
        for expr in ir.own_exprs(stmt):
            names.update(load[1] for load in ir.loads_of(expr))
    return {name for name in names if func.scope_of(name) == "local.fragment"}
