import tilelang.language as T

M, N, BLOCK_N = 128, 1024, 64


@T.prim_func
def running_max(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((M, BLOCK_N), T.float32)
        m = T.alloc_fragment((M,), T.float32)
        m_prev = T.alloc_fragment((M,), T.float32)
        s = T.alloc_fragment((M,), T.float32)
        T.clear(s)
        for k in T.serial(N // BLOCK_N):
            T.copy(X[0, k * BLOCK_N], x)
            T.reduce_max(x, m, dim=1)
            if k > 0:
                for i in T.Parallel(M):
                    m[i] = T.max(m[i], m_prev[i])
            for i in T.Parallel(M):
                s[i] += m[i]
            T.copy(m, m_prev)
        T.copy(s, Y)
