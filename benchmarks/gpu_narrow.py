"""What each kind of narrow (< 128-bit) global access costs on a GPU: each flagged kernel next to its twin.

Run by hand on a machine with an NVIDIA GPU (not by the tests; CI has no GPU):
`python benchmarks/gpu_narrow.py` prints a Markdown table. `--source` only lowers every kernel for sm_90
(no GPU, no nvcc) and prints the global accesses each one emits.

Each BAD kernel comes with a GOOD twin that does the same work with the cause removed (aligned length,
no user layout, 8 elements per thread, ...). Each launch moves 1.07-1.61 GB, so L2 (50 MB) never holds
the data. Each time is the median of 30 launches after 5 warm-ups, CUDA events around one launch, with a
`torch.cuda._sleep` queued before it. GB/s = bytes the function needs (inputs read once, outputs written
once) / time. Every output is poisoned (all bits set: NaN) and checked against torch before timing.
"""

import argparse
import re
import statistics
import sys
from dataclasses import dataclass
from typing import Callable

import tilelang
import tilelang.language as T
import torch

WARMUP, REPEAT = 5, 30
# about 0.5 ms of GPU time at H200 clocks: the host queues the timed launch while the GPU still sleeps,
# so the launch overhead of the Python call stays out of the measurement
SLEEP_CYCLES = 1_000_000
N_1D = 1 << 28
FP16, BF16, FP32, FP8 = T.float16, T.bfloat16, T.float32, T.float8_e4m3fn


# ---- 1a tail guard: 8 contiguous elements per thread, odd N gives a per-lane guard


