"""What the vectorization findings say: widths, predicates, bounds and fixes, and which rule reports a
statement whose scalar code has a lane-dependent cause."""

from __future__ import annotations

import os

from conftest import FIXTURES, kernel_named
from tl_inspect.rules import check_kernel, find_rule, registered_rules
from tl_inspect.vectorization import analyse

ELEMENTWISE = os.path.join(FIXTURES, "kernels", "vec_elementwise_1d.py")
ROWS = os.path.join(FIXTURES, "kernels", "vec_rows_2d.py")


def _findings(inspected, path, kernel):
    result = inspected([path])[path]
    artifact = kernel_named(result, kernel)
    with open(path) as f:
        return artifact, check_kernel(artifact, f.read(), registered_rules())


def test_ragged_length_is_reported_once_under_its_cause(inspected):
    artifact, findings = _findings(inspected, ELEMENTWISE, "axpy_ragged")
    line = next(v.line for v in analyse(artifact).verdicts)
    assert [f.slug for f in findings if f.line == line] == ["lane-dependent-predicate"]
    assert "lane-dependent-predicate" in find_rule("scalarized-load").yields_to
    finding = findings[0]
    assert "< 100003" in finding.message and "8-wide" in finding.message
    assert "100003 is not a multiple of 8" in finding.message
    assert "100003 -> 100008" in finding.fix
    assert finding.emitted_bits < finding.expected_bits


def test_run_time_length_suggests_assume(inspected):
    _, findings = _findings(inspected, ELEMENTWISE, "gelu_any_length")
    (finding,) = findings
    assert finding.slug == "lane-dependent-predicate"
    assert "N is only known at run time" in finding.message
    assert "T.assume(N % 8 == 0)" in finding.fix


def test_misaligned_rows_report_expected_and_emitted_bits(inspected):
    _, findings = _findings(inspected, ROWS, "bias_add_4095")
    (finding,) = findings
    assert finding.slug == "scalarized-load" and finding.rule == "TLV001"
    assert (finding.expected_bits, finding.emitted_bits) == (128, 16)
    assert "4095" in finding.message and "128-bit" in finding.message
    assert "4096" in finding.fix
    assert finding.as_dict()["expected_bits"] == 128


def test_one_element_per_thread_names_the_loop_and_the_threads(inspected):
    _, findings = _findings(inspected, ELEMENTWISE, "scale_naive")
    (finding,) = findings
    assert "T.Parallel(256) over 256 threads gives each thread 1 element" in finding.message
    assert (finding.expected_bits, finding.emitted_bits) == (128, 32)
    assert finding.cuda_lines and finding.evidence


def test_indices_render_as_written():
    from tl_inspect.vectorization import source_text

    bx, i, n = ("var", "bx"), ("var", "i"), ("var", "N")
    index = ("add", ("add", ("mul", bx, ("int", 1024)), i), ("int", 1))
    assert source_text(index) == "bx * 1024 + i + 1"
    assert source_text(("lt", index, n)) == "bx * 1024 + i + 1 < N"
    assert source_text(("mul", bx, ("floordiv", i, ("int", 2)))) == "bx * (i // 2)"
    assert source_text(("sub", n, ("add", i, ("int", 1)))) == "N - (i + 1)"


def test_one_iteration_loop_is_not_a_misaligned_offset(inspected, tmp_path):
    """`T.serial(TILE_K)` with TILE_K = 1 runs once: its variable is 0, so the cause is one element per
    thread, not an offset `k * 1` off the 16-byte boundary."""
    example = next(e for e in find_rule("scalarized-load").BAD if "gemv_one_per_thread" in e.text)
    path = tmp_path / "gemv_one_per_thread.py"
    path.write_text(example.text)
    _, findings = _findings(inspected, str(path), "gemv_one_per_thread")
    assert findings and all(f.slug == "scalarized-load" for f in findings)
    for finding in findings:
        assert "consecutive threads through `tk`" in finding.message
        assert "not a multiple" not in finding.message
