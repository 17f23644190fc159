import tilelang.language as T


@T.prim_func
def block_sum(A: T.Tensor((128,), T.float32), Out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        tid = T.get_thread_binding()
        T.atomic_add(Out[0], A[tid])


@T.prim_func
def count_blocks(Out: T.Tensor((4,), T.float32)):
    with T.Kernel(64, threads=128) as bx:
        # the same value in every thread: each element of `Out` gains 1 per block, as written
        T.atomic_add(Out, 1.0)


@T.prim_func
def tile_add(A: T.Tensor((128, 64), T.float32), Out: T.Tensor((64,), T.float32)):
    with T.Kernel(128, threads=64) as bx:
        row = T.alloc_fragment((64,), T.float32)
        T.copy(A[bx, 0:64], row)
        T.atomic_add(Out, row)
