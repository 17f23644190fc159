"""`--measure`: without a CUDA GPU of the arch it refuses in one line (CI); on one (an H200) it times each
costly finding's proof variant against the kernel and reports the measurement in every format."""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import replace

import pytest

from tests.conftest import FIXTURES, run_cli
from tl_inspect.gpu.device import missing_gpu
from tl_inspect.inspector.measurement.device import NoGpu

NO_GPU = missing_gpu("sm_90")
needs_gpu = pytest.mark.skipif(NO_GPU is not None, reason=f"--measure: {NO_GPU}")
# 2^26 + 1 fp16 elements in each of A, B and C: 384 MB a launch, beyond the L2, and a tail guard (TLV002)
ADD_ODD = ("fixtures/kernels/vec_all_scalar.py::add_flat_index", "-a", f"N={(1 << 26) + 1}")
# 2^28 bf16 elements in and out, two bytes per thread (few-per-thread, TLV001): the grown tile computes the same
RELU = ("fixtures/kernels/vec_grow_tile.py::relu", "-a", f"N={1 << 28}", "-a", "threads=128", "-a", "block=128")


@pytest.mark.skipif(NO_GPU is None, reason="a CUDA GPU of sm_90 is here: the refusal cannot happen")
def test_measure_without_a_gpu_exits_2_with_one_line_and_inspects_nothing():
    done = run_cli("--measure", *ADD_ODD, "--format", "json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"tl-inspect: error: --measure: {NO_GPU}"]
    assert "CUDA GPU of arch sm_90" in done.stderr


@pytest.mark.skipif(NO_GPU is None, reason="a CUDA GPU of sm_90 is here: the refusal cannot happen")
def test_measure_true_without_a_gpu_raises_before_inspecting():
    import tl_inspect

    with pytest.raises(NoGpu, match="CUDA GPU of arch sm_90"):
        tl_inspect.inspect("fixtures/kernels/vec_all_scalar.py", measure=True)


def _measured_findings(*target, html: str = "") -> list[dict]:
    done = run_cli(
        "--measure", *target, "--format", "json", "--no-cache", *(("--html", html) if html else ()), timeout=600
    )
    assert done.returncode == 1, done.stderr
    (kernel,) = json.loads(done.stdout)["kernels"]
    findings = [f for f in kernel["findings"] if "cost" in f]
    assert findings, kernel
    return findings


@needs_gpu
def test_measure_times_a_tail_guard_and_says_its_padded_variant_is_not_compared(tmp_path):
    import torch

    (finding,) = _measured_findings(*ADD_ODD, html=str(tmp_path))
    assert finding["slug"] == "lane-dependent-predicate"
    measured = finding["cost"]["measured"]
    assert set(measured) == {"slowdown", "ms_before", "ms_after", "gpu", "spread", "outputs_agree"}
    assert measured["gpu"] == torch.cuda.get_device_name()
    # docs/gpu-impact.md: the scalar fp16 add runs 2.62x slower than its aligned twin on an H200
    assert 1.5 < measured["slowdown"] < 4.0
    assert measured["ms_before"] > measured["ms_after"] > 0
    assert 0 <= measured["spread"] < 0.5
    assert measured["outputs_agree"] is None  # the variant pads N: another function
    pages = [p.read_text() for p in tmp_path.glob("*.html")]
    assert any("<strong>estimated:</strong>" in p and "<strong>on this GPU:</strong> measured " in p for p in pages)


@needs_gpu
def test_measure_checks_the_outputs_of_a_variant_that_computes_the_same_function():
    findings = _measured_findings(*RELU)
    measured = [f["cost"]["measured"] for f in findings]
    assert all(m["outputs_agree"] is True for m in measured), measured
    assert all(m["slowdown"] > 1.0 for m in measured), measured


@needs_gpu
def test_measure_shows_the_measurement_in_the_one_line_formats():
    for form in ("concise", "github"):
        done = run_cli("--measure", *ADD_ODD, "--format", form, "--no-cache", timeout=600)
        assert done.returncode == 1, done.stderr
        assert "; measured " in done.stdout and " on this NVIDIA" in done.stdout, done.stdout


@needs_gpu
def test_measure_runs_a_built_kernel_at_the_length_a_gives_and_its_assuming_variant_at_a_multiple():
    target = os.path.join(FIXTURES, "kernels", "vec_elementwise_1d.py") + "::gelu_any_length"
    (finding,) = _measured_findings(target, "-a", f"N={(1 << 26) + 1}")
    assert finding["proof"]["change"] == "T.assume(N % 8 == 0)"
    measured = finding["cost"]["measured"]
    # docs/gpu-impact.md: this tail guard measured 2.55x against its aligned twin on an H200
    assert 1.5 < measured["slowdown"] < 4.0
    assert measured["outputs_agree"] is None


@needs_gpu
def test_a_spent_budget_says_so_on_each_finding_left_over():
    # the first kernel's fills and timing alone outlast a budget of a millisecond: the others are left over
    done = run_cli(
        "--measure",
        "--measure-budget",
        "0.001",
        "-j",
        "1",
        "fixtures/kernels/vec_all_scalar.py",
        "--format",
        "json",
        "--no-cache",
        timeout=600,
    )
    assert done.returncode == 1, done.stderr
    kernels = json.loads(done.stdout)["kernels"]
    assert [k["name"] for k in kernels if "measured" in k][:1] == [kernels[0]["name"]]
    later = kernels[1:]
    assert later and all("measuring budget (--measure-budget) was spent" in k["unmeasured"] for k in later)
    costs = [f["cost"] for k in later for f in k["findings"] if "cost" in f]
    assert costs and all("measuring budget (--measure-budget) was spent" in c["unmeasured"] for c in costs), costs


def test_a_forms_time_follows_the_mix_of_its_launch_modes_where_the_median_jumps_between_them():
    from tl_inspect.inspector.measurement.measure import typical_ms

    # a 4 us launch's times as measured on the H200: two modes 0.23 us apart, mixed about evenly
    def mixed(share_fast: float) -> list:
        fast = round(1000 * share_fast)
        return [0.00387] * fast + [0.00410] * (1000 - fast) + [0.00502] * 20

    medians = [statistics.median(mixed(share)) for share in (0.47, 0.53)]
    typical = [typical_ms(mixed(share)) for share in (0.47, 0.53)]
    assert medians[0] / medians[1] == pytest.approx(0.00410 / 0.00387)
    assert 1 < typical[0] / typical[1] < 1.005  # 6 % of launches moved 0.23 us
    assert 0.00387 < typical[1] < 0.00410
    assert typical_ms([0.004] * 9 + [0.04]) == pytest.approx(0.004)


def test_a_kernel_whose_length_is_known_only_at_run_time_is_refused_before_it_is_compiled():
    import importlib.util

    from tl_inspect.inspector.measurement.measure import Unmeasurable, compiled

    path = os.path.join(FIXTURES, "kernels", "vec_elementwise_1d.py")
    spec = importlib.util.spec_from_file_location("elementwise", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(Unmeasurable, match=r"^the length N of X is known only at run time$"):
        compiled(module.gelu_any_length, {}, "sm_90")


def test_a_run_time_length_names_the_way_to_give_it_a_value_and_says_when_there_is_none():
    from tl_inspect.inspector.measurement.measure import how_to_give
    from tl_inspect.model import KernelArtifact

    built = KernelArtifact(name="gelu_any_length", file="k.py", line=1, arch="sm_90", discovered_as="prim_func")
    assert how_to_give(built, "N") == "give it a value: k.py::gelu_any_length -a N=VALUE"
    labelled = replace(built, name="gelu_any_length[N=7]")
    assert how_to_give(labelled, "N") == "give it a value: k.py::gelu_any_length -a N=VALUE"
    case = replace(built, name="scale[block=1024]", discovered_as="factory", factory="scale")
    assert how_to_give(case, "N") == "the factory scale leaves it to run time, so no case gives it a value"


def test_a_variant_that_assumes_a_multiple_runs_at_the_users_length_rounded_up_to_one():
    import importlib.util

    from tl_inspect.inspector.measurement.measure import _assumed
    from tl_inspect.inspector.rewrites.primfunc import assume_multiple

    spec = importlib.util.spec_from_file_location(
        "elementwise", os.path.join(FIXTURES, "kernels", "vec_elementwise_1d.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    variant = assume_multiple(module.gelu_any_length, "N", 8)
    # at N = 2^20 + 1 the variant's unguarded vectors would touch 7 elements past X and Y
    assert _assumed(variant, {"N": str((1 << 20) + 1)}) == {"N": str((1 << 20) + 8)}
    assert _assumed(variant, {"N": str(1 << 20)}) == {"N": str(1 << 20)}
    assert _assumed(module.gelu_any_length, {"N": "3"}) == {"N": "3"}
