import tilelang.language as T

M, N = 4096, 512


@T.prim_func
def row_sum(X: T.Tensor((M, N), T.bfloat16), Y: T.Tensor((M,), T.float32)):
    with T.Kernel(M, threads=1) as bx:
        s = T.alloc_local((1,), T.float32)
        for j in T.serial(N):
            s[0] += T.Cast(T.float32, X[bx, j])  # expect: missing-clear, scalarized-load
        Y[bx] = s[0]
