import tilelang.language as T

M, N, BLOCK_N = 4096, 1000, 1024


@T.prim_func
def row_mean(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
    with T.Kernel(M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_N,), T.float32)
        s = T.alloc_fragment((1,), T.float32)
        for i in T.Parallel(BLOCK_N):
            x[i] = T.if_then_else(i < N, X[bx, i], 0.0)
        T.reduce_sum(x, s, dim=0)
        Y[bx] = s[0] / N  # N, not BLOCK_N: the padding is zeros
