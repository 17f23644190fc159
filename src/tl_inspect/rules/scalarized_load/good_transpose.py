import tilelang.language as T


def transpose(M=1024, N=1024, B=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), At: T.Tensor((N, M), T.float16)):
        with T.Kernel(N // B, M // B, threads=128) as (bx, by):
            As = T.alloc_shared((B, B), T.float16)
            Bs = T.alloc_shared((B, B), T.float16)
            T.copy(A[by * B, bx * B], As)
            for i, j in T.Parallel(B, B):
                Bs[i, j] = As[j, i]  # expect: shared-bank-conflict
            T.copy(Bs, At[bx * B, by * B])

    return main


transpose_in_shared = transpose()
