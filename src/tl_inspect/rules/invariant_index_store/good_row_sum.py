import tilelang.language as T

M, N, BLOCK_M = 16384, 4096, 64


@T.prim_func
def row_sum(X: T.Tensor((M, N), T.float32), O: T.Tensor((M,), T.float32)):
    with T.Kernel(M // BLOCK_M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_M, N), T.float32)
        s = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(X[bx * BLOCK_M, 0], x)
        T.reduce_sum(x, s, dim=1)
        T.copy(s, O[bx * BLOCK_M])
