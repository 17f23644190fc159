"""TLV004 missing-clear: an accumulator updated before anything initialises it."""

from __future__ import annotations

import re

from tl_inspect import ir
from tl_inspect.model import STAGE_FRONTEND
from tl_inspect.rules.base import Example, Rule, RuleContext

# `T.alloc_fragment` and `T.alloc_local` hand out uninitialised registers; `T.alloc_var` starts at its
# initialiser or zero (facts I), `T.alloc_shared` is out of scope (other threads or TMA may fill it)
UNINITIALISED_SCOPES = ("local.fragment", "local")
# index of `clear_accum` among the 13 positional slots every gemm tile operator starts with
# (tilelang/language/gemm_op.py, `_gemm_dense_slots`)
GEMM_CLEAR_ACCUM_ARG = 9
# index of `clear` in `T.reduce_*` (tl.tileop.reduce(src, dst, type, dim, clear))
REDUCE_CLEAR_ARG = 4

READ, ACCUMULATE, WRITE = "read", "accumulate", "write"
REDUCE_FIX = ("Initialise the output before the first `T.reduce_*(..., clear=False)` with the reduction's "
              "identity (`T.clear` for a sum, `T.fill(m, -T.infinity(dtype))` for a max), or drop `clear=False`")


class MissingClear(Rule):
    """An accumulator is updated with `+=` (or `T.gemm`) before anything initialises it.

    ## What it does
    Follows every `T.alloc_fragment` / `T.alloc_local` buffer through the kernel in program order and
    flags the first accumulation into it (`acc[i] += ...` in `T.Parallel`, `T.serial`, `T.Pipelined`,
    a `T.gemm` without `clear_accum=True`, a `T.reduce_*(..., clear=False)`) when no `T.clear`,
    `T.fill`, `T.copy` or plain store has written the buffer before. `T.alloc_var` scalars start
    initialised and are not flagged.

    ## Why is this wrong?
    Fragments and locals are registers: `T.alloc_fragment((M, N), "float32")` becomes
    `float acc[128];` in CUDA with no initialiser, so the sum starts from whatever the registers held
    and the result is garbage that changes from run to run. tilelang's own `tl.VerifyBufferInit` prints
    'Buffer read before initialization' on stderr, but without a source line for the `T.Parallel` case
    and with false alarms on `T.alloc_var`.

    ## Example
    ```python
    acc = T.alloc_fragment((block_M, block_N), "float32")
    for k in T.serial(num_k):
        for i, j in T.Parallel(block_M, block_N):
            acc[i, j] += A[i, k * block_N + j]
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
    GEMM.

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md): a split-K style `acc[i, j] += ...` over 16 steps
      into a 128x128 fragment gave 3157 of 16384 wrong outputs without `T.clear`, none with it.
    - tl-inspect facts memo, G.4 (`splitk_noclear`: `float acc[128];` then `acc += ...` in CUDA) and I
      (`T.alloc_var` starts at zero).
    """

    code = "TLV004"
    slug = "missing-clear"
    severity = "error"
    kind = "ir"
    fix = ("Initialise the accumulator first: `T.clear(acc)` or `T.fill(acc, 0)`, or `clear_accum=True` on "
           "the first `T.gemm`")

    BAD = [
        Example("""
            import tilelang.language as T

            M, N, K, BLOCK_K = 128, 128, 512, 32


            @T.prim_func
            def split_k_sum(A: T.Tensor((M, K), T.float32), Out: T.Tensor((M, N), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    acc = T.alloc_fragment((M, N), T.float32)
                    for k in T.serial(K // BLOCK_K):
                        for i, j in T.Parallel(M, N):
                            acc[i, j] += A[i, k * BLOCK_K + j % BLOCK_K]  # expect: missing-clear
                    T.copy(acc, Out)
        """),
        Example("""
            import tilelang.language as T

            M, N, K = 1024, 1024, 1024
            BM, BN, BK = 128, 128, 32


            @T.prim_func
            def matmul(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
                with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):
                    A_s = T.alloc_shared((BM, BK), T.float16)
                    B_s = T.alloc_shared((BK, BN), T.float16)
                    C_l = T.alloc_fragment((BM, BN), T.float32)
                    for k in T.Pipelined(K // BK, num_stages=3):
                        T.copy(A[by * BM, k * BK], A_s)
                        T.copy(B[k * BK, bx * BN], B_s)
                        T.gemm(A_s, B_s, C_l)  # expect: missing-clear
                    T.copy(C_l, C[by * BM, bx * BN])
        """),
        Example("""
            import tilelang.language as T

            M, N = 4096, 512


            @T.prim_func
            def row_sum(X: T.Tensor((M, N), T.bfloat16), Y: T.Tensor((M,), T.float32)):
                with T.Kernel(M, threads=1) as bx:
                    s = T.alloc_local((1,), T.float32)
                    for j in T.serial(N):
                        s[0] += T.Cast(T.float32, X[bx, j])  # expect: missing-clear
                    Y[bx] = s[0]
        """),
        Example("""
            import tilelang.language as T

            M, N, BLOCK_M, BLOCK_N = 1024, 4096, 32, 512


            @T.prim_func
            def row_sum_tiles(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
                with T.Kernel(M // BLOCK_M, threads=128) as bx:
                    x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
                    s = T.alloc_fragment((BLOCK_M,), T.float32)
                    for k in T.serial(N // BLOCK_N):
                        T.copy(X[bx * BLOCK_M, k * BLOCK_N], x)
                        T.reduce_sum(x, s, dim=1, clear=False)  # expect: missing-clear
                    T.copy(s, Y[bx * BLOCK_M])
        """),
    ]
    GOOD = [
        Example("""
            import tilelang.language as T

            M, N, K, BLOCK_K = 128, 128, 512, 32


            @T.prim_func
            def split_k_sum(A: T.Tensor((M, K), T.float32), Out: T.Tensor((M, N), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    acc = T.alloc_fragment((M, N), T.float32)
                    T.clear(acc)
                    for k in T.serial(K // BLOCK_K):
                        for i, j in T.Parallel(M, N):
                            acc[i, j] += A[i, k * BLOCK_K + j % BLOCK_K]
                    T.copy(acc, Out)
        """),
        Example("""
            import tilelang.language as T

            M, N, K = 1024, 1024, 1024
            BM, BN, BK = 128, 128, 32


            @T.prim_func
            def matmul(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
                with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):
                    A_s = T.alloc_shared((BM, BK), T.float16)
                    B_s = T.alloc_shared((BK, BN), T.float16)
                    C_l = T.alloc_fragment((BM, BN), T.float32)
                    for k in T.Pipelined(K // BK, num_stages=3):
                        T.copy(A[by * BM, k * BK], A_s)
                        T.copy(B[k * BK, bx * BN], B_s)
                        T.gemm(A_s, B_s, C_l, clear_accum=(k == 0))
                    T.copy(C_l, C[by * BM, bx * BN])
        """),
        Example("""
            import tilelang.language as T

            M, N = 4096, 512


            @T.prim_func
            def row_sum(X: T.Tensor((M, N), T.bfloat16), Y: T.Tensor((M,), T.float32)):
                with T.Kernel(M, threads=1) as bx:
                    s = T.alloc_var(T.float32)
                    for j in T.serial(N):
                        s += T.Cast(T.float32, X[bx, j])
                    Y[bx] = s
        """),
        Example("""
            import tilelang.language as T

            M, N, BLOCK_M = 1024, 256, 64


            @T.prim_func
            def residual_sum(X: T.Tensor((M, N), T.float32), R: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
                with T.Kernel(M // BLOCK_M, threads=128) as bx:
                    acc = T.alloc_fragment((BLOCK_M, N), T.float32)
                    T.copy(R[bx * BLOCK_M, 0], acc)
                    for i, j in T.Parallel(BLOCK_M, N):
                        acc[i, j] += X[bx * BLOCK_M + i, j]
                    T.copy(acc, Y[bx * BLOCK_M, 0])
        """),
        Example("""
            import tilelang.language as T

            M, N, K, BLOCK_K = 128, 128, 512, 32


            @T.prim_func
            def split_k_first_write(A: T.Tensor((M, K), T.float32), Out: T.Tensor((M, N), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    acc = T.alloc_fragment((M, N), T.float32)
                    for k in T.serial(K // BLOCK_K):
                        for i, j in T.Parallel(M, N):
                            if k == 0:
                                acc[i, j] = A[i, j % BLOCK_K]
                            else:
                                acc[i, j] += A[i, k * BLOCK_K + j % BLOCK_K]
                    T.copy(acc, Out)
        """),
    ]

    def check(self, ctx: RuleContext) -> None:
        snapshot = ctx.kernel.snapshot(STAGE_FRONTEND)
        func = snapshot.func() if snapshot else None
        if func is None:
            return
        candidates = {
            stmt.buffer for stmt, _ in ir.walk(func.body)
            if isinstance(stmt, ir.Alloc) and func.scope_of(stmt.buffer) in UNINITIALISED_SCOPES
        }
        seen: set[str] = set()
        for stmt, ancestors in ir.walk(func.body):
            for buffer, access, what in _accesses(stmt):
                if buffer not in candidates or buffer in seen:
                    continue
                seen.add(buffer)
                line = ir.stmt_line(stmt, ancestors)
                if access == ACCUMULATE and line:
                    self._report(ctx, func, buffer, what, stmt, line)

    def _report(self, ctx: RuleContext, func: ir.IRFunc, buffer: str, what: str, stmt, line: int) -> None:
        info = func.buffers[buffer]
        declared = f" (declared on line {info.line})" if info.line else ""
        kind = "fragment" if info.scope == "local.fragment" else "local buffer"
        message = (f"{what} {kind} `{buffer}`{declared} before anything writes it: "
                   f"the registers start uninitialised, so the accumulation starts from garbage")
        evidence = [f"TIR: {_render_stmt(stmt)}"]
        evidence += _cuda_declaration(ctx.kernel.source, buffer)
        if any(f"`{buffer}` is read before anything writes it" in w for w in ctx.kernel.warnings):
            evidence.append(f"tilelang VerifyBufferInit: `{buffer}` is read before anything writes it")
        fix = REDUCE_FIX if what.startswith("`T.reduce_") else None
        ctx.report(line, message, evidence=evidence, fix=fix)


