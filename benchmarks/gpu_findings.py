"""Each finding's estimate against the GPU: the kernel next to the one its proof rebuilds, timed by this
script's own harness (gpu_narrow.py's: median of 30 launches after 5 warm-ups, CUDA events around one
launch with a `torch.cuda._sleep` queued first), independent of `--measure`'s; with `--measured` the L2 is
flushed before each launch, there are as many launches as move 2 GiB (10 to 2000), rotating through as
many copies of the inputs, and a form's time is the mean of the middle 80 %, as `--measure` does, but one
form's launches after the other's, in one pass.

  python benchmarks/gpu_findings.py --plan plan.pkl       (no GPU) inspects every case below at its
      measuring size and writes, per finding, the causes its proof removed and its estimate;
  python benchmarks/gpu_findings.py plan.pkl              (on the GPU) rebuilds each kernel and its
      proof's variant from the same causes with tl-inspect's own rewrites, checks the change text is
      the proof's, and times both, printing a Markdown table;
  python benchmarks/gpu_findings.py --measured PATH...    (on the GPU) runs `tl-inspect --measure` over
      PATH in this process, times every measured finding's pair again with this harness, and prints
      both with the estimate: `--measure` is to agree within 5 %.
Sizes of the cases below are chosen to move 0.25-2 GB per launch, so the launch and the L2 do not count.
"""

# no `from __future__ import annotations`: tilelang evaluates the kernels' annotations in their closures

import argparse
import importlib.util
import itertools
import json
import os
import pickle
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N28 = 1 << 28

# (label, file under the repository, factory, arguments, outputs: the trailing parameters it writes)
CASES = [
    ("add_one_per_thread", "src/tl_inspect/rules/scalarized_load/bad_add.py", "add", {"N": N28, "block": 128}, 1),
    ("bf16_cast_naive", "fixtures/kernels/vec_cast.py", "to_bfloat16_one_per_thread", {"N": N28}, 1),
    ("scale_naive", "fixtures/kernels/vec_elementwise_1d.py", "scale_one_per_thread", {"N": N28}, 1),
    ("add_explicit_index", "src/tl_inspect/gpu/calibration/access_kernels.py", "add_explicit_index", {"N": N28}, 1),
    (
        "relu_threads_and_block",
        "fixtures/kernels/vec_grow_tile.py",
        "relu",
        {"N": N28, "threads": 128, "block": 128},
        1,
    ),
    (
        "relu_odd_grid",
        "fixtures/kernels/vec_grow_tile.py",
        "relu",
        {"N": ((1 << 21) + 1) * 128, "threads": 128, "block": 128},
        1,
    ),
    ("shuffled", "fixtures/kernels/vec_index_patterns.py", "channel_shuffle", {"M": 1 << 20, "C": 256}, 1),
    ("rolled", "fixtures/kernels/vec_index_patterns.py", "roll", {"M": 1 << 20, "D": 256, "shift": 3}, 1),
    ("reversed_walk", "fixtures/kernels/vec_index_patterns.py", "reverse", {"N": N28}, 1),
    ("swiglu_pairs", "fixtures/kernels/vec_index_patterns.py", "swiglu_interleaved", {"M": 32768, "N": 8192}, 1),
    ("row_sum_4095", "fixtures/kernels/vec_workload.py", "row_sum_guarded", {"M": 1 << 17, "N": 4095}, 1),
    ("iterate_once", "fixtures/kernels/vec_workload.py", "iterate", {"N": (1 << 26) + 1, "rounds": 1}, 1),
    ("row_sum_range", "src/tl_inspect/gpu/calibration/access_kernels.py", "row_walk", {"M": 1 << 21, "N": 256}, 1),
    ("row_sum_prefix", "src/tl_inspect/gpu/calibration/access_kernels.py", "row_walk", {"M": 1 << 21, "N": 250}, 1),
    (
        "row_sum_one_thread",
        "src/tl_inspect/gpu/calibration/access_kernels.py",
        "row_lone_thread",
        {"M": 8192, "N": 16384},
        1,
    ),
    (
        "row_sum_thread_zero",
        "src/tl_inspect/gpu/calibration/access_kernels.py",
        "row_thread_zero",
        {"M": 8192, "N": 16384},
        1,
    ),
    ("gemv_naive", "fixtures/kernels/vec_thread_walks.py", "naive_gemv", {"N": 16384, "K": 16384}, 1),
    ("rope_gptj", "fixtures/kernels/vec_rope.py", "rope_interleaved", {"S": 65536, "H": 32, "D": 128}, 1),
]


