import tilelang.language as T

M, N = 32, 1024


@T.prim_func
def add_bias(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        bias = T.alloc_shared((M, N), T.float32)
        x = T.alloc_fragment((M, N), T.float32)
        T.copy(X, x)
        for i, j in T.Parallel(M, N):
            x[i, j] += bias[i, j]  # expect: tilelang-warning
        T.copy(x, Y)
