"""Issue 20, class 6: the import fails with an exception whose `__str__` raises; the kernel bound before it
is inspected and the error named."""
import tilelang
import tilelang.language as T


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


raise Unprintable()
