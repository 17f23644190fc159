"""The GPU side of issue 21's parts 3 and 4: the known silent miscompiles of tilelang 0.1.15 run on a real
GPU (the wrong outputs counted against torch, each beside its fixed form), and what a `T.Pipelined` GEMM
loses when tilelang lowers a copy into shared memory as synchronous loads.

Run by hand on a machine with an NVIDIA GPU: `python benchmarks/gpu_miscompiles.py`. Without one it prints
that it skipped and exits 0. Timings use `gpu_impact.median_ms` (median of 30 launches after 5 warm-ups).
"""

# no `from __future__ import annotations`: tilelang resolves the T.Tensor annotations
import sys
from concurrent.futures import ThreadPoolExecutor

import torch

if not torch.cuda.is_available():
    print("gpu_miscompiles: no CUDA device, skipped")
    sys.exit(0)

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from gpu_impact import median_ms  # noqa: E402

# nvcc refuses TMA and warp-specialised code for plain sm_90 (tilelang facts I)
TARGET = {"kind": "cuda", "arch": "sm_90a"} if torch.cuda.get_device_capability() == (9, 0) else "cuda"


# ---------------------------------------------------------------- miscompiles


def truncated(first):
    """tilelang #2957: a `T.Parallel(first)` loop pins the fragment's layout for the 256-long loop after it."""

    @T.prim_func
    def truncated_main(C: T.Tensor((256,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            f = T.alloc_fragment((256,), T.float32)
            for i in T.Parallel(first):
                f[i] = 5.0
            for i in T.Parallel(256):
                C[i] = f[i] + 1.0

    return truncated_main


def whole_atomic(whole):
    """tilelang #2959: `T.atomic_add(Out, A[tid])` (whole buffer) against `T.atomic_add(Out[0], A[tid])`."""

    @T.prim_func
    def whole_main(A: T.Tensor((128,), T.float32), Out: T.Tensor((1,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            tid = T.get_thread_binding()
            T.atomic_add(Out, A[tid])

    @T.prim_func
    def element_main(A: T.Tensor((128,), T.float32), Out: T.Tensor((1,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            tid = T.get_thread_binding()
            T.atomic_add(Out[0], A[tid])

    return whole_main if whole else element_main


def serial_store(serial):
    """tilelang #2396: a fragment stored to global memory from a `T.serial` loop."""

    @T.prim_func
    def serial_main(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            f = T.alloc_fragment((128,), T.float32)
            for i in T.Parallel(128):
                f[i] = A[i] * 2.0
            for j in T.serial(128):
                B[j] = f[j]

    @T.prim_func
    def parallel_main(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            f = T.alloc_fragment((128,), T.float32)
            for i in T.Parallel(128):
                f[i] = A[i] * 2.0
            for j in T.Parallel(128):
                B[j] = f[j]

    return serial_main if serial else parallel_main


def shifted_1d():
    """tilelang #2948's family: a shifted fragment read that 0.1.15 compiles (`buf[i + 1]`)."""

    @T.prim_func
    def shifted_main(A: T.Tensor((129,), T.int32), B: T.Tensor((128,), T.int32)):
        with T.Kernel(1, threads=128) as bx:
            buf = T.alloc_fragment((129,), T.int32)
            for i in T.Parallel(129):
                buf[i] = A[i]
            for i in T.Parallel(128):
                B[i] = buf[i + 1]

    return shifted_main


def rotated_rows():
    """A fragment read at `(i + 16) % 64`, a whole row group per thread: 0.1.15 compiles it."""

    @T.prim_func
    def rotated_main(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64, 64), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            buf = T.alloc_fragment((64, 64), T.float32)
            T.copy(A, buf)
            for i, j in T.Parallel(64, 64):
                B[i, j] = buf[(i + 16) % 64, j]

    return rotated_main


def rotated_accumulator():
    """A GEMM accumulator read at `(j + 8) % 64`: 0.1.15 compiles it."""

    @T.prim_func
    def accumulator_main(
        A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16), C: T.Tensor((64, 64), T.float32)
    ):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((64, 64), T.float16)
            b = T.alloc_shared((64, 64), T.float16)
            acc = T.alloc_fragment((64, 64), T.float32)
            T.copy(A, a)
            T.copy(B, b)
            T.clear(acc)
            T.gemm(a, b, acc)
            for i, j in T.Parallel(64, 64):
                C[i, j] = acc[i, (j + 8) % 64]

    return accumulator_main


def rotate_by_one():
    """tilelang #2948's own kernel: `B[i] = buf[(i + 1) % 128]` over an int32 fragment."""

    @T.prim_func
    def rotate_main(A: T.Tensor((128,), T.int32), B: T.Tensor((128,), T.int32)):
        with T.Kernel(1, threads=128) as bx:
            buf = T.alloc_fragment((128,), T.int32)
            for i in T.Parallel(128):
                buf[i] = A[i]
            for i in T.Parallel(128):
                B[i] = buf[(i + 1) % 128]

    return rotate_main


# ---------------------------------------------------------------- unpipelined copies


def gemm(M, N, K, a_dtype=T.float16, bm=128, bn=128, bk=32, stages=3):
    @T.prim_func
    def gemm_main(A: T.Tensor((M, K), a_dtype), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bk), T.float16)
            b = T.alloc_shared((bk, bn), T.float16)
            acc = T.alloc_fragment((bm, bn), T.float32)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, ko * bk], a)
                T.copy(B[ko * bk, bx * bn], b)
                T.gemm(a, b, acc)
            T.copy(acc, C[by * bm, bx * bn])

    return gemm_main


SIZE = 4096
GEMMS = {
    "K=4096 (aligned rows)": (SIZE, torch.float16),
    "K=4095 (rows of 8190 bytes)": (SIZE - 1, torch.float16),
    "K=4100 (rows of 8200 bytes: 8-byte aligned, not 16)": (SIZE + 4, torch.float16),
    "K=4096, A float32 copied into a float16 tile": (SIZE, torch.float32),
}


def compile_all(builds: dict) -> dict:
    def one(item):
        name, build = item
        try:
            return name, tilelang.compile(build(), target=TARGET)
        except Exception as exc:  # a refused kernel is a result here, not a failure of the run
            return name, exc

    with ThreadPoolExecutor(max_workers=12) as pool:
        return dict(pool.map(one, builds.items()))


def main() -> None:
    torch.manual_seed(0)
    print(f"device: {torch.cuda.get_device_name()}, tilelang {tilelang.__version__}, torch {torch.__version__}")
    builds = {
        "2957 truncated": lambda: truncated(100),
        "2957 fixed (first loop 256)": lambda: truncated(256),
        "2959 whole": lambda: whole_atomic(True),
        "2959 element": lambda: whole_atomic(False),
        "2396 serial": lambda: serial_store(True),
        "2396 parallel": lambda: serial_store(False),
        "shift buf[i + 1]": shifted_1d,
        "rotate rows by 16": rotated_rows,
        "rotate acc cols by 8": rotated_accumulator,
        "2948 rotate by 1": rotate_by_one,
    }
    builds.update(
        {
            name: (lambda k=k, d=d: gemm(SIZE, SIZE, k, T.float32 if d == torch.float32 else T.float16))
            for name, (k, d) in GEMMS.items()
        }
    )
    kernels = compile_all(builds)
    dev = "cuda"

    print("\n## miscompiles (wrong elements / total)")
    ref = 6.0
    for name in ("2957 truncated", "2957 fixed (first loop 256)"):
        c = torch.zeros(256, device=dev)
        kernels[name](c)
        print(f"| {name} | {int((c != ref).sum())}/256 wrong; C[99:102] = {c[99:102].tolist()} |")
    a = torch.arange(128, device=dev, dtype=torch.float32) + 1
    for name in ("2959 whole", "2959 element"):
        out = torch.zeros(1, device=dev)
        kernels[name](a, out)
        print(f"| {name} | Out = {out.item():g}, expected {a.sum().item():g} |")
    a = torch.randn(128, device=dev)
    for name in ("2396 serial", "2396 parallel"):
        wrong = []
        for _ in range(5):
            b = torch.zeros(128, device=dev)
            kernels[name](a, b)
            wrong.append(int((b != a * 2).sum()))
        print(f"| {name} | wrong per run (5 runs): {wrong}/128 |")
    x = torch.randint(0, 1000, (129,), device=dev, dtype=torch.int32)
    y = torch.zeros(128, device=dev, dtype=torch.int32)
    kernels["shift buf[i + 1]"](x, y)
    print(f"| shift buf[i + 1] | {int((y != x[1:]).sum())}/128 wrong |")
    x = torch.randn(64, 64, device=dev)
    y = torch.zeros(64, 64, device=dev)
    kernels["rotate rows by 16"](x, y)
    print(f"| rotate rows by 16 | {int((y != torch.roll(x, -16, 0)).sum())}/4096 wrong |")
    a16, b16 = torch.randn(64, 64, device=dev).half(), torch.randn(64, 64, device=dev).half()
    c = torch.zeros(64, 64, device=dev)
    kernels["rotate acc cols by 8"](a16, b16, c)
    want = torch.roll(a16.float() @ b16.float(), -8, 1)
    print(f"| rotate acc cols by 8 | {int(((c - want).abs() > 1e-2).sum())}/4096 wrong |")
    k = kernels["2948 rotate by 1"]
    outcome = "compiled" if not isinstance(k, Exception) else "refused: " + str(k).splitlines()[0][:160]
    print(f"| 2948 rotate by 1 | {outcome} |")

    print(f"\n## T.Pipelined GEMM {SIZE}x{SIZE}xK fp16, 128x128x32 tiles, 3 stages (median ms)")
    base = None
    for name, (K, dtype) in GEMMS.items():
        kernel = kernels[name]
        if isinstance(kernel, Exception):
            print(f"| {name} | failed: {str(kernel).splitlines()[0][:160]} |")
            continue
        src = kernel.get_kernel_source()
        how = ", ".join(f"{w} {src.count(w)}" for w in ("tma_load", "cp_async_gs") if src.count(w)) or "no async copy"
        A = torch.randn(SIZE, K, device=dev, dtype=dtype)
        B = torch.randn(K, SIZE, device=dev, dtype=torch.float16)
        C = torch.zeros(SIZE, SIZE, device=dev)
        kernel(A, B, C)
        err = float((C - A.half().float() @ B.float()).abs().max())
        ms = median_ms(kernel, A, B, C)
        base = base or ms
        tflops = 2 * SIZE * SIZE * K / ms / 1e9
        print(f"| {name} | {ms:.3f} ms | {tflops:.0f} TFLOP/s | x {ms / base:.2f} | {how} | max err {err:.2g} |")


if __name__ == "__main__":
    main()
