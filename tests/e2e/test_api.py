"""The Python API, the pytest assertions and the pytest plugin, on kernels built in this process with
the real tilelang (and, for paths, compiled by the real worker processes)."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import ROOT, import_api_kernels

import tl_inspect
from tl_inspect.lint.settings import ConfigError
from tl_inspect.reports.phrases import headline
from tl_inspect.testing import assert_no_findings, assert_vectorized

pytest_plugins = ["pytester"]

KERNELS = "tests/api/kernels.py"


@pytest.fixture(scope="module")
def kernels():
    return import_api_kernels("kernels")


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    # messages name files relative to the working directory
    monkeypatch.chdir(ROOT)


def test_factory_with_arguments_compiles_in_process(kernels, capfd):
    report = tl_inspect.inspect(kernels.add, N=2047)
    kernel = report.kernel()
    assert (kernel.name, kernel.file, kernel.line, kernel.ok) == ("add[N=2047]", KERNELS, 10, True)
    assert [(f.rule, f.line) for f in kernel.findings] == [("TLV002", 13)]
    assert {(a.buffer, a.kind, a.bits, a.verdict, a.cause.kind) for a in kernel.accesses} == {
        ("A", "load", 16, "costly", "tail-guard"),
        ("B", "load", 16, "costly", "tail-guard"),
        ("C", "store", 16, "costly", "tail-guard"),
    }
    store = next(a for a in kernel.accesses if a.kind == "store")
    assert "uint4" in store.proof.cuda_after and store.proof.bits_after == 128
    # the line map ties the access's CUDA line back to its Python line
    assert all(kernel.line_map[n - 1] == 13 for n in store.cuda_lines)
    assert "C[" in kernel.cuda.splitlines()[store.cuda_lines[0] - 1]
    # what the compiler printed while lowering went into the record, not onto the caller's terminal
    assert capfd.readouterr() == ("", "")


def test_prim_func_and_path_give_the_same_verdicts(kernels):
    in_memory = tl_inspect.inspect(kernels.add.get_tir(N=2047)).kernel()
    by_worker = tl_inspect.inspect(f"{KERNELS}::add", N=2047).kernel()
    assert in_memory.name == "main" and by_worker.name == "add[N=2047]"
    # the worker knows the factory call and proves through it; a PrimFunc alone is padded
    changes = {
        "the length 2047 padded to 2048 (a multiple of 8)": "add called with N=2048 instead of 2047 (a multiple of 8)"
    }

    def as_by_worker(data: dict) -> dict:
        proof = data.get("proof")
        return data | ({"proof": proof | {"change": changes.get(proof["change"], proof["change"])}} if proof else {})

    assert [as_by_worker(f.as_dict()) | {"kernel": ""} for f in in_memory.findings] == [
        f.as_dict() | {"kernel": ""} for f in by_worker.findings
    ]
    assert [as_by_worker(a.as_dict()) for a in in_memory.accesses] == [a.as_dict() for a in by_worker.accesses]
    assert in_memory.cuda == by_worker.cuda


def test_a_path_reports_every_kernel_of_the_file():
    report = tl_inspect.inspect("fixtures/kernels/vec_elementwise_1d.py")
    assert {k.name: [f.slug for f in k.findings] for k in report} == {
        "add_aligned": [],
        "add_tail_multiple_of_8": [],
        "axpy_ragged": ["lane-dependent-predicate"],
        "scale_naive": ["scalarized-load"],
        "gelu_any_length": ["lane-dependent-predicate"],
        "gelu_length_multiple_of_8": [],
    }
    assert report.errors == [] and len(report) == 6 and report.run.arch == "sm_90"
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        report.kernel("nope")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_compiled_kernel(kernels):
    import tilelang

    compiled = tilelang.compile(kernels.add.get_tir(N=2048), target={"kind": "cuda", "arch": "sm_90"})
    kernel = tl_inspect.inspect(compiled).kernel()
    assert kernel.name == "main" and kernel.findings == ()
    assert sorted(a.bits for a in kernel.accesses) == [128, 128, 128]


def test_selection_filters_findings_not_verdicts(kernels):
    kernel = tl_inspect.inspect(kernels.add.get_tir(N=2047), select="scalarized-load").kernel()
    assert kernel.findings == ()
    assert {a.verdict for a in kernel.accesses} == {"costly"}


def test_wrong_calls_name_what_is_missing(kernels):
    with pytest.raises(TypeError, match=r"add is a factory: pass its arguments \(N\)"):
        tl_inspect.inspect(kernels.add)
    with pytest.raises(TypeError, match="main is already a kernel"):
        tl_inspect.inspect(kernels.add.get_tir(N=2048), N=4096)
    with pytest.raises(TypeError, match="not int"):
        tl_inspect.inspect(3)
    with pytest.raises(ValueError, match="no/such/file.py: no such file or directory"):
        tl_inspect.inspect("no/such/file.py")


def test_settings_fail_in_the_command_lines_words():
    """The API makes its settings where the command line does (`lint.driver`): the same checks, the same words."""
    with pytest.raises(ConfigError, match="^--measure-budget expects a number of seconds above 0, got 0$"):
        tl_inspect.inspect("no/such/file.py", measure_budget=0)
    with pytest.raises(ConfigError, match="^--arch: expected a CUDA arch such as 'sm_90', got 'bad'$"):
        tl_inspect.inspect("no/such/file.py", arch="bad")


VECTORIZED_FAILURE = """\
1 global access narrower than 128 bits in kernel main (tests/api/kernels.py:10), 1 cause:
  line 13: The C store, 16-bit, up to 128-bit (costly): tilelang's bounds check `bx * 1024 + tx * 8 + i_s < 2047` varies inside an 8-element vector group (2047 is not a multiple of 8), so each element is checked and moved on its own; fix: pad the length to a multiple of 8 (2047 -> 2048), or split the loop into an aligned body and a separate tail
