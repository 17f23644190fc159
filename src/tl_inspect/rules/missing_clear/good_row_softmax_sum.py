import tilelang.language as T

M, N, BLOCK_N = 128, 1024, 64


@T.prim_func
def row_softmax_sum(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((M, BLOCK_N), T.float32)
        m = T.alloc_fragment((M,), T.float32)
        m_prev = T.alloc_fragment((M,), T.float32)
        s = T.alloc_fragment((M,), T.float32)
        p = T.alloc_fragment((M,), T.float32)
        T.clear(s)
        T.fill(m, -T.infinity(T.float32))
        for k in T.serial(N // BLOCK_N):
            T.copy(X[0, k * BLOCK_N], x)
            T.copy(m, m_prev)
            T.reduce_max(x, m, dim=1, clear=False)
            for i, j in T.Parallel(M, BLOCK_N):
                x[i, j] = T.exp2(x[i, j] - m[i])
            T.reduce_sum(x, p, dim=1)
            for i in T.Parallel(M):
                s[i] = s[i] * T.exp2(m_prev[i] - m[i]) + p[i]
        T.copy(s, Y)
