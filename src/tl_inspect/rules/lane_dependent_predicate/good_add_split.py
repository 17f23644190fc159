import tilelang.language as T


def add_split(N, block=1024):
    body = N // 8 * 8

    @T.prim_func
    def main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < body:
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
            for i in T.Parallel(8):
                if bx == 0 and body + i < N:
                    C[body + i] = A[body + i] + B[body + i]

    return main


# 128-bit body up to 2040, eight scalar elements for the tail
add_2047_split = add_split(2047)
