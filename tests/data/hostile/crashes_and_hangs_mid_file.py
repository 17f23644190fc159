"""Defect 2: the second case segfaults, the third hangs; the first and the fourth must be inspected."""
import faulthandler
import time

import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"scaled": [{"N": 2048}, {"N": 0}, {"N": 1}, {"N": 4096}]}


def scaled(N):
    if N == 0:
        faulthandler._sigsegv()
    if N == 1:
        time.sleep(600)

    @T.prim_func
    def scaled_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(N // 1024, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] * 3

    return scaled_main
