"""Hostile inputs and faults (issue 9): nothing lost, nothing left running, one clear line, exit 2.

Each test inspects its own hostile file from tests/data/hostile with the real tilelang."""

from __future__ import annotations

import json
import os

import pytest

from conftest import ROOT, run_cli
from tl_inspect.cli import main

HOSTILE = os.path.join(ROOT, "tests", "data", "hostile")


def hostile(name: str) -> str:
    return os.path.join(HOSTILE, name)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_INSPECT_CACHE_DIR", str(tmp_path / "cache"))


def kernels_of(document: dict) -> dict:
    return {k["name"]: (k["status"], k["error"]) for k in document["kernels"]}


def assert_one_line(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr[-3000:]
    for line in stderr.splitlines():
        assert line.startswith("tl-inspect: "), stderr[-3000:]


def test_a_500_term_sum_is_checked_by_every_rule_in_the_parent():
    """Defect 1: rules, renderers and the result cache recurse on expression depth."""
    for _ in range(2):  # the second run is served from the cache
        proc = run_cli(hostile("long_sum.py"), "--format", "json", "--exit-zero")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert kernels_of(json.loads(proc.stdout)) == {"long_sum": ("ok", None), "doubled": ("ok", None)}
    assert json.loads(proc.stdout)["files"][0]["cached"]


def test_a_rule_that_fails_fails_only_that_kernel(monkeypatch, capsys, tmp_path):
    """Defect 1: a rule's exception is a one-line error of its kernel, the other kernels keep their findings."""
    from tl_inspect.rules.missing_clear import MissingClear

    original = MissingClear.check

    def fails_on_long_sum(self, ctx):
        if ctx.kernel.name == "long_sum":
            raise RecursionError("maximum recursion depth exceeded")
        return original(self, ctx)

    monkeypatch.setattr(MissingClear, "check", fails_on_long_sum)
    report = tmp_path / "report.json"
    status = main([hostile("long_sum.py"), "--format", "json", "-o", str(report)])
    err = capsys.readouterr().err
    assert status == 2
    kernels = kernels_of(json.loads(report.read_text()))
    assert kernels == {
        "long_sum": ("error", "internal error in rule TLV004 missing-clear: RecursionError: "
                              "maximum recursion depth exceeded"),
        "doubled": ("ok", None)}
    assert_one_line(err)
