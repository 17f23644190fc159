import tilelang.language as T


def shift(N=4096, block=1024):
    @T.prim_func
    def main(A: T.Tensor((N + 8,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(N // block, threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i + 1]  # expect: scalarized-load

    return main


shift_by_one = shift()
