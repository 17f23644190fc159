"""TLV001 scalarized-load: a global access that measurably costs the kernel, proven by recompiling without its cause."""

from __future__ import annotations

from tl_inspect.analysis.causes import THREAD_ORDER
from tl_inspect.model import Cause
from tl_inspect.rules import vector_findings
from tl_inspect.rules.base import Rule, RuleContext
from tl_inspect.rules.vector_findings import article, emitted_text, plural


class ScalarizedLoad(Rule):
    """Global access that measurably costs the kernel, proven by rebuilding the kernel without its cause.

    ## What it does
    Every global load and store of the generated CUDA gets a verdict (see docs/verdicts.md): how
    many bits it moves against the widest its pattern allows, how far apart neighbouring threads'
    addresses are, how many elements each thread moves, and what that costs on an H200. This rule
    reports an access when all of these hold:

    * its cost, weighed by its share of the kernel's global bytes, slows the kernel by 1.10x or more;
    * its cause is one this rule owns: one or two elements per thread, a transposed walk
      (neighbouring threads a row apart), an offset or a row length off the vector boundary, a
      per-thread `T.serial` loop over contiguous elements, a layout fixed by `T.annotate_layout`
      or by an earlier loop;
    * the proof holds: tl-inspect rebuilt the kernel with that one cause removed (rows padded,
      offset aligned, fewer threads, loop order swapped, `T.vectorized`, annotation dropped),
      lowered it again, and the same access came out wider or coalesced. The finding shows the
      change and the CUDA line of the access before and after.

    Width alone is never reported: 64-bit accesses, 64-bit fp8 stores, 32-bit coalesced loads
    measured as fast as 128-bit ones. Bounds checks (lane-dependent-predicate) and read-modify-write
    stores (invariant-index-store) are owned by their rules, whatever the selection.

    ## Why is this slow?
    Coalescing and work per thread decide the cost, not vector width (docs/gpu-impact.md, narrow
    accesses, measured on an H200 against the same kernel without the cause):

    * a KV-cache append storing into a cache with tokens innermost: neighbouring threads 32 KiB
      apart, 6.59x (286 vs 1884 GB/s); 8 contiguous fp16 per thread walked by a `T.serial` loop: 4.08x;
    * one element per thread (`T.Parallel(256)` over 256 threads): 2.01x;
    * coalesced 16-bit accesses: rows of 4095 fp16 1.22x, a thread-strided `T.annotate_layout` 1.10x,
      an offset of one element 1.09x.

    ## Example
    ```python
    for t, d in T.Parallel(block_t, D):      # Cache laid out [heads, D, S]: tokens innermost
        Cache[h, d, pos + bt * block_t + t] = K[bt * block_t + t, h, d]
    ```

    ## Use instead
    ```python
    k_reg = T.alloc_fragment((block_t, D), T.bfloat16)
    tile = T.alloc_shared((D, block_t), T.bfloat16)
    T.copy(K[bt * block_t:(bt + 1) * block_t, h, 0:D], k_reg)
    for t, d in T.Parallel(block_t, D):      # transpose in shared memory
        tile[d, t] = k_reg[t, d]
    T.copy(tile, Cache[h, 0:D, pos + bt * block_t:pos + (bt + 1) * block_t])   # TMA store
    ```
    Give each thread 8 contiguous fp16 (a tile of threads x 8 elements), pad rows to a multiple of
    the vector width (or state `T.assume(N % 8 == 0)` for a run-time length that always is one),
    keep offsets 16-byte aligned, and write per-thread loops as `T.vectorized`.

    ## References
    * docs/gpu-impact.md (the H200 measurements; `benchmarks/gpu_narrow.py` reproduces them)
    * docs/verdicts.md (verdicts, the closed list of causes, the cost model, proofs)
    """

    code = "TLV001"
    slug = "scalarized-load"
    severity = "warning"
    flags = ("a global access that costs the kernel 1.10x or more, with its cause proven by rebuilding the kernel "
             "without it: one or two elements per thread, a transposed walk, rows or offsets off the vector "
             "boundary, a per-thread `T.serial` loop, a layout fixed by `T.annotate_layout`; never vector width "
             "alone")
    measured = ("KV-cache store with neighbouring threads 32 KiB apart 6.59x; `T.serial(8)` per thread 4.08x; one "
                "element per thread 2.01x; rows of 4095 fp16 1.22x; 64-bit, fp8 64-bit and 32-bit coalesced "
                "accesses 1.00-1.01x (not reported)")
    fix = "Give each thread contiguous, 16-byte aligned elements, with neighbouring threads on neighbouring ones"

    def check(self, ctx: RuleContext) -> None:
        vector_findings.report(ctx, message, fix)


