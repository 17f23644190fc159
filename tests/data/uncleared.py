"""Accumulates into a fragment that nothing cleared: tilelang warns on fd 2 while compiling."""
import tilelang
import tilelang.language as T


@T.prim_func
def row_accumulate(A: T.Tensor((128, 512), T.float32), Out: T.Tensor((128, 128), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_fragment((128, 128), T.float32)
        for k in T.serial(4):
            for i, j in T.Parallel(128, 128):
                acc[i, j] += A[i, k * 128 + j]
        T.copy(acc, Out)
