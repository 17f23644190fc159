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
from tl_inspect.gpu import cost_table
from tl_inspect.gpu.calibration import fit
from tl_inspect.gpu.calibration.suite import RATIO, cases
from tl_inspect.gpu.device import gpu_names, missing_gpu

NO_GPU = missing_gpu("sm_90")
ADD_ODD = ("fixtures/kernels/vec_all_scalar.py::add_flat_index", "-a", f"N={(1 << 26) + 1}")
SCALE = 1.3


@pytest.fixture(scope="module")
def suite():
    from tl_inspect.gpu.calibration import _priced

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
    return fit.Timed(
        case.term,
        case.label,
        case.fit,
        ms_good=good_ns / 1e6,
        bytes_good=good_bytes,
        ms_bad=bad_ns / 1e6,
        bytes_bad=bad_bytes,
    )


def test_every_case_fits_its_term_back_from_what_the_model_predicts_for_it(suite):
    base = cost_table.shipped()
    for case, (bad, good) in suite:
        wanted = base[case.term] * SCALE
        got = fit.fit_case(_synthetic(case, bad, good, base, wanted), bad, good, base)
        # 32 blocks keeping 1.3x the shipped loads in flight reach the bytes full speed needs: the time stops
        # following the term just short of it
        tolerance = 0.03 if case.term == "loop_loads_in_flight" else 1e-3
        assert got == pytest.approx(wanted, rel=tolerance), (case.term, case.label)


def test_the_suite_calibrates_every_term_but_three_it_has_no_representative_kernel_for():
    covered = {case.term for case in cases()}
    assert set(cost_table.TERMS) - covered == {"spread_store_wide", "transposed_load", "tensor_peak_fraction"}


def test_a_table_fitted_from_the_suite_keeps_unfitted_terms_and_takes_medians(suite):
    base = cost_table.shipped()
    fits = [
        (_synthetic(case, bad, good, base, base[case.term] * SCALE), base[case.term] * SCALE)
        for case, (bad, good) in suite
    ]
    fitted = {f.term: f for f in fit.fit_terms(fits, base)}
    assert fitted["spread_store_wide"].value is None
    assert fitted["lone_thread_walk"].value == pytest.approx(base["lone_thread_walk"] * SCALE)
    assert len(fitted["narrow_coalesced"].cases) == 3


# The H200's timings of the whole launch's cases (docs/gpu-impact.md, benchmarks/floor_cases.py), in ms:
# (bad, good), or the good form's alone
LAUNCH_TIMINGS = {
    ("bytes_in_flight", "one element per thread"): (0.1965, 0.139),
    ("loop_loads_in_flight", "8 blocks"): (0.6876, 0.1391),
    ("loop_loads_in_flight", "32 blocks"): (0.1794, 0.1391),
    ("walk_store_ns", "LayerNorm"): 1.41,
    ("streaming_read_bytes_per_ns", "1.07 GB"): 0.244,
    ("streaming_write_bytes_per_ns", "537 MB"): 0.139,
    ("l2_bytes_per_ns", "64 fp32 rows"): 0.0673,
}


def _launch_cases(suite) -> list:
    """(case, bad, good, the H200's timing) of each case of a term of the whole launch's estimate."""
    found = []
    for case, (bad, good) in suite:
        if case.term in fit.LAUNCH_TERMS:
            (timing,) = [t for (term, words), t in LAUNCH_TIMINGS.items() if term == case.term and words in case.label]
            found.append((case, bad, good, timing))
    return found


def test_the_whole_launchs_terms_each_have_cases_moving_a_tenth_to_one_gb(suite):
    launch = _launch_cases(suite)
    assert {case.term for case, *_ in launch} == set(fit.LAUNCH_TERMS) - {"tensor_peak_fraction"}
    assert len(launch) == len(LAUNCH_TIMINGS)
    for case, bad, good, _ in launch:
        for form in (bad, good):
            if form is None:
                continue
            assert form.ledger is not None and form.ledger.blocks, case.label
            # requested: the L2 case re-reads 1 GB of a 1.3 MB tensor (floor_cases' read moves 1.07 GB)
            assert 1e8 <= form.ledger.requested_bytes <= 1.1e9, (case.label, form.ledger.requested_bytes)


