"""Kernels whose ledgers the tests check: who works, what a launch moves, and what a gemm computes."""

import tilelang
import tilelang.language as T


@tilelang.jit
def parallel_256(threads=256):
    """256 elements over 256 threads: one element each, every thread works."""

    @T.prim_func
    def main(A: T.Tensor((256,), T.float16), B: T.Tensor((256,), T.float16)):
        with T.Kernel(1, threads=threads) as bx:
            for i in T.Parallel(256):
                B[i] = A[i] * 2

    return main


@tilelang.jit
def parallel_32(threads=256):
    """32 elements over 256 threads: the compiler guards the loop with `threadIdx.x < 32`."""

    @T.prim_func
    def main(A: T.Tensor((32,), T.float16), B: T.Tensor((32,), T.float16)):
        with T.Kernel(1, threads=threads) as bx:
            for i in T.Parallel(32):
                B[i] = A[i] * 2

    return main


@tilelang.jit
def vectors_on_32_threads(threads=256):
    """The book's shape: 256 elements as 32 threads x 8 (one uint4 each); the other 224 threads idle."""

    @T.prim_func
    def main(A: T.Tensor((256,), T.float16), B: T.Tensor((256,), T.float16)):
        with T.Kernel(1, threads=threads) as bx:
            tx = T.get_thread_binding(0)
            if tx < 32:
                for j in T.vectorized(8):
                    B[tx * 8 + j] = A[tx * 8 + j] * 2

    return main


@tilelang.jit
def scale_any_length(block=1024):
    """A grid only known at run time."""
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * 2

    return main


@tilelang.jit
def matmul(M, N, K, bm=128, bn=128, bk=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), T.float16)
            Bs = T.alloc_shared((bk, bn), T.float16)
            Cl = T.alloc_fragment((bm, bn), T.float32)
            T.clear(Cl)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=3):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[k * bk, bx * bn], Bs)
                T.gemm(As, Bs, Cl)
            T.copy(Cl, C[by * bm, bx * bn])

    return main
