"""`tl-inspect calibrate`: the cost model's terms fitted on this machine's GPU.

Runs the calibration suite (tl_inspect.gpu.calibration.suite) on the local GPU: each case's kernels are
inspected as tl-inspect inspects any kernel (priced with the shipped table, in forked workers before CUDA
starts), compiled with nvcc, and timed as `--measure` times a finding (tl_inspect.inspector.measurement.measure). Each
term is then fitted (tl_inspect.gpu.calibration.fit) and the table written, with the suite's raw timings, to
`<cache>/cost/<GPU name>.json`, which later runs on this GPU price with.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import tempfile
import time
from datetime import datetime, timezone

from tl_inspect.gpu import cost_table
from tl_inspect.gpu.arch import normalised
from tl_inspect.gpu.calibration import fit
from tl_inspect.gpu.calibration.suite import RATIO, cases


def local_gpu() -> tuple:
    """(name, arch) of this machine's first CUDA device, or a NoGpu naming what is missing."""
    from tl_inspect.gpu.device import gpus, missing_gpu
    from tl_inspect.inspector.measurement.device import NoGpu

    found = gpus()
    if not found:
        raise NoGpu("calibrate: a CUDA GPU is needed to time the calibration suite, and none is here")
    name, capability = found[0]
    arch = normalised(capability)
    reason = missing_gpu(arch)
    if reason:
        raise NoGpu(f"calibrate: {reason}")
    return name, arch


def calibrate(terms: list, output: str | None, out=sys.stdout) -> str:
    """Time the suite (its cases of `terms`, all when empty), fit the table, write it to `output` (default:
    the cache's table of this GPU); the path written."""
    gpu, arch = local_gpu()
    chosen = [case for case in cases() if not terms or case.term in terms]
    base = cost_table.shipped()
    started = time.monotonic()
    print(f"calibrating the cost model on this {gpu} ({arch}): {len(chosen)} cases", file=out, flush=True)
    priced = _priced(chosen, arch)
    timed = _timed(chosen, arch, out)
    fits = [(t, fit.fit_case(t, bad, good, base)) for t, (bad, good) in zip(timed, priced) if t is not None]
    fitted = fit.fit_terms(fits, base)
    path = output or os.path.join(cost_table.table_dir(), cost_table.file_name(gpu))
    _write(path, gpu, arch, fitted, fits, base)
    print(_comparison(fitted, base), file=out)
    # --gpu picks a fitted table before the shipped one of the same GPU
    back = (
        "delete it to price with the shipped table again"
        if cost_table.same_gpu(gpu, base.gpu)
        else f"`--gpu {base.short_name}` prices with the shipped table"
    )
    print(
        f"wrote {path} in {time.monotonic() - started:.0f} s: later runs on this {gpu} price their estimates "
        f"with it ({back})",
        file=out,
    )
    return path


_CHOSEN: list = []


def _priced(chosen: list, arch: str) -> list:
    """(bad, good) fit.Priced per case, inspected in forked workers: CUDA must not have started here."""
    _CHOSEN[:] = chosen
    forms = [
        (index, side)
        for index, case in enumerate(chosen)
        for side in ("bad", "good")
        if getattr(case, side) is not None
    ]
    context = multiprocessing.get_context("fork")
    with context.Pool(max(1, min(len(forms), os.cpu_count() or 1))) as pool:
        found = dict(zip(forms, pool.starmap(_inspect_form, [(i, side, arch) for i, side in forms])))
    return [(found.get((i, "bad")), found[(i, "good")]) for i in range(len(chosen))]


def _inspect_form(index: int, side: str, arch: str) -> fit.Priced:
    from tl_inspect import api
    from tl_inspect.analysis import workload

    func = getattr(_CHOSEN[index], side)
    _, files = api._inspect_object(func, arch, False, "", cost_table.shipped(), {})
    (artifact,) = files[0].kernels
    if artifact.status != "ok":
        raise RuntimeError(f"{_CHOSEN[index].label} ({side}): {artifact.error}")
    return fit.Priced.of(artifact, workload.of(artifact))


