"""Vectorization findings on kernels written by the test itself, compiled with the real tilelang (the
bundled kernels' findings are tested from their stored artefacts, tests/analysis/test_vectorization_rules.py)."""

from __future__ import annotations

import os

from conftest import FIXTURES, kernel_named

from tl_inspect.lint.checking import check_kernel
from tl_inspect.lint.suppressions import suppress
from tl_inspect.model import KernelReport
from tl_inspect.rules import registered_rules

ELEMENTWISE = os.path.join(FIXTURES, "kernels", "vec_elementwise_1d.py")
RULES = registered_rules()


def _findings(inspected, path, kernel, rules=RULES):
    artifact = kernel_named(inspected([path])[path], kernel)
    with open(path) as f:
        return artifact, check_kernel(artifact, f.read(), rules)


def test_a_store_index_that_advances_through_division_is_not_read_modify_write(inspected, tmp_path):
    path = tmp_path / "reshape.py"
    path.write_text(
        "import tilelang.language as T\n\n\n"
        "def to_rows(N=1 << 20, block=1024):\n"
        "    @T.prim_func\n"
        "    def main(X: T.Tensor((N,), T.float16), Y: T.Tensor((N // 128, 128), T.float16)):\n"
        "        with T.Kernel(N // block, threads=128) as bx:\n"
        "            for i in T.Parallel(block):\n"
        "                Y[(bx * block + i) // 128, (bx * block + i) % 128] = X[bx * block + i]\n\n"
        "    return main\n\n\n"
        "reshape = to_rows()\n"
    )
    artifact, findings = _findings(inspected, str(path), "reshape")
    assert findings == [] and all(a.verdict == "full" for a in artifact.accesses)


def test_suppressing_a_rule_hides_only_its_finding(inspected, tmp_path):
    """A suppressed lane-dependent-predicate does not come back as scalarized-load."""
    with open(ELEMENTWISE) as f:
        text = f.read()
    target = "for i in T.Parallel(block):  # expect: lane-dependent-predicate"
    suppressed = text.replace(target, "for i in T.Parallel(block):  # tl-inspect: ignore[lane-dependent-predicate]")
    path = tmp_path / "suppressed.py"
    path.write_text(suppressed)
    artifact = kernel_named(inspected([str(path)])[str(path)], "axpy_ragged")
    findings = check_kernel(artifact, suppressed, RULES)
    assert [f.slug for f in findings] == ["lane-dependent-predicate"]
    # the file's other kernels are not checked here, so neither are its suppressions' uses
    checked = [rule for rule in RULES if rule.slug != "unused-suppression"]
    (report,) = suppress([KernelReport(artifact, tuple(findings))], suppressed, checked, RULES, judge=True)
    assert report.findings == ()
