"""Defect 11: print 50 MB while the kernel is built; reports, pages and the cache keep a bounded slice."""
import sys

import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"noisy": [{"N": 1024}]}


def noisy(N):
    chunk = "x" * 1023 + "\n"
    for _ in range(25 * 1024):
        sys.stdout.write(chunk)
        sys.stderr.write(chunk)

    @T.prim_func
    def noisy_main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * 2

    return noisy_main
