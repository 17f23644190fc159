import tilelang.language as T

M, N, BLOCK_M, BLOCK_N = 4096, 8192, 16, 512


@T.prim_func
def row_sum_tiles(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M,), T.float16)):
    with T.Kernel(M // BLOCK_M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        s = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(acc)
        for k in T.Pipelined(N // BLOCK_N, num_stages=2):
            T.copy(X[bx * BLOCK_M, k * BLOCK_N], x)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                acc[i, j] += x[i, j]  # expect: low-precision-accumulation
        T.reduce_sum(acc, s, dim=1)
        T.copy(s, Y[bx * BLOCK_M])
