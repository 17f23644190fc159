"""The terms of the cost model beside the accesses themselves, each on a fixture kernel with its H200
figure (docs/gpu-impact.md, calibration (c)): registers held by narrow loads, arithmetic that outlasts
the memory traffic, and a launch too small to leave the block floor."""

from __future__ import annotations

import os

from conftest import FIXTURES, kernel_named

from tl_inspect.lint.checking import check_kernel
from tl_inspect.model import Verdict
from tl_inspect.reports.phrases import headline
from tl_inspect.rules import registered_rules

WORKLOAD = os.path.join(FIXTURES, "kernels", "vec_workload.py")


def _kernel(stored, name):
    artifact = kernel_named(stored([WORKLOAD])[WORKLOAD], name)
    assert artifact.status == "ok", artifact.error
    with open(WORKLOAD) as f:
        return artifact, check_kernel(artifact, f.read(), registered_rules())


def test_narrow_loads_held_in_registers_for_a_reduction_cost_their_registers(stored):
    artifact, (finding,) = _kernel(stored, "row_sum_4095")
    (load,) = [a for a in artifact.accesses if a.buffer == "X"]
    assert (load.elements_per_thread, load.cost, load.verdict) == (32, 1.67, Verdict.COSTLY)
    # measured 1.77x against rows of 4096 (32 per thread), TileOPs' mean 1.69x
    assert finding.cost.estimate == 1.67
    assert finding.proof.change == "row_sum_guarded called with N=4096 instead of 4095 (a multiple of 4)"


def test_arithmetic_that_outlasts_the_memory_traffic_hides_a_tail_guard(stored):
    once, findings = _kernel(stored, "iterate_once")
    assert {f.slug for f in findings} == {"lane-dependent-predicate"}
    assert max(f.cost.estimate for f in findings) > 3.5  # measured 4.05x
    hidden, quiet = _kernel(stored, "iterate_128_rounds")
    assert quiet == []  # measured 1.04x
    guarded = [a for a in hidden.accesses if a.cause is not None and a.cause.kind == "tail-guard"]
    assert guarded and all((a.verdict, a.reason) == (Verdict.CHEAP, "compute") for a in guarded)
    assert all(a.kernel_cost < 1.10 <= a.cost for a in guarded if a.kind == "store")


def test_a_launch_of_a_few_hundred_bytes_sits_on_the_block_floor(stored):
    artifact, findings = _kernel(stored, "iterate_127")
    assert findings == []
    # the 1024-element tile over tensors of 127 moves 127 elements each, not 1024
    assert (artifact.ledger.read_bytes_per_block, artifact.ledger.written_bytes_per_block) == (254, 254)


def _finding(stored, file: str, name: str, line: int):
    path = os.path.join(FIXTURES, "kernels", file)
    artifact = kernel_named(stored([path])[path], name)
    assert artifact.status == "ok", artifact.error
    with open(path) as f:
        return next(f for f in check_kernel(artifact, f.read(), registered_rules()) if f.line == line)


def test_a_small_launch_is_estimated_at_its_own_size_with_the_launch_counted(stored):
    # fp16 add with a tail guard, 6.3 MB a launch: measured 1.46-1.52x on the H200, 2.57x at 403 MB
    finding = _finding(stored, "vec_all_scalar.py", "add_odd", 15)
    assert finding.cost.estimate > 2.4
    assert 1.3 < finding.cost.at_size < 1.6
    assert finding.cost.at_size_limit == "launch"
    assert finding.cost.as_dict()["estimate_at_size"] == finding.cost.at_size
    assert "1.4" in headline(finding) and "at this launch's size (6.0 MiB" in headline(finding)


def test_a_large_launch_is_estimated_the_same_at_its_own_size(stored):
    # 268 MB a launch: measured 3.99x
    finding = _finding(stored, "vec_workload.py", "iterate_once", 34)
    assert abs(finding.cost.at_size / finding.cost.estimate - 1) < 0.06
    assert "at this launch's size" not in headline(finding)


def test_a_lone_threads_walk_takes_as_long_in_either_form_when_the_grid_is_small(stored):
    # 1024 rows of 16384 fp32, one thread each: measured 1.10x (0.323 / 0.292 ms), 1.68x at 8192 rows
    finding = _finding(stored, "vec_thread_walks.py", "row_sum_one_thread", 51)
    assert finding.cost.estimate > 1.6
    assert finding.cost.at_size < 1.1
    assert finding.cost.at_size_limit == "walk"
    assert "a thread walking its row alone takes about as long in either form" in headline(finding)
