"""TLV004 missing-clear: an accumulator updated, or a buffer read, before anything initialises it."""

from __future__ import annotations

import re

from tl_inspect import ir
from tl_inspect.model import STAGE_FRONTEND
from tl_inspect.rules.base import Example, Rule, RuleContext

# `T.alloc_fragment` and `T.alloc_local` hand out uninitialised registers; `T.alloc_var` starts at its
# initialiser or zero (facts I)
UNINITIALISED_SCOPES = ("local.fragment", "local")
# shared memory starts uninitialised too, but only its read-modify-writes are checked (see `check`)
SHARED_SCOPES = ("shared", "shared.dyn")
# loops whose first iteration a guard such as `if k > 0:` can single out
SEQUENTIAL_LOOPS = ("serial", "unrolled", "while")
# index of `clear_accum` among the 13 positional slots every gemm tile operator starts with
# (tilelang/language/gemm_op.py, `_gemm_dense_slots`)
GEMM_CLEAR_ACCUM_ARG = 9
# index of `clear` in `T.reduce_*` (tl.tileop.reduce(src, dst, type, dim, clear))
REDUCE_CLEAR_ARG = 4

READ, ACCUMULATE, WRITE = "read", "accumulate", "write"
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
    - tl-inspect facts memo, G.4 (`splitk_noclear`: `float acc[128];` then `acc += ...` in CUDA) and I
      (`T.alloc_var` starts at zero).
    - tilelang examples: flash attention forward initialises `scores_max` with
      `T.fill(scores_max, -T.infinity(accum_dtype))`; the split-K GEMV zeroes `C_shared[tn]` under
      `if tk == 0:` before `T.atomic_add`.
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
        Example("""
            import tilelang.language as T

            M, N, BLOCK_N = 128, 1024, 64


            @T.prim_func
            def row_softmax_sum(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    x = T.alloc_fragment((M, BLOCK_N), T.float32)
                    m = T.alloc_fragment((M,), T.float32)
                    m_prev = T.alloc_fragment((M,), T.float32)
                    s = T.alloc_fragment((M,), T.float32)
                    p = T.alloc_fragment((M,), T.float32)
                    T.clear(s)
                    for k in T.serial(N // BLOCK_N):
                        T.copy(X[0, k * BLOCK_N], x)
                        T.copy(m, m_prev)  # expect: missing-clear
                        T.reduce_max(x, m, dim=1, clear=False)
                        for i, j in T.Parallel(M, BLOCK_N):
                            x[i, j] = T.exp2(x[i, j] - m[i])
                        T.reduce_sum(x, p, dim=1)
                        for i in T.Parallel(M):
                            s[i] = s[i] * T.exp2(m_prev[i] - m[i]) + p[i]
                    T.copy(s, Y)
        """),
        Example("""
            import tilelang.language as T

            M, N = 128, 64


            @T.prim_func
            def rescale_rows(X: T.Tensor((M, N), T.float32), L: T.Tensor((M,), T.float32), Y: T.Tensor((M, N), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    acc = T.alloc_fragment((M, N), T.float32)
                    scale = T.alloc_fragment((M,), T.float32)
                    T.copy(X, acc)
                    for i, j in T.Parallel(M, N):
                        acc[i, j] *= scale[i]  # expect: missing-clear
                    for i in T.Parallel(M):
                        scale[i] = 1.0 / L[i]
                    T.copy(acc, Y)
        """),
        Example("""
            import tilelang.language as T

            N, K, BLOCK_N, REDUCE_THREADS, TILE_K = 1024, 1024, 2, 32, 8
            BLOCK_K = REDUCE_THREADS * TILE_K


            @T.prim_func
            def splitk_gemv(A: T.Tensor((K,), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((N,), T.float16)):
                with T.Kernel(N // BLOCK_N, threads=(BLOCK_N, REDUCE_THREADS)) as bn:
                    tn = T.get_thread_binding(0)
                    tk = T.get_thread_binding(1)
                    a = T.alloc_local((TILE_K,), T.float16)
                    b = T.alloc_local((TILE_K,), T.float16)
                    partial = T.alloc_local((1,), T.float32)
                    C_shared = T.alloc_shared((BLOCK_N,), T.float32)
                    T.clear(partial)
                    for bk in T.serial(K // BLOCK_K):
                        for k in T.vectorized(TILE_K):
                            a[k] = A[bk * BLOCK_K + tk * TILE_K + k]
                            b[k] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk * TILE_K + k]
                        for k in T.serial(TILE_K):
                            partial[0] += T.Cast(T.float32, a[k]) * T.Cast(T.float32, b[k])
                    T.atomic_add(C_shared[tn], partial[0])  # expect: missing-clear
                    C[bn * BLOCK_N + tn] = T.Cast(T.float16, C_shared[tn])
        """),
        Example("""
            import tilelang.language as T

            M, N = 64, 1024


            @T.prim_func
            def col_sum_shared(X: T.Tensor((M, N), T.float32), Y: T.Tensor((N,), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    S = T.alloc_shared((N,), T.float32)
                    for r in T.serial(M):
                        for j in T.Parallel(N):
                            S[j] += X[r, j]  # expect: missing-clear
                    T.copy(S, Y)
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
        Example("""
            import tilelang.language as T

            M, N, BLOCK_N = 128, 1024, 64


            @T.prim_func
            def row_softmax_sum(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    x = T.alloc_fragment((M, BLOCK_N), T.float32)
                    m = T.alloc_fragment((M,), T.float32)
                    m_prev = T.alloc_fragment((M,), T.float32)
                    s = T.alloc_fragment((M,), T.float32)
                    p = T.alloc_fragment((M,), T.float32)
                    T.clear(s)
                    T.fill(m, -T.infinity(T.float32))
                    for k in T.serial(N // BLOCK_N):
                        T.copy(X[0, k * BLOCK_N], x)
                        T.copy(m, m_prev)
                        T.reduce_max(x, m, dim=1, clear=False)
                        for i, j in T.Parallel(M, BLOCK_N):
                            x[i, j] = T.exp2(x[i, j] - m[i])
                        T.reduce_sum(x, p, dim=1)
                        for i in T.Parallel(M):
                            s[i] = s[i] * T.exp2(m_prev[i] - m[i]) + p[i]
                    T.copy(s, Y)
        """),
        Example("""
            import tilelang.language as T

            N, THREADS, VEC = 4096, 32, 4
            BLOCK = THREADS * VEC


            @T.prim_func
            def written_through_pointers(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32), C: T.Tensor((N,), T.float32)):
                with T.Kernel(N // BLOCK, threads=THREADS) as bx:
                    tx = T.get_thread_binding(0)
                    S = T.alloc_shared((BLOCK,), T.float32)
                    v = T.alloc_local((VEC,), T.float32)
                    seed = T.alloc_local((1,), T.float32)
                    x = T.alloc_local((1,), T.float32)
                    total = T.alloc_local((1,), T.float32)
                    prev = T.alloc_local((1,), T.float32)
                    for k in T.vectorized(VEC):
                        v[k] = A[bx * BLOCK + tx * VEC + k]
                    T.call_extern("handle", "init_seed", T.address_of(seed[0]))
                    x[0] = v[0] + v[1] + v[2] + v[3] + seed[0]
                    with T.attr(T.comm_reducer(lambda a, b: a + b, [T.Cast(T.float32, 0)]), "reduce_scope",
                                T.reinterpret(T.uint64(0), dtype="handle")):
                        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), x[0], True, total[0], tx, dtype="handle"))
                    T.copy(B[bx * BLOCK], S)
                    prev[0] = T.atomic_add(S[tx * VEC], total[0], return_prev=True)
                    for k in T.vectorized(VEC):
                        C[bx * BLOCK + tx * VEC + k] = S[tx * VEC + k] + prev[0]
        """),
        Example("""
            import tilelang.language as T

            N, K, BLOCK_N, REDUCE_THREADS, TILE_K = 1024, 1024, 2, 32, 8
            BLOCK_K = REDUCE_THREADS * TILE_K


            @T.prim_func
            def splitk_gemv(A: T.Tensor((K,), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((N,), T.float16)):
                with T.Kernel(N // BLOCK_N, threads=(BLOCK_N, REDUCE_THREADS)) as bn:
                    tn = T.get_thread_binding(0)
                    tk = T.get_thread_binding(1)
                    a = T.alloc_local((TILE_K,), T.float16)
                    b = T.alloc_local((TILE_K,), T.float16)
                    partial = T.alloc_local((1,), T.float32)
                    C_shared = T.alloc_shared((BLOCK_N,), T.float32)
                    if tk == 0:
                        C_shared[tn] = 0
                    T.clear(partial)
                    for bk in T.serial(K // BLOCK_K):
                        for k in T.vectorized(TILE_K):
                            a[k] = A[bk * BLOCK_K + tk * TILE_K + k]
                            b[k] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk * TILE_K + k]
                        for k in T.serial(TILE_K):
                            partial[0] += T.Cast(T.float32, a[k]) * T.Cast(T.float32, b[k])
                    T.atomic_add(C_shared[tn], partial[0])
                    C[bn * BLOCK_N + tn] = T.Cast(T.float16, C_shared[tn])
        """),
        Example("""
            import tilelang.language as T

            M, N, BLOCK_N = 128, 1024, 64


            @T.prim_func
            def guarded_reads(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    x = T.alloc_fragment((M, BLOCK_N), T.float32)
                    m = T.alloc_fragment((M,), T.float32)
                    m_prev = T.alloc_fragment((M,), T.float32)
                    s = T.alloc_fragment((M,), T.float32)
                    T.clear(s)
                    for k in T.serial(N // BLOCK_N):
                        T.copy(X[0, k * BLOCK_N], x)
                        T.reduce_max(x, m, dim=1)
                        if k > 0:
                            for i in T.Parallel(M):
                                m[i] = T.max(m[i], m_prev[i])
                        for i in T.Parallel(M):
                            s[i] = s[i] * T.exp2(T.if_then_else(k == 0, m[i], m_prev[i]) - m[i]) + 1
                        T.copy(m, m_prev)
                    T.copy(s, Y)
        """),
        Example("""
            import tilelang.language as T

            M, N, K = 128, 128, 64


            @T.prim_func
            def gemm_row_sum(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), Y: T.Tensor((M,), T.float32)):
                with T.Kernel(1, threads=128) as bx:
                    A_s = T.alloc_shared((M, K), T.float16)
                    B_s = T.alloc_shared((K, N), T.float16)
                    C_l = T.alloc_fragment((M, N), T.float32)
                    row = T.alloc_fragment((M,), T.float32)
                    T.copy(A, A_s)
                    T.copy(B, B_s)
                    T.gemm(A_s, B_s, C_l, clear_accum=True)
                    T.reduce_sum(C_l, row, dim=1)
                    T.copy(row, Y)
        """),
    ]

    def check(self, ctx: RuleContext) -> None:
        snapshot = ctx.kernel.snapshot(STAGE_FRONTEND)
        func = snapshot.func() if snapshot else None
        if func is None:
            return
        candidates = {
            stmt.buffer for stmt, _ in ir.walk(func.body)
            if isinstance(stmt, ir.Alloc) and func.scope_of(stmt.buffer) in UNINITIALISED_SCOPES + SHARED_SCOPES
        }
        seen: set[str] = set()
        for stmt, ancestors in ir.walk(func.body):
            for buffer, access, what in _accesses(stmt):
                if buffer not in candidates or buffer in seen:
                    continue
                if access == READ and _loop_guarded(ancestors):
                    continue
                seen.add(buffer)
                line = ir.stmt_line(stmt, ancestors)
                shared = func.scope_of(buffer) in SHARED_SCOPES
                # shared memory can be filled by other threads or the copy engine in ways the frontend IR
                # does not show, so only a read-modify-write with no earlier access is certain
                if line and (access == ACCUMULATE or (access == READ and not shared)):
                    self._report(ctx, func, buffer, access, what, stmt, line)

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


def _loop_guarded(ancestors) -> bool:
    """Whether the statement sits under an `if` that tests a sequential loop around it (`if k > 0:`):
    such a read may be skipped on the first iteration, after which the loop has written the buffer."""
    loop_vars = {a.var for a in ancestors if isinstance(a, ir.For) and a.kind in SEQUENTIAL_LOOPS}
    return any(isinstance(a, ir.If) and ir.vars_of(a.cond) & loop_vars for a in ancestors)


def _accesses(stmt):
    """(buffer, READ | ACCUMULATE | WRITE, description) for each buffer the statement touches, in the
    order the statement touches them. The description of a READ names the statement, that of an
    ACCUMULATE says how it accumulates."""
    if isinstance(stmt, ir.Store):
        text = f"`{ir.render_store(stmt)}`"
        touched = list(_expr_accesses(stmt.indices + (stmt.value,)))
        if (stmt.buffer, READ) in touched:
            yield stmt.buffer, ACCUMULATE, f"{text} reads"
        for buffer, access in touched:
            if buffer != stmt.buffer:
                yield buffer, access, _verb(text, access)
        yield stmt.buffer, WRITE, ""
    elif isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr):
        yield from _tile_op_accesses(stmt.expr)
    elif isinstance(stmt, ir.Eval):
        text = f"`{_short(_render_call(stmt.expr))}`"
        yield from ((b, a, _verb(text, a)) for b, a in _expr_accesses((stmt.expr,)))
    elif isinstance(stmt, ir.If):
        text = f"the condition `if {_short(ir.render(stmt.cond))}:`"
        yield from ((b, a, _verb(text, a)) for b, a in _expr_accesses((stmt.cond,)))
    elif isinstance(stmt, ir.For):
        text = f"the bounds of the loop over `{stmt.var}`"
        yield from ((b, a, _verb(text, a)) for b, a in _expr_accesses((stmt.min, stmt.extent)))
    elif isinstance(stmt, (ir.Let, ir.Attr)):
        text = f"`{_short(ir.render(stmt.value))}`"
        yield from ((b, a, _verb(text, a)) for b, a in _expr_accesses((stmt.value,)))


def _verb(text: str, access: str) -> str:
    return f"{text} accumulates into" if access == ACCUMULATE else text


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _expr_accesses(exprs, guarded: bool = False):
    """(buffer, READ | ACCUMULATE | WRITE) for each buffer the expressions touch, in evaluation order.

    A load in a branch of a select (`T.if_then_else(k == 0, 0, acc[i])`) may never run, so it is left
    out. A buffer whose address escapes (`T.address_of`, `buf.data`, `T.access_ptr` with write access)
    counts as written: the callee may initialise it, and nothing here can tell."""
    for expr in exprs:
        head = expr[0]
        if head == "load":
            yield from _expr_accesses(expr[2], guarded)
            if not guarded:
                yield expr[1], READ
        elif head == "var":
            yield expr[1], WRITE
        elif head == "select":
            yield from _expr_accesses((expr[1],), guarded)
            yield from _expr_accesses(expr[2:], True)
        elif head != "call":
            yield from _expr_accesses(_children(expr), guarded)
        elif expr[1] == "tirx.if_then_else":
            yield from _expr_accesses(expr[2][:1], guarded)
            yield from _expr_accesses(expr[2][1:], True)
        elif expr[1] in ("tirx.address_of", "tl.access_ptr") and expr[2] and expr[2][0][0] == "load":
            load = expr[2][0]
            yield from _expr_accesses(load[2], guarded)
            mode = ir.int_value(expr[2][2]) if len(expr[2]) > 2 else None
            yield load[1], READ if mode == ir.REGION_READ else WRITE
        elif expr[1].startswith("tl.atomic_") and expr[2] and _read_write_pointer(expr[2][0]):
            # `T.atomic_add(dst[i], v)` reads and writes dst[i] through `T.access_ptr(dst[i], 1, 3)`
            load = _read_write_pointer(expr[2][0])
            yield from _expr_accesses(load[2], guarded)
            yield load[1], ACCUMULATE
            yield from _expr_accesses(expr[2][1:], guarded)
        elif expr[1] == "tirx.tvm_thread_allreduce" and ir.int_value(expr[2][0]):
            # (size, value * size, condition, result * size, thread vars...): the results are outputs
            size = ir.int_value(expr[2][0])
            yield from _expr_accesses(expr[2][1:size + 2], guarded)
            for result in expr[2][size + 2:2 * size + 2]:
                yield from ((b, WRITE) for b, _ in _expr_accesses((result,), guarded))
            yield from _expr_accesses(expr[2][2 * size + 2:], guarded)
        else:
            yield from _expr_accesses(expr[2], guarded)


def _render_call(expr) -> str:
    """`T.atomic_add(C_shared[tn], v)` for the `tl.atomic_add_elem_op(tl.access_ptr(...), v)` it lowers to."""
    target = expr[0] == "call" and expr[1].startswith("tl.atomic_") and expr[2] and _read_write_pointer(expr[2][0])
    if not target:
        return ir.render(expr)
    name = expr[1][len("tl."):].removesuffix("_elem_op").removesuffix("_ret")
    return f"T.{name}({', '.join(ir.render(a) for a in (target,) + expr[2][1:])})"


def _read_write_pointer(expr):
    """The load inside `T.access_ptr(buf[i], 1, mode)` when the access reads and writes, else None."""
    if expr[0] == "call" and expr[1] == "tl.access_ptr" and len(expr[2]) > 2 and expr[2][0][0] == "load":
        return expr[2][0] if ir.int_value(expr[2][2]) == ir.REGION_READ_WRITE else None
    return None


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
        if op.startswith("atomic") and access == WRITE:
            # the tile form `T.atomic_add(dst, src)` marks dst written, but adds to what it holds
            access = ACCUMULATE
        if "gemm" in op:
            name = "gemm"
            what = "`T.gemm` without `clear_accum=True` accumulates into"
        elif op == "reduce":
            name = "reduce_" + (args[2][1].strip("'\"") if len(args) > 2 and args[2][0] == "other" else "*")
            what = f"`T.{name}(..., clear=False)` accumulates into"
        else:
            name = op
            what = f"`T.{op}` reads and writes"
        yield region.buffer, access, f"`T.{name}(...)`" if access == READ else what


def _is_false(args, index: int) -> bool:
    return index < len(args) and ir.int_value(args[index]) == 0


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
