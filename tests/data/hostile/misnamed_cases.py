"""Defect 6: one case entry names no factory (a typo), another names a number; `scaled` must be inspected."""
import tilelang
import tilelang.language as T

SIZE = 4096
TL_INSPECT_CASES = {"scaled": [{"N": 2048}], "scaeld": [{"N": 1024}], "SIZE": [{}]}


def scaled(N):
    @T.prim_func
    def scaled_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(N // 1024, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] * 3

    return scaled_main
