import tilelang.language as T

M, N = 64, 1024


@T.prim_func
def col_sum_shared(X: T.Tensor((M, N), T.float32), Y: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((N,), T.float32)
        for r in T.serial(M):
            for j in T.Parallel(N):
                S[j] += X[r, j]  # expect: missing-clear
        T.copy(S, Y)
