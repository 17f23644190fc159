import tilelang.language as T

N, BLOCK = 1 << 20, 2048


@T.prim_func
def double(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32)):
    with T.Kernel(N // BLOCK, threads=256) as bx:
        for i in T.Parallel(BLOCK):
            Y[bx * BLOCK + i] = X[bx * BLOCK + i] * 2