def message(cause: Cause, accesses: list) -> str:
    return f"{emitted_text(accesses)}: {cause_text(cause)}."


def cause_text(cause: Cause) -> str:
    """The cause in the user's terms, from its fields."""
    kind = cause.kind
    if kind == "few-per-thread":
        if not cause.loop:
            return (f"consecutive elements go to consecutive threads through `{cause.lane_var}`, so each thread "
                    f"moves one element at a time")
        return (f"{cause.loop} over {cause.threads} threads gives each thread "
                f"{plural(cause.elements, 'element')}, too few for {cause.width}-element vectors")
    if kind == "transposed":
        return (f"{cause.index} has stride {cause.stride} along `{cause.lane_var}`, the variable neighbouring "
                f"threads step through (a transposed walk)")
    if kind == "misaligned-offset":
        if cause.offset_value is not None:
            return (f"{cause.index} starts {plural(cause.offset_value % cause.width, 'element')} past "
                    f"{article(cause.width)} {cause.width}-element boundary, so no {cause.width}-element group is "
                    f"aligned")
        return (f"{cause.index} starts at the run-time offset {cause.offset}, which the compiler cannot prove "
                f"to be a multiple of {cause.width}")
    if kind == "misaligned-rows":
        if cause.row_value is not None:
            return (f"rows of {cause.buffer} hold {cause.row} elements, not a multiple of {cause.width}, so most "
                    f"rows start off {article(cause.width)} {cause.width}-element boundary")
        return (f"rows of {cause.buffer} have the run-time length {cause.row}, which the compiler cannot prove "
                f"to be a multiple of {cause.width}")
    if kind == "serial-loop":
        return f"`{cause.lane_var}` is a {cause.loop} loop over contiguous elements, which is never vectorized"
    if kind == "fragment-layout":
        held = f"holds runs of {plural(cause.elements, 'element')} per thread" if cause.elements else (
            "gets a thread-strided layout")
        origin = cause_text(cause.origin) if cause.origin else "its layout was fixed there"
        return f"fragment {cause.buffer} {held}, a layout fixed by the {cause.loop} at line {cause.loop_line}, where {origin}"
    if kind == "annotated-layout":
        return (f"the T.annotate_layout of {cause.buffer} gives each thread elements a stride apart, never "
                f"{cause.width} contiguous ones")
    if kind == "interleaved":
        return f"{cause.index} is interleaved with the loop's other {cause.buffer} accesses"
    return f"{cause.index} is not affine in `{cause.lane_var}`"


def fix(cause: Cause) -> str:
    kind = cause.kind
    if kind == "fragment-layout" and cause.origin is not None:
        return fix(cause.origin)
    if kind == "few-per-thread":
        if not cause.loop:
            return (f"give each thread {cause.width} contiguous elements: index with {cause.lane_var} * "
                    f"{cause.width} + k in a T.vectorized({cause.width}) loop")
        return (f"give each thread {cause.width} contiguous elements: a tile of {cause.threads * cause.width} "
                f"elements for {cause.threads} threads, or fewer threads")
    if kind == "transposed" and cause.loop == THREAD_ORDER:
        return (f"bind threadIdx.x to the index that walks {cause.buffer} contiguously: swap the two thread "
                f"dimensions (threads=(y, x) and the T.get_thread_binding(0)/(1) calls)")
    if kind == "transposed":
        return ("stage the tile through shared memory: write it there transposed, then move it to global memory "
                "with T.copy (the only transposed form measured at full speed)")
    if kind == "misaligned-offset":
        return ("keep vector accesses 16-byte aligned: copy an aligned window with T.copy into shared memory "
                "and shift it there")
    if kind == "misaligned-rows":
        if cause.row_value is not None:
            padded = -(-cause.row_value // cause.width) * cause.width
            return (f"pad the row length to a multiple of {cause.width} ({cause.row} -> {padded}) and slice the "
                    f"padding off outside the kernel")
        return (f"if {cause.row} is always a multiple of {cause.width}, say so with "
                f"T.assume({cause.row} % {cause.width} == 0); otherwise pad the rows")
    if kind == "serial-loop":
        return f"write the per-thread loop as T.vectorized({cause.width})"
    if kind == "annotated-layout":
        return (f"drop the T.annotate_layout of {cause.buffer} (tilelang then gives each thread contiguous "
                f"elements), or annotate a layout that does")
    return ScalarizedLoad.fix
