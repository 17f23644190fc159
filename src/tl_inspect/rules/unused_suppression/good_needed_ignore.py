import tilelang.language as T

N = 4095


@T.prim_func
def add_tail(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
    with T.Kernel(T.ceildiv(N, 1024), threads=128) as bx:
        for i in T.Parallel(1024):
            # a length of 4095 is the caller's: the tail check stays, on purpose
            C[bx * 1024 + i] = A[bx * 1024 + i] + B[bx * 1024 + i]  # tl-inspect: ignore[TLV002]
