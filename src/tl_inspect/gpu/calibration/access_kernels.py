"""The calibration suite's kernels for the terms that price one access: each a kernel whose access the
term prices, or the same work without its cause (thread counts, elements per thread, row lengths, walks,
transposes)."""

# no `from __future__ import annotations`: tilelang evaluates the kernels' annotations in their closures

import tilelang.language as T

FP16, BF16, FP32 = T.float16, T.bfloat16, T.float32


def scale_threads(N, threads, npt, dtype=FP32):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            for i, v in T.Parallel(threads, npt):
                Y[(bx * threads + i) * npt + v] = X[(bx * threads + i) * npt + v] * 3

    return main


def add_npt(N, threads=128, npt=8, dtype=FP16):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            for i, v in T.Parallel(threads, npt):
                C[(bx * threads + i) * npt + v] = A[(bx * threads + i) * npt + v] + B[(bx * threads + i) * npt + v]

    return main


def add_explicit_index(N, threads=256):
    @T.prim_func
    def main(A: T.Tensor((N,), FP16), B: T.Tensor((N,), FP16), C: T.Tensor((N,), FP16)):
        with T.Kernel(N // threads, threads=threads) as bx:
            tx = T.get_thread_binding()
            C[bx * threads + tx] = A[bx * threads + tx] + B[bx * threads + tx]

    return main


def row_walk(M, N, dtype=BF16):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), FP32)):
        with T.Kernel(M // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_var(FP32)
            s = 0
            for j in T.serial(N):
                s += T.Cast(FP32, X[bx * 128 + tx, j])
            Y[bx * 128 + tx] = s

    return main


def row_tile(M, N, rows, dtype=BF16, threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), FP32)):
        with T.Kernel(M // rows, threads=threads) as bx:
            x = T.alloc_fragment((rows, N), FP32)
            s = T.alloc_fragment((rows,), FP32)
            T.copy(X[bx * rows, 0], x)
            T.reduce_sum(x, s, dim=1)
            T.copy(s, Y[bx * rows])

    return main


def row_lone_thread(M, N):
    @T.prim_func
    def main(X: T.Tensor((M, N), FP32), Y: T.Tensor((M,), FP32)):
        with T.Kernel(M, threads=1) as bx:
            s = T.alloc_var(FP32)
            s = 0
            for j in T.serial(N):
                s += X[bx, j]
            Y[bx] = s

    return main


def row_thread_zero(M, N):
    @T.prim_func
    def main(X: T.Tensor((M, N), FP32), Y: T.Tensor((M,), FP32)):
        with T.Kernel(M, threads=128) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_var(FP32)
            s = 0
            if tx == 0:
                for j in T.serial(N):
                    s += X[bx, j]
                Y[bx] = s

    return main


def add_rows(M, N, threads=256, dtype=FP32):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=threads) as bx:
            for j in T.Parallel(N):
                C[bx, j] = A[bx, j] + B[bx, j]

    return main


