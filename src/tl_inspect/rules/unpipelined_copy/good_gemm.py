import tilelang.language as T


def matmul(M, N, K, BM=128, BN=128, BK=32, stages=3):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_shared = T.alloc_shared((BM, BK), T.float16)
            B_shared = T.alloc_shared((BK, BN), T.float16)
            acc = T.alloc_fragment((BM, BN), T.float32)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, BK), num_stages=stages):
                T.copy(A[by * BM, ko * BK], A_shared)
                T.copy(B[ko * BK, bx * BN], B_shared)
                T.gemm(A_shared, B_shared, acc)
            T.copy(acc, C[by * BM, bx * BN])

    return main


# K padded to a multiple of 8 elements: TMA on sm_90, cp.async on sm_80
gemm_k1024 = matmul(1024, 1024, 1024)
# a ragged last K tile: still TMA (it pads out of bounds), cp.async with a predicate on sm_80
gemm_k1000 = matmul(1024, 1024, 1000)
# one stage pipelines nothing, whatever the copy becomes
gemm_k1023_one_stage = matmul(1024, 1024, 1023, stages=1)