`tl-inspect explain tests/api/kernels.py` shows each one's evidence, cost and proof"""


def test_assert_vectorized_fails_with_the_verdict(kernels):
    with pytest.raises(AssertionError) as failure:
        assert_vectorized(kernels.add.get_tir(N=2047), buffers="C")
    assert str(failure.value) == VECTORIZED_FAILURE
    with pytest.raises(AssertionError) as failure:
        assert_vectorized(kernels.add.get_tir(N=2047))
    # the three accesses one padding would widen are one cause: one line
    assert str(failure.value).splitlines()[:2] == [
        "3 global accesses narrower than 128 bits in kernel main (tests/api/kernels.py:10), 1 cause:",
        "  line 13: The C store and the A and B loads, 16-bit, up to 128-bit (costly): tilelang's bounds check "
        "`bx * 1024 + tx * 8 + i_s < 2047` varies inside an 8-element vector group (2047 is not a multiple of 8), "
        "so each element is checked and moved on its own; fix: pad the length to a multiple of 8 (2047 -> 2048), "
        "or split the loop into an aligned body and a separate tail",
    ]
    # 16-bit scalars are what the same kernel is asked for at min_bits=16
    assert_vectorized(kernels.add.get_tir(N=2047), min_bits=16)


def test_assert_vectorized_passes_full_and_inherent_accesses(kernels):
    assert_vectorized(kernels.add.get_tir(N=2048))
    report = tl_inspect.inspect(kernels.scale, N=4096)
    # S[0] is one 16-bit value for every lane: narrow by nature, not a failure
    assert {(a.buffer, a.bits, a.verdict, a.reason) for a in report.kernel().accesses} >= {
        ("S", 16, "inherent", "broadcast")
    }
    assert_vectorized(report)
    with pytest.raises(
        AssertionError, match=r"^no global access of Q in scale\[N=4096\] \(buffers accessed: S, X, Y\)$"
    ):
        assert_vectorized(report, buffers=["Q", "X"])


def test_assert_no_findings_fails_with_the_finding(kernels):
    with pytest.raises(AssertionError) as failure:
        assert_no_findings(kernels.add.get_tir(N=2047))
    [finding] = tl_inspect.inspect(kernels.add.get_tir(N=2047)).findings
    assert str(failure.value).splitlines() == [
        "1 finding in kernel main (tests/api/kernels.py:10):",
        f"  line 13: TLV002 [lane-dependent-predicate] {headline(finding)} Fix: pad the length to a multiple of 8 "
        "(2047 -> 2048), or split the loop into an aligned body and a separate tail",
        "`tl-inspect explain tests/api/kernels.py` shows each one's evidence, cost and proof",
    ]
    assert_no_findings(kernels.add.get_tir(N=2047), select="scalarized-load")
    assert_no_findings(kernels.add.get_tir(N=2048))


