import tilelang.language as T

M = N = K = 1024


@T.prim_func
def matmul(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
    with T.Kernel(N // 128, M // 128, threads=128) as (bx, by):
        A_shared = T.alloc_shared((128, 32), T.float16)
        B_shared = T.alloc_shared((32, 128), T.float16)
        C_local = T.alloc_fragment((128, 128), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(K // 32, num_stages=3):
            T.copy(A[by * 128, k * 32], A_shared)
            T.copy(B[k * 32, bx * 128], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * 128, bx * 128])
