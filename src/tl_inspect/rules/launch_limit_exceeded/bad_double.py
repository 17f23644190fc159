import tilelang.language as T

N, BLOCK, THREADS = 1 << 24, 16384, 2048


@T.prim_func
def double(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32)):
    with T.Kernel(N // BLOCK, threads=THREADS) as bx:  # expect: launch-limit-exceeded
        for i in T.Parallel(BLOCK):
            Y[bx * BLOCK + i] = X[bx * BLOCK + i] * 2
