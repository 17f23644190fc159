"""Every message and fix title every rule gives on the fixtures, pinned in
tests/snapshots/messages/<slug>.txt (the rule examples pin theirs in tests/snapshots/rules/, see
test_rules.py). Each rule runs alone: what it says must not depend on which other rules run.
`TL_INSPECT_UPDATE_SNAPSHOTS=1` rewrites the gold files."""

from __future__ import annotations

import glob
import os

import pytest
from conftest import FIXTURES
from report_data import assert_snapshot

from tl_inspect.lint.checking import check_kernel
from tl_inspect.rules import registered_rules

RULES = registered_rules()
FIXTURE_FILES = sorted(glob.glob(os.path.join(FIXTURES, "kernels", "*.py")))


@pytest.fixture(scope="module")
def sources(stored):
    """label -> (source text, FileResult) for every fixture file."""
    labelled = {f"fixtures/kernels/{os.path.basename(p)}": p for p in FIXTURE_FILES}
    results = stored(list(labelled.values()))
    out = {}
    for label, path in labelled.items():
        with open(path) as f:
            out[label] = (f.read(), results[path])
    return out


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.slug)
def test_messages_of_each_rule_alone(rule, sources):
    lines = []
    for label, (text, result) in sources.items():
        for artifact in result.kernels:
            for finding in check_kernel(artifact, text, [rule]):
                lines.append(f"{label}:{finding.line} {artifact.name}\n  {finding.message}\n  fix: {finding.fix}\n")
    assert_snapshot(f"messages/{rule.slug}.txt", "".join(lines))
