"""A GEMM whose K fits one tile (a rank-64 update): its one `T.gemm`, in no loop, adds into a fragment
nothing cleared. The fix is `clear_accum=True` on that gemm; a `T.gemm` in a K loop gets `T.clear`
instead, as clear_accum would clear the earlier iterations' sum."""

import tilelang.language as T

M = N = 4096
K = 64


@T.prim_func
def rank_64_product(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
    with T.Kernel(N // 128, M // 128, threads=128) as (bx, by):
        a = T.alloc_shared((128, K), T.float16)
        b = T.alloc_shared((K, 128), T.float16)
        c = T.alloc_fragment((128, 128), T.float32)
        T.copy(A[by * 128, 0], a)
        T.copy(B[0, bx * 128], b)
        T.gemm(a, b, c)
        T.copy(c, C[by * 128, bx * 128])
