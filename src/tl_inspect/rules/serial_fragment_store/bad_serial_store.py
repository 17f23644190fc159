import tilelang.language as T


@T.prim_func
def double_serial(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((128,), T.float32)
        for i in T.Parallel(128):
            f[i] = A[i] * 2.0
        for j in T.serial(128):
            B[j] = f[j]  # expect: serial-fragment-store


@T.prim_func
def tile_plus_one(A: T.Tensor((16, 16), T.float32), B: T.Tensor((16, 16), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((16, 16), T.float32)
        T.copy(A, f)
        for i, j in T.grid(16, 16):
            B[i, j] = f[i, j] + 1.0  # expect: serial-fragment-store
