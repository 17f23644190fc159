"""The calibration suite's kernels for the terms that price a whole launch: the bytes in flight, the
streaming and L2 speeds, a walk's stores (benchmarks/floor_cases.py's kernels, rewritten here)."""

# no `from __future__ import annotations`: tilelang evaluates the kernels' annotations in their closures

import tilelang.language as T

FP16, BF16, FP32 = T.float16, T.bfloat16, T.float32


def chunk_sums(N, staged: bool, vec=8, rows=4, threads=128):
    """Each thread sums `rows` chunks of `vec` floats of its own: the loads straight into the sum
    (tilelang keeps them scalar) or `staged` through a local a vector at a time."""

    @T.prim_func
    def main(X: T.Tensor((N,), FP32), Y: T.Tensor((N // vec,), FP32)):
        with T.Kernel(N // vec // rows // threads, threads=threads) as bx:
            tx = T.get_thread_binding(0)
            base = (bx * threads + tx) * rows
            acc = T.alloc_local((rows,), FP32)
            v = T.alloc_local((vec,), FP32)
            for r in T.serial(rows):
                acc[r] = 0
                if staged:
                    for k in T.vectorized(vec):
                        v[k] = X[(base + r) * vec + k]
                    for k in T.serial(vec):
                        acc[r] += v[k]
                else:
                    for k in T.vectorized(vec):
                        acc[r] += X[(base + r) * vec + k]
            for r in T.vectorized(rows):
                Y[base + r] = acc[r]

    return main


N26 = 1 << 26


def copy_one_per_thread(N, threads):
    """An fp32 copy, one element per thread: a 4-byte load per thread is all a thread keeps in flight."""

    @T.prim_func
    def main(X: T.Tensor((N,), FP32), Y: T.Tensor((N,), FP32)):
        with T.Kernel(N // threads, threads=threads) as bx:
            for i in T.Parallel(threads):
                Y[bx * threads + i] = X[bx * threads + i]

    return main


def copy_grid(blocks, N=N26, threads=256, vec=4):
    """An fp32 copy by 16-byte vectors over a fixed grid of `blocks`, each block looping over its share
    (benchmarks/floor_cases.py): too few blocks keep too little in flight."""
    tiles = N // (blocks * threads * vec)

    @T.prim_func
    def main(X: T.Tensor((N,), FP32), Y: T.Tensor((N,), FP32)):
        with T.Kernel(blocks, threads=threads) as bx:
            for t in T.serial(tiles):
                for i, v in T.Parallel(threads, vec):
                    Y[((t * blocks + bx) * threads + i) * vec + v] = X[((t * blocks + bx) * threads + i) * vec + v]

    return main


def reread_rows(rows, blocks=65536, n=4096, threads=128):
    """Every block sums one row of `rows` rows of `n` fp32 (block b row b % rows): with as many rows as
    blocks a streaming read, with few the blocks re-read them from the L2 (benchmarks/floor_cases.py)."""

    @T.prim_func
    def main(X: T.Tensor((rows, n), FP32), Y: T.Tensor((blocks,), FP32)):
        with T.Kernel(blocks, threads=threads) as bx:
            row = T.alloc_fragment((n,), FP32)
            total = T.alloc_fragment((1,), FP32)
            T.copy(X[bx % rows, :], row)
            T.reduce_sum(row, total, dim=0)
            Y[bx] = total[0]

    return main


def row_layer_norm(M, N, threads=128):
    """LayerNorm (no affine) with a row per thread: each thread walks its own fp16 row three times (the
    mean, the variance, then the normalized row stored), every lane's store in a line of its own."""

    @T.prim_func
    def main(X: T.Tensor((M, N), FP16), Y: T.Tensor((M, N), FP16)):
        with T.Kernel(M // threads, threads=threads) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_var(FP32)
            q = T.alloc_var(FP32)
            mean = T.alloc_var(FP32)
            rstd = T.alloc_var(FP32)
            s = 0
            for j in T.serial(N):
                s += T.Cast(FP32, X[bx * threads + tx, j])
            mean = s / N
            q = 0
            for j in T.serial(N):
                q += (T.Cast(FP32, X[bx * threads + tx, j]) - mean) * (T.Cast(FP32, X[bx * threads + tx, j]) - mean)
            rstd = T.rsqrt(q / N + 1e-5)
            for j in T.serial(N):
                Y[bx * threads + tx, j] = T.Cast(FP16, (T.Cast(FP32, X[bx * threads + tx, j]) - mean) * rstd)

    return main
