"""Every kernel against its floor: the launch's estimate, findings priced by what their fix gains the launch,
and the evidence behind each (a rebuilt kernel, or the launch and its index algebra)."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from conftest import FIXTURES, kernel_named, run_cli
from tl_inspect.lint.checking import check_kernel
from tl_inspect.reports.explain import explain_kernel
from tl_inspect.rules import registered_rules

ROWS = os.path.join(FIXTURES, "kernels", "floor_row_per_thread.py")
ONE = os.path.join(FIXTURES, "kernels", "floor_one_per_thread.py")
GEMV_GEMM = os.path.join(FIXTURES, "kernels", "floor_gemv_gemm.py")
NARROW_BUT_FAST = os.path.join(FIXTURES, "kernels", "vec_narrow_but_fast.py")


def _checked(inspected, path, name):
    kernel = kernel_named(inspected([path])[path], name)
    with open(path) as f:
        return kernel, check_kernel(kernel, f.read(), registered_rules())


def test_every_kernel_has_an_estimate_and_a_floor_it_is_never_under(inspected):
    for path in (ROWS, ONE, GEMV_GEMM, NARROW_BUT_FAST):
        for kernel in inspected([path])[path].kernels:
            estimate = kernel.estimate
            assert estimate.time_us and estimate.floor_us, kernel.name
            assert estimate.gap >= 1.0 and estimate.limited_by, kernel.name
            # the floor is one launch and the longer of the unique bytes at 4.3 TB/s and the arithmetic at peak
            assert estimate.floor_us >= 3.85 + kernel.ledger.unique_bytes / 4300 / 1000 - 1e-3
            assert dict(estimate.parts)["launch"] == pytest.approx(3.85)


def test_a_softmax_with_a_row_per_thread_is_priced_against_its_floor_by_the_launch_alone(inspected):
    kernel, findings = _checked(inspected, ROWS, "softmax_rows_16")
    # measured on the H200: 2675 us against a floor of 4.34 us (617x)
    assert 400 < kernel.estimate.gap < 1000
    assert "walk" in kernel.estimate.limited_by
    (finding,) = findings
    # one restructuring spreads the three passes: one finding, at the first, naming all three lines
    assert finding.slug == "scalarized-load" and finding.line == 27
    assert "lines 27, 30 and 32" in finding.message and "walks its own row of X" in finding.message
    assert "spread each row over a block's threads" in finding.fix
    assert finding.gain.evidence == "static" and finding.gain.factor > 100
    assert finding.gain.fixed_us < 2 * kernel.estimate.floor_us
    assert finding.proof is None
    data = finding.as_dict()
    assert data["evidence"]["kind"] == "static" and "16 of 128 threads work" in data["evidence"]["shows"]
    assert set(data["gain"]) == {"factor", "time_us", "fixed_us", "floor_us"}


@pytest.mark.parametrize("name", ["layer_norm_rows_4096", "row_sum_rows_8192", "cumsum_rows_4000"])
def test_each_row_per_thread_kernel_gets_one_finding_with_its_gain(inspected, name):
    kernel, findings = _checked(inspected, ROWS, name)
    (finding,) = [f for f in findings if f.slug == "scalarized-load"]
    assert finding.gain.evidence == "static" and finding.gain.factor > 5
    # the idle SMs are not what holds these launches: each thread's walk is
    assert not [f for f in findings if f.slug == "underfilled-gpu"]


@pytest.mark.parametrize("name", ["add_one_per_thread_1000003", "add_one_per_thread_1000000"])
def test_one_element_per_thread_with_the_users_own_check_is_reported_whatever_n(inspected, name):
    kernel, findings = _checked(inspected, ONE, name)
    (finding,) = findings
    assert finding.slug == "scalarized-load" and finding.line == 16
    assert "one element at a time" in finding.message
    # measured on the H200: 6.87 us against a floor of 5.25 us
    assert finding.gain.factor >= 1.10
    chain = explain_kernel(kernel, findings=tuple(findings))
    assert "tilelang's bounds check" not in chain


def test_a_gemm_on_four_blocks_is_priced_by_its_idle_sms(inspected):
    kernel, findings = _checked(inspected, GEMV_GEMM, "gemm_4_blocks")
    (finding,) = findings
    assert finding.slug == "underfilled-gpu" and finding.gain.factor > 3
    assert "4 of 132 SMs" in kernel.estimate.limited_by
    assert kernel.estimate.filled_us < kernel.estimate.time_us / 3


def test_narrow_accesses_of_kernels_near_their_floor_get_nothing_on_the_launch_alone(inspected):
    for kernel in inspected([NARROW_BUT_FAST])[NARROW_BUT_FAST].kernels:
        with open(NARROW_BUT_FAST) as f:
            findings = check_kernel(kernel, f.read(), registered_rules())
        assert not [f for f in findings if f.gain is not None and f.gain.evidence == "static"], kernel.name


def test_a_fixed_grid_of_128_blocks_on_132_sms_is_not_underfilled(tmp_path):
    # 128 blocks of a split-K GEMV over 132 SMs measured 0.97x against 256 blocks on the H200
    path = tmp_path / "grid.py"
    path.write_text(textwrap.dedent("""\
        import tilelang.language as T


        def copy_grid(blocks, n=1 << 26, threads=256, vec=4):
            tiles = n // (blocks * threads * vec)

            @T.prim_func
            def main(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.float32)):
                with T.Kernel(blocks, threads=threads) as bx:
                    for t in T.serial(tiles):
                        for i, v in T.Parallel(threads, vec):
                            Y[((t * blocks + bx) * threads + i) * vec + v] = X[((t * blocks + bx) * threads + i) * vec + v]

            return main


        copy_grid_128 = copy_grid(128)
        copy_grid_8 = copy_grid(8)
        """))
    done = run_cli(str(path), "--format", "json", "--no-cache", "-j", "1")
    kernels = {k["name"]: k for k in json.loads(done.stdout)["kernels"]}
    assert not kernels["copy_grid_128"]["findings"]
    (finding,) = kernels["copy_grid_8"]["findings"]
    assert finding["slug"] == "underfilled-gpu" and finding["gain"]["factor"] > 3
    assert finding["evidence"]["kind"] == "static"
    # measured on the H200: 687.6 us for 8 blocks, 137 us for 128
    assert 400 < kernels["copy_grid_8"]["estimate"]["time_us"] < 1000


def test_a_loop_whose_trip_count_is_known_at_run_time_has_no_gap(tmp_path):
    path = tmp_path / "trips.py"
    path.write_text(textwrap.dedent("""\
        import tilelang.language as T


        @T.prim_func
        def partial_sums(X: T.Tensor((4096, 1024), T.float32), Y: T.Tensor((4096,), T.float32), n: T.int32):
            with T.Kernel(32, threads=128) as bx:
                tx = T.get_thread_binding()
                acc = T.alloc_var(T.float32)
                acc = 0
                for k in T.serial(n):
                    acc += X[bx * 128 + tx, k] * 2.0
                Y[bx * 128 + tx] = acc
        """))
    done = run_cli(str(path), "--format", "json", "--no-cache", "-j", "1", "--exit-zero")
    (kernel,) = json.loads(done.stdout)["kernels"]
    estimate = kernel["estimate"]
    assert estimate["gap"] is None and "known only at run time" in estimate["limited_by"]


def test_the_factory_keyword_that_sets_each_threads_share_proves_one_element_per_thread(tmp_path):
    path = tmp_path / "npt.py"
    path.write_text(textwrap.dedent("""\
        import tilelang.language as T


        def add(N, threads=256, npt=8):
            @T.prim_func
            def main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
                with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
                    for i, v in T.Parallel(threads, npt):
                        C[(bx * threads + i) * npt + v] = A[(bx * threads + i) * npt + v] + B[(bx * threads + i) * npt + v]

            return main


        add_npt1 = add(1 << 20, npt=1)
        """))
    done = run_cli(str(path), "--format", "json", "--no-cache", "-j", "1")
    (kernel,) = json.loads(done.stdout)["kernels"]
    (finding,) = kernel["findings"]
    assert finding["proof"]["change"].startswith("add called with npt=8 instead of 1")
    assert finding["evidence"]["kind"] == "rebuild"


def test_a_strided_walk_is_fixed_by_spreading_the_rows_not_by_vectorizing_the_walk(tmp_path):
    path = tmp_path / "walk.py"
    path.write_text(textwrap.dedent("""\
        import tilelang.language as T


        def scale_rows(M, N, threads=128):
            @T.prim_func
            def main(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M, N), T.float16)):
                with T.Kernel(M // threads, threads=threads) as bx:
                    tx = T.get_thread_binding()
                    for j in T.serial(N):
                        Y[bx * threads + tx, j] = X[bx * threads + tx, j] * 2.0

            return main


        scale_rows_4k = scale_rows(8192, 2048)
        """))
    done = run_cli(str(path), "--format", "json", "--no-cache", "-j", "1", "--show-fixes")
    (kernel,) = json.loads(done.stdout)["kernels"]
    (finding,) = kernel["findings"]
    # rows of 2048 fp16 are 4 KiB apart: T.vectorized would widen each load and leave the lanes 4 KiB apart
    assert finding["name"] == "RowPerThread" and "spread each row" in finding["fix"]
    assert "autofix" not in finding
