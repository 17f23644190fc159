"""TLV010 reduce-from-shared: a `T.reduce_*` reads a shared tile that only exists to feed it."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.analysis.initialization import WRITE
from tl_inspect.analysis.statements import Copy, Reduce
from tl_inspect.rules.base import Rule, RuleContext, Violation


@dataclass(frozen=True)
class ReducedSharedTile(Violation):
    """A reduction of a shared tile that a `T.copy` fills only to feed it."""

    buffer: str
    declared_line: int | None
    copy_line: int

    def message(self) -> str:
        declared = f" (declared on line {self.declared_line})" if self.declared_line else ""
        return (
            f"`T.reduce_*` reads the shared tile `{self.buffer}`{declared}, which only the `T.copy` on line "
            f"{self.copy_line} fills: tilelang copies it into a fragment `{self.buffer}_frag` before reducing, "
            f"a second trip through shared memory"
        )


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
    flags = (
        "a `T.reduce_*` reading a shared tile that only exists to feed it (tilelang copies it into a fragment first)"
    )
    measured = "row sum 1925 vs 2137 GB/s (1.11x)"
    fix = "`T.copy` the tile from global memory straight into a fragment and reduce the fragment"

    def check(self, ctx: RuleContext) -> None:
        reduced = {op.src.buffer for op in ctx.facts.tile_ops if isinstance(op, Reduce)}
        uses: dict[str, list] = {}
        for use in ctx.facts.buffer_accesses:
            # "copy-in": a `T.copy` destination; "copy-out": a `T.copy` source (with its destination)
            if isinstance(use.tile_op, Copy):
                how, other = ("copy-in", None) if use.access == WRITE else ("copy-out", use.tile_op.dst.buffer)
            else:
                how, other = "other", None
            uses.setdefault(use.buffer, []).append((how, other, use.line))
        for name, found in uses.items():
            buffer = ctx.facts.buffer(name)
            if buffer is None or not buffer.is_shared:
                continue
            # the reduce macro copies a shared source into `<src>_frag`, then reduces that fragment: that
            # copy must be the tile's only reader, and `T.copy`s its only writers
            fragment = f"{name}_frag"
            fills = [line for how, _, line in found if how == "copy-in"]
            reads = [(how, dst, line) for how, dst, line in found if how != "copy-in"]
            if not fills or fragment not in reduced or len(reads) != 1 or reads[0][:2] != ("copy-out", fragment):
                continue
            if reads[0][2]:
                declaration = ctx.facts.cuda_declaration(fragment)
                ctx.report(
                    reads[0][2],
                    ReducedSharedTile(name, buffer.declared_line, fills[0]),
                    evidence=[f"CUDA: {declaration[1]}"] if declaration else [],
                )
