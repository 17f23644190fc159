"""Shape sweeps (`--sweep`, a sweep in TL_INSPECT_CASES) and `--all-configs`, on real kernels."""

from __future__ import annotations

import os
import re

import pytest
from conftest import FIXTURES, ROOT, inspect_files, kernel_named, run_cli

from tl_inspect.inspector.discovery.cases import expand_cases
from tl_inspect.model import RunResult
from tl_inspect.reports.sweep import sweeps

ADD = os.path.join("fixtures", "kernels", "vec_elementwise_1d.py")
AUTOTUNED = os.path.join(FIXTURES, "discovery", "autotuned.py")


def _env():
    return {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}


def test_expand_cases_takes_the_product_with_the_fixed_names_kept():
    assert expand_cases({"M": 256, "sweep": {"N": [4096, 4095], "block": [512, 1024]}}, "x") == [
        {"M": 256, "N": 4096, "block": 512},
        {"M": 256, "N": 4096, "block": 1024},
        {"M": 256, "N": 4095, "block": 512},
        {"M": 256, "N": 4095, "block": 1024},
    ]
    assert expand_cases([{"N": 1}, {"sweep": {"N": [2, 3]}}], "x") == [{"N": 1}, {"N": 2}, {"N": 3}]
    with pytest.raises(ValueError, match="N both fixed and swept"):
        expand_cases({"N": 1, "sweep": {"N": [2]}}, "x")
    with pytest.raises(ValueError, match="non-empty lists"):
        expand_cases({"sweep": {"N": []}}, "x")


def test_cli_sweep_shows_which_length_loses_the_width(tmp_path):
    """fp16 add over N=2048, 2047, 4104: only 2047 (not a multiple of 8) loses its 128-bit accesses."""
    html = tmp_path / "html"
    done = run_cli(
        f"{ADD}::add",
        "--sweep",
        "N=2048,2047,4104",
        "--html",
        str(html),
        "--exit-zero",
        env={**_env(), "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for name in ("add[N=2048]", "add[N=2047]", "add[N=4104]"):
        assert f"{name}  {ADD}:8" in out
    table = out[out.index("sweep add") :]
    assert re.search(r"N=2048\s*┃\s*N=2047\s*┃\s*N=4104", table)
    for access in ("A load", "B load", "C store"):
        row = next(line for line in table.splitlines() if access in line)
        assert re.search(r"11 │ 128 full │ 16 costly │ 128 full │ changes", row), row
    # the matrix on the index page: one cell per access and value, coloured by verdict
    index = (html / "index.html").read_text()
    matrix = index[index.index('<table class="sweep" data-factory="add">') :]
    matrix = matrix[: matrix.index("</table>")]
    assert re.findall(r'<a href="[^"]+">(N=\d+)</a>', matrix) == ["N=2048", "N=2047", "N=4104"]
    cells = re.findall(r'<td class="n sweep-(\w+)">([^<]*)</td>', matrix)
    assert cells == [("full", "128 full"), ("costly", "16 costly"), ("full", "128 full")] * 3
    assert matrix.count('<tr class="changes">') == 3


def test_cli_sweep_combines_fixed_args_and_several_names():
    done = run_cli(
        f"{ADD}::add",
        "-a",
        "threads=128",
        "--sweep",
        "N=2048,2047",
        "--sweep",
        "block=1024,512",
        "--format",
        "json",
        "--no-proofs",
        "--exit-zero",
        env=_env(),
    )
    assert done.returncode == 0, done.stderr
    names = re.findall(r'"name": "(add\[[^"]+\])"', done.stdout)
    assert names == [f"add[threads=128,N={n},block={b}]" for n in (2048, 2047) for b in (1024, 512)]


@pytest.mark.parametrize(
    "argv,expected",
    [
        ((f"{ADD}", "--sweep", "N=1,2"), "--sweep needs a FILE.py::factory target"),
        ((f"{ADD}::add", "--sweep", "N"), "--sweep expects NAME=VALUE,VALUE,..., got 'N'"),
        ((f"{ADD}::add", "--sweep", "N=1", "--sweep", "N=2"), "--sweep N given twice"),
        ((f"{ADD}::add", "-a", "N=1", "--sweep", "N=2,3"), "N given both by -a/--arg and by --sweep"),
    ],
)
def test_bad_sweep_options_exit_2(argv, expected):
    done = run_cli(*argv, env=_env())
    assert done.returncode == 2
    assert expected in done.stderr


def test_a_sweep_in_tl_inspect_cases_inspects_every_value(tmp_path):
    path = tmp_path / "swept.py"
    with open(os.path.join(ROOT, ADD)) as fixture:
        source = fixture.read()
    path.write_text(source + '\nTL_INSPECT_CASES = {"add": {"block": 1024, "sweep": {"N": [2048, 2047]}}}\n')
    result = inspect_files([str(path)], prove=False, only="add")[str(path)]
    assert [k.name for k in result.kernels] == ["add[block=1024,N=2048]", "add[block=1024,N=2047]"]
    assert kernel_named(result, "add[block=1024,N=2047]").case == (("block", "1024"), ("N", "2047"))
    (sweep,) = sweeps(RunResult(version="", arch="sm_90", files=(result,), reports=tuple(_reports(result))))
    assert sweep.columns == ("N=2048", "N=2047")
    assert {(row.buffer, row.direction): [c.bits for c in row.cells] for row in sweep.rows} == {
        ("A", "load"): [128, 16],
        ("B", "load"): [128, 16],
        ("C", "store"): [128, 16],
    }


def test_a_malformed_sweep_in_tl_inspect_cases_is_the_files_error(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("import tilelang\nTL_INSPECT_CASES = {'add': {'sweep': {'N': 4096}}}\n")
    result = inspect_files([str(path)])[str(path)]
    assert "TL_INSPECT_CASES entry 'add': 'sweep' expects {NAME: [value, ...]}" in result.error


def test_all_configs_inspects_every_autotune_config_without_tuning(tmp_path):
    first = inspect_files([AUTOTUNED])[AUTOTUNED]
    assert [k.name for k in first.kernels] == ["tuned_add[N=8192]"]
    every = inspect_files([AUTOTUNED], all_configs=True)[AUTOTUNED]
    assert [k.name for k in every.kernels] == [
        "tuned_add[N=8192,block=1024,threads=128]",
        "tuned_add[N=8192,block=2048,threads=256]",
    ]
    assert all(k.status == "ok" for k in every.kernels)
    # each config really is its own kernel: 128 threads vs 256 threads in the launch
    bounds = [re.search(r"__launch_bounds__\((\d+)", k.source).group(1) for k in every.kernels]
    assert bounds == ["128", "256"]
    (sweep,) = sweeps(RunResult(version="", arch="sm_90", files=(every,), reports=tuple(_reports(every))))
    assert sweep.columns == ("block=1024,threads=128", "block=2048,threads=256")


def _reports(result):
    from tl_inspect.model import KernelReport

    return [KernelReport(kernel) for kernel in result.kernels]
