import tilelang.language as T

M, N, G = 4096, 1024, 4


@T.prim_func
def residual_and_groups(X: T.Tensor((M, N), T.float16), R: T.Tensor((M, N), T.float16),
                        Y: T.Tensor((M, N), T.float16), P: T.Tensor((M, N // G), T.float16)):
    with T.Kernel(M, threads=128) as bx:
        x = T.alloc_fragment((N,), T.float16)
        g = T.alloc_fragment((N // G, G), T.float16)
        p = T.alloc_fragment((N // G,), T.float16)
        m = T.alloc_fragment((N // G,), T.float16)
        T.copy(X[bx, 0], x)
        for i in T.Parallel(N):
            x[i] += R[bx, i]
        T.copy(x, Y[bx, 0])
        for i, j in T.Parallel(N // G, G):
            g[i, j] = x[i * G + j]
        T.reduce_sum(g, p, dim=1)
        T.reduce_max(g, m, dim=1)
        for i in T.Parallel(N // G):
            P[bx, i] = p[i] + m[i]
