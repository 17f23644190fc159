import tilelang.language as T

M = N = 4096
B = 32


@T.prim_func
def transpose_tiles(A: T.Tensor((M, N), T.float32), At: T.Tensor((N, M), T.float32)):
    with T.Kernel(N // B, M // B, threads=256) as (bx, by):
        tile = T.alloc_shared((B, B), T.float32)
        tile_t = T.alloc_shared((B, B), T.float32)
        T.copy(A[by * B, bx * B], tile)
        for i, j in T.Parallel(B, B):
            tile_t[i, j] = tile[j, i]  # expect: shared-bank-conflict
        T.copy(tile_t, At[bx * B, by * B])
