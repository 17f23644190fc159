import tilelang.language as T


@T.prim_func
def block_sum(A: T.Tensor((128,), T.float32), Out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        tid = T.get_thread_binding()
        T.atomic_add(Out, A[tid])  # expect: whole-buffer-atomic


@T.prim_func
def block_max(A: T.Tensor((128,), T.float32), Out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        tid = T.get_thread_binding()
        T.atomic_max(Out, A[tid] * 2.0)  # expect: whole-buffer-atomic
