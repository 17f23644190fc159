"""One tile of Q @ K^T: a single `T.gemm` in no loop, into a fragment nothing cleared. Its fix is
`clear_accum=True` on that gemm (a `T.gemm` in a K loop gets `T.clear` instead: clear_accum would
clear the earlier iterations' sum)."""

import tilelang.language as T


def attention_scores(M, N, D, block_M=64, block_N=64, dtype=T.float16):
    @T.prim_func
    def main(Q: T.Tensor((M, D), dtype), K: T.Tensor((N, D), dtype), S: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            Q_shared = T.alloc_shared((block_M, D), dtype)
            K_shared = T.alloc_shared((block_N, D), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), T.float32)
            S_shared = T.alloc_shared((block_M, block_N), T.float32)
            T.copy(Q[by * block_M, 0], Q_shared)
            T.copy(K[bx * block_N, 0], K_shared)
            T.gemm(Q_shared, K_shared, acc_s, transpose_B=True)
            T.copy(acc_s, S_shared)
            T.copy(S_shared, S[by * block_M, bx * block_N])

    return main


scores = attention_scores(2048, 2048, 128)
