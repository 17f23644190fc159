import tilelang.language as T

M, N, BLOCK_N = 4096, 1000, 1024


@T.prim_func
def layer_norm(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M, N), T.float16)):
    with T.Kernel(M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_N,), T.float32)
        sq = T.alloc_fragment((BLOCK_N,), T.float32)
        s = T.alloc_fragment((1,), T.float32)
        ss = T.alloc_fragment((1,), T.float32)
        for i in T.Parallel(BLOCK_N):
            x[i] = T.if_then_else(i < N, T.Cast(T.float32, X[bx, i]), 0.0)
        for i in T.Parallel(BLOCK_N):
            sq[i] = x[i] * x[i]
        T.reduce_sum(x, s, dim=0)
        T.reduce_sum(sq, ss, dim=0)
        mean = s[0] / BLOCK_N  # expect: padded-denominator
        var = ss[0] * (1.0 / BLOCK_N) - mean * mean  # expect: padded-denominator
        rstd = T.rsqrt(var + 1e-5)
        for i in T.Parallel(BLOCK_N):
            if i < N:
                Y[bx, i] = T.Cast(T.float16, (x[i] - mean) * rstd)
