# -*- coding: latin-1 -*-
"""Issue 20, class 8: a latin-1 source with a coding cookie; the finding's line (14) is shown as written."""
import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"padded": [{"N": 2047, "tag": ""}]}


def padded(N, tag):
    @T.prim_func
    def padded_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] + 1  # café crème

    return padded_main
