import tilelang.language as T

M, N, BLOCK_M = 1024, 64, 128


@T.prim_func
def row_sum_serial(X: T.Tensor((M, N), T.float32), O: T.Tensor((M,), T.float32)):
    with T.Kernel(M // BLOCK_M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_M, N), T.float32)
        s = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(X[bx * BLOCK_M, 0], x)
        T.clear(s)
        for i in T.Parallel(BLOCK_M):
            for j in T.serial(N):
                s[i] += x[i, j]
        T.copy(s, O[bx * BLOCK_M])
