import tilelang.language as T

M, N = 8192, 1024


@T.prim_func
def rms_norm(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M, N), T.float16)):
    with T.Kernel(M, threads=128) as bx:
        x = T.alloc_fragment((N,), T.float32)
        sq = T.alloc_fragment((N,), T.float32)
        s = T.alloc_fragment((1,), T.float32)
        T.copy(X[bx, 0:N], x)
        for i in T.Parallel(N):
            sq[i] = x[i] * x[i]
        T.reduce_sum(sq, s, dim=0)
        rstd = T.rsqrt(s[0] * (1.0 / N) + 1e-6)
        for i in T.Parallel(N):
            x[i] = x[i] * rstd
        T.copy(x, Y[bx, 0:N])
