"""`tl-inspect calibrate` and the cost tables: the suite's cases each exercise the term they calibrate (a
measurement the model itself predicts for a changed term fits back to it), a run prices with the table
`--gpu` names and says so, and without a GPU calibrate refuses in one line (CI). On a GPU (the H200) it
times the suite and writes a table later runs use."""

from __future__ import annotations

import json
import math
import os

import pytest

from tests.conftest import run_cli
from tl_inspect.analysis import cost_table
from tl_inspect.calibration import fit
from tl_inspect.calibration.suite import RATIO, cases
from tl_inspect.inspector.device import gpu_names, missing_gpu

NO_GPU = missing_gpu("sm_90")
ADD_ODD = ("fixtures/kernels/vec_all_scalar.py::add_flat_index", "-a", f"N={(1 << 26) + 1}")
SCALE = 1.3


@pytest.fixture(scope="module")
def suite():
    from tl_inspect.calibration import _priced

    chosen = cases()
    return list(zip(chosen, _priced(chosen, "sm_90")))


def _bytes(func) -> int:
    """What `--measure` and calibrate count a form as moving: its buffers' bytes."""
    buffers = [func.buffer_map[param] for param in func.params]
    return sum(math.prod(int(d) for d in b.shape) * (b.dtype.bits // 8) for b in buffers)


def _synthetic(case, bad, good, base, value) -> fit.Timed:
    """The timing the model predicts for the case with its term at `value`."""
    good_bytes = _bytes(case.good)
    good_ns = fit.predicted_ns(good, good_bytes, base, case.term, value)
    if case.fit != RATIO:
        return fit.Timed(case.term, case.label, case.fit, ms_good=good_ns / 1e6, bytes_good=good_bytes)
    bad_bytes = _bytes(case.bad)
    bad_ns = fit.predicted_ns(bad, bad_bytes, base, case.term, value)
    return fit.Timed(case.term, case.label, case.fit, ms_good=good_ns / 1e6, bytes_good=good_bytes,
                     ms_bad=bad_ns / 1e6, bytes_bad=bad_bytes)


def test_every_case_fits_its_term_back_from_what_the_model_predicts_for_it(suite):
    base = cost_table.shipped()
    for case, (bad, good) in suite:
        wanted = base[case.term] * SCALE
        got = fit.fit_case(_synthetic(case, bad, good, base, wanted), bad, good, base)
        assert got == pytest.approx(wanted, rel=1e-3), (case.term, case.label)


def test_the_suite_calibrates_every_term_but_two_it_has_no_representative_kernel_for():
    covered = {case.term for case in cases()}
    assert set(cost_table.TERMS) - covered == {"spread_store_wide", "transposed_load"}


def test_a_table_fitted_from_the_suite_keeps_unfitted_terms_and_takes_medians(suite):
    base = cost_table.shipped()
    fits = [(_synthetic(case, bad, good, base, base[case.term] * SCALE), base[case.term] * SCALE)
            for case, (bad, good) in suite]
    fitted = {f.term: f for f in fit.fit_terms(fits, base)}
    assert fitted["spread_store_wide"].value is None
    assert fitted["lone_thread_walk"].value == pytest.approx(base["lone_thread_walk"] * SCALE)
    assert len(fitted["narrow_coalesced"].cases) == 3


def _write_table(folder, gpu: str, **changed) -> str:
    base = cost_table.shipped()
    terms = {name: changed.get(name, value) for name, value in base.terms}
    path = os.path.join(folder, "cost", cost_table.file_name(gpu))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"gpu": gpu, "terms": terms}, f)
    return path


