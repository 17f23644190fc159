"""Kernels written by the test itself against their floor, through the command line: a grid that fills the
GPU, a trip count known only at run time, a factory keyword proven, a strided walk's fix (the bundled
kernels' floors are tested from their stored artefacts, tests/analysis/test_floor.py)."""

from __future__ import annotations

import json
import textwrap

from conftest import run_cli


def test_a_fixed_grid_of_128_blocks_on_132_sms_is_not_underfilled(tmp_path):
    # 128 blocks of a split-K GEMV over 132 SMs measured 0.97x against 256 blocks on the H200
    path = tmp_path / "grid.py"
    path.write_text(
        textwrap.dedent("""\
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
        """)
    )
    done = run_cli(str(path), "--format", "json", "-j", "1")
    kernels = {k["name"]: k for k in json.loads(done.stdout)["kernels"]}
    assert not kernels["copy_grid_128"]["findings"]
    (finding,) = kernels["copy_grid_8"]["findings"]
    assert finding["slug"] == "underfilled-gpu" and finding["gain"]["factor"] > 3
    assert finding["evidence"]["kind"] == "static"
    # measured on the H200: 687.6 us for 8 blocks, 137 us for 128
    assert 400 < kernels["copy_grid_8"]["estimate"]["time_us"] < 1000


def test_a_loop_whose_trip_count_is_known_at_run_time_has_no_gap(tmp_path):
    path = tmp_path / "trips.py"
    path.write_text(
        textwrap.dedent("""\
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
        """)
    )
    done = run_cli(str(path), "--format", "json", "-j", "1", "--exit-zero")
    (kernel,) = json.loads(done.stdout)["kernels"]
    estimate = kernel["estimate"]
    assert estimate["gap"] is None and "known only at run time" in estimate["limited_by"]


def test_the_factory_keyword_that_sets_each_threads_share_proves_one_element_per_thread(tmp_path):
    path = tmp_path / "npt.py"
    path.write_text(
        textwrap.dedent("""\
        import tilelang.language as T


        def add(N, threads=256, npt=8):
            @T.prim_func
            def main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
                with T.Kernel(T.ceildiv(N, threads * npt), threads=threads) as bx:
                    for i, v in T.Parallel(threads, npt):
                        C[(bx * threads + i) * npt + v] = A[(bx * threads + i) * npt + v] + B[(bx * threads + i) * npt + v]

            return main


        add_npt1 = add(1 << 20, npt=1)
        """)
    )
    done = run_cli(str(path), "--format", "json", "-j", "1")
    (kernel,) = json.loads(done.stdout)["kernels"]
    (finding,) = kernel["findings"]
    assert finding["proof"]["change"].startswith("add called with npt=8 instead of 1")
    assert finding["evidence"]["kind"] == "rebuild"


def test_a_strided_walk_is_fixed_by_spreading_the_rows_not_by_vectorizing_the_walk(tmp_path):
    path = tmp_path / "walk.py"
    path.write_text(
        textwrap.dedent("""\
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
        """)
    )
    done = run_cli(str(path), "--format", "json", "-j", "1", "--show-fixes")
    (kernel,) = json.loads(done.stdout)["kernels"]
    (finding,) = kernel["findings"]
    # rows of 2048 fp16 are 4 KiB apart: T.vectorized would widen each load and leave the lanes 4 KiB apart
    assert finding["name"] == "RowPerThread" and "spread each row" in finding["fix"]
    assert "autofix" not in finding
