"""What each pattern tl-inspect flags costs on a real GPU: pairs of kernels, flagged and fixed.

Run by hand on a machine with an NVIDIA GPU (not by the tests; CI has no GPU):
`python benchmarks/gpu_impact.py` prints a Markdown table. Each kernel's bandwidth counts bytes read +
written, from the median of 30 timed launches after 5 warm-ups (CUDA events). The `vector` column says
whether the CUDA tilelang generated has 128-bit accesses (uint4/float4) to global memory.
"""

from __future__ import annotations

import statistics
import sys

import tilelang
import tilelang.language as T
import torch

WARMUP, REPEAT = 5, 30
N_1D = 1 << 28


def copy_1d(N, offset, block=1024, threads=128):
    @T.prim_func
    def copy_main(A: T.Tensor((N + 8,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i + offset]

    return copy_main


def cast_1d(N, block=1024, threads=128):
    @T.prim_func
    def cast_main(A: T.Tensor((N,), T.float32), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = T.Cast(T.float16, A[bx * block + i])

    return cast_main


def transpose_direct(M, N, bm=64, bn=64, threads=256):
    @T.prim_func
    def transpose_direct_main(A: T.Tensor((M, N), T.float16), B: T.Tensor((N, M), T.float16)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                B[bx * bn + j, by * bm + i] = A[by * bm + i, bx * bn + j]

    return transpose_direct_main


def transpose_shared(M, N, bm=64, bn=64, threads=256):
    @T.prim_func
    def transpose_shared_main(A: T.Tensor((M, N), T.float16), B: T.Tensor((N, M), T.float16)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            tile = T.alloc_shared((bm, bn), T.float16)
            T.copy(A[by * bm, bx * bn], tile)
            # the inner loop variable walks B's contiguous dimension: global stores can be 128-bit
            for j, i in T.Parallel(bn, bm):
                B[bx * bn + j, by * bm + i] = tile[i, j]

    return transpose_shared_main


def group_sum_rmw(M, N, G=8, threads=128):
    @T.prim_func
    def group_sum_rmw_main(V: T.Tensor((M, N), T.float16), Out: T.Tensor((M, N // G), T.float32)):
        with T.Kernel(M, threads=threads) as bx:
            acc = T.alloc_fragment((N // G,), T.float32)
            T.clear(acc)
            for i in T.Parallel(N):
                acc[i // G] += V[bx, i]
            T.copy(acc, Out[bx, :])

    return group_sum_rmw_main


def group_sum_reduce(M, N, G=8, threads=128):
    @T.prim_func
    def group_sum_reduce_main(V: T.Tensor((M, N), T.float16), Out: T.Tensor((M, N // G), T.float32)):
        with T.Kernel(M, threads=threads) as bx:
            v = T.alloc_fragment((N // G, G), T.float32)
            acc = T.alloc_fragment((N // G,), T.float32)
            for i, j in T.Parallel(N // G, G):
                v[i, j] = V[bx, i * G + j]
            T.reduce_sum(v, acc, dim=1)
            T.copy(acc, Out[bx, :])

    return group_sum_reduce_main


def accumulate(M, N, K, BK=32, clear=True):
    @T.prim_func
    def accumulate_main(A: T.Tensor((M, K), T.float32), Out: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_fragment((M, N), T.float32)
            if clear:
                T.clear(acc)
            for k in T.serial(K // BK):
                for i, j in T.Parallel(M, N):
                    acc[i, j] += A[i, k * BK + (j % BK)]
            T.copy(acc, Out)

    return accumulate_main


def row_mean(M, N, BN, divisor):
    @T.prim_func
    def row_mean_main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(M, threads=128) as bx:
            x = T.alloc_fragment((BN,), T.float32)
            s = T.alloc_fragment((1,), T.float32)
            for i in T.Parallel(BN):
                x[i] = T.if_then_else(i < N, X[bx, i], 0.0)
            T.reduce_sum(x, s, dim=0)
            Y[bx] = s[0] / divisor

    return row_mean_main


def median_ms(kernel, *args) -> float:
    for _ in range(WARMUP):
        kernel(*args)
    times = []
    for _ in range(REPEAT):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        kernel(*args)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def has_vector(kernel) -> str:
    source = kernel.get_kernel_source()
    return "yes" if ("uint4" in source or "float4" in source) else "no"


def bandwidth_row(label, func, args, moved_bytes):
    kernel = tilelang.compile(func, target="cuda")
    ms = median_ms(kernel, *args)
    return f"| {label} | {has_vector(kernel)} | {ms:.3f} | {moved_bytes / ms / 1e6:.0f} |"


def main() -> None:
    dev = "cuda"
    rows = ["| kernel | vector | ms | GB/s |", "|---|---|---|---|"]
    a16 = torch.randn(N_1D + 8, device=dev, dtype=torch.float16)
    c16 = torch.empty(N_1D, device=dev, dtype=torch.float16)
    moved = N_1D * 2 * 2
    rows.append(bandwidth_row("copy fp16 N=2^28, C[i] = A[i]", copy_1d(N_1D, 0), (a16, c16), moved))
    rows.append(bandwidth_row("copy fp16 N=2^28, C[i] = A[i + 1] (misaligned)", copy_1d(N_1D, 1), (a16, c16), moved))
    a32 = torch.randn(N_1D, device=dev, dtype=torch.float32)
    rows.append(bandwidth_row("cast fp32->fp16 N=2^28 (64-bit stores)", cast_1d(N_1D), (a32, c16), N_1D * 6))
    del a16, c16, a32
    M = N = 16384
    a = torch.randn(M, N, device=dev, dtype=torch.float16)
    b = torch.empty(N, M, device=dev, dtype=torch.float16)
    rows.append(bandwidth_row("transpose fp16 16384^2, direct T.Parallel", transpose_direct(M, N), (a, b), M * N * 4))
    rows.append(
        bandwidth_row(
            "transpose fp16 16384^2, via shared tile (128-bit loads)", transpose_shared(M, N), (a, b), M * N * 4
        )
    )
    del a, b
    M, N, G = 16384, 4096, 8
    v = torch.randn(M, N, device=dev, dtype=torch.float16)
    out = torch.empty(M, N // G, device=dev, dtype=torch.float32)
    moved = M * N * 2 + M * (N // G) * 4
    rows.append(
        bandwidth_row("group sum, acc[i // 8] += V[bx, i] (fragment RMW)", group_sum_rmw(M, N, G), (v, out), moved)
    )
    rows.append(bandwidth_row("group sum, T.reduce_sum over (N/8, 8)", group_sum_reduce(M, N, G), (v, out), moved))
    print("\n".join(rows))

    print()
    A = torch.randn(128, 512, device=dev, dtype=torch.float32)
    reference = sum(A[:, k * 32 : (k + 1) * 32].repeat(1, 4) for k in range(16))
    for clear in (True, False):
        kernel = tilelang.compile(accumulate(128, 128, 512, clear=clear), out_idx=[-1], target="cuda")
        result = kernel(A)
        wrong = int((~torch.isclose(result, reference, rtol=1e-4, atol=1e-3)).sum())
        label = "with T.clear" if clear else "without T.clear"
        print(f"split-K style += accumulation {label}: {wrong} of {result.numel()} outputs wrong")
    X = torch.randn(4096, 1000, device=dev, dtype=torch.float32) + 1.0
    truth = X.mean(dim=1)
    for divisor, label in ((1000, "true N=1000"), (1024, "padded 1024")):
        kernel = tilelang.compile(row_mean(4096, 1000, 1024, divisor), out_idx=[-1], target="cuda")
        rel = float(((kernel(X) - truth).abs() / truth.abs()).median())
        print(f"row mean of 1000 values padded to 1024, divided by {label}: median relative error {rel:.2e}")


if __name__ == "__main__":
    sys.exit(main())
