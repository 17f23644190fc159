import tilelang.language as T

N, THREADS, VEC = 4096, 32, 4
BLOCK = THREADS * VEC


@T.prim_func
def written_through_pointers(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32), C: T.Tensor((N,), T.float32)):
    with T.Kernel(N // BLOCK, threads=THREADS) as bx:
        tx = T.get_thread_binding(0)
        S = T.alloc_shared((BLOCK,), T.float32)
        v = T.alloc_local((VEC,), T.float32)
        seed = T.alloc_local((1,), T.float32)
        x = T.alloc_local((1,), T.float32)
        total = T.alloc_local((1,), T.float32)
        prev = T.alloc_local((1,), T.float32)
        for k in T.vectorized(VEC):
            v[k] = A[bx * BLOCK + tx * VEC + k]
        T.call_extern("handle", "init_seed", T.address_of(seed[0]))
        x[0] = v[0] + v[1] + v[2] + v[3] + seed[0]
        with T.attr(T.comm_reducer(lambda a, b: a + b, [T.Cast(T.float32, 0)]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), x[0], True, total[0], tx, dtype="handle"))
        T.copy(B[bx * BLOCK], S)
        prev[0] = T.atomic_add(S[tx * VEC], total[0], return_prev=True)
        for k in T.vectorized(VEC):
            C[bx * BLOCK + tx * VEC + k] = S[tx * VEC + k] + prev[0]
