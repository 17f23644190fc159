"""TLV001 scalarized-load: a global access that measurably costs the kernel, proven by recompiling without its cause."""

from __future__ import annotations

from tl_inspect.rules._verdicts import VerdictRule


class ScalarizedLoad(VerdictRule):
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
    * the evidence holds, of one of two kinds. A rebuild: tl-inspect rebuilt the kernel with that
      one cause removed (rows padded, offset aligned, fewer threads, loop order swapped,
      `T.vectorized`, annotation dropped), lowered it again, and the same access came out wider or
      coalesced; the finding shows the change and the CUDA line of the access before and after. Or
      the launch and its index algebra, where no rewrite of one access can show the fix: a thread
      that walks a row of its own (one thread per row) or a lone working thread, priced against the
      kernel's floor, reported when spreading the work gains the whole kernel 1.10x or more.

    Width alone is never reported: 64-bit accesses, 64-bit fp8 stores, 32-bit coalesced loads
    measured as fast as 128-bit ones. Bounds checks (lane-dependent-predicate) and read-modify-write
    stores (invariant-index-store) are owned by their rules, whatever the selection.

    ## Why is this slow?
    Coalescing and work per thread decide the cost, not vector width (docs/gpu-impact.md, narrow
    accesses, measured on an H200 against the same kernel without the cause):

    * a KV-cache append storing into a cache with tokens innermost: neighbouring threads 32 KiB
      apart, 6.59x (286 vs 1884 GB/s); 8 contiguous fp16 per thread walked by a `T.serial` loop: 4.08x;
    * one element per thread (`T.Parallel(256)` over 256 threads): 2.01x;
    * one thread per row, walking it in `T.serial`: a row sum over 8192 rows of 16384 fp32 1083 us
      against a floor of 129 us (8.4x); a softmax over 16 rows of 16384 fp32 2675 us against 4.3 us;
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
    flags = (
        "a global access that costs the kernel 1.10x or more, with its cause proven by rebuilding the kernel "
        "without it: one or two elements per thread, a transposed walk, rows or offsets off the vector "
        "boundary, a per-thread `T.serial` loop, a layout fixed by `T.annotate_layout`; never vector width "
        "alone"
    )
    measured = (
        "KV-cache store with neighbouring threads 32 KiB apart 6.59x; `T.serial(8)` per thread 4.08x; one "
        "element per thread 2.01x; rows of 4095 fp16 1.22x; 64-bit, fp8 64-bit and 32-bit coalesced "
        "accesses 1.00-1.01x (not reported)"
    )
    fix = "Give each thread contiguous, 16-byte aligned elements, with neighbouring threads on neighbouring ones"
    reports_causes = (
        "few-per-thread",
        "transposed",
        "misaligned-offset",
        "misaligned-rows",
        "serial-loop",
        "annotated-layout",
        "fragment-layout",
        "interleaved",
        "non-affine",
        "lone-thread",
        "row-per-thread",
    )