def _accesses(stmt):
    """(buffer, READ | ACCUMULATE | WRITE, description) for each buffer the statement touches, in the
    order the statement touches them."""
    if isinstance(stmt, ir.Store):
        # a self-read only inside `T.if_then_else(k == 0, 0, acc[i]) + ...` is a conditional init
        if _reads_outside_select(stmt.value, stmt.buffer):
            yield stmt.buffer, ACCUMULATE, f"`{ir.render_store(stmt)}` reads"
        for load in _loads(stmt.indices) + ir.loads_of(stmt.value):
            if load[1] != stmt.buffer:
                yield load[1], READ, ""
        yield stmt.buffer, WRITE, ""
    elif isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr):
        yield from _tile_op_accesses(stmt.expr)
    elif isinstance(stmt, ir.Eval):
        yield from ((load[1], READ, "") for load in ir.loads_of(stmt.expr))
    elif isinstance(stmt, ir.If):
        yield from ((load[1], READ, "") for load in ir.loads_of(stmt.cond))
    elif isinstance(stmt, ir.For):
        yield from ((load[1], READ, "") for load in _loads((stmt.min, stmt.extent)))
    elif isinstance(stmt, (ir.Let, ir.Attr)):
        yield from ((load[1], READ, "") for load in ir.loads_of(stmt.value))


