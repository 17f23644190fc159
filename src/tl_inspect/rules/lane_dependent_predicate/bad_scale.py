import tilelang.language as T


def scale(block=1024):
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), T.bfloat16), C: T.Tensor((N,), T.bfloat16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] * 2  # expect: lane-dependent-predicate

    return main


scale_dynamic = scale()
