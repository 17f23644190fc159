"""Every kernel against its floor: the launch's estimate, findings priced by what their fix gains the launch,
and the evidence behind each (a rebuilt kernel, or the launch and its index algebra)."""

from __future__ import annotations

import os

import pytest
from conftest import FIXTURES, kernel_named

from tl_inspect.lint.checking import check_kernel
from tl_inspect.reports.explain import explain_kernel
from tl_inspect.rules import registered_rules

ROWS = os.path.join(FIXTURES, "kernels", "floor_row_per_thread.py")
ONE = os.path.join(FIXTURES, "kernels", "floor_one_per_thread.py")
GEMV_GEMM = os.path.join(FIXTURES, "kernels", "floor_gemv_gemm.py")
NARROW_BUT_FAST = os.path.join(FIXTURES, "kernels", "vec_narrow_but_fast.py")


def _checked(stored, path, name):
    kernel = kernel_named(stored([path])[path], name)
    with open(path) as f:
        return kernel, check_kernel(kernel, f.read(), registered_rules())


def test_every_kernel_has_an_estimate_and_a_floor_it_is_never_under(stored):
    for path in (ROWS, ONE, GEMV_GEMM, NARROW_BUT_FAST):
        for kernel in stored([path])[path].kernels:
            estimate = kernel.estimate
            assert estimate.time_us and estimate.floor_us, kernel.name
            assert estimate.gap >= 1.0 and estimate.limited_by, kernel.name
            # the floor is one launch and the longer of the unique bytes at 4.3 TB/s and the arithmetic at peak
            assert estimate.floor_us >= 3.85 + kernel.ledger.unique_bytes / 4300 / 1000 - 1e-3
            assert dict(estimate.parts)["launch"] == pytest.approx(3.85)


def test_a_softmax_with_a_row_per_thread_is_priced_against_its_floor_by_the_launch_alone(stored):
    kernel, findings = _checked(stored, ROWS, "softmax_rows_16")
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
def test_each_row_per_thread_kernel_gets_one_finding_with_its_gain(stored, name):
    kernel, findings = _checked(stored, ROWS, name)
    (finding,) = [f for f in findings if f.slug == "scalarized-load"]
    assert finding.gain.evidence == "static" and finding.gain.factor > 5
    # the idle SMs are not what holds these launches: each thread's walk is
    assert not [f for f in findings if f.slug == "underfilled-gpu"]


@pytest.mark.parametrize("name", ["add_one_per_thread_1000003", "add_one_per_thread_1000000"])
def test_one_element_per_thread_with_the_users_own_check_is_reported_whatever_n(stored, name):
    kernel, findings = _checked(stored, ONE, name)
    (finding,) = findings
    assert finding.slug == "scalarized-load" and finding.line == 16
    assert "one element at a time" in finding.message
    # measured on the H200: 6.87 us against a floor of 5.25 us
    assert finding.gain.factor >= 1.10
    chain = explain_kernel(kernel, findings=tuple(findings))
    assert "tilelang's bounds check" not in chain


def test_a_gemm_on_four_blocks_is_priced_by_its_idle_sms(stored):
    kernel, findings = _checked(stored, GEMV_GEMM, "gemm_4_blocks")
    (finding,) = findings
    assert finding.slug == "underfilled-gpu" and finding.gain.factor > 3
    assert "4 of 132 SMs" in kernel.estimate.limited_by
    assert kernel.estimate.filled_us < kernel.estimate.time_us / 3


def test_narrow_accesses_of_kernels_near_their_floor_get_nothing_on_the_launch_alone(stored):
    for kernel in stored([NARROW_BUT_FAST])[NARROW_BUT_FAST].kernels:
        with open(NARROW_BUT_FAST) as f:
            findings = check_kernel(kernel, f.read(), registered_rules())
        assert not [f for f in findings if f.gain is not None and f.gain.evidence == "static"], kernel.name
