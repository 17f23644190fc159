"""Kernels the API tests build in the test process (their lines are part of the expected messages)."""

import tilelang
import tilelang.language as T


@tilelang.jit
def add(N, block=1024):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return main


def scale(N, block=1024):
    """A plain factory; S[0] is one value for every lane (a broadcast, narrow by nature)."""

    @T.prim_func
    def main(X: T.Tensor((N,), T.float16), S: T.Tensor((1,), T.float16), Y: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                Y[bx * block + i] = X[bx * block + i] * S[0]

    return main
