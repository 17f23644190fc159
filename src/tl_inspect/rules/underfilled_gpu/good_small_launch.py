import tilelang.language as T

N = 4096


@T.prim_func
def scale_small(X: T.Tensor((N,), T.float16), Y: T.Tensor((N,), T.float16)):
    with T.Kernel(N // 1024, threads=128) as bx:
        for i in T.Parallel(1024):
            Y[bx * 1024 + i] = X[bx * 1024 + i] * 2
