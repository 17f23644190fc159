"""The calibration suite: for each term of the cost model, kernels it prices by that term next to the
same work with the term's cause removed (tl_inspect.gpu.calibration.fit turns their timings into terms).

These are the H200 calibration's kernels (docs/gpu-impact.md, "Calibration of the cost model"), sized to
move 0.25-2 GB a launch so that neither the launch nor the L2 counts, except the launch's own case: a tail
guard small enough that the launch hides part of its loss. The whole launch's terms (the bytes in flight,
the streaming and L2 speeds, a walk's stores) are calibrated on benchmarks/floor_cases.py's kernels,
rewritten here, each moving 0.1-1 GB.
"""

# no `from __future__ import annotations`: tilelang evaluates the kernels' annotations in their closures

from dataclasses import dataclass

import tilelang.language as T

RATIO, TIME = "ratio", "time"


@dataclass(frozen=True)
class Case:
    term: str  # the cost table's term the case calibrates
    label: str
    bad: object  # a PrimFunc priced by the term; None where only `good` is timed
    good: object  # the same work without the cause
    # what fits the term: RATIO, the two forms' time per byte; TIME, the good form's time
    fit: str = RATIO


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
            T.copy(X[bx * 1024:(bx + 1) * 1024], s)
            T.copy(s, Y[bx * 1024:(bx + 1) * 1024])

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
    def main(X: T.Tensor((S, H, D), BF16), Cos: T.Tensor((S, half), BF16), Sin: T.Tensor((S, half), BF16),
             Y: T.Tensor((S, H, D), BF16)):
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
                T.copy(K[bt * block_t:(bt + 1) * block_t, h, 0:D], k_reg)
                for t, d in T.Parallel(block_t, D):
                    tile[d, t] = k_reg[t, d]
                T.copy(tile, Cache[h, 0:D, bt * block_t:(bt + 1) * block_t])
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


N1 = 1 << 28
ODD = N1 + 1
ROWS = 1 << 21


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


