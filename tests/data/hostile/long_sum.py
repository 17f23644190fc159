"""Defect 1: a 500-term sum is 500 levels deep, past Python's default recursion limit in the parent."""
import tilelang
import tilelang.language as T


def terms(A, count):
    expr = A[0]
    for j in range(1, count):
        expr = expr + A[j]
    return expr


@T.prim_func
def long_sum(A: T.Tensor((1024,), T.float32), B: T.Tensor((128,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = terms(A, 500)


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2
