"""Issue 20, class 6: the first two cases take 12 s each to build; with --timeout 20 each must get its own
limit, so none of the three is reported as timed out."""
import time

import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"scaled": [{"N": 2048}, {"N": 3072}, {"N": 4096}]}


def scaled(N):
    if N < 4096:
        time.sleep(12)

    @T.prim_func
    def scaled_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(N // 1024, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] * 3

    return scaled_main
