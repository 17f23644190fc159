"""The ledger of the bundled kernels, from their stored artefacts: threads that work, bytes per launch,
gemm FLOPs and the bound (kernels built by the API in the test itself: tests/compile/test_ledger.py)."""

from __future__ import annotations

import os

from conftest import FIXTURES, kernel_named


def test_a_lone_thread_walking_its_row_counts_the_elements_it_moves(stored):
    """`if tx == 0` over a row of 16384: the one working thread's walk has no lane stride (one lane), and
    is still the work it moves."""
    path = os.path.join(FIXTURES, "kernels", "vec_thread_walks.py")
    ledger = kernel_named(stored([path])[path], "row_sum_thread_zero").ledger
    assert (ledger.threads_working, ledger.threads_launched, ledger.elements_per_thread) == (1, 128, 16384)


def test_the_gemm_fixture_is_compute_bound_if_the_l2_serves_its_re_reads_and_elementwise_work_is_not(stored):
    """The bundled 4096^3 GEMM requests 2.0 GiB for 96 MiB of tensors; on the H200 it ran at 544 TFLOP/s with
    340 MB of DRAM traffic (docs/gpu-impact.md). An elementwise kernel and a norm stay memory-bound, with
    their arithmetic counted."""
    from tl_inspect.reports.common import ledger_short

    def short(target):
        file, name = target.split("::")
        path = os.path.join(FIXTURES, "kernels", file)
        # a factory's target is its first case's kernel
        ledger = next(k for k in stored([path])[path].kernels if name in (k.name, k.factory)).ledger
        return ledger_short(ledger), ledger

    gemm, _ = short("clear_gemm.py::matmul_noclear")
    assert gemm == (
        "2.0 GiB read, 32.0 MiB written, 96.0 MiB unique, compute-bound at 1365 FLOP/B if the L2 "
        "serves the 22x re-reads, memory-bound at 63 FLOP/B if it does not"
    )
    for target in ("vec_workload.py::iterate_once", "vec_rmsnorm.py::rms_norm_4096"):
        _, ledger = short(target)
        assert ledger.bound == ledger.requested_bound == "memory", target
        assert ledger.intensity > 0, target
