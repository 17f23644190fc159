"""TLV002 lane-dependent-predicate: a bounds check that varies inside a vector group, forcing scalar code."""

from __future__ import annotations

from tl_inspect.rules._verdicts import VerdictRule


class LaneDependentPredicate(VerdictRule):
    """Bounds check that varies inside a vector group, so the loop runs one element at a time.

    ## What it does
    Reports a global access that a bounds check keeps narrow: the check compares each element's
    index with a bound that is not a multiple of the vector width (a length of 2047, a run-time
    `N`, a user's `if k < N - 1`), so it is true for some elements of a vector group and false for
    others, and tilelang moves each element on its own (a serial `*_s` loop, or a thread-strided
    layout). Most often the check is not in the user's code at all: tilelang adds it from the
    buffer's length. The message names the check, the bound and the width; a bound that is a
    multiple of the width is clean (tilelang hoists the check to thread level and keeps `uint4`:
    N=4104 with 8 x fp16).

    Every verdict of the kernel's accesses is in the JSON and the HTML access table; this rule owns
    the bounds-check cause, so deselecting it hides these findings without moving them to
    scalarized-load.

    ## Why is this slow?
    Every lane is tested and moved on its own. Measured on an H200 (docs/gpu-impact.md, narrow
    accesses): an fp16 add over 2^28 - 1 elements, 8 per thread, runs 2.62x slower than over 2^28
    (1660 vs 4354 GB/s; neighbouring threads 16 B apart, 16-bit accesses); with a run-time `N` and no `T.assume`, 2.51x;
    a user's own check `< N - 1` in front of coalesced accesses, 1.12x; the ragged tail of a
    fragment `T.copy`, 1.09x. A finding is reported when the kernel-level estimate is 1.10x or more
    and the proof holds: tl-inspect rebuilt the kernel with the length padded to the vector width
    (or `T.assume(N % 8 == 0)` for a run-time length) and the same access came out wider.

    ## Example
    ```python
    N = 2047                        # or N = T.dynamic("N")
    for i in T.Parallel(1024):      # 8 fp16 per thread, checked lane by lane against 2047
        C[bx * 1024 + i] = A[bx * 1024 + i] + B[bx * 1024 + i]
    ```

    ## Use instead
    Pad the data to a multiple of the vector width (N=2048) and ignore the padding, or split the
    loop into an aligned body and a separate tail:
    ```python
    body = N // 8 * 8
    for i in T.Parallel(1024):      # uint4: the check is uniform over each 8-lane group
        if bx * 1024 + i < body:
            C[bx * 1024 + i] = A[bx * 1024 + i] + B[bx * 1024 + i]
    for i in T.Parallel(8):         # the last N - body elements, scalar but tiny
        if bx == 0 and body + i < N:
            C[body + i] = A[body + i] + B[body + i]
    ```
    For a run-time length that is always a multiple of the width, state it: `T.assume(N % 8 == 0)`
    restores the `uint4` accesses. Both forms were verified to compile to 128-bit accesses with
    tilelang 0.1.15 (the GOOD examples below).

    ## References
    * docs/gpu-impact.md (the H200 measurements; `benchmarks/gpu_narrow.py` reproduces them)
    * docs/verdicts.md (verdicts, causes, the cost model, proofs)
    * tilelang 0.1.15: `tl.LegalizeSafeMemoryAccess` adds the check, `tl.VectorizeLoop` falls back
      to a serial `*_s` loop when it varies inside a vector group
    """

    code = "TLV002"
    slug = "lane-dependent-predicate"
    severity = "warning"
    flags = (
        "a bounds check (usually tilelang's own, from a length that is not a multiple of the vector width) "
        "that differs inside a vector group, so each element is checked and moved on its own; proven by "
        "padding the length or `T.assume(N % 8 == 0)`"
    )
    measured = "fp16 add over 2^28 - 1: 2.62x (2^28: full speed); run-time `N`: 2.51x; a user's `< N - 1`: 1.12x"
    fix = "Pad the length to a multiple of the vector width, or split the loop into an aligned body and a tail"
    reports_causes = ("tail-guard",)
