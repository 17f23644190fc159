import tilelang.language as T

N = T.dynamic("N")


@T.prim_func
def double(X: T.Tensor((N, 256), T.float32), Y: T.Tensor((N, 256), T.float32)):
    with T.Kernel(1, N, threads=32) as (bx, by):
        for j in T.Parallel(256):
            Y[by, j] = X[by, j] * 2
