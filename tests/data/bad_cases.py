import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"scale": {"N": 1024}}


def scale(N):
    @T.prim_func
    def scale_main(A: T.Tensor((N,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                A[i] = A[i] * 2

    return scale_main
