import tilelang.language as T

N, K = 1024, 8192
BLOCK_N, BLOCK_K = 128, 128


@T.prim_func
def naive_gemv(A: T.Tensor((K,), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((N,), T.float16)):
    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=BLOCK_N) as bn:  # expect: underfilled-gpu
        tn = T.get_thread_binding(0)
        A_shared = T.alloc_shared((BLOCK_K,), T.float16)
        B_shared = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
        C_reg = T.alloc_local((1,), T.float32)
        T.clear(C_reg)
        for bk in T.serial(T.ceildiv(K, BLOCK_K)):
            for tk in T.serial(BLOCK_K):
                A_shared[tk] = A[bk * BLOCK_K + tk]
                B_shared[tn, tk] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]  # expect: scalarized-load, shared-bank-conflict
            for tk in T.serial(BLOCK_K):
                C_reg[0] += A_shared[tk].astype(T.float32) * B_shared[tn, tk].astype(T.float32)  # expect: shared-bank-conflict
        C[bn * BLOCK_N + tn] = C_reg[0]