def cases() -> list:
    return [
        Case("block_floor_bytes", "Y = 3X fp32, 64 threads x 1 per block (2^22 blocks) vs 256 x 4",
             scale_threads(N1, 64, 1), scale_threads(N1, 256, 4)),
        Case("two_bytes_per_thread", "fp16 add, idx = bx * 256 + tx vs 8 per thread",
             add_explicit_index(N1), add_npt(N1, 128, 8)),
        Case("four_bytes_per_thread", "fp16 add, 256 threads x 2 per thread vs 128 x 8",
             add_npt(N1, 256, 2), add_npt(N1, 128, 8)),
        Case("narrow_coalesced", "fp16 add over rows of 1023 vs 1024",
             add_rows(131072, 1023, dtype=FP16), add_rows(131072, 1024, dtype=FP16)),
        Case("spread_store_8", "fp16 add N = 2^28 + 1, 4 per thread vs N = 2^28 + 8",
             add_npt(ODD, 128, 4), add_npt(N1 + 8, 128, 4)),
        Case("spread_store_16", "fp16 add N = 2^28 + 1, 8 per thread vs N = 2^28 + 8",
             add_npt(ODD, 128, 8), add_npt(N1 + 8, 128, 8)),
        Case("spread_store_16", "fp16 add N = 2^28 + 1, 16 per thread vs N = 2^28 + 16",
             add_npt(ODD, 128, 16), add_npt(N1 + 16, 128, 16)),
        Case("l1_bytes_per_wavefront", "bf16 rows of 256, a row per thread vs T.copy + T.reduce_sum",
             row_walk(ROWS, 256), row_tile(ROWS, 256, 8)),
        Case("l1_bytes_per_wavefront", "bf16 rows of 32, a row per thread vs T.copy + T.reduce_sum",
             row_walk(ROWS * 8, 32), row_tile(ROWS * 8, 32, 32)),
        Case("l1_bytes_per_wavefront", "fp32 chunk sums, 4 chunks of 8 per thread: loads into the sum vs staged",
             chunk_sums(1 << 28, staged=False), chunk_sums(1 << 28, staged=True)),
        Case("vector_row_walk", "bf16 rows of 256, a row per thread in 16-byte loads vs T.copy + T.reduce_sum",
             row_walk_vector(ROWS, 256), row_tile(ROWS, 256, 8)),
        Case("lone_thread_walk", "fp32 rows of 16384, one thread per block vs 128 threads, T.copy + T.reduce_sum",
             row_lone_thread(8192, 16384), row_tile(8192, 16384, 1, FP32)),
        Case("lone_thread_walk", "fp32 rows of 16384, thread 0 of 128 walks the row vs T.copy + T.reduce_sum",
             row_thread_zero(8192, 16384), row_tile(8192, 16384, 1, FP32)),
        Case("lone_thread_vector_walk", "fp32 rows of 16384, one thread per block in float4 loads vs 128 threads",
             row_lone_thread_vector(8192, 16384), row_tile(8192, 16384, 1, FP32)),
        Case("staged_half_vector", "fp16 copy through shared memory, 1024 per block: 256 threads vs 128",
             stage_1024(N1, 256), stage_1024(N1, 128)),
        Case("interleaved_loads", "SwiGLU over interleaved gate/up pairs vs contiguous halves, 32768 x 8192 fp16",
             swiglu_pairs(32768, 8192), swiglu_halves(32768, 8192)),
        Case("interleaved_loads", "GPT-J RoPE over interleaved pairs vs NeoX halves, 65536 x 32 x 128 bf16",
             rope(65536, 32, 128, interleaved=True), rope(65536, 32, 128, interleaved=False)),
        Case("transposed_store", "bf16 KV append into a [heads, D, S] cache, 65536 tokens x 8 heads x 128, vs tiled",
             kv_append(65536, 65536, 8, 128, tiled=False), kv_append(65536, 65536, 8, 128, tiled=True)),
        Case("transposed_store", "fp32 transpose 8192^2 written by column vs through shared memory",
             transpose_direct(8192, 8192), transpose_in_shared(8192, 8192)),
        Case("full_speed_bytes_per_ns", "fp16 add N = 2^28, 8 per thread",
             None, add_npt(N1, 128, 8), TIME),
        Case("float_ops_per_ns", "fp16 N = 2^26 + 8, 8 per thread, 512 FMA rounds per element in registers",
             None, iterated_tile((1 << 26) + 8, 512), TIME),
        # a launch of 1.5 MB: 0.36 us of its bytes at full speed, the rest the launch's own
        Case("launch_ns", "fp16 add N = 2^18, 8 per thread (1.5 MB a launch)", None, add_npt(1 << 18, 128, 8), TIME),
        # 256 rows on 132 SMs: each thread's walk, not the memory, sets the time
        Case("lone_thread_element_ns", "fp32 rows of 16384, 256 rows, one thread per block",
             None, row_lone_thread(256, 16384), TIME),
        Case("walk_load_ns", "bf16 rows of 256, 1024 rows, a row per thread", None, row_walk(1024, 256), TIME),
        Case("walk_vector_load_ns", "bf16 rows of 256, 1024 rows, a row per thread in 16-byte loads",
             None, row_walk_vector(1024, 256), TIME),
    ] + [
        Case("held_narrow_loads_spilled" if block_m * 4096 // threads >= 128 else
             "held_narrow_loads" if block_m * 4096 // threads >= 32 else "narrow_coalesced",
             f"bf16 rows of 4095 vs 4096 reduced, {block_m} row(s) per {threads} threads "
             f"({block_m * 4096 // threads} per thread)",
             row_guarded_reduce(1 << 17, 4095, block_m, threads), row_guarded_reduce(1 << 17, 4096, block_m, threads))
        for block_m, threads in ((1, 512), (1, 256), (1, 128), (2, 128), (4, 128))
    ] + [
        # the whole launch's estimate (tl_inspect.analysis.estimate): its bytes in flight, its streaming
        # and L2 speeds, a walk's stores; fp32 copies of 2^26 elements (537 MB), reads of 1.07 GB
        Case("bytes_in_flight", "fp32 copy N = 2^26, one element per thread in blocks of 256 vs 16-byte vectors "
             "over 1024 blocks", copy_one_per_thread(N26, 256), copy_grid(1024)),
    ] + [
        Case("loop_loads_in_flight", f"fp32 copy N = 2^26 by 16-byte vectors, {blocks} blocks of 256 threads "
             f"looping over tiles vs 1024 blocks", copy_grid(blocks), copy_grid(1024))
        for blocks in (8, 32)
    ] + [
        # 64 blocks of 128 threads, under one per SM: each thread's walk, not the memory, sets the time
        Case("walk_store_ns", "fp16 LayerNorm, 8192 rows of 4096, a row per thread walked three times, the last "
             "storing", None, row_layer_norm(8192, 4096), TIME),
        Case("streaming_read_bytes_per_ns", "fp32 read of 1.07 GB: 65536 blocks each summing a row of 4096 of its "
             "own", None, reread_rows(65536), TIME),
        Case("streaming_write_bytes_per_ns", "fp32 copy N = 2^26 (537 MB) by 16-byte vectors over 1024 blocks",
             None, copy_grid(1024), TIME),
        Case("l2_bytes_per_ns", "65536 blocks each summing one of 64 fp32 rows of 4096 (1.07 GB re-read from the L2)",
             None, reread_rows(64), TIME),
    ]
