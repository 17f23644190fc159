import tilelang.language as T

N, VEC, ROWS, THREADS = 1 << 22, 8, 4, 128


@T.prim_func
def chunk_sums(X: T.Tensor((N,), T.float32), Y: T.Tensor((N // VEC,), T.float32)):
    with T.Kernel(N // VEC // ROWS // THREADS, threads=THREADS) as bx:
        tx = T.get_thread_binding(0)
        base = (bx * THREADS + tx) * ROWS
        acc = T.alloc_local((ROWS,), T.float32)
        for r in T.serial(ROWS):
            acc[r] = 0
            for k in T.vectorized(VEC):  # expect: tilelang-warning
                acc[r] += X[(base + r) * VEC + k]  # expect: scalarized-load
        for r in T.vectorized(ROWS):
            Y[base + r] = acc[r]
