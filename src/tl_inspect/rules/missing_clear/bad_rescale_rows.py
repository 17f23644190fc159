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
