import tilelang
import tilelang.language as T

# Defect 7: this file starts with a UTF-8 byte-order mark; directory scans and --only-tilelang must see it.


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2
