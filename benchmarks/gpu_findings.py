"""Each finding's estimate against the H200: the kernel next to the one its proof rebuilds.

Two steps, because the GPU machine has tilelang and torch but not tl-inspect's other dependencies:
  python benchmarks/gpu_findings.py --plan plan.pkl       (no GPU) inspects every case below at its
      measuring size and writes, per finding, the causes its proof removed and its estimate;
  python benchmarks/gpu_findings.py plan.pkl              (on the GPU) rebuilds each kernel and its
      proof's variant from the same causes with tl-inspect's own rewrites, checks the change text is
      the proof's, and times both as gpu_calibrate.py does, printing a Markdown table.
Sizes are chosen to move 0.25-2 GB per launch, so the launch and the L2 do not count.
"""

# no `from __future__ import annotations`: tilelang evaluates the kernels' annotations in their closures

import argparse
import importlib.util
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
    ("add_explicit_index", "benchmarks/gpu_calibrate.py", "add_explicit_index", {"N": N28}, 1),
    ("relu_threads_and_block", "fixtures/kernels/vec_grow_tile.py", "relu", {"N": N28, "threads": 128, "block": 128}, 1),
    ("relu_odd_grid", "fixtures/kernels/vec_grow_tile.py", "relu", {"N": ((1 << 21) + 1) * 128, "threads": 128,
                                                                    "block": 128}, 1),
    ("shuffled", "fixtures/kernels/vec_index_patterns.py", "channel_shuffle", {"M": 1 << 20, "C": 256}, 1),
    ("rolled", "fixtures/kernels/vec_index_patterns.py", "roll", {"M": 1 << 20, "D": 256, "shift": 3}, 1),
    ("reversed_walk", "fixtures/kernels/vec_index_patterns.py", "reverse", {"N": N28}, 1),
    ("swiglu_pairs", "fixtures/kernels/vec_index_patterns.py", "swiglu_interleaved", {"M": 32768, "N": 8192}, 1),
    ("row_sum_4095", "fixtures/kernels/vec_workload.py", "row_sum_guarded", {"M": 1 << 17, "N": 4095}, 1),
    ("iterate_once", "fixtures/kernels/vec_workload.py", "iterate", {"N": (1 << 26) + 1, "rounds": 1}, 1),
    ("row_sum_range", "benchmarks/gpu_calibrate.py", "row_walk", {"M": 1 << 21, "N": 256}, 1),
    ("row_sum_prefix", "benchmarks/gpu_calibrate.py", "row_walk", {"M": 1 << 21, "N": 250}, 1),
    ("row_sum_one_thread", "benchmarks/gpu_calibrate.py", "row_lone_thread", {"M": 8192, "N": 16384}, 1),
    ("row_sum_thread_zero", "benchmarks/gpu_calibrate.py", "row_thread_zero", {"M": 8192, "N": 16384}, 1),
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

    from gpu_calibrate import Case, _measure
    from gpu_narrow import median_ms
    from tl_inspect.inspector import rewrites

    tilelang.set_log_level("WARNING")
    with open(plan_file, "rb") as f:
        entries = pickle.load(f)
    print("| kernel | line | cause | proof's change | estimate | ms orig / proof | measured | outputs agree |")
    print("|---|---|---|---|---|---|---|---|")
    for label, path, factory, arguments, outputs, line, cause, estimate, change in entries:
        try:
            func = _factory(path, factory)(**arguments)
            built = rewrites.variant_without(func, (cause,))
            if built is None or built[1] not in change:
                raise RuntimeError(f"the rewrite gives {built and built[1]!r}, the proof said {change!r}")
            bad, good = tilelang.compile(func, target="cuda"), tilelang.compile(built[0], target="cuda")
            row = _measure(Case(cause.kind, label, func, built[0], outputs), bad, good, torch, median_ms)
            timing = row.split("|")[3:6]
            print(f"| {label} | {line} | {cause.kind} | {built[1]} | {estimate:.2f} |{'|'.join(timing)}|", flush=True)
        except Exception as exc:  # one broken case must not cost the whole (leased) run
            print(f"| {label} | {line} | {cause.kind} | {change} | {estimate:.2f} | - | - | error: "
                  f"{type(exc).__name__}: {str(exc)[:160]} |", flush=True)
        torch.cuda.empty_cache()
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, tilelang {tilelang.__version__}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan_file", nargs="?", help="the plan to measure (on a GPU)")
    parser.add_argument("--plan", metavar="OUT", help="no GPU: inspect the cases and write the plan")
    parser.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    options = parser.parse_args()
    if options.plan:
        plan(options.plan, options.case)
        return 0
    import torch

    if not torch.cuda.is_available():
        print("gpu_findings: no CUDA device here; nothing measured (--plan inspects without one)")
        return 0
    if not options.plan_file:
        parser.error("give the plan written by --plan")
    measure(options.plan_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
