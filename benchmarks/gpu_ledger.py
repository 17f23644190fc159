"""The ledger's roofline bound against the GPU: each kernel timed, then its unique bytes and FLOPs over
that time set against the arch's peaks. The side a kernel lands on is the resource it keeps busier
(the larger share of its peak); the ledger's `bound` is to name the same side.

  python benchmarks/gpu_ledger.py [FILE.py::KERNEL ...]      (on a GPU)
Timing as `--measure` times (tl_inspect.inspector.measurement.measure: the L2 flushed before each launch, enough
launches to move 2 GiB, two passes, the inputs' copies rotated, the mean of the middle 80 %).
"""

import argparse
import os
import sys

CASES = [
    "fixtures/kernels/clear_gemm.py::matmul_clear",  # a GEMM, 4096^3
    "fixtures/kernels/vec_workload.py::iterate_once",  # elementwise, one FMA an element
    "fixtures/kernels/vec_workload.py::iterate_128_rounds",  # elementwise, 128 FMAs an element
    "fixtures/kernels/vec_rmsnorm.py::rms_norm_4096",  # a norm
    "fixtures/kernels/vec_workload.py::row_sum_4095",  # a reduction
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", default=CASES, metavar="FILE.py::KERNEL")
    parser.add_argument("--arch", default="sm_90a", help="the arch to build for (default sm_90a: TMA and wgmma)")
    options = parser.parse_args()
    import torch

    import tl_inspect
    from tl_inspect.inspector.discovery.kernels import discover
    from tl_inspect.inspector.discovery.loading import import_user_file
    from tl_inspect.inspector.measurement.measure import Form, launch_times, typical_ms
    from tl_inspect.inspector.processes.job import Job

    if not torch.cuda.is_available():
        print("gpu_ledger: no CUDA device here; nothing measured")
        return 0
    print("| kernel | ms | unique bytes | of peak bandwidth | FLOP | of peak FLOP/s | lands | ledger's bound |")
    print("|---|---|---|---|---|---|---|---|")
    for target in options.targets:
        path, _, name = target.partition("::")
        (kernel,) = [k for k in tl_inspect.inspect(target, arch=options.arch)]
        ledger = kernel.artifact.ledger
        module, _ = import_user_file(os.path.abspath(path))
        (spec,) = [s for s in discover(module, Job(path=path, only=name))[0]]
        func, configs = spec.build()
        times = launch_times(Form(func, dict(kernel.artifact.case), options.arch, configs))
        seconds = typical_ms(next(iter(times.values()))) / 1e3
        memory = ledger.unique_bytes / seconds / ledger.peak_bytes
        compute = ledger.compute_seconds / seconds if ledger.compute_seconds else 0.0
        lands = "compute" if compute > memory else "memory"
        print(
            f"| {kernel.name} | {seconds * 1e3:.4f} | {ledger.unique_bytes / 1e6:.1f} MB | {100 * memory:.0f} % | "
            f"{ledger.flops:.3g} | {100 * compute:.0f} % | {lands} | {ledger.bound} |",
            flush=True,
        )
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
