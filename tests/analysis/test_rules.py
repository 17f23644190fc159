"""Every rule's examples (the `bad_*.py` and `good_*.py` files of its folder) and every kernel in
fixtures/kernels, analysed from their stored artefacts (tests/compile checks them against tilelang).

Each example runs its own rule alone: a BAD example must give exactly the lines it marks
`# expect: <slug>`, its findings pinned in tests/snapshots/rules/<slug>/<example>.txt
(`TL_INSPECT_UPDATE_SNAPSHOTS=1` rewrites them); a GOOD example must give none. The cross-talk test then
runs every rule over every example and fixture: the findings must be exactly the marked lines, so a new
rule's false alarm on another rule's example fails here, not as that rule's test."""

from __future__ import annotations

import os
import re

import pytest
from report_data import assert_snapshot
from stored_artefacts import EXAMPLES, ROOT, RULES, SOURCES

from tl_inspect.lint.checking import check_kernel
from tl_inspect.lint.suppressions import suppress
from tl_inspect.model import KernelReport
from tl_inspect.rules.base import DOC_HEADINGS, expected_lines
from tl_inspect.rules.catalog import rules_table


@pytest.fixture(scope="module")
def results(stored):
    return stored(SOURCES)


def _findings(result, text: str, rules: list) -> list:
    """(kernel, finding) for the given rules over one inspected file, its suppressions applied."""
    assert result.error is None, f"{result.path}: {result.error}"
    assert result.kernels, f"{result.path}: no kernel found"
    reports = []
    for kernel in result.kernels:
        assert kernel.status == "ok", f"{kernel.name}: {kernel.error}"
        reports.append(KernelReport(kernel, tuple(check_kernel(kernel, text, rules))))
    reports = suppress(reports, text, rules, RULES, judge=True)
    found = []
    for report in reports:
        for finding in report.findings:
            assert os.path.samefile(finding.file, result.path), finding
            # a statement lowering rebuilt without its span (a store at a run-time offset) maps to no line
            produced = {report.kernel.line_map[c - 1] for c in finding.cuda_lines} - {None}
            span = set(range(finding.line, (finding.end_line or finding.line) + 1))
            assert produced <= span, f"{finding}: CUDA lines {finding.cuda_lines} come from lines {produced}"
            found.append((report.kernel, finding))
    return found


def _lines_by_slug(found) -> dict[str, set[int]]:
    lines: dict[str, set[int]] = {}
    for _, finding in found:
        lines.setdefault(finding.slug, set()).add(finding.line)
    return lines


def _assert_exact(found, text: str, slugs) -> None:
    lines, expected = _lines_by_slug(found), expected_lines(text)
    for slug in slugs:
        assert lines.get(slug, set()) == expected.get(slug, set()), (
            f"{slug}: found on lines {sorted(lines.get(slug, []))}, expected {sorted(expected.get(slug, []))}"
        )


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.slug}/{e.name}")
def test_rule_example(example, results):
    rule = next(r for r in RULES if r.slug == example.slug)
    text = example.text
    if example.bad:
        assert expected_lines(text).get(rule.slug), "a BAD example must mark its lines with # expect:"
    found = _findings(results[example.path], text, [rule])
    _assert_exact(found, text, [rule.slug])
    if example.bad:
        assert_snapshot(
            f"rules/{rule.slug}/{example.name}.txt",
            "".join(
                f"{finding.line} {kernel.name} {finding.name}\n  {finding.message}\n  fix: {finding.fix}\n"
                f"  cuda_lines: {list(finding.cuda_lines)}\n"
                for kernel, finding in found
            ),
        )


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_rule_on_every_example(path, results):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    _assert_exact(_findings(results[path], text, RULES), text, {r.slug for r in RULES})


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.slug)
def test_rule_has_examples_and_its_page(rule):
    examples = rule.examples()
    assert any(e.bad for e in examples) and any(not e.bad for e in examples), rule.slug
    headings = re.findall(r"^## (.*)$", rule.documentation(), re.M)
    assert len(headings) == len(DOC_HEADINGS), f"{rule.slug}: headings {headings}"
    for heading, allowed in zip(headings, DOC_HEADINGS):
        assert heading in (allowed if isinstance(allowed, tuple) else (allowed,)), f"{rule.slug}: {heading!r}"


def test_readme_rules_table_is_generated():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.index("| code | slug |")
    end = readme.index("\n\n", start) + 1
    assert readme[start:end] == rules_table(RULES), (
        "README.md's rules table differs: replace it with `tl-inspect rules --format markdown`"
    )
