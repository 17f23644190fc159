"""Issue 20, class 5: `from .sizes import SIZE` works when the package is imported; so must it here."""
import tilelang
import tilelang.language as T

from .sizes import SIZE


@T.prim_func
def doubled(A: T.Tensor((SIZE,), T.float32), B: T.Tensor((SIZE,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(SIZE):
            B[i] = A[i] * 2
