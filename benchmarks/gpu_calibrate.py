"""The H200 calibration behind each term of tl-inspect's cost model (src/tl_inspect/analysis/cost.py).

Each case is a kernel tl-inspect prices by one term, next to the same work with that term's cause
removed. `python benchmarks/gpu_calibrate.py` measures them on a CUDA GPU and prints a Markdown table
(the measured slowdown per byte moved, against the fixed form); `--estimates` lowers the same kernels
without a GPU and prints tl-inspect's estimate for each, to set beside it. Without a GPU the
measurement skips with one line. Timing as in gpu_narrow.py: median of 30 launches after 5 warm-ups,
CUDA events around one launch with a `torch.cuda._sleep` queued first; both forms' outputs must agree.
"""

# no `from __future__ import annotations`: tilelang evaluates the kernels' annotations in their closures

import argparse
import sys
from dataclasses import dataclass

import tilelang.language as T

FP16, BF16, FP32 = T.float16, T.bfloat16, T.float32


@dataclass
class Case:
    term: str  # the cost model's term the case calibrates
    label: str
    bad: object  # PrimFunc priced by the term
    good: object  # the same work without the cause
    outputs: int = 1


def scale_threads(N, threads, npt, dtype=FP32):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
            for i, v in T.Parallel(threads, npt):
                Y[(bx * threads + i) * npt + v] = X[(bx * threads + i) * npt + v] * 3

    return main


def add_npt(N, threads=128, npt=8):
    @T.prim_func
    def main(A: T.Tensor((N,), FP16), B: T.Tensor((N,), FP16), C: T.Tensor((N,), FP16)):
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


def add_rows(M, N, threads=256):
    @T.prim_func
    def main(A: T.Tensor((M, N), FP32), B: T.Tensor((M, N), FP32), C: T.Tensor((M, N), FP32)):
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


N1 = 1 << 28
ODD = N1 + 1
ROWS = 1 << 21


def cases() -> list[Case]:
    return [
        Case("block floor", "Y = 3X fp32, 64 threads x 1 per block (2^22 blocks) vs 256 x 4",
             scale_threads(N1, 64, 1), scale_threads(N1, 256, 4)),
        Case("block floor", "Y = 3X fp32, 64 threads x 1 per block vs 64 x 4 (the fix text's tile)",
             scale_threads(N1, 64, 1), scale_threads(N1, 64, 4)),
        Case("one element per thread", "fp16 add, idx = bx * 256 + tx vs 8 per thread",
             add_explicit_index(N1), add_npt(N1, 128, 8)),
        Case("spread stores, lanes 8 B apart", "fp16 add N = 2^28 + 1, 4 per thread vs N = 2^28 + 8",
             add_npt(ODD, 128, 4), add_npt(N1 + 8, 128, 4)),
        Case("spread stores, lanes 16 B apart", "fp16 add N = 2^28 + 1, 8 per thread vs N = 2^28 + 8",
             add_npt(ODD, 128, 8), add_npt(N1 + 8, 128, 8)),
        Case("spread stores, lanes 32 B apart", "fp16 add N = 2^28 + 1, 16 per thread vs N = 2^28 + 16",
             add_npt(ODD, 128, 16), add_npt(N1 + 16, 128, 16)),
        Case("L1-bound row walk", "bf16 rows of 256, a row per thread vs T.copy + T.reduce_sum",
             row_walk(ROWS, 256), row_tile(ROWS, 256, 8)),
        Case("L1-bound row walk", "bf16 rows of 32, a row per thread vs T.copy + T.reduce_sum",
             row_walk(ROWS * 8, 32), row_tile(ROWS * 8, 32, 32)),
        Case("lone thread", "fp32 rows of 16384, one thread per block vs 128 threads, T.copy + T.reduce_sum",
             row_lone_thread(8192, 16384), row_tile(8192, 16384, 1, FP32)),
        Case("lone thread", "fp32 rows of 16384, thread 0 of 128 walks the row vs T.copy + T.reduce_sum",
             row_thread_zero(8192, 16384), row_tile(8192, 16384, 1, FP32)),
        Case("straddled 32-bit rows", "fp32 add over rows of 1023 vs 1024",
             add_rows(131072, 1023), add_rows(131072, 1024)),
        Case("staged half vector", "fp16 copy through shared memory, 1024 per block: 256 threads vs 128",
             stage_1024(N1, 256), stage_1024(N1, 128)),
    ] + [
        Case("launch floor", f"fp16 add N = 2^{k} + 1 vs 2^{k} + 8, 8 per thread",
             add_npt((1 << k) + 1, 128, 8), add_npt((1 << k) + 8, 128, 8))
        for k in (12, 14, 16, 18, 20, 22, 24)
    ] + [
        Case("guarded row loads", f"bf16 rows of 4095 vs 4096 reduced, {block_m} row(s) per {threads} threads "
                                  f"({block_m * 4096 // threads} per thread)",
             row_guarded_reduce(1 << 17, 4095, block_m, threads), row_guarded_reduce(1 << 17, 4096, block_m, threads))
        for block_m, threads in ((1, 512), (1, 256), (1, 128), (2, 128), (4, 128))
    ] + [
        Case("compute", f"fp16 N = 2^26 + 1 vs 2^26 + 8, 8 per thread, {rounds} FMA rounds per element in registers",
             iterated_tile((1 << 26) + 1, rounds), iterated_tile((1 << 26) + 8, rounds))
        for rounds in (1, 8, 32, 128, 512)
    ]


