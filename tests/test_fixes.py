"""Verified fixes (`--fix`, `--unsafe-fixes`, `--diff`, `--show-fixes`, `Report.fixed_source`) on copies of
the rules' BAD examples, compiled and inspected again with the real tilelang."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import ROOT, run_cli
import tl_inspect

RULES = os.path.join(ROOT, "src", "tl_inspect", "rules")
# each safe fix: the example, and the line the fixed file must hold (in the example's own names)
SAFE_FIXES = {
    "missing_clear/bad_matmul.py": "        T.clear(C_l)\n",
    "missing_clear/bad_row_sum_tiles.py": "        T.clear(s)\n",
    "scalarized_load/bad_scale.py": "            for v in T.vectorized(per_thread):\n",
    "low_precision_accumulation/bad_row_sum.py": "        s = T.alloc_fragment((BLOCK_M,), T.float32)\n",
    "padded_denominator/bad_layer_norm.py": "        mean = s[0] / N  # expect: padded-denominator\n",
}
UNSAFE_EXAMPLE, UNSAFE_LINE = "lane_dependent_predicate/bad_scale.py", "            T.assume(N % 8 == 0)\n"


def _copy(folder, examples) -> dict:
    """Each example copied into `folder` under a name of its own; copy name -> example."""
    copies = {}
    for example in examples:
        name = example.replace("/", "__")
        shutil.copy(os.path.join(RULES, example), folder / name)
        copies[name] = example
    return copies


def _texts(folder) -> dict:
    return {name: (folder / name).read_text() for name in sorted(os.listdir(folder)) if name.endswith(".py")}


def _findings(stdout: str) -> list:
    document = json.loads(stdout)
    assert all(k["status"] == "ok" for k in document["kernels"]), document["kernels"]
    return [f for k in document["kernels"] for f in k["findings"]]


def test_fix_applies_the_safe_fixes_then_changes_nothing_and_unsafe_ones_need_the_flag(tmp_path):
    copies = _copy(tmp_path, [*SAFE_FIXES, UNSAFE_EXAMPLE])
    originals = _texts(tmp_path)

    done = run_cli(".", "--fix", "--show-fixes", "--format", "json", "--no-cache", "-j", "2", cwd=tmp_path)
    fixed = _texts(tmp_path)
    for name, example in copies.items():
        if example in SAFE_FIXES:
            assert SAFE_FIXES[example] in fixed[name].splitlines(keepends=True), fixed[name]
            assert SAFE_FIXES[example] not in originals[name].splitlines(keepends=True)
        else:
            assert fixed[name] == originals[name], "an unsafe fix was applied without --unsafe-fixes"
    # the fixed files inspected again: only the finding whose fix is unsafe is left, its fix verified
    (left,) = _findings(done.stdout)
    assert (left["rule"], left["file"]) == ("TLV002", "./" + UNSAFE_EXAMPLE.replace("/", "__")), left
    assert left["autofix"]["applicability"] == "unsafe" and left["autofix"]["verified"], left
    assert left["autofix"]["edits"] == [{"content": UNSAFE_LINE, "location": {"row": 10, "column": 1},
                                         "end_location": {"row": 10, "column": 1}}]
    assert done.returncode == 1, done.stderr
    # bad_layer_norm divides by the padded length twice
    assert f"fixed {len(SAFE_FIXES) + 1} findings in {len(SAFE_FIXES)} files" in done.stderr, done.stderr
    assert "Divide by the true reduction length `N`, not `BLOCK_N`" in done.stderr
    assert "TLV004 missing-clear (safe)" in done.stderr

    again = run_cli(".", "--fix", "--format", "json", "-j", "2", cwd=tmp_path)
    assert _texts(tmp_path) == fixed, "a second --fix changed a fixed file"
    assert again.returncode == 1 and "fixed" not in again.stderr, again.stderr

    unsafe = run_cli(".", "--fix", "--unsafe-fixes", "--format", "json", "-j", "2", cwd=tmp_path)
    name = UNSAFE_EXAMPLE.replace("/", "__")
    assert UNSAFE_LINE in (tmp_path / name).read_text().splitlines(keepends=True)
    assert _findings(unsafe.stdout) == [] and unsafe.returncode == 0, unsafe.stdout + unsafe.stderr


def test_diff_prints_the_fix_and_writes_nothing_as_fixed_source_gives_it(tmp_path, monkeypatch):
    copies = _copy(tmp_path, ["missing_clear/bad_matmul.py"])
    (name,) = copies
    before = (tmp_path / name).read_text()

    shown = run_cli(name, "--diff", "--no-cache", "-j", "1", cwd=tmp_path)
    assert (tmp_path / name).read_text() == before
    assert shown.returncode == 1, shown.stderr
    assert shown.stdout.startswith(f"--- a/{name}\n+++ b/{name}\n"), shown.stdout
    assert "+        T.clear(C_l)\n" in shown.stdout

    monkeypatch.chdir(tmp_path)
    report = tl_inspect.inspect(name, fixes=True)
    (finding,) = report.findings
    assert finding.autofix.verified and finding.autofix.applicability == "safe"
    fixed = report.fixed_source()
    assert (tmp_path / name).read_text() == before
    assert fixed == before.replace("        C_l = T.alloc_fragment((BM, BN), T.float32)\n",
                                   "        C_l = T.alloc_fragment((BM, BN), T.float32)\n        T.clear(C_l)\n")


@pytest.mark.parametrize("example", ["missing_clear/bad_rescale_rows.py"])
def test_a_finding_without_a_mechanical_fix_keeps_its_sentence_in_the_users_names(example, tmp_path):
    copies = _copy(tmp_path, [example])
    (name,) = copies
    done = run_cli(name, "--show-fixes", "--format", "json", "-j", "1", cwd=tmp_path)
    (finding,) = _findings(done.stdout)
    assert "autofix" not in finding and "`scale`" in finding["fix"], finding


def test_the_unsafe_fixes_pad_a_literal_length_and_drop_a_layout_annotation(tmp_path):
    """A tail guard on `add(2047)` is fixed by the padded length the proof compiled, and a strided
    `T.annotate_layout` by dropping it, as its proof did: both change what the kernel computes or how,
    so only `--unsafe-fixes` applies them."""
    shutil.copy(os.path.join(RULES, "lane_dependent_predicate", "bad_add.py"), tmp_path / "add_2047.py")
    shutil.copy(os.path.join(ROOT, "tests", "data", "fixes", "strided_layout.py"), tmp_path / "strided_layout.py")
    originals = _texts(tmp_path)

    safe = run_cli(".", "--fix", "--format", "json", "--no-cache", "-j", "2", cwd=tmp_path)
    assert _texts(tmp_path) == originals, "an unsafe fix was applied without --unsafe-fixes"
    offered = {f["file"]: f["autofix"] for f in _findings(safe.stdout)}
    assert {fix["applicability"] for fix in offered.values()} == {"unsafe"}, offered
    assert all(fix["verified"] for fix in offered.values()), offered

    done = run_cli(".", "--fix", "--unsafe-fixes", "--format", "json", "--no-cache", "-j", "2", cwd=tmp_path)
    fixed = _texts(tmp_path)
    assert "add_2047 = add(2048)\n" in fixed["add_2047.py"]
    assert "annotate_layout" not in fixed["strided_layout.py"]
    assert fixed["strided_layout.py"].replace(originals["strided_layout.py"].split("        # thread t")[0], "") \
        .startswith("        T.copy(X["), fixed["strided_layout.py"]
    assert _findings(done.stdout) == [] and done.returncode == 0, done.stdout + done.stderr
