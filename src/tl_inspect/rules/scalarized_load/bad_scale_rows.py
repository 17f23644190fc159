import tilelang.language as T


def scale_rows(M=4096, N=4095):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.bfloat16), S: T.Tensor((M,), T.bfloat16), Y: T.Tensor((M, N), T.bfloat16)):
        with T.Kernel(M, threads=128) as bx:
            for j in T.Parallel(N):
                Y[bx, j] = X[bx, j] * S[bx]  # expect: scalarized-load

    return main


scale_odd_rows = scale_rows()
