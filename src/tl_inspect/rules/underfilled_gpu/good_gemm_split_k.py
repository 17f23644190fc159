import tilelang.language as T

M, N, K = 256, 256, 8192
BM, BN, BK = 128, 128, 64
SPLIT = 32  # 2 x 2 x 32 = 128 blocks: each walks a 32nd of K and adds its part into C


@T.prim_func
def gemm_split_k(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
    with T.Kernel(N // BN, M // BM, SPLIT, threads=128) as (bx, by, bz):
        A_shared = T.alloc_shared((BM, BK), T.float16)
        B_shared = T.alloc_shared((BK, BN), T.float16)
        acc = T.alloc_fragment((BM, BN), T.float32)
        T.clear(acc)
        for ko in T.Pipelined(K // SPLIT // BK, num_stages=3):
            T.copy(A[by * BM, (bz * (K // SPLIT // BK) + ko) * BK], A_shared)
            T.copy(B[(bz * (K // SPLIT // BK) + ko) * BK, bx * BN], B_shared)
            T.gemm(A_shared, B_shared, acc)
        T.atomic_add(C[by * BM, bx * BN], acc)
