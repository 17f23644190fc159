import tilelang.language as T

M, N, BLOCK_N = 1024, 1000, 1024


@T.prim_func
def softmax(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
    with T.Kernel(M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_N,), T.float32)
        m = T.alloc_fragment((1,), T.float32)
        s = T.alloc_fragment((1,), T.float32)
        for i in T.Parallel(BLOCK_N):
            x[i] = T.if_then_else(i < N, X[bx, i], -T.infinity(T.float32))
        T.reduce_max(x, m, dim=0)
        for i in T.Parallel(BLOCK_N):
            x[i] = T.exp(x[i] - m[0])
        T.reduce_sum(x, s, dim=0)
        for i in T.Parallel(BLOCK_N):
            if i < N:
                Y[bx, i] = x[i] / s[0]
