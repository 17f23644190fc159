import tilelang.language as T

M, N = 512, 1000
N_PADDED = (N + 127) // 128 * 128


@T.prim_func
def row_mean(X: T.Tensor((M, N_PADDED), T.float32), Y: T.Tensor((M,), T.float32)):
    with T.Kernel(M, threads=128) as bx:
        x = T.alloc_fragment((N_PADDED,), T.float32)
        s = T.alloc_fragment((1,), T.float32)
        T.copy(X[bx, 0], x)
        T.reduce_sum(x, s, dim=0)
        Y[bx] = s[0] / N_PADDED  # expect: padded-denominator
