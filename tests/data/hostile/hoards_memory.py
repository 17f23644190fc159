"""Defect 4: allocate without end at import; the worker's memory limit must stop it, not the machine."""
import tilelang
import tilelang.language as T


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2


hoard = []
while True:
    hoard.append(bytearray(64 << 20))