def test_gpu_option_prices_with_that_gpus_table_and_the_run_says_which(tmp_path):
    # a table whose stores drain twice as slowly as the H200's: the tail guard's estimate grows with it
    path = _write_table(tmp_path, "NVIDIA A100-SXM4-80GB", spread_store_16=7.83 * 2)
    env = {**os.environ, "TL_INSPECT_CACHE_DIR": str(tmp_path)}
    shipped = run_cli(*ADD_ODD, "--format", "json", env=env)
    fitted = run_cli(*ADD_ODD, "--format", "json", "--gpu", "A100-SXM4-80GB", env=env)
    text = run_cli(*ADD_ODD, "--gpu", "a100 sxm4 80gb", env=env)
    assert shipped.returncode == fitted.returncode == text.returncode == 1, fitted.stderr
    shipped_doc, fitted_doc = json.loads(shipped.stdout), json.loads(fitted.stdout)
    assert shipped_doc["cost_table"] == {"gpu": "NVIDIA H200", "origin": "shipped"}
    assert fitted_doc["cost_table"] == {"gpu": "NVIDIA A100-SXM4-80GB", "origin": path}

    def estimate(doc):
        (finding,) = [f for f in doc["kernels"][0]["findings"] if f["slug"] == "lane-dependent-predicate"]
        return finding["cost"]

    assert estimate(fitted_doc)["estimate"] > 1.9 * estimate(shipped_doc)["estimate"] / 1.05
    assert "15.66x for the store's bytes" in estimate(fitted_doc)["basis"]
    assert "on an A100-SXM4-80GB" in text.stdout
    assert f"Estimates priced with the A100-SXM4-80GB cost table fitted by `tl-inspect calibrate` ({path})" \
        in text.stdout


def test_an_unknown_gpu_or_a_broken_table_is_one_line_and_exit_2(tmp_path):
    env = {**os.environ, "TL_INSPECT_CACHE_DIR": str(tmp_path)}
    unknown = run_cli(*ADD_ODD, "--gpu", "B200", env=env)
    assert unknown.returncode == 2
    assert unknown.stderr.splitlines() == [
        "tl-inspect: error: --gpu B200: no cost table for that GPU (tables: H200; `tl-inspect calibrate` on one "
        "fits its own)"]
    broken = os.path.join(tmp_path, "cost", "broken.json")
    os.makedirs(os.path.dirname(broken))
    with open(broken, "w") as f:
        f.write('{"gpu": "NVIDIA L40S", "terms": {"launch_ns": -1}}')
    done = run_cli(*ADD_ODD, "--gpu", "L40S", env=env)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"tl-inspect: error: {broken}: the cost table has no two_bytes_per_thread")


@pytest.mark.skipif(NO_GPU is None, reason="a CUDA GPU of sm_90 is here: the refusal cannot happen")
def test_calibrate_without_a_gpu_exits_2_with_one_line():
    done = run_cli("calibrate")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "tl-inspect: error: calibrate: a CUDA GPU is needed to time the calibration suite, and none is here"]


@pytest.mark.skipif(NO_GPU is not None, reason=f"calibrate: {NO_GPU}")
def test_calibrate_on_a_gpu_writes_a_table_later_runs_on_it_use(tmp_path):
    env = {**os.environ, "TL_INSPECT_CACHE_DIR": str(tmp_path)}
    done = run_cli("calibrate", "--term", "two_bytes_per_thread", "--term", "launch_ns", env=env, timeout=900)
    assert done.returncode == 0, done.stderr
    (gpu, *_) = gpu_names()
    path = os.path.join(tmp_path, "cost", cost_table.file_name(gpu))
    table = json.load(open(path))
    assert table["gpu"] == gpu
    assert 1.2 < table["terms"]["two_bytes_per_thread"] < 4.0
    assert 500 < table["terms"]["launch_ns"] < 10000
    assert set(table["unfitted"]) == set(cost_table.TERMS) - {"two_bytes_per_thread", "launch_ns"}
    assert "| two_bytes_per_thread | 2.06 |" in done.stdout
    if cost_table.same_gpu(gpu, cost_table.shipped().gpu):  # --gpu would pick the fitted table
        assert "(delete it to price with the shipped table again)" in done.stdout
    inspected = run_cli(*ADD_ODD, "--format", "json", env=env)
    assert json.loads(inspected.stdout)["cost_table"] == {"gpu": gpu, "origin": path}
