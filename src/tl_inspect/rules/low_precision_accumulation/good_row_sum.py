import tilelang.language as T

M, N, BLOCK_M = 4096, 4096, 8


@T.prim_func
def row_sum(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M,), T.float16)):
    with T.Kernel(M // BLOCK_M, threads=128) as bx:
        x = T.alloc_fragment((BLOCK_M, N), T.float32)
        s = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(X[bx * BLOCK_M, 0], x)
        T.reduce_sum(x, s, dim=1)
        T.copy(s, Y[bx * BLOCK_M])
