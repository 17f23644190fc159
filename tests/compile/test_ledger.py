"""The ledger on real kernels lowered by tilelang: threads that work, bytes per launch, gemm FLOPs and
the bound, and where it shows (JSON, the terminal summary line, the HTML page, explain); the bundled
kernels' ledgers are tested from their stored artefacts (tests/analysis/test_ledger_of_fixtures.py)."""

from __future__ import annotations

import io
import json

import pytest
from conftest import ROOT, import_api_kernels

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
    # one multiply an element on the CUDA cores: 256 FLOP over 1 KiB, far under the H200's 14 FLOP/B ridge
    assert (ledger.flops_per_block, ledger.float_ops_per_block, ledger.flops) == (None, 256, 256)
    assert (ledger.intensity, ledger.ridge, ledger.bound) == (0.25, pytest.approx(67e12 / 4.8e12), "memory")


def test_a_thread_guard_leaves_threads_idle(kernels):
    """32 threads x 8 elements under `if (threadIdx.x < 32)`: 32 of 256 threads work, and a launch moves
    512 bytes each way, not the 4096 that 256 threads x 8 elements would."""
    ledger = ledger_of(kernels.vectors_on_32_threads)
    assert (ledger.threads_working, ledger.threads_launched) == (32, 256)
    assert ledger.thread_guard == "threadIdx.x < 32"
    assert ledger.elements_per_thread == 8
    assert (ledger.read_bytes, ledger.written_bytes) == (512, 512)


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
    # A and B (2 MiB each) are requested 8 times over: on the requested bytes the gemm looks memory-bound,
    # on its tensors' own bytes it is compute-bound, if the L2 serves the re-reads
    assert (ledger.unique_read_bytes, ledger.unique_written_bytes) == (2 * 1024 * 1024 * 2, 1024 * 1024 * 2)
    assert ledger.reuse == pytest.approx(35651584 / 6291456)
    assert ledger.intensity == pytest.approx(2 * 1024**3 / 6291456)
    assert ledger.requested_intensity == pytest.approx(33554432 / 557056)
    assert ledger.ridge == pytest.approx(989.5e12 / 4.8e12)
    assert (ledger.bound, ledger.requested_bound) == ("compute", "memory")


def test_the_ledger_shows_in_json_terminal_html_and_explain(kernels):
    from rich.console import Console

    report = tl_inspect.inspect(kernels.vectors_on_32_threads, prove=False)
    out = io.StringIO()
    write_json(report.run, out)
    (entry,) = json.loads(out.getvalue())["kernels"]
    assert entry["ledger"] == {
        "threads_launched": 256,
        "threads_working": 32,
        "thread_guard": "threadIdx.x < 32",
        "blocks": 1,
        "grid": "1",
        "elements_per_thread": 8,
        "read_bytes_per_block": 512,
        "written_bytes_per_block": 512,
        "read_bytes": 512,
        "written_bytes": 512,
        "flops_per_block": None,
        "flops_basis": None,
        "float_ops_per_block": 256,
        "unique_read_bytes": 512,
        "unique_written_bytes": 512,
        "unique_bytes": 1024,
        "requested_bytes": 1024,
        "reuse": 1.0,
        "flops": 256,
        "intensity": 0.25,
        "requested_intensity": 0.25,
        "ridge": 14.0,
        "bound": "memory",
        "requested_bound": "memory",
        "peaks_of": "H200 SXM",
        "sms": 132,
        "shared_bytes_per_block": 0,
    }

    console = io.StringIO()
    Console(file=console, width=300, color_system=None).print(report)
    assert (
        "(512 B read, 512 B written, 32 of 256 threads work, memory-bound at 0.25 FLOP/B)"
        in console.getvalue().splitlines()[0]
    )

    html = report._repr_html_()
    assert "<dt>threads that work</dt><dd>32 of 256 per block (the others are idle: threadIdx.x &lt; 32)</dd>" in html

    text = explain_kernel(report.kernel().artifact)
    assert "  ledger\n" in text
    assert "    threads that work     32 of 256 per block (the others are idle: threadIdx.x < 32)" in text
    assert "    read per launch       512 B (512 B per block)" in text
    assert "    arithmetic intensity  0.25 FLOP per unique byte" in text
    assert (
        "    bound on sm_90        memory-bound at 0.25 FLOP/B: the ridge is 14 FLOP/B (H200 SXM datasheet peaks)"
        in text
    )
