import tilelang.language as T


def matmul(M, N, K, a_dtype=T.float16, BM=128, BN=128, BK=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), a_dtype), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=128) as (bx, by):
            A_shared = T.alloc_shared((BM, BK), T.float16)
            B_shared = T.alloc_shared((BK, BN), T.float16)
            acc = T.alloc_fragment((BM, BN), T.float32)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, BK), num_stages=3):
                T.copy(A[by * BM, ko * BK], A_shared)  # expect: unpipelined-copy
                T.copy(B[ko * BK, bx * BN], B_shared)
                T.gemm(A_shared, B_shared, acc)
            T.copy(acc, C[by * BM, bx * BN])

    return main


# rows of 1023 fp16 (2046 bytes): one element per load, neither cp.async nor TMA
gemm_k1023 = matmul(1024, 1024, 1023)
# rows of 2056 bytes: 8-byte aligned, which cp.async takes on sm_80, but TMA on sm_90 refuses the stride
gemm_k1028 = matmul(1024, 1024, 1028)
# float32 in global memory, float16 in the tile: a casting copy is never asynchronous
gemm_cast = matmul(1024, 1024, 1024, a_dtype=T.float32)
