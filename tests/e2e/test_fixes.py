"""Verified fixes (`--fix`, `--unsafe-fixes`, `--diff`, `--show-fixes`, `Report.fixed_source`) on copies of
the rules' BAD examples and of kernels under tests/data/fixes, compiled and inspected again with the real
tilelang."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass

import pytest
from conftest import ROOT, run_cli

import tl_inspect
from tl_inspect.fixes.verify import FileFixes, Unwritable, write_fixed
from tl_inspect.reports.sarif import as_sarif

RULES = os.path.join("src", "tl_inspect", "rules")
DATA = os.path.join("tests", "data", "fixes")


@dataclass(frozen=True)
class Case:
    """One fix of issue 18 on a kernel: the file, whether the fix is safe, and text the fixed file holds
    and the file did not (in the file's own names)."""

    path: str  # from the repository root
    applicability: str
    fixed: str

    @property
    def name(self) -> str:
        return os.path.basename(os.path.dirname(self.path)) + "__" + os.path.basename(self.path)


CASES = [
    # missing-clear: T.clear after the declaration for a sum, a T.gemm in a K loop included
    Case(f"{RULES}/missing_clear/bad_matmul.py", "safe", "        T.clear(C_l)\n"),
    Case(f"{RULES}/missing_clear/bad_row_sum_tiles.py", "safe", "        T.clear(s)\n"),
    # missing-clear: clear_accum=True on a T.gemm that no loop repeats
    Case(f"{DATA}/rank_64_product.py", "safe", "        T.gemm(a, b, c, clear_accum=True)\n"),
    Case(f"{RULES}/scalarized_load/bad_scale.py", "safe", "            for v in T.vectorized(per_thread):\n"),
    # the accumulator made float32: tilelang casts at the store
    Case(
        f"{RULES}/low_precision_accumulation/bad_row_sum.py",
        "safe",
        "        s = T.alloc_fragment((BLOCK_M,), T.float32)\n",
    ),
    # it divides by the padded length twice: both fixed
    Case(
        f"{RULES}/padded_denominator/bad_layer_norm.py",
        "safe",
        "        mean = s[0] / N  # expect: padded-denominator\n",
    ),
    Case(f"{RULES}/lane_dependent_predicate/bad_scale.py", "unsafe", "            T.assume(N % 8 == 0)\n"),
    # few-per-thread: the tile argument at the call grown for the same threads (the file's last line, no newline)
    Case(f"{RULES}/scalarized_load/bad_add.py", "unsafe", "add_one_per_thread = add(1 << 20, block=1024)"),
    # few-per-thread of a T.copy: the factory's threads= default made fewer
    Case("fixtures/kernels/vec_narrow_but_fast.py", "unsafe", "def stage_1024(N, threads=128):\n"),
    # the T.annotate_layout dropped, with the comment above it
    Case(
        f"{DATA}/strided_layout.py",
        "unsafe",
        "        x_reg = T.alloc_fragment((B,), T.float16)\n        T.copy(X[bx * B:(bx + 1) * B], x_reg)\n",
    ),
    # the padded tensor length the proof compiled
    Case(f"{RULES}/lane_dependent_predicate/bad_add.py", "unsafe", "add_2047 = add(2048)\n"),
]
SAFE_CASES = [c for c in CASES if c.applicability == "safe"]


def _copy(folder, paths) -> None:
    for path in paths:
        shutil.copy(
            os.path.join(ROOT, path), folder / (os.path.basename(os.path.dirname(path)) + "__" + os.path.basename(path))
        )


def _texts(folder) -> dict:
    return {name: (folder / name).read_text() for name in sorted(os.listdir(folder)) if name.endswith(".py")}


def _findings(stdout: str) -> list:
    document = json.loads(stdout)
    assert all(k["status"] == "ok" for k in document["kernels"]), document["kernels"]
    return [f for k in document["kernels"] for f in k["findings"]]


@dataclass(frozen=True)
class Runs:
    """The copies of every case's file, as each step of a user's session left them."""

    originals: dict
    diff: object  # --diff --unsafe-fixes
    safe: object  # --fix --show-fixes (JSON)
    after_safe: dict
    safe_again: object
    after_safe_again: dict
    unsafe: object  # --fix --unsafe-fixes (JSON)
    after_unsafe: dict
    unsafe_again: object
    after_unsafe_again: dict


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    """Every case's file fixed in one folder, step after step (one pool of workers verifies them all)."""
    folder = tmp_path_factory.mktemp("fixes")
    _copy(folder, [c.path for c in CASES])
    originals = _texts(folder)
    cli = lambda *flags: run_cli(".", *flags, "-j", "2", cwd=folder)  # noqa: E731
    diff = cli("--diff", "--unsafe-fixes", "--no-cache")
    assert _texts(folder) == originals, "--diff wrote a file"
    safe = cli("--fix", "--show-fixes", "--format", "json", "--no-cache")
    after_safe = _texts(folder)
    safe_again = cli("--fix", "--format", "json")
    after_safe_again = _texts(folder)
    unsafe = cli("--fix", "--unsafe-fixes", "--format", "json")
    after_unsafe = _texts(folder)
    unsafe_again = cli("--fix", "--unsafe-fixes", "--format", "json")
    return Runs(
        originals,
        diff,
        safe,
        after_safe,
        safe_again,
        after_safe_again,
        unsafe,
        after_unsafe,
        unsafe_again,
        _texts(folder),
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_fix_is_shown_then_applied_clean_and_idempotent_and_unsafe_only_when_asked(case, runs):
    original = runs.originals[case.name]
    assert case.fixed not in original
    diff = runs.diff.stdout.split(f"+++ b/{case.name}\n")
    assert len(diff) == 2, runs.diff.stdout
    added = [line for line in case.fixed.splitlines(keepends=True) if line not in original.splitlines(keepends=True)]
    assert all(f"+{line.rstrip()}\n" in diff[1].split("--- a/")[0] for line in added), runs.diff.stdout
    if case.applicability == "safe":
        assert case.fixed in runs.after_safe[case.name], runs.after_safe[case.name]
    else:
        assert runs.after_safe[case.name] == runs.originals[case.name], (
            "an unsafe fix was applied without --unsafe-fixes"
        )
        left = [f["autofix"] for f in _findings(runs.safe.stdout) if f["file"] == f"./{case.name}"]
        assert left and all(fix["applicability"] == "unsafe" and fix["verified"] for fix in left), left
    assert runs.after_safe_again[case.name] == runs.after_safe[case.name], "a second --fix changed a fixed file"
    assert case.fixed in runs.after_unsafe[case.name], runs.after_unsafe[case.name]
    assert runs.after_unsafe_again[case.name] == runs.after_unsafe[case.name], "a second --fix changed a fixed file"
    compile(runs.after_unsafe[case.name], case.name, "exec")


def test_the_fixed_files_are_inspected_again_and_exit_as_ruff_does(runs):
    assert runs.diff.returncode == 1, runs.diff.stderr
    # after --fix only the findings whose fix is unsafe are left, each fix verified and shown in ruff's form
    left = _findings(runs.safe.stdout)
    assert {f["file"] for f in left} == {f"./{c.name}" for c in CASES if c not in SAFE_CASES}, left
    (assume,) = [f for f in left if f["file"] == "./lane_dependent_predicate__bad_scale.py"]
    assert assume["autofix"]["edits"] == [
        {
            "content": "            T.assume(N % 8 == 0)\n",
            "location": {"row": 10, "column": 1},
            "end_location": {"row": 10, "column": 1},
        }
    ]
    assert runs.safe.returncode == 1, runs.safe.stderr
    assert f"fixed {len(SAFE_CASES) + 1} findings in {len(SAFE_CASES)} files" in runs.safe.stderr, runs.safe.stderr
    assert "Divide by the true reduction length `N`, not `BLOCK_N`" in runs.safe.stderr
    assert "TLV004 missing-clear (safe)" in runs.safe.stderr
    assert runs.safe_again.returncode == 1 and "fixed" not in runs.safe_again.stderr, runs.safe_again.stderr
    assert _findings(runs.unsafe.stdout) == [] and runs.unsafe.returncode == 0, runs.unsafe.stdout + runs.unsafe.stderr
    assert runs.unsafe_again.returncode == 0 and "fixed" not in runs.unsafe_again.stderr, runs.unsafe_again.stderr


def test_diff_writes_nothing_and_fixed_source_sarif_and_html_give_the_fix(tmp_path, monkeypatch):
    name = "fixes__rank_64_product.py"
    _copy(tmp_path, [f"{DATA}/rank_64_product.py"])
    before = (tmp_path / name).read_text()
    old, new = "        T.gemm(a, b, c)\n", "        T.gemm(a, b, c, clear_accum=True)\n"

    shown = run_cli(name, "--diff", "--no-cache", "-j", "1", cwd=tmp_path)
    assert (tmp_path / name).read_text() == before
    assert shown.returncode == 1, shown.stderr
    assert shown.stdout.startswith(f"--- a/{name}\n+++ b/{name}\n"), shown.stdout
    assert f"-{old}+{new}" in shown.stdout

    monkeypatch.chdir(tmp_path)
    report = tl_inspect.inspect(name, fixes=True)
    (finding,) = report.findings
    assert finding.autofix.verified and finding.autofix.applicability == "safe"
    assert report.fixed_source() == before.replace(old, new)
    assert (tmp_path / name).read_text() == before
    (result,) = as_sarif(report.run)["runs"][0]["results"]
    (replacement,) = result["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement == {
        "deletedRegion": {"startLine": 19, "startColumn": 1, "endLine": 20, "endColumn": 1},
        "insertedContent": {"text": new},
    }
    page = report._repr_html_()
    assert f'<span class="del">-{old.rstrip()}</span>' in page and f'<span class="add">+{new.rstrip()}</span>' in page

    # --fix writes only the file it inspected, and only valid Python
    (job,), _ = report.inputs
    state = FileFixes(job, None, (), before, report.fixed_source(), None)
    (tmp_path / name).write_text(before + "# edited meanwhile\n")
    with pytest.raises(Unwritable, match="changed since it was inspected"):
        write_fixed(state)
    assert (tmp_path / name).read_text() == before + "# edited meanwhile\n"
    (tmp_path / name).write_text(before)
    with pytest.raises(SyntaxError):
        write_fixed(FileFixes(job, None, (), before, before.replace("def rank_64_product", "def ("), None))
    assert (tmp_path / name).read_text() == before
    write_fixed(state)
    assert (tmp_path / name).read_text() == before.replace(old, new)


@pytest.mark.parametrize(
    "path, said",
    [
        (f"{RULES}/missing_clear/bad_rescale_rows.py", "`scale`"),
        # the tile and the threads are one argument: growing it launches more threads, not the proof's tile
        ("fixtures/kernels/vec_cast.py", "a tile of 1024 elements for 256 threads"),
    ],
)
def test_a_finding_without_a_mechanical_fix_keeps_its_sentence(path, said, tmp_path):
    _copy(tmp_path, [path])
    done = run_cli(".", "--show-fixes", "--format", "json", "-j", "1", cwd=tmp_path)
    (finding,) = _findings(done.stdout)
    assert "autofix" not in finding and said in finding["fix"], finding


def test_a_grown_tile_that_would_leave_elements_out_is_not_offered(tmp_path):
    """relu_odd_grid's `N // block` blocks of the grown tile stop short of N (the proof's own grid is
    rounded up, its last block cut off by the bounds check): the fix is refused and says why, while the
    same edit for a length the tile divides is offered."""
    _copy(tmp_path, ["fixtures/kernels/vec_grow_tile.py"])
    done = run_cli(".", "--show-fixes", "--format", "json", "-j", "1", cwd=tmp_path)
    # reversed_through_shared's one element per thread is priced by its launch alone: no edit is offered
    fixes = {f["kernel"]: f["autofix"] for f in _findings(done.stdout) if "autofix" in f}
    assert fixes["relu_threads_and_block"]["verified"], fixes
    assert (
        fixes["relu_threads_and_block"]["edits"][0]["content"]
        == "relu_threads_and_block = relu(1 << 20, threads=128, block=1024)\n"
    )
    assert not fixes["relu_odd_grid"]["verified"], fixes
    assert "moves 512000 bytes after the fix where it moved 512512" in fixes["relu_odd_grid"]["refused"], fixes
