import tilelang.language as T

M, N, BLOCK_M = 16384, 1024, 64


@T.prim_func
def column_sum(X: T.Tensor((M, N), T.float32), O: T.Tensor((N,), T.float32)):
    with T.Kernel(M // BLOCK_M, threads=128) as bx:
        acc = T.alloc_fragment((N,), T.float32)
        T.clear(acc)
        for i, j in T.Parallel(BLOCK_M, N):
            acc[j] += X[bx * BLOCK_M + i, j]
        for j in T.Parallel(N):
            T.atomic_add(O[j], acc[j])