def print_estimates(terms: list[str]) -> None:
    """tl-inspect's estimate for each BAD kernel: its worst cause instance (a kernel-level slowdown)."""
    import tl_inspect

    print("| term | case | verdict | cause | estimate |")
    print("|---|---|---|---|---|")
    for case in cases():
        if terms and case.term not in terms:
            continue
        kernel = tl_inspect.inspect(case.bad).kernel()
        priced = [a for a in kernel.accesses if a.kernel_cost or a.verdict == "cheap"]
        worst = max(priced, key=lambda a: a.kernel_cost or a.cost or 1.0, default=None)
        if worst is None:
            print(f"| {case.term} | {case.label} | - | - | - |")
            continue
        estimate = worst.kernel_cost or worst.cost
        cause = worst.cause.kind if worst.cause else "-"
        print(f"| {case.term} | {case.label} | {worst.verdict} | {cause} | {estimate:.2f} |", flush=True)


def run_on_gpu(terms: list[str]) -> None:
    import tilelang
    import torch

    from gpu_narrow import median_ms

    tilelang.set_log_level("WARNING")
    chosen = [c for c in cases() if not terms or c.term in terms]
    kernels = tilelang.par_compile([f for c in chosen for f in (c.bad, c.good)], target="cuda", ignore_error=True)
    print("| term | case | ms bad / good | measured | outputs agree |")
    print("|---|---|---|---|---|")
    for index, case in enumerate(chosen):
        try:
            row = _measure(case, kernels[2 * index], kernels[2 * index + 1], torch, median_ms)
        except Exception as exc:  # one broken case must not cost the whole (leased) run
            row = f"| {case.term} | {case.label} | - | - | error: {type(exc).__name__}: {str(exc)[:160]} |"
        print(row, flush=True)
        torch.cuda.empty_cache()
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, tilelang {tilelang.__version__}")


def _measure(case: Case, bad, good, torch, median_ms) -> str:
    runs = []
    for kernel, func in ((bad, case.bad), (good, case.good)):
        shapes = [tuple(int(d) for d in p.shape) for p in (func.buffer_map[v] for v in func.params)]
        dtypes = [str(func.buffer_map[v].dtype) for v in func.params]
        args = [torch.randn(s, device="cuda").to(getattr(torch, d)) for s, d in zip(shapes, dtypes)]
        args[-1].fill_(float("nan"))
        kernel(*args)
        torch.cuda.synchronize()
        nbytes = sum(a.numel() * a.element_size() for a in args)
        runs.append((kernel, args, nbytes))
    # the same inputs for both forms (the leading part of a padded one's), then the outputs compared
    (bad_k, bad_args, bad_bytes), (good_k, good_args, good_bytes) = runs
    for b, g in zip(bad_args[:-case.outputs], good_args[:-case.outputs]):
        g.zero_()
        _leading(g, b).copy_(b)
    bad_k(*bad_args)
    good_k(*good_args)
    torch.cuda.synchronize()
    got = bad_args[-1]
    agree = torch.allclose(got.float(), _leading(good_args[-1], got).float(), rtol=2e-2, atol=2e-2)
    bad_ms, good_ms = median_ms(lambda: bad_k(*bad_args)), median_ms(lambda: good_k(*good_args))
    measured = (bad_ms / bad_bytes) / (good_ms / good_bytes)
    return (f"| {case.term} | {case.label} | {bad_ms:.3f} / {good_ms:.3f} | **{measured:.2f}** | "
            f"{'yes' if agree else 'NO'} |")


def _leading(tensor, like):
    """The part of `tensor` (a padded form's, longer or with wider rows) that lines up with `like`."""
    return tensor[:like.shape[0]] if like.dim() == 1 else tensor[:, :like.shape[1]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--estimates", action="store_true", help="no GPU: print tl-inspect's estimate per case")
    parser.add_argument("--term", action="append", default=[], help="only the cases of this term (repeatable)")
    options = parser.parse_args()
    if options.estimates:
        print_estimates(options.term)
        return 0
    import torch

    if not torch.cuda.is_available():
        print("gpu_calibrate: no CUDA device here; nothing measured (--estimates prints the model's side)")
        return 0
    run_on_gpu(options.term)
    return 0


if __name__ == "__main__":
    sys.exit(main())
