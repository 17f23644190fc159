"""Defect 8: change the current folder at import; findings must keep the path given and the source."""
import os

import tilelang
import tilelang.language as T

os.chdir("/")


@T.prim_func
def add_2047(A: T.Tensor((2047,), T.float16), B: T.Tensor((2047,), T.float16)):
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(1024):
            B[bx * 1024 + i] = A[bx * 1024 + i] + 1
