"""TLV004 missing-clear: an accumulator updated, or a buffer read, before anything initialises it."""

from __future__ import annotations

import re

from tl_inspect import ir
from tl_inspect.model import STAGE_FRONTEND
from tl_inspect.analysis.initialization import (READ, SHARED_SCOPES, first_accesses,
                                                 uninitialised)
from tl_inspect.rules.base import Rule, RuleContext

REDUCE_FIX = ("Initialise the output before the first `T.reduce_*(..., clear=False)` with the reduction's "
              "identity (`T.clear` for a sum, `T.fill(m, -T.infinity(dtype))` for a max), or drop `clear=False`")
READ_FIX = ("Initialise `{buffer}` before its first read with the value the first iteration expects: "
            "`T.fill({buffer}, -T.infinity(dtype))` for a running max, `T.clear({buffer})` for a running sum, "
            "or a `T.copy` into it")
SHARED_FIX = ("Zero the shared accumulator before the first atomic add or `+=`: `T.clear(buf)`, or a store of 0 "
              "by one thread (`if tk == 0: buf[tn] = 0`) ahead of the accumulation")


class MissingClear(Rule):
    """An accumulator is updated with `+=` (or `T.gemm`), or a buffer read, before anything initialises it.

    ## What it does
    Follows every `T.alloc_fragment` / `T.alloc_local` buffer through the kernel in program order and
    flags its first access when that access reads it: an accumulation (`acc[i] += ...` in `T.Parallel`,
    `T.serial`, `T.Pipelined`, a `T.gemm` without `clear_accum=True`, a `T.reduce_*(..., clear=False)`)
    or a plain read (`T.copy(scores_max, scores_max_prev)`, `acc_o[i, j] *= scale[i]`), when no
    `T.clear`, `T.fill`, `T.copy`, plain store, gemm or reduce output has written the buffer before.
    A buffer whose address is handed to a call (`T.address_of`, `buf.data`, a writing `T.access_ptr`)
    or that receives a `T.tvm_thread_allreduce` result counts as written. Reads in a branch of
    `T.if_then_else`, or under an `if` that tests a sequential loop (`if k > 0:`), may be skipped on
    the first iteration and are not flagged. `T.alloc_var` scalars start initialised and are not flagged.

    `T.alloc_shared` buffers are checked only for a read-modify-write (`T.atomic_add(S[i], v)`,
    `S[i] += v`) that is their first access: other threads, TMA or asynchronous copies may fill shared
    memory in ways a plain read cannot tell apart.

    ## Why is this wrong?
    Fragments and locals are registers: `T.alloc_fragment((M, N), "float32")` becomes
    `float acc[128];` in CUDA with no initialiser, so the sum starts from whatever the registers held
    and the result is garbage that changes from run to run. A running max copied to `scores_max_prev`
    before its first `T.fill(scores_max, -T.infinity(...))` feeds garbage into the first rescale
    (`exp2(garbage - max)` can be `inf`, and `inf * 0` is NaN). Shared memory is not zeroed either: a
    split-K reduction that `T.atomic_add`s into `C_shared` without zeroing it first adds onto what the
    previous block left there. tilelang's own `tl.VerifyBufferInit` prints 'Buffer read before
    initialization' on stderr, but without a source line for the `T.Parallel` case, not for shared
    memory, and with false alarms on `T.alloc_var`.

    ## Example
    ```python
    acc = T.alloc_fragment((block_M, block_N), "float32")
    for k in T.serial(num_k):
        for i, j in T.Parallel(block_M, block_N):
            acc[i, j] += A[i, k * block_N + j]
    ```
    ```python
    for k in T.Pipelined(num_k):
        T.copy(scores_max, scores_max_prev)  # nothing has written scores_max yet
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
    ```
    ```python
    C_shared = T.alloc_shared((BLOCK_N,), "float32")
    T.atomic_add(C_shared[tn], partial[0])
    ```

    ## Use instead
    ```python
    acc = T.alloc_fragment((block_M, block_N), "float32")
    T.clear(acc)
    for k in T.serial(num_k):
        for i, j in T.Parallel(block_M, block_N):
            acc[i, j] += A[i, k * block_N + j]
    ```
    or `T.gemm(A_s, B_s, acc, clear_accum=(k == 0))` / `T.gemm(..., clear_accum=True)` for a single
    GEMM; `T.fill(scores_max, -T.infinity(accum_dtype))` before the loop for a running max; and
    `if tk == 0: C_shared[tn] = 0` (or `T.clear(C_shared)`) before the first atomic add.

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md): a split-K style `acc[i, j] += ...` over 16 steps
      into a 128x128 fragment gave 3157 of 16384 wrong outputs without `T.clear`, none with it.
    - docs/tilelang-facts.md, G.4 (`splitk_noclear`: `float acc[128];` then `acc += ...` in CUDA) and I
      (`T.alloc_var` starts at zero).
    - tilelang examples: flash attention forward initialises `scores_max` with
      `T.fill(scores_max, -T.infinity(accum_dtype))`; the split-K GEMV zeroes `C_shared[tn]` under
      `if tk == 0:` before `T.atomic_add`.
    """

    code = "TLV004"
    slug = "missing-clear"
    severity = "error"
    flags = ("a fragment or local buffer read or accumulated into (`+=`, `T.gemm`, `T.reduce_*(clear=False)`) "
             "before anything initialises it, or a shared buffer whose first access is an atomic add")
    measured = "3157 of 16384 outputs wrong"
    fix = ("Initialise the accumulator first: `T.clear(acc)` or `T.fill(acc, 0)`, or `clear_accum=True` on "
           "the first `T.gemm`")

    def check(self, ctx: RuleContext) -> None:
        snapshot = ctx.kernel.snapshot(STAGE_FRONTEND)
        func = snapshot.func() if snapshot else None
        if func is None:
            return
        for first in first_accesses(func).values():
            if first.line and uninitialised(func, first):
                self._report(ctx, func, first.buffer, first.access, first.what, first.stmt, first.line)

    def _report(self, ctx: RuleContext, func: ir.IRFunc, buffer: str, access: str, what: str, stmt,
                line: int) -> None:
        info = func.buffers[buffer]
        declared = f" (declared on line {info.line})" if info.line else ""
        fix = None
        if info.scope in SHARED_SCOPES:
            message = (f"{what} shared buffer `{buffer}`{declared} before anything writes it: shared memory "
                       f"starts uninitialised, so the accumulation starts from garbage")
            fix = SHARED_FIX
        elif access == READ:
            kind = "fragment" if info.scope == "local.fragment" else "local buffer"
            message = (f"`{buffer}` is read by {what} before anything writes it: the {kind}{declared} starts "
                       f"uninitialised, so the read returns garbage")
            fix = READ_FIX.format(buffer=buffer)
        else:
            kind = "fragment" if info.scope == "local.fragment" else "local buffer"
            message = (f"{what} {kind} `{buffer}`{declared} before anything writes it: "
                       f"the registers start uninitialised, so the accumulation starts from garbage")
            if what.startswith("`T.reduce_"):
                fix = REDUCE_FIX
        evidence = [f"TIR: {_render_stmt(stmt)}"]
        evidence += _cuda_declaration(ctx.kernel.source, buffer)
        if any(f"`{buffer}` is read before anything writes it" in w for w in ctx.kernel.warnings):
            evidence.append(f"tilelang VerifyBufferInit: `{buffer}` is read before anything writes it")
        ctx.report(line, message, evidence=evidence, fix=fix)


def _render_stmt(stmt) -> str:
    if isinstance(stmt, ir.Store):
        return f"{stmt.buffer}[{', '.join(ir.render(i) for i in stmt.indices)}] = {ir.render(stmt.value)}"
    if isinstance(stmt, ir.Eval):
        return ir.render(stmt.expr)
    return type(stmt).__name__


def _cuda_declaration(source: str, buffer: str) -> list:
    pattern = re.compile(rf"^\s*\w+ {re.escape(buffer)}\[\d+\];\s*$")
    return [f"CUDA: {line.strip()}" for line in source.splitlines() if pattern.match(line)][:1]
