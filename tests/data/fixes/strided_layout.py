import tilelang.language as T

N, B, THREADS = 1 << 20, 1024, 128


@T.prim_func
def copy_strided(X: T.Tensor((N,), T.float16), Y: T.Tensor((N,), T.float16)):
    with T.Kernel(N // B, threads=THREADS) as bx:
        x_reg = T.alloc_fragment((B,), T.float16)
        # thread t owns elements t, t + THREADS, ...: no two contiguous elements per thread
        T.annotate_layout({x_reg: T.Fragment((B,), forward_thread_fn=lambda i: i % THREADS,
                                             forward_index_fn=lambda i: i // THREADS)})
        T.copy(X[bx * B:(bx + 1) * B], x_reg)
        T.copy(x_reg, Y[bx * B:(bx + 1) * B])
