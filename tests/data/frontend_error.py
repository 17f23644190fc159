"""Two kernels: the first compiles, the second names an undefined variable inside the kernel."""
import tilelang
import tilelang.language as T


@T.prim_func
def fine(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i]


def broken_factory(N):
    @T.prim_func
    def broken_main(A: T.Tensor((N,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                A[i] = undefined_name[i]

    return broken_main


TL_INSPECT_CASES = {"broken_factory": [{"N": 1024}]}
