import tilelang.language as T

M, N, K = 256, 256, 8192
BM, BN, BK = 128, 128, 64


@T.prim_func
def gemm_4_blocks(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
    with T.Kernel(N // BN, M // BM, threads=128) as (bx, by):  # expect: underfilled-gpu
        A_shared = T.alloc_shared((BM, BK), T.float16)
        B_shared = T.alloc_shared((BK, BN), T.float16)
        acc = T.alloc_fragment((BM, BN), T.float32)
        T.clear(acc)
        for ko in T.Pipelined(K // BK, num_stages=3):
            T.copy(A[by * BM, ko * BK], A_shared)
            T.copy(B[ko * BK, bx * BN], B_shared)
            T.gemm(A_shared, B_shared, acc)
        T.copy(acc, C[by * BM, bx * BN])
