"""The second case kills its worker the way a compiler segfault does; the first must survive."""
import faulthandler

import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"scaled": [{"N": 2048}, {"N": 0}]}


def scaled(N):
    if N == 0:
        faulthandler._sigsegv()

    @T.prim_func
    def scaled_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(N // 1024, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] * 3

    return scaled_main
