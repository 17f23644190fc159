"""The failures and costs behind the rules of issue 11, measured on a real GPU: launch limits,
low-precision accumulation, a replicated norm layout, a `T.vectorized` loop lowered serially, and two
patterns that turned out harmless (`T.reduce_*` from shared memory, `clear=False` in a loop).

Run by hand on a machine with an NVIDIA GPU: `python benchmarks/gpu_rules.py`. Without one it prints
that it skipped and exits 0. Timings use `gpu_impact.median_ms` (median of 30 launches after 5
warm-ups); "x" compares the flagged kernel with its fixed form. Every output is checked against torch.
"""

# no `from __future__ import annotations`: tilelang resolves the T.Tensor annotations, and a dtype
# that only an annotation uses is not a closure variable it could find
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import torch

if not torch.cuda.is_available():
    print("gpu_rules: no CUDA device, skipped")
    sys.exit(0)

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from gpu_impact import median_ms  # noqa: E402

# nvcc refuses TMA and warp-specialised code for plain sm_90 (tilelang facts I)
TARGET = {"kind": "cuda", "arch": "sm_90a"} if torch.cuda.get_device_capability() == (9, 0) else "cuda"


# ---------------------------------------------------------------- launch limits


def row_copy(rows, cols=8):
    """One row per block along grid y."""

    @T.prim_func
    def row_copy_main(X: T.Tensor((rows, cols), T.float16), Y: T.Tensor((rows, cols), T.float16)):
        with T.Kernel(1, rows, threads=32) as (bx, by):
            for j in T.Parallel(cols):
                Y[by, j] = X[by, j]

    return row_copy_main


def wide_block(threads):
    @T.prim_func
    def wide_block_main(X: T.Tensor((threads,), T.float32), Y: T.Tensor((threads,), T.float32)):
        with T.Kernel(1, threads=threads) as bx:
            for i in T.Parallel(threads):
                Y[i] = X[i] * 2

    return wide_block_main


