import tilelang.language as T

N, K = 1024, 8192
ROWS, TILE = 4, 1024


@T.prim_func
def gemv_rows(A: T.Tensor((K,), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((N,), T.float16)):
    with T.Kernel(N // ROWS, threads=128) as bn:
        acc = T.alloc_fragment((ROWS, TILE), T.float32)
        s = T.alloc_fragment((ROWS,), T.float32)
        T.clear(acc)
        for kk in T.serial(K // TILE):
            for i, k in T.Parallel(ROWS, TILE):
                acc[i, k] += T.Cast(T.float32, B[bn * ROWS + i, kk * TILE + k]) * T.Cast(T.float32, A[kk * TILE + k])
        T.reduce_sum(acc, s, dim=1)
        for i in T.Parallel(ROWS):
            C[bn * ROWS + i] = s[i]
