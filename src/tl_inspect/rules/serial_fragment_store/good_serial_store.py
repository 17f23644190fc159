import tilelang.language as T


@T.prim_func
def double_parallel(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((128,), T.float32)
        for i in T.Parallel(128):
            f[i] = A[i] * 2.0
        for j in T.Parallel(128):
            B[j] = f[j]


@T.prim_func
def rows_then_columns(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((64, 64), T.float32)
        T.copy(A, f)
        # a serial loop inside T.Parallel: tilelang maps the parallel rows onto threads
        for i in T.Parallel(64):
            for j in T.serial(64):
                B[i, j] = f[i, j]