def _timed(chosen: list, arch: str, out) -> list:
    """A fit.Timed per case (None for one that failed to build or run, which says why)."""
    import tilelang
    import torch
    from tvm.target import Target

    from tl_inspect.inspector.lowering import hooks
    from tl_inspect.inspector.measurement.measure import Form, launch_times, spread, typical_ms

    tilelang.set_log_level("WARNING")
    funcs = [f for case in chosen for f in (case.bad, case.good) if f is not None]
    kernels = iter(tilelang.par_compile(funcs, target=Target(hooks.cuda_target(arch)), ignore_error=True))
    compiled = [(next(kernels) if case.bad is not None else None, next(kernels)) for case in chosen]
    timed = []
    for case, (bad_kernel, good_kernel) in zip(chosen, compiled):
        bad = good = None
        try:
            if good_kernel is None or (case.fit == RATIO and bad_kernel is None):
                raise RuntimeError("a form did not compile")
            good = Form(case.good, {}, arch, kernel=good_kernel)
            bad = Form(case.bad, {}, arch, kernel=bad_kernel) if case.fit == RATIO else None
            times = launch_times(*(f for f in (bad, good) if f is not None))
            result = fit.Timed(
                term=case.term,
                label=case.label,
                fit=case.fit,
                ms_good=round(typical_ms(times[good]), 5),
                bytes_good=good.bytes,
                ms_bad=round(typical_ms(times[bad]), 5) if bad else None,
                bytes_bad=bad.bytes if bad else None,
                spread=round(max(spread(t) for t in times.values()), 4),
            )
            shown = f"{result.measured:.3f}x" if case.fit == RATIO else f"{result.measured / 1e3:.2f} us"
            print(f"  {case.term}: {case.label}: {shown}", file=out, flush=True)
        except Exception as exc:  # noqa: BLE001 - one case that does not build or run loses only itself
            print(
                f"  {case.term}: {case.label}: not timed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}",
                file=out,
                flush=True,
            )
            result = None
        timed.append(result)
        del bad, good
        torch.cuda.empty_cache()
    return timed


def _write(path: str, gpu: str, arch: str, fitted: list, fits: list, base) -> None:
    import tilelang
    import torch

    from tl_inspect._version import __version__

    table = {
        "gpu": gpu,
        "arch": arch,
        "source": f"tl-inspect {__version__} calibrate, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"tilelang {tilelang.__version__}, torch {torch.__version__}",
        # a term no case fitted keeps the shipped value, and is listed
        "terms": {f.term: round(f.value if f.value is not None else f.base, 4) for f in fitted},
        "unfitted": [f.term for f in fitted if f.value is None],
        "cases": [
            {
                "term": t.term,
                "label": t.label,
                "fit": t.fit,
                "ms_bad": t.ms_bad,
                "ms_good": t.ms_good,
                "bytes_bad": t.bytes_bad,
                "bytes_good": t.bytes_good,
                "spread": t.spread,
                "measured": round(t.measured, 4),
                "fitted": None if v is None else round(v, 4),
            }
            for t, v in fits
        ],
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(os.path.abspath(path)), delete=False, suffix=".tmp") as f:
        json.dump(table, f, indent=2)
        f.write("\n")
    os.replace(f.name, path)


def _comparison(fitted: list, base) -> str:
    """The fitted terms against the shipped ones, as a Markdown table."""
    rows = [f"| term | shipped ({base.short_name}) | fitted | fitted / shipped | cases |", "|---|---|---|---|---|"]
    for f in fitted:
        if f.value is None:
            reason = "no case of the suite" if not f.cases else "no case fitted it"
            rows.append(f"| {f.term} | {f.base:g} | - | - | {reason}: shipped value kept |")
            continue
        each = ", ".join("-" if v is None else f"{v:.4g}" for _, v in f.cases)
        rows.append(f"| {f.term} | {f.base:g} | {f.value:.4g} | {f.value / f.base:.2f} | {each} |")
    return "\n".join(rows)
