"""Kernels for the reporter tests: real tilelang kernels, inspected for real.

Hostile text on purpose: <script>alert("py")</script> and {{ 7 * 7 }} must reach every report escaped.
"""

import tilelang
import tilelang.language as T


def ew_add(N, block=1024, threads=128, dtype=T.float16):
    @T.prim_func
    def ew_add_kernel(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return ew_add_kernel


def row_sum(M=64, N=64, G=8, tag="plain"):
    @T.prim_func
    def row_sum_kernel(V: T.Tensor((M, N), T.float32), Out: T.Tensor((M, N // G), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            v = T.alloc_fragment((M, N), T.float32)
            acc = T.alloc_fragment((M, N // G), T.float32)
            T.copy(V, v)
            T.clear(acc)
            for i, j in T.Parallel(M, N):
                acc[i, j // G] += v[i, j]
            T.copy(acc, Out)

    return row_sum_kernel


def layout_conflict():
    @T.prim_func
    def conflict(A: T.Tensor((128, 128), T.float32), B: T.Tensor((128, 128), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            f = T.alloc_fragment((128, 128), T.float32)
            g = T.alloc_fragment((128, 128), T.float32)
            T.copy(A, f)
            for i, j in T.Parallel(128, 128):
                g[i, j] = f[j, i]
            for i, j in T.Parallel(128, 128):
                g[i, j] += f[i, j]
            T.copy(g, B)

    return conflict


add_2047 = ew_add(2047)
add_2048 = ew_add(2048)
broken = layout_conflict()
TL_INSPECT_CASES = {"row_sum": [{"tag": "<script>alert('name')</script>{{ 7 * 7 }}"}]}
