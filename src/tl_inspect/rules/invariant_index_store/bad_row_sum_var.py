import tilelang.language as T

M, N = 128, 1024


@T.prim_func
def row_sum_var(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
    with T.Kernel(M, threads=128) as bx:
        s = T.alloc_var(T.float32)
        for i in T.Parallel(N):
            s += X[bx, i]  # expect: invariant-index-store
        Y[bx] = s