def add_npt(N, threads=128, npt=8):
    @T.prim_func
    def add_npt_main(A: T.Tensor((N,), FP16), B: T.Tensor((N,), FP16), C: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            for i, v in T.Parallel(threads, npt):
                k = (bx * threads + i) * npt + v
                C[k] = A[k] + B[k]

    return add_npt_main


# ---- 1b fragment T.copy with a ragged tail


def scale2_fragment(N, block=1024, threads=128):
    @T.prim_func
    def scale2_fragment_main(X: T.Tensor((N,), FP16), Y: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            x_reg = T.alloc_fragment((block,), FP16)
            y_reg = T.alloc_fragment((block,), FP16)
            T.copy(X[bx * block : (bx + 1) * block], x_reg)
            for i in T.Parallel(block):
                y_reg[i] = x_reg[i] * T.cast(2, FP16)
            T.copy(y_reg, Y[bx * block : (bx + 1) * block])

    return scale2_fragment_main


# ---- 1c KV-cache append into C[H, D, S] (tokens innermost) at a run-time position


def kv_append_direct(S, Tn, H, D, block_t=16):
    @T.prim_func
    def kv_append_direct_main(K: T.Tensor((Tn, H, D), BF16), C: T.Tensor((H, D, S), BF16), pos: T.int32):
        with T.Kernel(T.ceildiv(Tn, block_t), H, threads=128) as (bt, h):
            for t, d in T.Parallel(block_t, D):
                C[h, d, pos + bt * block_t + t] = K[bt * block_t + t, h, d]

    return kv_append_direct_main


def kv_append_tiled(S, Tn, H, D, block_t=16):
    @T.prim_func
    def kv_append_tiled_main(K: T.Tensor((Tn, H, D), BF16), C: T.Tensor((H, D, S), BF16), pos: T.int32):
        with T.Kernel(T.ceildiv(Tn, block_t), H, threads=128) as (bt, h):
            k_reg = T.alloc_fragment((block_t, D), BF16)
            tile = T.alloc_shared((D, block_t), BF16)
            T.copy(K[bt * block_t : (bt + 1) * block_t, h, 0:D], k_reg)
            for t, d in T.Parallel(block_t, D):
                tile[d, t] = k_reg[t, d]
            T.copy(tile, C[h, 0:D, pos + bt * block_t : pos + (bt + 1) * block_t])

    return kv_append_tiled_main


# ---- 1d global -> fragment -> global copy, with and without a user fragment layout


def copy_fragment(N, annotate, block=1024, threads=128):
    @T.prim_func
    def copy_fragment_main(X: T.Tensor((N,), FP16), Y: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            x_reg = T.alloc_fragment((block,), FP16)
            if annotate:
                # thread t owns elements t, t + threads, ...: no two contiguous elements in one thread
                T.annotate_layout(
                    {
                        x_reg: T.Fragment(
                            (block,), forward_thread_fn=lambda i: i % threads, forward_index_fn=lambda i: i // threads
                        )
                    }
                )
            T.copy(X[bx * block : (bx + 1) * block], x_reg)
            T.copy(x_reg, Y[bx * block : (bx + 1) * block])

    return copy_fragment_main


# ---- 2a, 3c: elements per thread = block / threads


def add_block(N, block, threads):
    @T.prim_func
    def add_block_main(A: T.Tensor((N,), FP16), B: T.Tensor((N,), FP16), C: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return add_block_main


# ---- 2b fp16 -> fp8 cast


def cast_fp8_parallel(N, threads=256, npt=8):
    @T.prim_func
    def cast_fp8_parallel_main(X: T.Tensor((N,), FP16), Y: T.Tensor((N,), FP8)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            for i, v in T.Parallel(threads, npt):
                Y[(bx * threads + i) * npt + v] = T.cast(X[(bx * threads + i) * npt + v], FP8)

    return cast_fp8_parallel_main


def cast_fp8_vectorized(N, threads=256, npt=16):
    # T.Parallel(256, 16) still stores 64 bits at a time; explicit local arrays give 128-bit fp8 stores
    @T.prim_func
    def cast_fp8_vectorized_main(X: T.Tensor((N,), FP16), Y: T.Tensor((N,), FP8)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            tx = T.get_thread_binding()
            x = T.alloc_local((npt,), FP16)
            y = T.alloc_local((npt,), FP8)
            for v in T.vectorized(npt):
                x[v] = X[(bx * threads + tx) * npt + v]
            for v in T.vectorized(npt):
                y[v] = T.cast(x[v], FP8)
            for v in T.vectorized(npt):
                Y[(bx * threads + tx) * npt + v] = y[v]

    return cast_fp8_vectorized_main


# ---- 2c T.copy of 1024 fp16 through shared memory


def copy_shared(N, threads, block=1024):
    @T.prim_func
    def copy_shared_main(X: T.Tensor((N,), FP16), Y: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            s = T.alloc_shared((block,), FP16)
            T.copy(X[bx * block : (bx + 1) * block], s)
            T.copy(s, Y[bx * block : (bx + 1) * block])

    return copy_shared_main


# ---- 2d fp32 column sum


def colsum_per_thread(M, N, threads=128):
    @T.prim_func
    def colsum_per_thread_main(X: T.Tensor((M, N), FP32), Y: T.Tensor((N,), FP32)):
        with T.Kernel(T.ceildiv(N, threads), threads=threads) as bx:
            acc = T.alloc_local((1,), FP32)
            tx = T.get_thread_binding()
            acc[0] = 0.0
            for r in T.serial(M):
                acc[0] += X[r, bx * threads + tx]
            Y[bx * threads + tx] = acc[0]

    return colsum_per_thread_main


def colsum_tiled(M, N, bm=32, bn=256, threads=128):
    @T.prim_func
    def colsum_tiled_main(X: T.Tensor((M, N), FP32), Y: T.Tensor((N,), FP32)):
        with T.Kernel(T.ceildiv(N, bn), threads=threads) as bx:
            tile = T.alloc_fragment((bm, bn), FP32)
            acc = T.alloc_fragment((bm, bn), FP32)
            out = T.alloc_fragment((bn,), FP32)
            T.clear(acc)
            for k in T.serial(M // bm):
                T.copy(X[k * bm, bx * bn], tile)
                for i, j in T.Parallel(bm, bn):
                    acc[i, j] += tile[i, j]
            # one cross-thread reduction at the end, not one per tile
            T.reduce_sum(acc, out, dim=0)
            T.copy(out, Y[bx * bn])

    return colsum_tiled_main


# ---- 3a user bounds check


def scale2_guarded(N, limit, block=1024, threads=128):
    @T.prim_func
    def scale2_guarded_main(A: T.Tensor((N,), FP16), C: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                if bx * block + i < limit:
                    C[bx * block + i] = A[bx * block + i] * T.cast(2, FP16)

    return scale2_guarded_main


# ---- 3b constant offset


def copy_offset(N, offset, block=1024, threads=128):
    @T.prim_func
    def copy_offset_main(A: T.Tensor((N + 8,), FP16), C: T.Tensor((N,), FP16)):
        with T.Kernel(N // block, threads=threads) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i + offset]

    return copy_offset_main


# ---- 3d one row per CTA


def rowscale(M, N, threads=128):
    @T.prim_func
    def rowscale_main(A: T.Tensor((M, N), FP16), B: T.Tensor((M, N), FP16)):
        with T.Kernel(M, threads=threads) as bx:
            for j in T.Parallel(N):
                B[bx, j] = A[bx, j] * T.cast(2, FP16)

    return rowscale_main


# ---- 3e length known only at run time


def add_dynamic(assume, threads=128, npt=8):
    N = T.dynamic("N")

    @T.prim_func
    def add_dynamic_main(A: T.Tensor((N,), FP16), B: T.Tensor((N,), FP16), C: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            if assume:
                T.assume(N % npt == 0)
            for i, v in T.Parallel(threads, npt):
                k = (bx * threads + i) * npt + v
                C[k] = A[k] + B[k]

    return add_dynamic_main


# ---- 3f per-thread loop written by the user


def scale2_thread_loop(N, vectorized, threads=128, npt=8):
    loop = T.vectorized if vectorized else T.serial

    @T.prim_func
    def scale2_thread_loop_main(A: T.Tensor((N,), FP16), C: T.Tensor((N,), FP16)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            tx = T.get_thread_binding()
            for v in loop(npt):
                C[(bx * threads + tx) * npt + v] = A[(bx * threads + tx) * npt + v] * T.cast(2, FP16)

    return scale2_thread_loop_main


# ---- the pairs


@dataclass
class Launch:
    args: tuple
    poison: torch.Tensor  # the whole output buffer, so a store that lands anywhere wrong shows up
    check: Callable[[], bool]
    nbytes: int


@dataclass
class Pair:
    group: str
    bad: tuple[str, object]  # (label, PrimFunc)
    good: tuple[str, object]
    data: Callable[[], tuple[Launch, Launch]]  # built only when the pair runs, to hold one pair in memory


def rand(*shape, dtype=torch.float16):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def empty(*shape, dtype=torch.float16):
    return torch.empty(*shape, device="cuda", dtype=dtype)


def close(got, expected, rtol=1e-3, atol=1e-3):
    return torch.allclose(got.float(), expected.float(), rtol=rtol, atol=atol)


KV = dict(S=16384, Tn=8192, H=256, D=128)
KV_POS = 4096
COLSUM = (4096, 65536)
ROWS = 65536
N_FP8 = 1 << 29


def data_add(n_bad, n_good):
    a, b, c = rand(max(n_bad, n_good)), rand(max(n_bad, n_good)), empty(max(n_bad, n_good))
    ref = a + b

    def launch(n):
        return Launch((a[:n], b[:n], c[:n]), c, lambda: close(c[:n], ref[:n]), 6 * n)

    return launch(n_bad), launch(n_good)


def data_scale2(n_bad, n_good):
    x, y = rand(max(n_bad, n_good)), empty(max(n_bad, n_good))

    def launch(n):
        return Launch((x[:n], y[:n]), y, lambda: close(y[:n], 2 * x[:n]), 4 * n)

    return launch(n_bad), launch(n_good)


def data_copy(n):
    x, y = rand(n), empty(n)
    same = Launch((x, y), y, lambda: close(y, x), 4 * n)
    return same, same


def data_kv():
    k = rand(KV["Tn"], KV["H"], KV["D"], dtype=torch.bfloat16)
    c = empty(KV["H"], KV["D"], KV["S"], dtype=torch.bfloat16)
    same = Launch(
        (k, c, KV_POS), c, lambda: close(c[:, :, KV_POS : KV_POS + KV["Tn"]], k.permute(1, 2, 0)), 2 * k.numel() * 2
    )
    return same, same


def data_fp8():
    x, y = rand(N_FP8), empty(N_FP8, dtype=torch.float8_e4m3fn)
    # rounding may differ from torch's by one fp8 step (3 mantissa bits)
    same = Launch((x, y), y, lambda: close(y, x.to(torch.float8_e4m3fn), rtol=0.125, atol=1e-3), 3 * N_FP8)
    return same, same


def data_colsum():
    M, N = COLSUM
    x, y = rand(M, N, dtype=torch.float32), empty(N, dtype=torch.float32)
    same = Launch((x, y), y, lambda: close(y, x.sum(dim=0), rtol=1e-3, atol=1e-2), 4 * M * N + 4 * N)
    return same, same


def data_guarded():
    a, c = rand(N_1D), empty(N_1D)
    bad = Launch((a, c), c, lambda: close(c[:-1], 2 * a[:-1]), 4 * (N_1D - 1))
    good = Launch((a, c), c, lambda: close(c, 2 * a), 4 * N_1D)
    return bad, good


def data_offset():
    a, c = rand(N_1D + 8), empty(N_1D)
    bad = Launch((a, c), c, lambda: close(c, a[1 : N_1D + 1]), 4 * N_1D)
    good = Launch((a, c), c, lambda: close(c, a[:N_1D]), 4 * N_1D)
    return bad, good


def data_rows():
    def launch(n):
        a, b = rand(ROWS, n), empty(ROWS, n)
        return Launch((a, b), b, lambda: close(b, 2 * a), 4 * ROWS * n)

    return launch(4095), launch(4096)


def data_thread_loop():
    a, c = rand(N_1D), empty(N_1D)
    same = Launch((a, c), c, lambda: close(c, 2 * a), 4 * N_1D)
    return same, same


PAIRS = [
    Pair(
        "1a tail guard: add fp16, `T.Parallel(128, 8)`, `k = (bx*128 + i)*8 + v`",
        ("N = 2^28 - 1", add_npt(N_1D - 1)),
        ("N = 2^28", add_npt(N_1D)),
        lambda: data_add(N_1D - 1, N_1D),
    ),
    Pair(
        "1b fragment `T.copy`, y = 2x fp16, 1024 per CTA",
        ("N = 2^28 + 1 (ragged tail)", scale2_fragment(N_1D + 1)),
        ("N = 2^28", scale2_fragment(N_1D)),
        lambda: data_scale2(N_1D + 1, N_1D),
    ),
    Pair(
        "1c KV append bf16 K[T,H,D] -> C[H,D,S] at run-time `pos`, T=8192 H=256 D=128 S=16384",
        ("direct `C[h, d, pos + t] = K[t, h, d]`", kv_append_direct(**KV)),
        ("registers -> transposed shared -> `T.copy`", kv_append_tiled(**KV)),
        data_kv,
    ),
    Pair(
        "1d copy fp16 global -> fragment -> global, N = 2^28",
        ("`T.annotate_layout` thread-strided fragment", copy_fragment(N_1D, True)),
        ("no `T.annotate_layout`", copy_fragment(N_1D, False)),
        lambda: data_copy(N_1D),
    ),
    Pair(
        "2a add fp16 `T.Parallel(1024)`, N = 2^28",
        ("256 threads: 4 per thread", add_block(N_1D, 1024, 256)),
        ("128 threads: 8 per thread", add_block(N_1D, 1024, 128)),
        lambda: data_add(N_1D, N_1D),
    ),
    Pair(
        "2b cast fp16 -> fp8 e4m3, N = 2^29",
        ("`T.Parallel(256, 8)`", cast_fp8_parallel(N_FP8)),
        ("16 per thread, local arrays + `T.vectorized`", cast_fp8_vectorized(N_FP8)),
        data_fp8,
    ),
    Pair(
        "2c `T.copy` 1024 fp16 -> shared -> global, N = 2^28",
        ("256 threads", copy_shared(N_1D, 256)),
        ("128 threads", copy_shared(N_1D, 128)),
        lambda: data_copy(N_1D),
    ),
    Pair(
        "2d column sum fp32 4096x65536",
        ("1 column per thread, serial rows", colsum_per_thread(*COLSUM)),
        ("`T.copy` [32, 256] tiles -> fragment, one `T.reduce_sum`", colsum_tiled(*COLSUM)),
        data_colsum,
    ),
    Pair(
        "3a y = 2x fp16 with a user bounds check, N = 2^28",
        ("`if k < N - 1`", scale2_guarded(N_1D, N_1D - 1)),
        ("`if k < N`", scale2_guarded(N_1D, N_1D)),
        data_guarded,
    ),
    Pair(
        "3b copy fp16 with a constant offset, N = 2^28",
        ("`C[k] = A[k + 1]`", copy_offset(N_1D, 1)),
        ("`C[k] = A[k]`", copy_offset(N_1D, 0)),
        data_offset,
    ),
    Pair(
        "3c add fp16, 256 threads, N = 2^28",
        ("`T.Parallel(256)`: 1 per thread", add_block(N_1D, 256, 256)),
        ("`T.Parallel(2048)`: 8 per thread", add_block(N_1D, 2048, 256)),
        lambda: data_add(N_1D, N_1D),
    ),
    Pair(
        "3d y = 2x fp16, one row per CTA, 65536 rows",
        ("rows of 4095", rowscale(ROWS, 4095)),
        ("rows of 4096", rowscale(ROWS, 4096)),
        data_rows,
    ),
    Pair(
        '3e add fp16 `T.Parallel(128, 8)`, `N = T.dynamic("N")`, run with N = 2^28',
        ("no hint", add_dynamic(False)),
        ("`T.assume(N % 8 == 0)`", add_dynamic(True)),
        lambda: data_add(N_1D, N_1D),
    ),
    Pair(
        "3f y = 2x fp16, 8 contiguous per thread in a user loop, N = 2^28",
        ("`T.serial(8)`", scale2_thread_loop(N_1D, False)),
        ("`T.vectorized(8)`", scale2_thread_loop(N_1D, True)),
        data_thread_loop,
    ),
]


# ---- reading the generated CUDA

BITS = {
    "uint4": 128,
    "float4": 128,
    "int4": 128,
    "uint2": 64,
    "float2": 64,
    "int2": 64,
    "uint1": 32,
    "float": 32,
    "int": 32,
    "half_t": 16,
    "bfloat16_t": 16,
    "fp8_e4_t": 8,
    "fp8_e4_2_t": 16,
    "fp8_e4_4_t": 32,
    "fp8_e4_8_t": 64,
    "fp8_e4_16_t": 128,
}
_POINTER_PARAM = re.compile(r"(\w+)\* __restrict__ (\w+)")
_DESC_PARAM = re.compile(r"CUtensorMap (\w+)_desc")
_VECTOR = re.compile(r"\*\((\w+)\*\)\((\w+) \+")
_SCALAR = re.compile(r"\b(\w+)\[")
_TMA = re.compile(r"tma_(load|store)\((?:\(&\()?(\w+)")
_ASSIGN = re.compile(r"(?<![=!<>+\-*/&|^])=(?!=)")


def global_accesses(source: str) -> str:
    """`ld A,B uint4(128); st C half_t(16)` for the kernel's global buffers, read off the CUDA text."""
    element = dict((name, ctype) for ctype, name in _POINTER_PARAM.findall(source))
    described = set(_DESC_PARAM.findall(source))
    seen: dict[str, dict[str, list[str]]] = {"ld": {}, "st": {}}

    def note(side, name, kind):
        kinds = seen[side].setdefault(name, [])
        if kind not in kinds:
            kinds.append(kind)

    for line in source.splitlines():
        tma = _TMA.search(line)
        if tma:
            name = tma.group(2).removesuffix("_desc")
            if name in element or name in described:
                note("ld" if tma.group(1) == "load" else "st", name, "TMA")
            continue
        assign = _ASSIGN.search(line)
        sides = (("st", line[: assign.start()]), ("ld", line[assign.end() :])) if assign else (("ld", line),)
        for side, text in sides:
            for ctype, name in _VECTOR.findall(text):
                if name in element:
                    note(side, name, ctype)
            for name in _SCALAR.findall(text):
                if name in element:
                    note(side, name, element[name])
    parts = []
    for side in ("ld", "st"):
        by_kinds: dict[tuple, list[str]] = {}
        for name, kinds in seen[side].items():
            by_kinds.setdefault(tuple(kinds), []).append(name)
        for kinds, names in by_kinds.items():
            shown = "+".join(k if k == "TMA" else f"{k}({BITS.get(k, '?')})" for k in kinds)
            parts.append(f"{side} {','.join(names)} {shown}")
    return "; ".join(parts)


# ---- measuring


def median_ms(launch, flush=None, repeat=REPEAT) -> float:
    """`flush`: a buffer zeroed before each timed launch, so the launch finds none of its data in the L2."""
    return statistics.median(launch_ms(launch, flush, repeat))


def launch_ms(launch, flush=None, repeat=REPEAT) -> list[float]:
    """Milliseconds of `repeat` single launches after WARMUP, each queued behind a sleep; `flush` as median_ms's."""
    for _ in range(WARMUP):
        launch()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(SLEEP_CYCLES)
        if flush is not None:
            flush.zero_()
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def measure(kernel, run: Launch) -> tuple[float, bool]:
    run.poison.view(torch.uint8).fill_(0xFF)  # all bits set is NaN in fp32, fp16, bf16 and fp8 e4m3fn
    kernel(*run.args)
    torch.cuda.synchronize()
    correct = run.check()
    return median_ms(lambda: kernel(*run.args)), correct


def copy_ceiling_row() -> str:
    n = 1 << 29
    x, y = rand(n), empty(n)
    ms = median_ms(lambda: y.copy_(x))
    return f"| ref | torch `copy_` 2^29 fp16 (2.15 GB) | - | {ms:.3f} | {4 * n / ms / 1e6:.0f} | - | - |"


def pair_rows(pair: Pair, bad_kernel, good_kernel) -> list[str]:
    if bad_kernel is None or good_kernel is None:
        raise RuntimeError("compile failed")
    bad_run, good_run = pair.data()
    bad_ms, bad_ok = measure(bad_kernel, bad_run)
    good_ms, good_ok = measure(good_kernel, good_run)
    rows = []
    for (label, _), kernel, run, ms, ok, ratio in (
        (pair.bad, bad_kernel, bad_run, bad_ms, bad_ok, f"**{bad_ms / good_ms:.2f}**"),
        (pair.good, good_kernel, good_run, good_ms, good_ok, "1.00"),
    ):
        accesses = global_accesses(kernel.get_kernel_source())
        rows.append(
            f"| {pair.group} | {label} | {accesses} | {ms:.3f} | {run.nbytes / ms / 1e6:.0f} | {ratio} | "
            f"{'yes' if ok else 'NO'} |"
        )
    return rows


def run_on_gpu() -> None:
    tilelang.set_log_level("WARNING")  # its INFO lines go to stdout, into the middle of the table
    funcs = [f for pair in PAIRS for f in (pair.bad[1], pair.good[1])]
    # nvcc dominates the run time; compiling all kernels at once keeps the device lease short
    kernels = tilelang.par_compile(funcs, target="cuda", ignore_error=True)
    print("| group | variant | global accesses emitted | ms | GB/s | bad/good | correct |")
    print("|---|---|---|---|---|---|---|")
    for index, pair in enumerate(PAIRS):
        try:
            rows = pair_rows(pair, kernels[2 * index], kernels[2 * index + 1])
        except Exception as exc:  # one broken pair must not cost the whole (leased) run
            rows = [f"| {pair.group} | - | - | - | - | - | error: {type(exc).__name__}: {str(exc)[:160]} |"]
        print("\n".join(rows), flush=True)
        torch.cuda.empty_cache()  # the next pair allocates up to 1.6 GB of its own
    print(copy_ceiling_row())
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, tilelang {tilelang.__version__}")


def print_sources() -> None:
    from tvm.target import Target

    with Target({"kind": "cuda", "arch": "sm_90"}):
        print("| group | variant | global accesses emitted |")
        print("|---|---|---|")
        for pair in PAIRS:
            for label, func in (pair.bad, pair.good):
                source = tilelang.lower(func).kernel_source
                print(f"| {pair.group} | {label} | {global_accesses(source)} |", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="store_true", help="only lower (no GPU) and print the accesses")
    if parser.parse_args().source:
        print_sources()
    elif not torch.cuda.is_available():
        print("gpu_narrow: no CUDA device here; nothing measured (use --source to see the accesses)")
    else:
        run_on_gpu()
    return 0


if __name__ == "__main__":
    sys.exit(main())
