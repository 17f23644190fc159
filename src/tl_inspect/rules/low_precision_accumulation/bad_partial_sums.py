import tilelang.language as T

M, N, THREADS, VEC = 4096, 16384, 128, 8
STEP = THREADS * VEC


@T.prim_func
def partial_sums(X: T.Tensor((M, N), T.bfloat16), P: T.Tensor((M, THREADS), T.bfloat16)):
    with T.Kernel(M, threads=THREADS) as bx:
        tx = T.get_thread_binding(0)
        x = T.alloc_local((VEC,), T.bfloat16)
        s = T.alloc_local((1,), T.bfloat16)
        T.clear(s)
        for k in T.serial(N // STEP):
            for v in T.vectorized(VEC):
                x[v] = X[bx, k * STEP + tx * VEC + v]
            for v in T.serial(VEC):
                s[0] += x[v]  # expect: low-precision-accumulation
        P[bx, tx] = s[0]
