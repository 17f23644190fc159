import tilelang.language as T

M, N, N_PADDED, BLOCK_M = 4096, 1152, 1280, 16


@T.prim_func
def rms_norm(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M, N), T.float16)):
    with T.Kernel(M // BLOCK_M, threads=256) as bx:
        x = T.alloc_fragment((BLOCK_M, N_PADDED), T.float32)
        xsq = T.alloc_fragment((BLOCK_M, N_PADDED), T.float32)  # expect: replicated-reduce-input
        ss = T.alloc_fragment((BLOCK_M,), T.float32)
        for i, j in T.Parallel(BLOCK_M, N_PADDED):
            x[i, j] = T.if_then_else(j < N, T.Cast(T.float32, X[bx * BLOCK_M + i, j]), 0.0)
        for i, j in T.Parallel(BLOCK_M, N_PADDED):
            xsq[i, j] = x[i, j] * x[i, j]
        T.reduce_sum(xsq, ss, dim=1)
        for i in T.Parallel(BLOCK_M):
            ss[i] = T.rsqrt(ss[i] / N + 1e-6)
        for i, j in T.Parallel(BLOCK_M, N_PADDED):
            if j < N:
                Y[bx * BLOCK_M + i, j] = T.Cast(T.float16, x[i, j] * ss[i])
