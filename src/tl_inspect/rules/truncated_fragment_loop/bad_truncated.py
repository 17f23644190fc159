import tilelang.language as T


@T.prim_func
def fill_then_read(C: T.Tensor((256,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((256,), T.float32)
        for i in T.Parallel(100):
            f[i] = 5.0
        for i in T.Parallel(256):  # expect: truncated-fragment-loop
            C[i] = f[i] + 1.0


@T.prim_func
def read_then_write(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((64, 64), T.float32)
        for i, j in T.Parallel(32, 64):
            f[i, j] = A[i, j]
        for i, j in T.Parallel(64, 64):  # expect: truncated-fragment-loop
            B[i, j] = f[i, j] * 2.0
