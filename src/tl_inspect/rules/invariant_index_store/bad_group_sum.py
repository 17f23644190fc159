import tilelang.language as T

M, N, G = 256, 1024, 8


@T.prim_func
def group_sum(V: T.Tensor((M, N), T.float16), Out: T.Tensor((M, N // G), T.float32)):
    with T.Kernel(M, threads=128) as bx:
        acc = T.alloc_fragment((N // G,), T.float32)
        T.clear(acc)
        for i in T.Parallel(N):
            acc[i // G] += V[bx, i]  # expect: invariant-index-store
        T.copy(acc, Out[bx, :])
