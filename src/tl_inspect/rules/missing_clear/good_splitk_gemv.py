import tilelang.language as T

N, K, BLOCK_N, REDUCE_THREADS, TILE_K = 1024, 1024, 2, 32, 8
BLOCK_K = REDUCE_THREADS * TILE_K


@T.prim_func
def splitk_gemv(A: T.Tensor((K,), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((N,), T.float16)):
    with T.Kernel(N // BLOCK_N, threads=(BLOCK_N, REDUCE_THREADS)) as bn:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        a = T.alloc_local((TILE_K,), T.float16)
        b = T.alloc_local((TILE_K,), T.float16)
        partial = T.alloc_local((1,), T.float32)
        C_shared = T.alloc_shared((BLOCK_N,), T.float32)
        if tk == 0:
            C_shared[tn] = 0
        T.clear(partial)
        for bk in T.serial(K // BLOCK_K):
            for k in T.vectorized(TILE_K):
                a[k] = A[bk * BLOCK_K + tk * TILE_K + k]
                b[k] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk * TILE_K + k]
            for k in T.serial(TILE_K):
                partial[0] += T.Cast(T.float32, a[k]) * T.Cast(T.float32, b[k])
        T.atomic_add(C_shared[tn], partial[0])
        C[bn * BLOCK_N + tn] = T.Cast(T.float16, C_shared[tn])
