"""rms_norm over rows held in fragments: layout inference finds no layout when the threads do not divide N."""

import tilelang.language as T


def rms_norm(M, N, threads=256, blk_m=1):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), B: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=threads) as bx:
            x = T.alloc_fragment((blk_m, N), T.float32)
            sq = T.alloc_fragment((blk_m, N), T.float32)
            s = T.alloc_fragment((blk_m,), T.float32)
            T.copy(A[bx * blk_m, 0], x)
            for i, j in T.Parallel(blk_m, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, s, dim=1)
            for i, j in T.Parallel(blk_m, N):
                B[bx * blk_m + i, j] = x[i, j] * T.rsqrt(s[i] / N + 1e-6)

    return main


TL_INSPECT_CASES = {"rms_norm": {"M": 256, "sweep": {"N": [4095, 1000, 4096]}}}
rms_norm_4095_rows_of_2 = rms_norm(256, 4095, blk_m=2)
