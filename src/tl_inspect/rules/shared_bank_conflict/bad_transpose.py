import tilelang.language as T

M = N = 4096
B = 32


@T.prim_func
def transpose(A: T.Tensor((M, N), T.float32), At: T.Tensor((N, M), T.float32)):
    with T.Kernel(N // B, M // B, threads=256) as (bx, by):
        tile = T.alloc_shared((B, B), T.float32)
        for i, j in T.Parallel(B, B):
            tile[i, j] = A[by * B + i, bx * B + j]
        for i, j in T.Parallel(B, B):
            At[bx * B + i, by * B + j] = tile[j, i]  # expect: shared-bank-conflict
