import tilelang.language as T

M = 2048
N = T.dynamic("N")
BLOCK_N = 4096


@T.prim_func
def rms_norm(X: T.Tensor((M, N), T.bfloat16), Y: T.Tensor((M, N), T.bfloat16)):
    with T.Kernel(M, threads=256) as bx:
        x = T.alloc_fragment((BLOCK_N,), T.float32)
        sq = T.alloc_fragment((BLOCK_N,), T.float32)
        s = T.alloc_fragment((1,), T.float32)
        T.copy(X[bx, 0:BLOCK_N], x)  # expect: scalarized-load
        for i in T.Parallel(BLOCK_N):
            sq[i] = x[i] * x[i]
        T.reduce_sum(sq, s, dim=0)
        rstd = T.rsqrt(s[0] / BLOCK_N + 1e-6)  # expect: padded-denominator
        for i in T.Parallel(BLOCK_N):
            x[i] = x[i] * rstd
        T.copy(x, Y[bx, 0:BLOCK_N])  # expect: scalarized-load
