import tilelang.language as T

M, N, K = 1024, 1024, 1024
BM, BN, BK = 128, 128, 32


@T.prim_func
def matmul(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
    with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):
        A_s = T.alloc_shared((BM, BK), T.float16)
        B_s = T.alloc_shared((BK, BN), T.float16)
        C_l = T.alloc_fragment((BM, BN), T.float32)
        for k in T.Pipelined(K // BK, num_stages=3):
            T.copy(A[by * BM, k * BK], A_s)
            T.copy(B[k * BK, bx * BN], B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=(k == 0))
        T.copy(C_l, C[by * BM, bx * BN])
