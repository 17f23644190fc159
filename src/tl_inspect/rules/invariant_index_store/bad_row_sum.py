import tilelang.language as T

M, N, BLOCK_M = 16384, 4096, 64


@T.prim_func
def row_sum(X: T.Tensor((M, N), T.float32), O: T.Tensor((M,), T.float32)):
    with T.Kernel(M // BLOCK_M, threads=128) as bx:
        for i, j in T.Parallel(BLOCK_M, N):
            O[bx * BLOCK_M + i] += X[bx * BLOCK_M + i, j]  # expect: invariant-index-store
