import tilelang.language as T


def cast(N=1 << 20, block=1024):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), C: T.Tensor((N,), T.float16)):
        with T.Kernel(N // block, threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = T.Cast(T.float16, A[bx * block + i])

    return main


# the fp16 store is 64-bit: the cast caps the loop at 4 lanes, which is not a scalarized access
cast_to_half = cast()