def _factory(path: str, name: str):
    spec = importlib.util.spec_from_file_location(f"case_{abs(hash(path))}", os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def plan(out: str, labels: list[str]) -> None:
    import tl_inspect
    from tl_inspect.causes import root

    entries = []
    for label, path, factory, arguments, outputs in CASES:
        if labels and label not in labels:
            continue
        kernel = tl_inspect.inspect(_factory(path, factory)(**arguments)).kernel()
        proven = {}
        for a in kernel.accesses:
            if a.verdict == "costly" and a.proof is not None:
                proven.setdefault(a.group, (a.line, root(a.cause), a.kernel_cost, a.proof.change))
        for line, cause, estimate, change in proven.values():
            entries.append((label, path, factory, arguments, outputs, line, cause, estimate, change))
        print(f"{label}: {len(proven)} proven cause(s)", flush=True)
    with open(out, "wb") as f:
        pickle.dump(entries, f)


def measure(plan_file: str) -> None:
    import tilelang
    import torch
    from gpu_narrow import median_ms

    from tl_inspect.inspector.lowering.variants import variant_without

    tilelang.set_log_level("WARNING")
    with open(plan_file, "rb") as f:
        entries = pickle.load(f)
    print("| kernel | line | cause | proof's change | estimate | ms orig / proof | measured | outputs agree |")
    print("|---|---|---|---|---|---|---|---|")
    for label, path, factory, arguments, outputs, line, cause, estimate, change in entries:
        try:
            func = _factory(path, factory)(**arguments)
            built = variant_without(func, (cause,))
            if built is None or built[1] not in change:
                raise RuntimeError(f"the rewrite gives {built and built[1]!r}, the proof said {change!r}")
            bad, good = tilelang.compile(func, target="cuda"), tilelang.compile(built[0], target="cuda")
            bad_ms, good_ms, measured, agree = _time_pair(func, built[0], outputs, bad, good, torch, median_ms)
            print(
                f"| {label} | {line} | {cause.kind} | {built[1]} | {estimate:.2f} | {bad_ms:.3f} / {good_ms:.3f} | "
                f"**{measured:.2f}** | {'yes' if agree else 'NO'} |",
                flush=True,
            )
        except Exception as exc:  # one broken case must not cost the whole (leased) run
            print(
                f"| {label} | {line} | {cause.kind} | {change} | {estimate:.2f} | - | - | error: "
                f"{type(exc).__name__}: {str(exc)[:160]} |",
                flush=True,
            )
        torch.cuda.empty_cache()
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, tilelang {tilelang.__version__}")


def _time_pair(bad_func, good_func, outputs: int, bad, good, torch, median_ms, flush=None):
    """(ms bad, ms good, slowdown per byte, outputs agree) of two compiled forms on the same inputs (the
    leading part of a padded form's), their trailing `outputs` parameters compared; `flush` as median_ms's,
    and with it --measure's launch count, copies of the inputs and statistic."""
    from gpu_narrow import launch_ms

    from tl_inspect.inspector.measurement.measure import copies_of, launch_count, typical_ms

    runs = []
    for kernel, func in ((bad, bad_func), (good, good_func)):
        shapes = [tuple(int(d) for d in p.shape) for p in (func.buffer_map[v] for v in func.params)]
        dtypes = [str(func.buffer_map[v].dtype) for v in func.params]
        args = [torch.randn(s, device="cuda").to(getattr(torch, d)) for s, d in zip(shapes, dtypes)]
        args[-1].fill_(float("nan"))
        kernel(*args)
        torch.cuda.synchronize()
        runs.append((kernel, args, sum(a.numel() * a.element_size() for a in args)))
    (bad_k, bad_args, bad_bytes), (good_k, good_args, good_bytes) = runs
    for b, g in zip(bad_args[:-outputs], good_args[:-outputs]):
        g.zero_()
        _leading(g, b).copy_(b)
    bad_k(*bad_args)
    good_k(*good_args)
    torch.cuda.synchronize()
    got = bad_args[-1]
    agree = torch.allclose(got.float(), _leading(good_args[-1], got).float(), rtol=2e-2, atol=2e-2)
    if flush is None:
        bad_ms, good_ms = median_ms(lambda: bad_k(*bad_args)), median_ms(lambda: good_k(*good_args))
    else:
        # flushed launches of a few microseconds need as many samples, and as many allocations of their
        # inputs, as --measure takes to hold still
        count = launch_count(min(bad_bytes, good_bytes))
        bad_ms, good_ms = (
            typical_ms(launch_ms(_rotating(kernel, args, copies_of(nbytes)), flush, count))
            for kernel, args, nbytes in ((bad_k, bad_args, bad_bytes), (good_k, good_args, good_bytes))
        )
    return bad_ms, good_ms, (bad_ms / bad_bytes) / (good_ms / good_bytes), agree


def _rotating(kernel, args: list, copies: int):
    """A launch of `kernel` on the next of `copies` copies of `args`."""
    turns = itertools.cycle([args] + [[a.clone() for a in args] for _ in range(copies - 1)])
    return lambda: kernel(*next(turns))


def _at_size(cost) -> float:
    """The estimate for the launch as measured: at its own size where its bytes are known."""
    return cost.at_size if cost.at_size is not None else cost.estimate


def _leading(tensor, like):
    """The part of `tensor` (a padded form's, longer or with wider rows) that lines up with `like`."""
    return tensor[: like.shape[0]] if like.dim() == 1 else tensor[:, : like.shape[1]]


def _proof_pair(spec, access, arch: str) -> tuple:
    """(the kernel, the variant `--measure` timed for `access`): built the way its proof built it, from
    the cause set whose change is the proof's (a factory called again with an aligned length, else the
    PrimFunc rewritten)."""
    from tvm.target import Target

    from tl_inspect.analysis.proofs import causes_tried
    from tl_inspect.inspector.lowering import hooks
    from tl_inspect.inspector.lowering.compile import variant_of

    target = hooks.cuda_target(arch)
    with Target(target):
        func = spec.build()[0]
    for tried in causes_tried(access.causes):
        built = variant_of(func, tried, spec.call, target)
        if built is not None and built[1] == access.proof.change:
            return func, built[0]
    raise RuntimeError(f"no rebuild makes the proof's change {access.proof.change!r}")


def measured(paths: list[str], budget: float, json_out: str | None = None) -> None:
    """`--measure` over `paths` (files or folders), then each measured finding's pair timed again by this
    harness: every pair rebuilt from the finding's cause, all compiled at once, then timed one by one.
    `json_out`: also write each row's figures there, for fitting the model offline."""
    import tilelang
    import torch
    from gpu_narrow import median_ms
    from tvm.target import Target

    import tl_inspect
    from tl_inspect.inspector.discovery.kernels import discover
    from tl_inspect.inspector.discovery.loading import import_user_file
    from tl_inspect.inspector.lowering import hooks
    from tl_inspect.inspector.processes.job import Job

    tilelang.set_log_level("WARNING")
    hooks.use_arch("sm_90")  # as a worker does: a file's import-time compiles work without a device of its arch
    rows, pairs, specs = [], [], {}
    for path in paths:
        for kernel in tl_inspect.inspect(path, measure=True, measure_budget=budget):
            for finding in kernel.findings:
                if finding.cost is None:
                    continue
                size = f"{finding.cost.launch_bytes / 1e6:.0f}" if finding.cost.launch_bytes else "?"
                at_size = f"{finding.cost.at_size:.2f}" if finding.cost.at_size is not None else "-"
                where = (
                    f"| {kernel.file} | {kernel.name} | {finding.line} | {finding.slug} | {size} | "
                    f"{finding.cost.estimate:.2f} | {at_size} |"
                )
                got = finding.cost.measured
                if got is None:
                    rows.append((where, finding, None, f" {finding.cost.unmeasured or 'not measured'} | - | - | - |"))
                    continue
                try:
                    if kernel.file not in specs:
                        module, (error, _) = import_user_file(os.path.abspath(kernel.file))
                        if error:
                            raise RuntimeError(f"importing {kernel.file}: {error}")
                        specs[kernel.file] = {(s.name, s.case): s for s in discover(module, Job(path=kernel.file))[0]}
                    access = next(a for a in kernel.accesses if a.line == finding.line and a.proof == finding.proof)
                    func, variant = _proof_pair(
                        specs[kernel.file][(kernel.name, kernel.artifact.case)], access, kernel.artifact.arch
                    )
                    rows.append((where, finding, len(pairs), ""))
                    pairs.append((func, variant))
                except Exception as exc:  # one pair that cannot be rebuilt must not cost the whole (leased) run
                    rows.append(
                        (
                            where,
                            finding,
                            None,
                            f" {got.slowdown:.2f} | error: {type(exc).__name__}: {str(exc)[:120]} | - | - |",
                        )
                    )
    kernels = tilelang.par_compile(
        [f for pair in pairs for f in pair], target=Target(hooks.cuda_target("sm_90")), ignore_error=True
    )
    # as --measure does: no launch finds its data in the L2 (50 MB on an H200, more than many fixtures move)
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    print(
        "| file | kernel | line | rule | MB a launch | estimate | at this size | --measure | this harness | "
        "agree (5 %) | at-size estimate within 20 % |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    records = []
    for where, finding, index, text in rows:
        record = {
            "row": where,
            "estimate": finding.cost.estimate,
            "at_size": finding.cost.at_size,
            "launch_bytes": finding.cost.launch_bytes,
            "measured": None if finding.cost.measured is None else finding.cost.measured.as_dict(),
        }
        records.append(record)
        if index is not None:
            got = finding.cost.measured
            try:
                (func, variant), bad, good = pairs[index], kernels[2 * index], kernels[2 * index + 1]
                *_, again, _ = _time_pair(func, variant, 1, bad, good, torch, median_ms, flush)
                record["harness"] = again
                agrees = abs(got.slowdown / again - 1) <= 0.05
                text = (
                    f" {got.slowdown:.2f} | {again:.2f} | {'yes' if agrees else 'NO'}"
                    f" | {'yes' if abs(_at_size(finding.cost) / got.slowdown - 1) <= 0.20 else 'no'} |"
                )
            except Exception as exc:  # noqa: BLE001 - as above
                text = f" {got.slowdown:.2f} | error: {type(exc).__name__}: {str(exc)[:120]} | - | - |"
            torch.cuda.empty_cache()
        print(where + text, flush=True)
    if json_out:
        with open(json_out, "w") as f:
            json.dump(records, f, indent=1, default=str)
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, tilelang {tilelang.__version__}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan_file", nargs="?", help="the plan to measure (on a GPU)")
    parser.add_argument("--plan", metavar="OUT", help="no GPU: inspect the cases and write the plan")
    parser.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    parser.add_argument(
        "--measured", nargs="+", metavar="PATH", help="on a GPU: --measure PATH, checked by this harness"
    )
    parser.add_argument("--json", metavar="OUT", help="with --measured: also write each row's figures as JSON")
    parser.add_argument("--budget", type=float, default=600.0, help="--measure-budget for --measured (seconds)")
    options = parser.parse_args()
    if options.plan:
        plan(options.plan, options.case)
        return 0
    import torch

    if not torch.cuda.is_available():
        print("gpu_findings: no CUDA device here; nothing measured (--plan inspects without one)")
        return 0
    if options.measured:
        measured(options.measured, options.budget, options.json)
        return 0
    if not options.plan_file:
        parser.error("give the plan written by --plan")
    measure(options.plan_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