def _timed_as_measured(case, timing) -> fit.Timed:
    if case.fit == RATIO:
        ms_bad, ms_good = timing
        return fit.Timed(
            case.term,
            case.label,
            case.fit,
            ms_good=ms_good,
            bytes_good=_bytes(case.good),
            ms_bad=ms_bad,
            bytes_bad=_bytes(case.bad),
        )
    return fit.Timed(case.term, case.label, case.fit, ms_good=timing, bytes_good=_bytes(case.good))


# what the H200's timings above fit, each within 10 % of the shipped value (the shipped ones are these fits);
# `loop_loads_in_flight` is the median of its two grids, priced with the shipped `bytes_in_flight`
FITTED_FROM_H200 = {
    "bytes_in_flight": 1.541e6,
    "loop_loads_in_flight": 9.17,
    "walk_store_ns": 148.3,
    "streaming_read_bytes_per_ns": 4472,
    "streaming_write_bytes_per_ns": 3574,
    "l2_bytes_per_ns": 16930,
}


def test_the_h200s_timings_fit_the_whole_launchs_terms_back_to_about_the_shipped_values(suite):
    base = cost_table.shipped()
    fits = [
        (timed, fit.fit_case(timed, bad, good, base))
        for timed, bad, good in (
            (_timed_as_measured(case, timing), bad, good) for case, bad, good, timing in _launch_cases(suite)
        )
    ]
    assert all(value is not None for _, value in fits), [t.label for t, v in fits if v is None]
    fitted = {f.term: f.value for f in fit.fit_terms(fits, base)}
    for term, expected in FITTED_FROM_H200.items():
        value = fitted[term]
        assert value == pytest.approx(expected, rel=0.01), (term, value)
        assert value == pytest.approx(base[term], rel=0.1 if term != "bytes_in_flight" else 0.12), term
    # the two grids of too few blocks agree on a thread's loads in flight
    loops = [v for t, v in fits if t.term == "loop_loads_in_flight"]
    assert max(loops) / min(loops) < 1.05


def test_the_whole_launchs_terms_are_predicted_by_the_estimates_launch_time(suite):
    from tl_inspect.analysis import estimate

    base = cost_table.shipped()
    for case, bad, good, _ in _launch_cases(suite):
        form, func = (bad, case.bad) if bad is not None else (good, case.good)  # the form the term prices
        launch = estimate.total_ns(estimate.launch_parts(form.accesses, form.ledger, form.workload, base))
        assert fit.predicted_ns(form, _bytes(func), base, case.term, base[case.term]) == launch
        doubled = fit.predicted_ns(form, _bytes(func), base, case.term, base[case.term] * 2)
        # more bytes needed in flight or a slower store: longer; more loads in flight or faster memory: shorter
        slower = case.term in ("bytes_in_flight", "walk_store_ns")
        assert (doubled > launch) if slower else (doubled < launch), case.label


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
    assert (
        f"Estimates priced with the A100-SXM4-80GB cost table fitted by `tl-inspect calibrate` ({path})" in text.stdout
    )


def test_an_unknown_gpu_or_a_broken_table_is_one_line_and_exit_2(tmp_path):
    env = {**os.environ, "TL_INSPECT_CACHE_DIR": str(tmp_path)}
    unknown = run_cli(*ADD_ODD, "--gpu", "B200", env=env)
    assert unknown.returncode == 2
    assert unknown.stderr.splitlines() == [
        "tl-inspect: error: --gpu B200: no cost table for that GPU (tables: H200; `tl-inspect calibrate` on one "
        "fits its own)"
    ]
    broken = os.path.join(tmp_path, "cost", "broken.json")
    os.makedirs(os.path.dirname(broken))
    with open(broken, "w") as f:
        f.write('{"gpu": "NVIDIA L40S", "terms": {"launch_ns": -1}}')
    done = run_cli(*ADD_ODD, "--gpu", "L40S", env=env)
    assert done.returncode == 2
    # the terms it lacks are the shipped table's (a table fitted before they existed); its own must be valid
    (line,) = done.stderr.splitlines()
    assert line == f"tl-inspect: error: {broken}: the cost table's launch_ns must be positive numbers"


@pytest.mark.skipif(NO_GPU is None, reason="a CUDA GPU of sm_90 is here: the refusal cannot happen")
def test_calibrate_without_a_gpu_exits_2_with_one_line():
    done = run_cli("calibrate")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "tl-inspect: error: calibrate: a CUDA GPU is needed to time the calibration suite, and none is here"
    ]


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
