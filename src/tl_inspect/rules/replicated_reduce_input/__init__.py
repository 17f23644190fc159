"""TLV009 replicated-reduce-input: the tile a `T.reduce_*` reads is replicated across threads."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tl_inspect.analysis.statements import Reduce
from tl_inspect.model import Layout
from tl_inspect.rules.base import Rule, RuleContext, Violation

# a fragment replicated this much per thread is a whole row, not the few broadcast values a reduction
# output or a row statistic legitimately keeps on every thread
MIN_ELEMENTS_PER_THREAD = 16


class ReplicatedReduceInput(Rule):
    """The tile a `T.reduce_*` reads has a layout replicated across threads, so every thread holds whole rows.

    ## What it does
    Reads the layouts tilelang inferred and flags the source fragment of a `T.reduce_*` whose layout
    is replicated (several threads hold the same element) while each thread holds at least 16
    elements of it. The fragments that share that layout, usually the tile the row was loaded into,
    are named in the message.

    ## Why is this slow?
    A norm kernel that keeps `(block_m, N_padded)` rows in fragments and reduces `dim=1` gets a
    partitioned layout only when the row length suits the thread count. For a padded length that is
    not a power of two (1152 padded to 1280, 6272 to 6400) with `block_m > 1`, tilelang 0.1.15 falls
    back to a layout replicated across threads: with `block_m = 16` and 256 threads, each thread
    holds a whole 1280-element row (`float x[1280]; float xsq[1280];` in CUDA, far beyond the
    register file, so it spills), 16 threads load and square the same row, and the output is still
    correct, so no test notices. On an H200 the RMSNorm below ran 8.3x slower than the same kernel
    with `block_m = 1` (0.363 ms, 208 GB/s, against 0.044 ms, 1734 GB/s, for 16384 x 1152 fp16);
    TileOPs measured 5-16x on its norm kernels.

    ## Example
    ```python
    # N = 1152, N_padded = 1280, block_m = 16, threads = 256
    x = T.alloc_fragment((block_m, N_padded), T.float32)
    xsq = T.alloc_fragment((block_m, N_padded), T.float32)
    ss = T.alloc_fragment((block_m,), T.float32)
    ...
    T.reduce_sum(xsq, ss, dim=1)
    ```

    ## Use instead
    One row per block (`block_m = 1`): the row's length then only has to split over the threads,
    and the layout is partitioned (5 elements per thread above, the 0.044 ms variant). Padding that
    row to 2048 also gives each of the 256 threads 8 elements, one 128-bit access:
    ```python
    # N = 1152, N_padded = 2048, block_m = 1, threads = 256
    x = T.alloc_fragment((1, N_padded), T.float32)
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md, `benchmarks/gpu_rules.py`): 8.3x, above.
    - TileOPs #1715 (norm kernels collapse to a replicated layout on non-power-of-two rows, 5-16x) and
      its fix #1716 (`block_m = 1`); tilelang #1729 (small fragments replicated across threads).
    """

    code = "TLV009"
    slug = "replicated-reduce-input"
    severity = "warning"
    flags = (
        "the tile a `T.reduce_*` reads has a layout replicated across threads (norm kernels on non-power-of-2 "
        "rows with `block_m > 1`)"
    )
    measured = "RMSNorm 16384x1152: 208 vs 1734 GB/s (8.3x)"
    fix = "Reduce one row per block (`block_m = 1`), or pad rows to a length the thread count splits evenly"

    def check(self, ctx: RuleContext) -> None:
        fragments = {
            layout.name: layout
            for layout in ctx.kernel.layouts
            if layout.kind == "buffer" and layout.layout_type == "Fragment"
        }
        reported: set[str] = set()
        for reduce in ctx.facts.tile_ops:
            if not isinstance(reduce, Reduce) or not reduce.line:
                continue
            source, reduce_line = reduce.src.buffer, reduce.line
            layout = fragments.get(source)
            if layout is None or source in reported or not _collapsed(layout) or not layout.line:
                continue
            alike = [
                other.name
                for other in fragments.values()
                if other.name != source
                and _collapsed(other)
                and (other.thread, other.replicate) == (layout.thread, layout.replicate)
            ]
            # one finding per replicated layout: a layer norm reduces both `x` and `x * x`
            reported.update([source, *alike])
            ctx.report(
                layout.line,
                ReplicatedTile(
                    source,
                    layout.input_shape,
                    reduce_line,
                    layout.replicate,
                    layout.thread_size,
                    _per_thread(layout),
                    tuple(alike),
                ),
                evidence=[f"layout: {_describe(layout)}"],
            )


@dataclass(frozen=True)
class ReplicatedTile(Violation):
    buffer: str  # the input of the reduction
    shape: tuple
    reduce_line: int
    replicate: int  # threads holding each element
    threads: int
    per_thread: int  # elements each thread holds
    alike: tuple  # other fragments with the same replicated layout

    def message(self) -> str:
        also = (
            f"; `{'`, `'.join(self.alike)}` {'shares' if len(self.alike) == 1 else 'share'} the layout"
            if self.alike
            else ""
        )
        return (
            f"`{self.buffer}` {_shape(self.shape)}, the input of the `T.reduce_*` on line {self.reduce_line}, "
            f"is replicated on {self.replicate} threads: each of the {self.threads} threads holds "
            f"{self.per_thread} elements, whole rows that {self.replicate} threads load and compute alike{also}"
        )


def _collapsed(layout: Layout) -> bool:
    return layout.replicate > 1 and _per_thread(layout) >= MIN_ELEMENTS_PER_THREAD


def _per_thread(layout: Layout) -> int:
    return math.prod(layout.output_shape)


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _describe(layout: Layout) -> str:
    return (
        f"Fragment {_shape(layout.input_shape)} -> {_shape(layout.output_shape)} per thread, thread "
        f"`{layout.thread}`, replicate {layout.replicate}"
    )
