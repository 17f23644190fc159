"""Issue 20, class 5: an unguarded `os.fork()` at import; the child runs the rest of the import too, and the
kernel must still be reported once."""
import os

import tilelang
import tilelang.language as T

os.fork()


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2