def test_pytest_plugin_fixture_and_option(pytester):
    pytester.makepyfile(
        test_kernels=f"""
        from tl_inspect.testing import assert_vectorized

        PATH = {os.path.join(ROOT, "fixtures/kernels/vec_elementwise_1d.py")!r}

        def test_aligned(tl_inspect_report):
            report = tl_inspect_report(PATH)
            assert report.run.arch == "sm_80"
            assert_vectorized(report.kernel("add_aligned"))

        def test_ragged(tl_inspect_report):
            # the same report: the file is compiled once per session
            assert tl_inspect_report(PATH) is tl_inspect_report(PATH)
            assert_vectorized(tl_inspect_report(PATH).kernel("axpy_ragged"))
    """
    )
    # the plugin comes from the installed package's pytest11 entry point, as in a user's project
    result = pytester.runpytest_subprocess("--tl-inspect-arch", "sm_80")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*3 global accesses narrower than 128 bits in kernel axpy_ragged (*), 1 cause:",
            "*line 21: The Out store and the X and Y loads, 16-bit, up to 128-bit (costly): *",
        ]
    )


def test_plugin_is_registered_and_the_package_typed():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)
    assert project["project"]["entry-points"]["pytest11"] == {"tl_inspect": "tl_inspect.pytest_plugin"}
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["tl_inspect"]
    assert os.path.isfile(os.path.join(os.path.dirname(tl_inspect.__file__), "py.typed"))


def test_rich_console_shows_the_full_format(kernels):
    """`__rich__`: what `--format full` prints, for the kernel and for the report."""
    import io

    from rich.console import Console

    def rendered(obj) -> str:
        out = io.StringIO()
        Console(file=out, width=200, color_system=None).print(obj)
        return out.getvalue()

    report = tl_inspect.inspect(kernels.add, N=2047)
    kernel = rendered(report.kernel())
    assert kernel.startswith("add[N=2047]  tests/api/kernels.py:10  vector accesses: 0 128-bit / 0 narrower / 3 scalar")
    assert "warning TLV002 [lane-dependent-predicate]" in kernel
    assert "13 |                 C[bx * block + i] = A[bx * block + i] + B[bx * block + i]" in kernel
    assert "proof: rebuilt with add called with N=2048 instead of 2047" in kernel and "uint4" in kernel
    whole = rendered(report)
    assert whole.startswith(kernel) and whole.endswith(
        "Checked 1 kernel in 1 file: 1 finding (1 warning)\n"
        "Files: 1 file with kernels, 0 with factories but no inferable call, 0 failed\n"
    )


def test_report_html_folds_clean_kernels_and_keeps_ids_apart(kernels):
    import dataclasses
    import re

    tail = tl_inspect.inspect(kernels.add, N=2047)
    clean = tl_inspect.inspect(kernels.add, N=2048)
    both = tl_inspect.Report(dataclasses.replace(tail.run, reports=tail.run.reports + clean.run.reports))
    fragment = both._repr_html_()
    assert re.findall(r'<details class="kernel"( open)?>\s*<summary>(\S+)', fragment) == [
        (" open", "add[N=2047]"),
        ("", "add[N=2048]"),
    ]
    ids = re.findall(r' id="([^"]+)"', fragment)
    assert len(ids) == len(set(ids)) and "py-13" not in ids
    # a second output in the same notebook gets ids of its own
    assert not set(ids) & set(re.findall(r' id="([^"]+)"', both._repr_html_()))


# the API tests' kernels, with a module-level compile as TileLang's examples write them
ODD_ADD = (
    open(os.path.join(ROOT, "tests", "api", "kernels.py"), encoding="utf-8").read()
    + """

add_4095 = add(4095)  # compiled at import: tilelang needs a default target
"""
)


def test_pytest_plugin_sets_the_target_and_names_the_failing_case(pytester):
    pytester.makepyfile(
        odd_kernels=ODD_ADD,
        test_odd=r"""
        import pytest

        from odd_kernels import add
        from tl_inspect.testing import assert_vectorized

        @pytest.mark.parametrize("n", [4096, 4095])
        def test_add(n):
            assert_vectorized(add, N=n)
    """,
    )
    result = pytester.runpytest_subprocess("--tl-inspect-arch", "sm_90", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "No registered target detector" not in out
    result.stdout.fnmatch_lines(
        [
            "E *AssertionError: 3 global accesses narrower than 128 bits in kernel add[[]N=4095[]] (odd_kernels.py:*), 1 cause:",
            "E *  line 13: The C store and the A and B loads, 16-bit, up to 128-bit (costly): tilelang's bounds check *; "
            "fix: pad the length to a multiple of 8 (4095 -> 4096)*",
        ]
    )
    # the traceback is the test's own frame: tl_inspect's are hidden
    assert "tl_inspect/testing.py" not in out and "def assert_vectorized" not in out
    assert pytester.runpytest_subprocess("--tl-inspect-arch", "80").ret == pytest.ExitCode.USAGE_ERROR
