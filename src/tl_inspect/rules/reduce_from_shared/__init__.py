"""TLV010 reduce-from-shared: a `T.reduce_*` reads a shared tile that only exists to feed it."""

from __future__ import annotations

import re

from tl_inspect import ir
from tl_inspect.model import STAGE_FRONTEND
from tl_inspect.rules.base import Rule, RuleContext

SHARED_SCOPES = ("shared", "shared.dyn")


class ReduceFromShared(Rule):
    """A `T.reduce_*` reads a shared tile that a `T.copy` filled only to feed the reduction.

    ## What it does
    Flags a `T.reduce_*` whose source is a `T.alloc_shared` buffer when nothing else reads that
    buffer and only `T.copy` writes it: the tile could have been copied into a fragment directly.
    A shared tile that a `T.gemm`, another copy or a loop also reads is left alone.

    ## Why is this slow?
    `T.reduce_*` reduces fragments. Given a shared source, tilelang allocates a fragment
    `<src>_frag` and inserts a shared-to-fragment copy in front of the reduction
    (`float xs_frag[64];` and a `float4` loop reading `xs` in CUDA): the data goes global -> shared ->
    registers instead of global -> registers, with a barrier in between, and the shared tile
    costs occupancy. On an H200 a row sum of 16384 x 1024 fp32 ran 1.11x slower this way (0.0349 ms,
    1925 GB/s) than with `T.copy` into a fragment (0.0314 ms, 2137 GB/s).

    ## Example
    ```python
    xs = T.alloc_shared((block_m, N), T.float32)
    T.copy(X[bx * block_m, 0], xs)
    T.reduce_sum(xs, s, dim=1)
    ```

    ## Use instead
    ```python
    x = T.alloc_fragment((block_m, N), T.float32)
    T.copy(X[bx * block_m, 0], x)
    T.reduce_sum(x, s, dim=1)
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md, `benchmarks/gpu_rules.py`): 1.11x, above.
    - tilelang 0.1.15 `language/reduce_op.py` (`reduce_macro`: the shared-to-fragment branch allocates
      `<src>_frag` and copies into it); docs/tilelang-facts.md, H.2.
    """

    code = "TLV010"
    slug = "reduce-from-shared"
    severity = "warning"
    flags = ("a `T.reduce_*` reading a shared tile that only exists to feed it (tilelang copies it into a fragment "
             "first)")
    measured = "row sum 1925 vs 2137 GB/s (1.11x)"
    fix = "`T.copy` the tile from global memory straight into a fragment and reduce the fragment"

    def check(self, ctx: RuleContext) -> None:
        snapshot = ctx.kernel.snapshot(STAGE_FRONTEND)
        func = snapshot.func() if snapshot else None
        if func is None:
            return
        uses: dict[str, list] = {}
        reduced: set[str] = set()
        for stmt, ancestors in ir.walk(func.body):
            if isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr) == "reduce":
                reduced.add(ir.regions(stmt.expr)[0].buffer)
            for buffer, how, other in _uses(stmt):
                uses.setdefault(buffer, []).append((how, other, ir.stmt_line(stmt, ancestors)))
        for buffer, found in uses.items():
            if func.scope_of(buffer) not in SHARED_SCOPES:
                continue
            # the reduce macro copies a shared source into `<src>_frag`, then reduces that fragment: that
            # copy must be the tile's only reader, and `T.copy`s its only writers
            fragment = f"{buffer}_frag"
            fills = [line for how, _, line in found if how == "copy-in"]
            reads = [(how, dst, line) for how, dst, line in found if how != "copy-in"]
            if not fills or fragment not in reduced or len(reads) != 1 or reads[0][:2] != ("copy-out", fragment):
                continue
            line = reads[0][2]
            if not line:
                continue
            info = func.buffers[buffer]
            declared = f" (declared on line {info.line})" if info.line else ""
            ctx.report(line, f"`T.reduce_*` reads the shared tile `{buffer}`{declared}, which only the "
                                 f"`T.copy` on line {fills[0]} fills: tilelang copies it into a fragment "
                                 f"`{buffer}_frag` before reducing, a second trip through shared memory",
                       evidence=_frag_declaration(ctx.kernel.source, buffer))


def _uses(stmt):
    """(buffer, how, other buffer) for every buffer a statement touches: "copy-in" for a `T.copy`
    destination, "copy-out" for a `T.copy` source (other: the destination), "other" for anything else."""
    if isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr):
        found = ir.regions(stmt.expr)
        if ir.tile_op(stmt.expr) == "copy" and len(found) == 2:
            yield found[0].buffer, "copy-out", found[1].buffer
            yield found[1].buffer, "copy-in", found[0].buffer
            return
        for region in found:
            yield region.buffer, "other", None
        return
    if isinstance(stmt, ir.Store):
        yield stmt.buffer, "other", None
    for expr in ir.own_exprs(stmt):
        for sub in ir.subexprs(expr):
            # a load, or the buffer's data pointer handed to a call, which may read anything
            if sub[0] in ("load", "var"):
                yield sub[1], "other", None


def _frag_declaration(source: str, buffer: str) -> list:
    pattern = re.compile(rf"^\s*\w+ {re.escape(buffer)}_frag\[\d+\];\s*$")
    return [f"CUDA: {line.strip()}" for line in source.splitlines() if pattern.match(line)][:1]
