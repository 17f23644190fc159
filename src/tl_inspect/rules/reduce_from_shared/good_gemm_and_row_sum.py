import tilelang.language as T

M, N, K = 128, 128, 128


@T.prim_func
def gemm_and_row_sum(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16),
                     C: T.Tensor((M, N), T.float32), S: T.Tensor((M,), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((M, K), T.float16)
        B_s = T.alloc_shared((K, N), T.float16)
        C_l = T.alloc_fragment((M, N), T.float32)
        s = T.alloc_fragment((M,), T.float16)
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, clear_accum=True)
        T.reduce_max(A_s, s, dim=1)
        T.copy(C_l, C)
        T.copy(s, S)
