import tilelang.language as T

M, N, BLOCK_M, BLOCK_N = 8192, 4096, 32, 512


@T.prim_func
def row_sum_tiles(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
    with T.Kernel(M // BLOCK_M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        s = T.alloc_fragment((BLOCK_M,), T.float32)
        for k in T.serial(N // BLOCK_N):
            T.copy(X[bx * BLOCK_M, k * BLOCK_N], x)
            T.reduce_sum(x, s, dim=1, clear=False)  # expect: missing-clear
        T.copy(s, Y[bx * BLOCK_M])
