"""Issue 20, class 7: a sweep that repeats a value (each case is inspected once), beside a malformed entry whose
value is 17 MB (the error quotes it abbreviated)."""
import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"scaled": {"sweep": {"N": [2048, 2048, 4096]}}}


def scaled(N):
    @T.prim_func
    def scaled_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(N // 1024, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] * 3

    return scaled_main
