"""Every global access of the bundled kernels has a line and a verdict, and the accesses whose class the
H200 measured carry the cost term it measured (docs/gpu-impact.md, calibration)."""

from __future__ import annotations

import glob
import os

import pytest

from conftest import FIXTURES, kernel_named
from tl_inspect.rules import registered_rules

PATHS = [example.path for rule in registered_rules() for example in rule.examples()] + sorted(
    glob.glob(os.path.join(FIXTURES, "kernels", "*.py")))
WALKS = os.path.join(FIXTURES, "kernels", "vec_thread_walks.py")


@pytest.fixture(scope="module")
def results(inspected):
    return inspected(PATHS)


def test_every_access_has_a_line_and_a_verdict(results):
    missing = [(os.path.basename(path), kernel.name, access.buffer, access.kind, access.line, access.verdict)
               for path, result in results.items() for kernel in result.kernels for access in kernel.accesses
               if access.line is None or access.verdict is None]
    assert not missing


@pytest.mark.parametrize("name, buffer, verdict, cause, estimate", [
    # one element per thread through explicit thread indexing: 2.02-2.07x measured (256 threads), proven
    # by 8 per thread over a grid 8x smaller
    ("add_explicit_index", "A", "costly", "few-per-thread", 2.06),
    # a thread walking its own bf16 row: the L1 saturates, 8.1x measured
    ("row_sum_range", "X", "unproven", "serial-loop", 7.18),
    ("row_sum_one_thread", "X", "unproven", "lone-thread", 8.77),
    ("row_sum_thread_zero", "X", "unproven", "lone-thread", 8.77),
])
def test_thread_walks_are_priced_as_measured(results, name, buffer, verdict, cause, estimate):
    access = next(a for a in kernel_named(results[WALKS], name).accesses if a.buffer == buffer)
    assert (access.verdict, access.cause.kind) == (verdict, cause)
    assert access.kernel_cost == pytest.approx(estimate, rel=0.01)


def test_straddled_fp32_rows_stay_quiet(results):
    # rows of 1023 fp32 measured 1.01x against rows of 1024
    accesses = kernel_named(results[WALKS], "add_f32_rows_1023").accesses
    assert {a.verdict for a in accesses} == {"cheap"}
