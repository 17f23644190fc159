import tilelang.language as T

M, N, K, BLOCK_K = 128, 128, 512, 32


@T.prim_func
def split_k_sum(A: T.Tensor((M, K), T.float32), Out: T.Tensor((M, N), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_fragment((M, N), T.float32)
        T.clear(acc)
        for k in T.serial(K // BLOCK_K):
            for i, j in T.Parallel(M, N):
                acc[i, j] += A[i, k * BLOCK_K + j % BLOCK_K]
        T.copy(acc, Out)
