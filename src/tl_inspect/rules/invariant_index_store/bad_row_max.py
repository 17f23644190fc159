import tilelang.language as T

M, N, BLOCK_M = 512, 256, 16


@T.prim_func
def row_max(X: T.Tensor((M, N), T.bfloat16), O: T.Tensor((M,), T.float32)):
    with T.Kernel(M // BLOCK_M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_M, N), T.float32)
        m = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(X[bx * BLOCK_M, 0], x)
        T.fill(m, -T.infinity(T.float32))
        for i, j in T.Parallel(BLOCK_M, N):
            m[i] = T.max(m[i], x[i, j])  # expect: invariant-index-store
        T.copy(m, O[bx * BLOCK_M])
