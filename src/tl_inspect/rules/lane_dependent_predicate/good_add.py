import tilelang.language as T


def add(N, block=1024):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return main


add_2048 = add(2048)
# 4104 = 513 x 8: the check is hoisted to thread level and the accesses stay 128-bit
add_4104 = add(4104)
