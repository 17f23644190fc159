"""Every rule's BAD and GOOD examples, and every kernel in fixtures/kernels, compiled with the real
tilelang: the findings must be exactly the lines marked `# expect: <slug>`."""

from __future__ import annotations

import glob
import os

import pytest

from conftest import FIXTURES
from tl_inspect.rules import check_kernel, registered_rules
from tl_inspect.rules.base import expected_lines

RULES = registered_rules()
FIXTURE_FILES = sorted(glob.glob(os.path.join(FIXTURES, "kernels", "*.py")))


def _example_cases():
    for rule in RULES:
        for label, examples in (("bad", rule.BAD), ("good", rule.GOOD)):
            for index, example in enumerate(examples):
                yield pytest.param(rule, label, example.text, id=f"{rule.slug}-{label}-{index}")


@pytest.fixture(scope="module")
def example_results(tmp_path_factory, inspected):
    folder = tmp_path_factory.mktemp("rule_examples")
    paths = {}
    for param in _example_cases():
        rule, label, text = param.values
        path = folder / f"{param.id.replace('-', '_')}.py"
        path.write_text(text)
        paths[param.id] = str(path)
    results = inspected(list(paths.values()) + FIXTURE_FILES)
    return paths, results


def _assert_exact_findings(result, text):
    assert result.error is None, f"{result.path}: {result.error}"
    assert result.kernels, f"{result.path}: no kernel found"
    expected = expected_lines(text)
    found: dict[str, set[int]] = {}
    for kernel in result.kernels:
        assert kernel.status == "ok", f"{kernel.name}: {kernel.error}"
        for finding in check_kernel(kernel, text, RULES):
            assert os.path.samefile(finding.file, result.path), finding
            found.setdefault(finding.slug, set()).add(finding.line)
            # a statement lowering rebuilt without its span (a store at a run-time offset) maps to no line
            produced = {kernel.line_map[c - 1] for c in finding.cuda_lines} - {None}
            span = set(range(finding.line, (finding.end_line or finding.line) + 1))
            assert produced <= span, f"{finding}: CUDA lines {finding.cuda_lines} come from lines {produced}"
    for slug in {r.slug for r in RULES}:
        assert found.get(slug, set()) == expected.get(slug, set()), (
            f"{slug}: found on lines {sorted(found.get(slug, []))}, "
            f"expected {sorted(expected.get(slug, []))}")


@pytest.mark.parametrize("rule,label,text", list(_example_cases()))
def test_rule_examples(rule, label, text, example_results, request):
    paths, results = example_results
    param_id = request.node.callspec.id
    result = results[paths[param_id]]
    if label == "bad":
        assert expected_lines(text).get(rule.slug), "a BAD example must mark its lines with # expect:"
    _assert_exact_findings(result, text)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=os.path.basename)
def test_fixture_kernels(path, example_results):
    _, results = example_results
    with open(path) as f:
        _assert_exact_findings(results[path], f.read())


def test_every_rule_has_examples_and_docs():
    for rule in RULES:
        assert len(rule.BAD) >= 1 and len(rule.GOOD) >= 1, rule.slug
        doc = rule.documentation()
        for heading in ("What it does", "Example", "Use instead"):
            assert heading in doc, f"{rule.slug}: docstring lacks {heading!r}"
        assert "Why" in doc, f"{rule.slug}: docstring lacks a 'Why ...' heading"
