"""Issue 20, class 7: hold 300 MiB at import; with `-j 1000` on this one file the memory limit is the machine's
memory shared by the one worker that runs, not by 1000."""
import tilelang
import tilelang.language as T

held = bytearray(300 << 20)


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2
