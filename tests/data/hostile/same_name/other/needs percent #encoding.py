"""Defect 13: a file name that a SARIF URI must percent-encode, and a kernel name that another
file of the same name also defines (--dump must keep both)."""
import tilelang
import tilelang.language as T


@T.prim_func
def doubled(A: T.Tensor((2047,), T.float16), B: T.Tensor((2047,), T.float16)):
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(1024):
            B[bx * 1024 + i] = A[bx * 1024 + i] * 5
