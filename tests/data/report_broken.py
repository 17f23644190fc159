"""A user file that defines one kernel, then fails while importing."""

import tilelang
import tilelang.language as T


@T.prim_func
def scale(A: T.Tensor((1024,), T.float16), C: T.Tensor((1024,), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            C[i] = A[i] * 2


raise RuntimeError("configuration <missing> & {{ not set }}")
