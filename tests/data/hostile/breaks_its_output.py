"""Issue 20, class 6: an exception whose `__str__` raises, `sys.stdout = None`, and fds 1 and 2 closed after a
partial print; the kernels must all be inspected and the error named."""
import os
import sys

import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"scaled": [{"N": 2048}, {"N": 0}, {"N": 4096}]}


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


def scaled(N):
    if N == 0:
        raise Unprintable()

    @T.prim_func
    def scaled_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(N // 1024, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] * 3

    return scaled_main


print("a partial line", end="")
print("and half an error", end="", file=sys.stderr)
sys.stdout = None
os.close(1)
os.close(2)
