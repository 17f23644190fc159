"""Issue 20, class 6: a helper module imported after a kernel has a syntax error; the error must name the
helper, and point at this file's import line."""
import tilelang
import tilelang.language as T


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2


import broken_helper  # noqa: E402,F401
