import tilelang.language as T


def row_sum(M=4096, N=4096):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(M, threads=128) as bx:
            x = T.alloc_fragment((N,), T.float32)
            s = T.alloc_fragment((1,), T.float32)
            T.copy(X[bx, 0:N], x)
            T.reduce_sum(x, s, dim=0)
            Y[bx] = s[0]

    return main


# one scalar per row is all there is to store
row_sums = row_sum()