def shared_stage(rows, cols=1024):
    """A (rows, cols) fp32 tile staged through dynamic shared memory: rows * 4 KiB."""

    @T.prim_func
    def shared_stage_main(X: T.Tensor((rows, cols), T.float32), Y: T.Tensor((rows, cols), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            tile = T.alloc_shared((rows, cols), T.float32)
            T.copy(X, tile)
            T.copy(tile, Y)

    return shared_stage_main


# ---------------------------------------------------------------- accumulation precision


def row_sum(M, N, dtype, accum, block_m=8, threads=128):
    """`T.reduce_sum` of each row into a fragment of dtype `accum`."""

    @T.prim_func
    def row_sum_main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(M // block_m, threads=threads) as bx:
            x = T.alloc_fragment((block_m, N), accum)
            s = T.alloc_fragment((block_m,), accum)
            T.copy(X[bx * block_m, 0], x)
            T.reduce_sum(x, s, dim=1)
            for i in T.Parallel(block_m):
                Y[bx * block_m + i] = T.Cast(T.float32, s[i])

    return row_sum_main


def row_sum_serial(M, N, dtype, accum):
    """One thread per row adds the row into a local scalar of dtype `accum`."""

    @T.prim_func
    def row_sum_serial_main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(M // 128, threads=128) as bx:
            tx = T.get_thread_binding(0)
            s = T.alloc_local((1,), accum)
            T.clear(s)
            for j in T.serial(N):
                s[0] += T.Cast(accum, X[bx * 128 + tx, j])
            Y[bx * 128 + tx] = T.Cast(T.float32, s[0])

    return row_sum_serial_main


def row_sum_no_clear_each_tile(M, N, block_n=512, block_m=8, threads=128):
    """A running sum over column tiles with `T.reduce_sum(..., clear=False)`."""

    @T.prim_func
    def running_sum_main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(M // block_m, threads=threads) as bx:
            x = T.alloc_fragment((block_m, block_n), T.float32)
            s = T.alloc_fragment((block_m,), T.float32)
            T.clear(s)
            for k in T.serial(N // block_n):
                T.copy(X[bx * block_m, k * block_n], x)
                T.reduce_sum(x, s, dim=1, clear=False)
            T.copy(s, Y[bx * block_m])

    return running_sum_main


# ---------------------------------------------------------------- speed


def row_sum_via_shared(M, N, block_m=8, threads=128):
    @T.prim_func
    def row_sum_shared_main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(M // block_m, threads=threads) as bx:
            xs = T.alloc_shared((block_m, N), T.float32)
            s = T.alloc_fragment((block_m,), T.float32)
            T.copy(X[bx * block_m, 0], xs)
            T.reduce_sum(xs, s, dim=1)
            T.copy(s, Y[bx * block_m])

    return row_sum_shared_main


def rms_norm(M, N, N_padded, block_m, threads=256):
    """TileOPs' norm structure: a (block_m, N_padded) fragment, masked load, `T.reduce_sum(dim=1)`."""

    @T.prim_func
    def rms_norm_main(X: T.Tensor((M, N), T.float16), W: T.Tensor((N,), T.float16), Y: T.Tensor((M, N), T.float16)):
        with T.Kernel(M // block_m, threads=threads) as bx:
            x = T.alloc_fragment((block_m, N_padded), T.float32)
            xsq = T.alloc_fragment((block_m, N_padded), T.float32)
            ss = T.alloc_fragment((block_m,), T.float32)
            for i, j in T.Parallel(block_m, N_padded):
                x[i, j] = T.if_then_else(j < N, T.Cast(T.float32, X[bx * block_m + i, j]), 0.0)
            for i, j in T.Parallel(block_m, N_padded):
                xsq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(xsq, ss, dim=1)
            for i in T.Parallel(block_m):
                ss[i] = T.rsqrt(ss[i] / N + 1e-6)
            for i, j in T.Parallel(block_m, N_padded):
                if j < N:
                    Y[bx * block_m + i, j] = T.Cast(T.float16, x[i, j] * ss[i] * T.Cast(T.float32, W[j]))

    return rms_norm_main


def chunk_sum(N, vec=8, threads=128, serial_fallback=True):
    """Each thread sums `vec` contiguous values; as a `T.vectorized` accumulation loop (which tilelang
    lowers serially) or as a vectorized load into registers followed by a serial sum."""

    @T.prim_func
    def chunk_sum_main(X: T.Tensor((N,), T.float32), Y: T.Tensor((N // vec,), T.float32)):
        with T.Kernel(N // vec // threads, threads=threads) as bx:
            tx = T.get_thread_binding(0)
            base = (bx * threads + tx) * vec
            acc = T.alloc_local((1,), T.float32)
            acc[0] = 0
            if serial_fallback:
                for k in T.vectorized(vec):
                    acc[0] += X[base + k]
            else:
                v = T.alloc_local((vec,), T.float32)
                for k in T.vectorized(vec):
                    v[k] = X[base + k]
                for k in T.serial(vec):
                    acc[0] += v[k]
            Y[bx * threads + tx] = acc[0]

    return chunk_sum_main


def compile_all(funcs: dict) -> dict:
    """nvcc takes ~1-2 s per kernel; compile them side by side."""

    def build(item):
        name, func = item
        return name, tilelang.compile(func, target=TARGET)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(pool.map(build, funcs.items()))


# name -> (kernel, inputs, expected output); each launches in a process of its own, so that a failed
# launch cannot leave an error behind for the next one
LAUNCH_CASES = {
    "grid y = 65535": (lambda: row_copy(65535), lambda: [torch.randn(65535, 8, device="cuda").half()], lambda x: x),
    "grid y = 65536": (lambda: row_copy(65536), lambda: [torch.randn(65536, 8, device="cuda").half()], lambda x: x),
    "threads = 1024": (lambda: wide_block(1024), lambda: [torch.randn(1024, device="cuda")], lambda x: 2 * x),
    "threads = 2048": (lambda: wide_block(2048), lambda: [torch.randn(2048, device="cuda")], lambda x: 2 * x),
    "dynamic shared memory 224 KiB": (
        lambda: shared_stage(56),
        lambda: [torch.randn(56, 1024, device="cuda")],
        lambda x: x,
    ),
    "dynamic shared memory 256 KiB": (
        lambda: shared_stage(64),
        lambda: [torch.randn(64, 1024, device="cuda")],
        lambda x: x,
    ),
}


def launch(name: str) -> None:
    build, inputs, expected = LAUNCH_CASES[name]
    kernel = tilelang.compile(build(), target=TARGET)
    (x,) = inputs()
    y = torch.zeros_like(x)
    try:
        kernel(x, y)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - the message is the measurement
        print(f"| {name} | compiled; launch raised {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]} |")
        return
    print(f"| {name} | compiled; launched, output {'correct' if torch.equal(y, expected(x)) else 'WRONG'} |")


def main() -> None:
    dev = "cuda"
    print(f"device: {torch.cuda.get_device_name()}, tilelang {tilelang.__version__}, torch {torch.__version__}")
    M, N = 16384, 4096
    funcs = {
        "sum_fp16_acc16": row_sum(M, N, T.float16, T.float16),
        "sum_fp16_acc32": row_sum(M, N, T.float16, T.float32),
        "sum_bf16_acc16": row_sum(M, N, T.bfloat16, T.bfloat16),
        "sum_bf16_acc32": row_sum(M, N, T.bfloat16, T.float32),
        "serial_fp16_acc16": row_sum_serial(M, N, T.float16, T.float16),
        "serial_fp16_acc32": row_sum_serial(M, N, T.float16, T.float32),
        "running_clear_false": row_sum_no_clear_each_tile(M, N),
        "reduce_shared": row_sum_via_shared(M, 1024),
        "reduce_fragment": row_sum(M, 1024, T.float32, T.float32),
        "norm_block16": rms_norm(M, 1152, 1280, 16),
        "norm_block1": rms_norm(M, 1152, 1280, 1),
        "norm_pow2_block16": rms_norm(M, 4096, 4096, 16),
        "chunk_vectorized": chunk_sum(1 << 28, serial_fallback=True),
        "chunk_fixed": chunk_sum(1 << 28, serial_fallback=False),
    }
    kernels = compile_all(funcs)

    print("\n## accumulation precision (row sums of 4096 values, torch.rand inputs; error vs float64)")
    for dtype, torch_dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        X = torch.rand(M, N, device=dev).to(torch_dtype)
        truth = X.double().sum(dim=1)
        for accum in ("acc16", "acc32"):
            Y = torch.empty(M, device=dev, dtype=torch.float32)
            kernels[f"sum_{dtype}_{accum}"](X, Y)
            rel = ((Y.double() - truth).abs() / truth).cpu()
            label = dtype if accum == "acc16" else "float32"
            print(
                f"| T.reduce_sum {dtype} row into {label} fragment | median rel err {float(rel.median()):.2e} "
                f"| max {float(rel.max()):.2e} |"
            )
        if dtype == "fp16":
            for accum in ("acc16", "acc32"):
                Y = torch.empty(M, device=dev, dtype=torch.float32)
                kernels[f"serial_fp16_{accum}"](X, Y)
                rel = ((Y.double() - truth).abs() / truth).cpu()
                label = "fp16" if accum == "acc16" else "float32"
                print(
                    f"| serial `s[0] += X[r, j]` into {label} local | median rel err {float(rel.median()):.2e} "
                    f"| max {float(rel.max()):.2e} |"
                )

    X = torch.randn(M, N, device=dev)
    Y = torch.empty(M, device=dev)
    kernels["running_clear_false"](X, Y)
    wrong = int((~torch.isclose(Y, X.sum(dim=1), rtol=1e-4, atol=1e-3)).sum())
    print(f"\nT.reduce_sum(..., clear=False) over 8 column tiles as a running sum: {wrong} of {M} rows wrong")

    print("\n## speed (median ms; x = flagged / fixed)")
    X = torch.randn(M, 1024, device=dev)
    Y = torch.empty(M, device=dev)
    results = {}
    for name in ("reduce_shared", "reduce_fragment"):
        kernels[name](X, Y)
        ok = torch.allclose(Y, X.sum(dim=1), rtol=1e-4, atol=1e-3)
        results[name] = median_ms(kernels[name], X, Y)
        print(
            f"| row sum fp32 {M}x1024, {name} | {results[name]:.4f} | {M * 1024 * 4 / results[name] / 1e6:.0f} GB/s "
            f"| correct {ok} |"
        )
    ratio = results["reduce_shared"] / results["reduce_fragment"]
    print(f"| T.reduce_sum from shared vs from a fragment | x {ratio:.2f} |")

    for n, n_pad, names in ((1152, 1280, ("norm_block16", "norm_block1")), (4096, 4096, ("norm_pow2_block16",))):
        X = torch.randn(M, n, device=dev, dtype=torch.float16)
        W = torch.randn(n, device=dev, dtype=torch.float16)
        ref = (X.float() * torch.rsqrt(X.float().pow(2).mean(dim=1, keepdim=True) + 1e-6) * W.float()).half()
        for name in names:
            Y = torch.zeros(M, n, device=dev, dtype=torch.float16)
            kernels[name](X, W, Y)
            ok = torch.allclose(Y.float(), ref.float(), rtol=1e-2, atol=1e-2)
            results[name] = median_ms(kernels[name], X, W, Y)
            gbps = (2 * M * n * 2) / results[name] / 1e6
            print(
                f"| rms_norm fp16 {M}x{n} (padded {n_pad}), {name} | {results[name]:.4f} | {gbps:.0f} GB/s "
                f"| correct {ok} |"
            )
    ratio = results["norm_block16"] / results["norm_block1"]
    print(f"| replicated layout (block_m=16) vs block_m=1, N=1152 | x {ratio:.2f} |")

    N_chunk = 1 << 28
    X = torch.randn(N_chunk, device=dev)
    Y = torch.empty(N_chunk // 8, device=dev)
    truth = X.view(-1, 8).sum(dim=1)
    for name in ("chunk_vectorized", "chunk_fixed"):
        kernels[name](X, Y)
        ok = torch.allclose(Y, truth, rtol=1e-4, atol=1e-4)
        results[name] = median_ms(kernels[name], X, Y)
        print(
            f"| sum of 8 contiguous fp32 per thread, N=2^28, {name} | {results[name]:.4f} | "
            f"{N_chunk * 4 * 1.125 / results[name] / 1e6:.0f} GB/s | correct {ok} |"
        )
    print(
        f"| T.vectorized accumulation lowered serially vs vector load + serial sum | "
        f"x {results['chunk_vectorized'] / results['chunk_fixed']:.2f} |"
    )

    print("\n## launch limits (each kernel compiles; this is what launching it does)")
    for name in LAUNCH_CASES:
        child = subprocess.run(
            [sys.executable, __file__, "--launch", name], capture_output=True, text=True, timeout=300
        )
        print(child.stdout.strip() or f"| {name} | child failed: {child.stderr.strip().splitlines()[-1:]} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--launch"]:
        sys.exit(launch(sys.argv[2]))
    sys.exit(main())
