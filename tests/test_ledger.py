"""The ledger on real kernels lowered by tilelang: threads that work, bytes per launch, gemm FLOPs and
the bound, and where it shows (JSON, the terminal summary line, the HTML page, explain)."""

from __future__ import annotations

import io
import json
import os

import pytest

from conftest import FIXTURES, ROOT, import_api_kernels

import tl_inspect
from tl_inspect.reports.explain import explain_kernel
from tl_inspect.reports.json_report import write_json


@pytest.fixture(scope="module")
def kernels():
    return import_api_kernels("ledger_kernels")


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def ledger_of(factory, **args):
    return tl_inspect.inspect(factory, prove=False, **args).kernel().artifact.ledger


def test_parallel_256_on_256_threads_every_thread_works(kernels):
    ledger = ledger_of(kernels.parallel_256)
    assert (ledger.threads_working, ledger.threads_launched, ledger.thread_guard) == (256, 256, "")
    assert (ledger.blocks, ledger.elements_per_thread) == (1, 1)
    assert (ledger.read_bytes, ledger.written_bytes) == (512, 512)
    # element-wise arithmetic is not counted, so nothing is claimed about the bound
    assert (ledger.flops_per_block, ledger.intensity, ledger.bound) == (None, None, None)


def test_a_thread_guard_leaves_threads_idle(kernels):
    """32 threads x 8 elements under `if (threadIdx.x < 32)`: 32 of 256 threads work, and a launch moves
    512 bytes each way, not the 4096 that 256 threads x 8 elements would."""
    ledger = ledger_of(kernels.vectors_on_32_threads)
    assert (ledger.threads_working, ledger.threads_launched) == (32, 256)
    assert ledger.thread_guard == "threadIdx.x < 32"
    assert ledger.elements_per_thread == 8
    assert (ledger.read_bytes, ledger.written_bytes) == (512, 512)


def test_a_lone_thread_walking_its_row_counts_the_elements_it_moves():
    """`if tx == 0` over a row of 16384: the one working thread's walk has no lane stride (one lane), and
    is still the work it moves."""
    path = os.path.join(FIXTURES, "kernels", "vec_thread_walks.py")
    ledger = tl_inspect.inspect(f"{path}::row_sum_thread_zero", prove=False).kernel().artifact.ledger
    assert (ledger.threads_working, ledger.threads_launched, ledger.elements_per_thread) == (1, 128, 16384)


def test_the_guard_tilelang_adds_counts_too(kernels):
    ledger = ledger_of(kernels.parallel_32)
    assert (ledger.threads_working, ledger.threads_launched, ledger.thread_guard) == (32, 256, "threadIdx.x < 32")
    assert (ledger.read_bytes, ledger.written_bytes) == (64, 64)


def test_a_run_time_grid_leaves_bytes_per_launch_unknown(kernels):
    ledger = ledger_of(kernels.scale_any_length)
    assert ledger.blocks is None and ledger.grid == "(N + 1023) // 1024"
    assert (ledger.read_bytes, ledger.written_bytes) == (None, None)
    assert (ledger.read_bytes_per_block, ledger.written_bytes_per_block) == (2048, 2048)
    assert ledger.as_dict()["read_bytes"] is None


def test_gemm_flops_intensity_and_the_h200_ridge(kernels):
    ledger = ledger_of(kernels.matmul, M=1024, N=1024, K=1024)
    assert ledger.blocks == 64 and ledger.grid == "8 x 8"
    assert ledger.flops_per_block == 2 * 128 * 128 * 32 * 32
    assert ledger.flops_basis == "T.gemm 128x128x32 x 32 iterations (line 74)"
    # each block reads a 128 x 1024 strip of A and of B and writes a 128 x 128 tile of C
    assert (ledger.read_bytes_per_block, ledger.written_bytes_per_block) == (2 * 128 * 1024 * 2, 128 * 128 * 2)
    assert ledger.intensity == pytest.approx(33554432 / 557056)
    assert ledger.ridge == pytest.approx(989.5e12 / 4.8e12)
    assert ledger.bound == "memory"


def test_the_ledger_shows_in_json_terminal_html_and_explain(kernels):
    from rich.console import Console

    report = tl_inspect.inspect(kernels.vectors_on_32_threads, prove=False)
    out = io.StringIO()
    write_json(report.run, out)
    (entry,) = json.loads(out.getvalue())["kernels"]
    assert entry["ledger"] == {
        "threads_launched": 256, "threads_working": 32, "thread_guard": "threadIdx.x < 32", "blocks": 1,
        "grid": "1", "elements_per_thread": 8, "read_bytes_per_block": 512, "written_bytes_per_block": 512,
        "read_bytes": 512, "written_bytes": 512, "flops_per_block": None, "flops_basis": None,
        "intensity": None, "ridge": None, "bound": None}

    console = io.StringIO()
    Console(file=console, width=300, color_system=None).print(report)
    assert "(512 B read, 512 B written, 32 of 256 threads work)" in console.getvalue().splitlines()[0]

    html = report._repr_html_()
    assert "<dt>threads that work</dt><dd>32 of 256 per block (the others are idle: threadIdx.x &lt; 32)</dd>" in html

    text = explain_kernel(report.kernel().artifact)
    assert "  ledger\n" in text
    assert "    threads that work     32 of 256 per block (the others are idle: threadIdx.x < 32)" in text
    assert "    read per launch       512 B (512 B per block)" in text
    assert "    arithmetic intensity  not counted (only T.gemm work is counted)" in text