def _tile_op_accesses(call):
    op = ir.tile_op(call)
    args = call[2]
    for region in ir.regions(call):
        access = {ir.REGION_READ: READ, ir.REGION_WRITE: WRITE}.get(region.access, ACCUMULATE)
        if "gemm" in op and access == ACCUMULATE and not _is_false(args, GEMM_CLEAR_ACCUM_ARG):
            # `clear_accum=(k == 0)` zeroes the accumulator on the first iteration
            access = WRITE
        if op == "reduce" and access == WRITE and _is_false(args, REDUCE_CLEAR_ARG):
            access = ACCUMULATE
        if "gemm" in op:
            what = "`T.gemm` without `clear_accum=True` accumulates into"
        elif op == "reduce":
            kind = args[2][1].strip("'\"") if len(args) > 2 and args[2][0] == "other" else "*"
            what = f"`T.reduce_{kind}(..., clear=False)` accumulates into"
        else:
            what = f"`T.{op}` reads and writes"
        yield region.buffer, access, what


def _is_false(args, index: int) -> bool:
    return index < len(args) and ir.int_value(args[index]) == 0


def _loads(exprs) -> list:
    return [load for e in exprs for load in ir.loads_of(e)]


def _reads_outside_select(expr, buffer: str) -> bool:
    """Whether `expr` reads `buffer` other than inside a branch of a select."""
    head = expr[0]
    if head == "load" and expr[1] == buffer:
        return True
    if head == "select":
        return _reads_outside_select(expr[1], buffer)
    if head == "call" and expr[1] == "tirx.if_then_else":
        return _reads_outside_select(expr[2][0], buffer)
    return any(_reads_outside_select(child, buffer) for child in _children(expr))


def _children(expr) -> list:
    if expr[0] in ("var", "int", "float", "other"):
        return []
    out = []
    for item in expr[1:]:
        if isinstance(item, tuple) and item and isinstance(item[0], str):
            out.append(item)
        elif isinstance(item, tuple):
            out.extend(sub for sub in item if isinstance(sub, tuple) and sub)
    return out


def _render_stmt(stmt) -> str:
    if isinstance(stmt, ir.Store):
        return f"{stmt.buffer}[{', '.join(ir.render(i) for i in stmt.indices)}] = {ir.render(stmt.value)}"
    if isinstance(stmt, ir.Eval):
        return ir.render(stmt.expr)
    return type(stmt).__name__


def _cuda_declaration(source: str, buffer: str) -> list:
    pattern = re.compile(rf"^\s*\w+ {re.escape(buffer)}\[\d+\];\s*$")
    return [f"CUDA: {line.strip()}" for line in source.splitlines() if pattern.match(line)][:1]