def stage_1024(N, threads):
    @T.prim_func
    def main(X: T.Tensor((N,), FP16), Y: T.Tensor((N,), FP16)):
        with T.Kernel(N // 1024, threads=threads) as bx:
            s = T.alloc_shared((1024,), FP16)
            T.copy(X[bx * 1024 : (bx + 1) * 1024], s)
            T.copy(s, Y[bx * 1024 : (bx + 1) * 1024])

    return main


def row_guarded_reduce(M, N, block_m, threads, padded=4096):
    """TileOPs' reduce over rows that a vector does not divide: every element loaded on its own under
    `j < N` into a float32 fragment as wide as the padded row, then reduced (N = padded: no guard)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), BF16), Y: T.Tensor((M,), FP32)):
        with T.Kernel(M // block_m, threads=threads) as bx:
            x = T.alloc_fragment((block_m, padded), FP32)
            s = T.alloc_fragment((block_m,), FP32)
            for i in T.serial(block_m):
                for j in T.Parallel(padded):
                    x[i, j] = T.if_then_else(j < N, T.Cast(FP32, X[bx * block_m + i, j]), 0.0)
            T.reduce_sum(x, s, dim=1)
            for i in T.Parallel(block_m):
                Y[bx * block_m + i] = s[i]

    return main


def iterated_tile(N, rounds, threads=128, npt=8):
    """fp16 add's layout (8 contiguous elements per thread, a tail guard when N is ragged) with `rounds`
    FMAs per element in registers between the load and the store."""

    @T.prim_func
    def main(X: T.Tensor((N,), FP16), Y: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            x = T.alloc_fragment((threads, npt), FP32)
            for i, v in T.Parallel(threads, npt):
                x[i, v] = T.Cast(FP32, X[(bx * threads + i) * npt + v])
            for _ in T.serial(rounds):
                for i, v in T.Parallel(threads, npt):
                    x[i, v] = x[i, v] * 0.999 + 0.001
            for i, v in T.Parallel(threads, npt):
                Y[(bx * threads + i) * npt + v] = T.Cast(FP16, x[i, v])

    return main


def row_walk_vector(M, N, dtype=BF16, vector=8):
    """A thread walking its own row, a whole 16-byte vector a load (the row-walk proof's staged form)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), FP32)):
        with T.Kernel(M // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_var(FP32)
            x = T.alloc_local((vector,), dtype)
            s = 0
            for j in T.serial(N // vector):
                for v in T.vectorized(vector):
                    x[v] = X[bx * 128 + tx, j * vector + v]
                for v in T.serial(vector):
                    s += T.Cast(FP32, x[v])
            Y[bx * 128 + tx] = s

    return main


def row_lone_thread_vector(M, N):
    """One thread per block walking its row with float4 loads (the lone-thread proof's staged form)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), FP32), Y: T.Tensor((M,), FP32)):
        with T.Kernel(M, threads=1) as bx:
            s = T.alloc_var(FP32)
            x = T.alloc_local((4,), FP32)
            s = 0
            for j in T.serial(N // 4):
                for v in T.vectorized(4):
                    x[v] = X[bx, j * 4 + v]
                for v in T.serial(4):
                    s += x[v]
            Y[bx] = s

    return main


def swiglu_pairs(M, N, block_n=1024):
    """SwiGLU over interleaved gate/up pairs: every other element loaded on its own."""

    @T.prim_func
    def main(GU: T.Tensor((M, 2 * N), FP16), Y: T.Tensor((M, N), FP16)):
        with T.Kernel(N // block_n, M, threads=128) as (bx, by):
            for c in T.Parallel(block_n):
                gate = GU[by, 2 * (bx * block_n + c)]
                up = GU[by, 2 * (bx * block_n + c) + 1]
                Y[by, bx * block_n + c] = gate * up

    return main


def swiglu_halves(M, N, block_n=1024):
    """The same work over gate and up stored as contiguous halves of each row."""

    @T.prim_func
    def main(GU: T.Tensor((M, 2 * N), FP16), Y: T.Tensor((M, N), FP16)):
        with T.Kernel(N // block_n, M, threads=128) as (bx, by):
            for c in T.Parallel(block_n):
                Y[by, bx * block_n + c] = GU[by, bx * block_n + c] * GU[by, N + bx * block_n + c]

    return main


def rope(S, H, D, interleaved: bool, BS=16):
    """Rotary embeddings on bf16: interleaved (GPT-J) pairs, each of the pair loaded on its own, or
    rotate-half (NeoX) halves, each contiguous."""
    half = D // 2

    @T.prim_func
    def main(
        X: T.Tensor((S, H, D), BF16),
        Cos: T.Tensor((S, half), BF16),
        Sin: T.Tensor((S, half), BF16),
        Y: T.Tensor((S, H, D), BF16),
    ):
        with T.Kernel(S // BS, H, threads=128) as (bx, by):
            for s, i in T.Parallel(BS, half):
                if interleaved:
                    even = X[bx * BS + s, by, 2 * i]
                    odd = X[bx * BS + s, by, 2 * i + 1]
                    Y[bx * BS + s, by, 2 * i] = even * Cos[bx * BS + s, i] - odd * Sin[bx * BS + s, i]
                    Y[bx * BS + s, by, 2 * i + 1] = odd * Cos[bx * BS + s, i] + even * Sin[bx * BS + s, i]
                else:
                    first = X[bx * BS + s, by, i]
                    second = X[bx * BS + s, by, i + half]
                    Y[bx * BS + s, by, i] = first * Cos[bx * BS + s, i] - second * Sin[bx * BS + s, i]
                    Y[bx * BS + s, by, i + half] = second * Cos[bx * BS + s, i] + first * Sin[bx * BS + s, i]

    return main


def transpose_direct(M, N, B=32):
    """An fp32 transpose written straight to global memory: the store's lanes a row apart."""

    @T.prim_func
    def main(A: T.Tensor((M, N), FP32), At: T.Tensor((N, M), FP32)):
        with T.Kernel(N // B, M // B, threads=256) as (bx, by):
            for i, j in T.Parallel(B, B):
                At[bx * B + j, by * B + i] = A[by * B + i, bx * B + j]

    return main


def kv_append(S, tokens, heads, D, tiled: bool, block_t=16):
    """bf16 keys appended to a cache laid out [heads, D, S]: each lane's store a row of the cache apart, or
    `tiled` through shared memory so that each row is written whole."""

    @T.prim_func
    def main(K: T.Tensor((tokens, heads, D), BF16), Cache: T.Tensor((heads, D, S), BF16)):
        with T.Kernel(T.ceildiv(tokens, block_t), heads, threads=128) as (bt, h):
            if tiled:
                k_reg = T.alloc_fragment((block_t, D), BF16)
                tile = T.alloc_shared((D, block_t), BF16)
                T.copy(K[bt * block_t : (bt + 1) * block_t, h, 0:D], k_reg)
                for t, d in T.Parallel(block_t, D):
                    tile[d, t] = k_reg[t, d]
                T.copy(tile, Cache[h, 0:D, bt * block_t : (bt + 1) * block_t])
            else:
                for t, d in T.Parallel(block_t, D):
                    Cache[h, d, bt * block_t + t] = K[bt * block_t + t, h, d]

    return main


def transpose_in_shared(M, N, B=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), FP32), At: T.Tensor((N, M), FP32)):
        with T.Kernel(N // B, M // B, threads=128) as (bx, by):
            tile = T.alloc_shared((B, B), FP32)
            tile_t = T.alloc_shared((B, B), FP32)
            T.copy(A[by * B, bx * B], tile)
            for i, j in T.Parallel(B, B):
                tile_t[i, j] = tile[j, i]
            T.copy(tile_t, At[bx * B, by * B])

    return main
