import tilelang.language as T


@T.prim_func
def fill_then_read(C: T.Tensor((256,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((256,), T.float32)
        for i in T.Parallel(256):
            f[i] = T.if_then_else(i < 100, 5.0, 0.0)
        for i in T.Parallel(256):
            C[i] = f[i] + 1.0


@T.prim_func
def copy_then_scale(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((64, 64), T.float32)
        T.copy(A, f)
        for i, j in T.Parallel(64, 64):
            B[i, j] = f[i, j] * 2.0
