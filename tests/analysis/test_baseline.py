"""Baseline fingerprints: stable under unrelated edits, different for a new defect."""

from __future__ import annotations

import json

import pytest

from tl_inspect.files.pysource import scan
from tl_inspect.lint import baseline
from tl_inspect.lint.baseline import BaselineError, Fingerprints
from tl_inspect.model import Finding

KERNEL = """def k(N):
    for i in T.Parallel(1024):
        C[bx * 1024 + i] = A[bx * 1024 + i] + B[bx * 1024 + i]
        D[i] = A[i]
"""


def finding(line: int, kernel: str = "add_2047", slug: str = "lane-dependent-predicate", file: str = "k.py"):
    return Finding(
        rule="TLV002", slug=slug, severity="error", message="m", fix="f", file=file, line=line, kernel=kernel
    )


def fingerprints(tmp_path, texts: dict) -> Fingerprints:
    return Fingerprints.for_baseline(str(tmp_path / "baseline.json"), lambda path: texts[path])


def test_normalized_statement_ignores_layout_and_comments():
    tight = scan("x=a[i]+b[i]  # why\n").statement_at(1).normalized
    loose = scan("x = a[i] + b[i]\n").statement_at(1).normalized
    wrapped = scan("x = (\n    a[i]\n    + b[i])\n").statement_at(2)
    assert tight == loose == "x = a [ i ] + b [ i ]"
    assert (wrapped.start, wrapped.end) == (1, 3)


def test_fingerprint_survives_a_line_shift_and_reformat(tmp_path):
    shifted = "# a comment added above\n\n" + KERNEL.replace("A[bx * 1024 + i] + B", "A[bx*1024+i]+B")
    before = fingerprints(tmp_path, {str(tmp_path / "k.py"): KERNEL}).entry(finding(3, file=str(tmp_path / "k.py")))
    after = fingerprints(tmp_path, {str(tmp_path / "k.py"): shifted}).entry(finding(5, file=str(tmp_path / "k.py")))
    assert before == after
    assert before.file == "k.py" and before.statement.startswith("C [ bx * 1024 + i ] =")


def test_fingerprint_differs_by_statement_kernel_rule_and_file(tmp_path):
    texts = {str(tmp_path / "k.py"): KERNEL, str(tmp_path / "j.py"): KERNEL}
    fp = fingerprints(tmp_path, texts)
    base = fp.entry(finding(3, file=str(tmp_path / "k.py"))).fingerprint
    others = {
        fp.entry(finding(4, file=str(tmp_path / "k.py"))).fingerprint,
        fp.entry(finding(3, kernel="add_4095", file=str(tmp_path / "k.py"))).fingerprint,
        fp.entry(finding(3, slug="scalarized-load", file=str(tmp_path / "k.py"))).fingerprint,
        fp.entry(finding(3, file=str(tmp_path / "j.py"))).fingerprint,
    }
    assert base not in others and len(others) == 4


def test_identical_findings_are_counted_and_only_extra_ones_are_new(tmp_path):
    path = str(tmp_path / "k.py")
    text = "C[i] = A[i]\nC[i] = A[i]\nC[i] = A[i]\n"
    fp = fingerprints(tmp_path, {path: text})
    entries = baseline.build([finding(1, file=path), finding(2, file=path)], fp)
    assert [e.count for e in entries] == [2]
    result = baseline.match(
        [finding(1, file=path), finding(2, file=path), finding(3, file=path)], entries, fp, judged=lambda e: True
    )
    assert [f.line for f in result.new] == [3] and result.known == 2 and result.stale == []
    gone = baseline.match([finding(1, file=path)], entries, fp, judged=lambda e: True)
    assert gone.new == [] and [e.count for e in gone.stale] == [1]
    assert baseline.match([], entries, fp, judged=lambda e: False).stale == []


def test_written_baseline_reads_back(tmp_path):
    path = str(tmp_path / "k.py")
    fp = fingerprints(tmp_path, {path: KERNEL})
    entries = baseline.build([finding(4, file=path), finding(3, file=path)], fp)
    baseline.write(str(tmp_path / "baseline.json"), entries)
    assert baseline.load(str(tmp_path / "baseline.json")) == entries
    document = json.loads((tmp_path / "baseline.json").read_text())
    assert document["tool"] == "tl-inspect" and document["baseline"] == 1
    assert [e["statement"] for e in document["findings"]] == sorted(e["statement"] for e in document["findings"])


@pytest.mark.parametrize(
    "content,expected",
    [
        ("{", "invalid JSON"),
        ('{"tool": "ruff"}', "not a tl-inspect baseline"),
        ('{"tool": "tl-inspect", "baseline": 7, "findings": []}', "baseline format 7 is not supported"),
        ('{"tool": "tl-inspect", "baseline": 1, "findings": [{"rule": "X"}]}', "malformed baseline entry"),
    ],
)
def test_bad_baseline_files(tmp_path, content, expected):
    path = tmp_path / "b.json"
    path.write_text(content)
    with pytest.raises(BaselineError, match=expected):
        baseline.load(str(path))
    with pytest.raises(BaselineError, match="cannot read the baseline"):
        baseline.load(str(tmp_path / "missing.json"))
