"""Time tl-inspect against a bare `tilelang.compile` of the same kernels, and report worker memory.

Run by hand (not by the tests): `python benchmarks/bench_inspect.py [PATH ...]` (default: fixtures/).
The bare side is what a user would otherwise run: one Python process that imports tilelang, builds every
kernel tl-inspect discovers and compiles it with `tilelang.compile` (nvcc included, cache disabled).
The tl-inspect side is the command line on the same files, with one worker and with the default
number of workers. Targets (issue 2): tl-inspect <= 0.3x the bare compile time, < 2 GB per worker.
Proofs (rebuilding kernels without the cause of each costly access, issue 8) are timed by running
`-j1` again with `--no-proofs`: target <= 1.30x the cold run without them.
A cold run of one file of 6 small kernels (COLD_FILE, issue 14) is timed against its physical floor: one
fresh interpreter that imports tilelang and lowers each kernel once, as the worker does, and nothing
else. Both are whole-process wall times, interleaved, their medians compared: target <= 1.10x.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# runs in a fresh interpreter so its import of tilelang is counted, as a user's script would pay it
BARE_COMPILE = r"""
import json, os, sys, time
started = time.perf_counter()
import tilelang
from tl_inspect.inspector.discovery.targets import parse_targets
from tl_inspect.inspector.discovery.kernels import discover
from tl_inspect.inspector.discovery.loading import import_user_file
from tl_inspect.inspector.processes.job import Job
compiled, failed = 0, []
for target in parse_targets(sys.argv[1:]):
    module, _ = import_user_file(os.path.abspath(target.path))
    if module is None:
        continue
    specs, _, _ = discover(module, Job(target.path))
    for spec in specs:
        try:
            prim_func, configs = spec.build()
            # sm_90a: nvcc refuses warp-specialized Hopper kernels for plain sm_90 (facts, section I)
            tilelang.compile(prim_func, target={"kind": "cuda", "arch": "sm_90a"}, pass_configs=configs)
            compiled += 1
        except Exception as exc:
            failed.append(f"{spec.name}: {type(exc).__name__}")
print(json.dumps({"seconds": time.perf_counter() - started, "compiled": compiled, "failed": failed}))
"""


COLD_FILE = os.path.join(ROOT, "fixtures", "kernels", "vec_elementwise_1d.py")  # 6 module-level PrimFuncs
COLD_ROUNDS = 7

# the floor of a cold run: tilelang's import, the file's import and the worker's lowering of each kernel
# (its pass configs: line directives and the layout text), without tl-inspect
LOWER_ONLY = r"""
import importlib.util, sys
import tilelang
import tvm
from tvm.target import Target
spec = importlib.util.spec_from_file_location("kernels", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
target = {"kind": "cuda", "arch": "sm_90"}
config = {"tl.emit_line_directives": True, "tl.layout_visualization_enable": True,
          "tl.layout_visualization_formats": "txt"}
kernels = [value for value in vars(module).values() if isinstance(value, tvm.tirx.PrimFunc)]
for kernel in kernels:
    with tvm.transform.PassContext(opt_level=3, config=config), Target(target):
        tilelang.lower(kernel, target=target)
print(len(kernels), file=sys.stderr)
"""


def cold_start(path: str = COLD_FILE, rounds: int = COLD_ROUNDS) -> tuple[float, float, int]:
    """Median whole-process seconds of the floor and of `tl-inspect PATH --no-cache -j1`, and the number
    of kernels the floor lowered. The two alternate, each round in the other order, so drift in the
    machine's load falls on both."""
    floors, colds, kernels = [], [], 0
    with tempfile.TemporaryDirectory() as cache:
        floor_env = {
            **os.environ,
            "TILELANG_DISABLE_CACHE": "1",
            "TILELANG_CACHE_DIR": cache,
            "TILELANG_PRINT_ON_COMPILATION": "0",
        }
        cold_env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
        for round_ in range(rounds):
            for side in ("floor", "cold") if round_ % 2 == 0 else ("cold", "floor"):
                command = (
                    [sys.executable, "-c", LOWER_ONLY, path]
                    if side == "floor"
                    else [sys.executable, "-m", "tl_inspect", path, "--no-cache", "-j1"]
                )
                started = time.perf_counter()
                proc = subprocess.run(
                    command, env=floor_env if side == "floor" else cold_env, cwd=ROOT, capture_output=True, text=True
                )
                (floors if side == "floor" else colds).append(time.perf_counter() - started)
                if proc.returncode not in ((0,) if side == "floor" else (0, 1)):
                    raise SystemExit(f"the {side} run failed:\n{proc.stderr[-3000:]}")
                if side == "floor":
                    kernels = int(proc.stderr.split()[-1])
    return statistics.median(floors), statistics.median(colds), kernels


def bare_compile(paths: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {
            **os.environ,
            "TILELANG_DISABLE_CACHE": "1",
            "TILELANG_CACHE_DIR": cache,
            "TILELANG_PRINT_ON_COMPILATION": "0",
            "PYTHONPATH": os.path.join(ROOT, "src"),
            "TILELANG_DEFAULT_TARGET": json.dumps({"kind": "cuda", "arch": "sm_90a"}),
        }
        proc = subprocess.run(
            [sys.executable, "-c", BARE_COMPILE, *paths], capture_output=True, text=True, env=env, cwd=ROOT
        )
    if proc.returncode != 0:
        raise SystemExit(f"bare compile failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tl_inspect(paths: list[str], jobs: int | None, *options: str) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as out:
        report = os.path.join(out, "report.json")
        args = [
            sys.executable,
            "-m",
            "tl_inspect",
            *paths,
            "--format",
            "json",
            "-o",
            report,
            "--exit-zero",
            "--no-cache",
        ]
        if jobs:
            args += ["-j", str(jobs)]
        args += options
        env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
        started = time.perf_counter()
        subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        with open(report) as f:
            return seconds, json.load(f)


def peak_worker_memory(paths: list[str]) -> list[float]:
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from tl_inspect.inspector import Job, inspect_jobs, parse_targets

    results = inspect_jobs([Job(t.path, only=t.only) for t in parse_targets(paths)])
    return [r.peak_rss_mb for r in results]


def main() -> None:
    paths = sys.argv[1:] or [os.path.join(ROOT, "fixtures")]
    bare = bare_compile(paths)
    serial_s, document = tl_inspect(paths, jobs=1)
    parallel_s, _ = tl_inspect(paths, jobs=None)
    unproven_s, _ = tl_inspect(paths, 1, "--no-proofs")
    proofs = sum(1 for k in document["kernels"] for a in k.get("accesses", ()) if a["proof"])
    kernels = [k for k in document["kernels"] if k["name"] != "<module>"]
    memory = peak_worker_memory(paths)
    print(
        f"kernels: {len(kernels)} inspected, {bare['compiled']} compiled bare "
        f"({len(bare['failed'])} failed bare: {', '.join(bare['failed']) or 'none'})"
    )
    print(f"bare tilelang.compile (import + nvcc, one process): {bare['seconds']:.1f} s")
    print(
        f"tl-inspect -j1:                                     {serial_s:.1f} s  ratio {serial_s / bare['seconds']:.2f}x"
    )
    print(
        f"tl-inspect -j{os.cpu_count()} (default):                          "
        f"{parallel_s:.1f} s  ratio {parallel_s / bare['seconds']:.2f}x"
    )
    print(
        f"tl-inspect -j1 --no-proofs:                         {unproven_s:.1f} s  proofs add "
        f"{serial_s / unproven_s:.2f}x ({proofs} proven accesses; target <= 1.30x)"
    )
    floor_s, cold_s, lowered = cold_start()
    print(
        f"cold run of {os.path.relpath(COLD_FILE, ROOT)} ({lowered} kernels), medians of {COLD_ROUNDS}: "
        f"floor (import tilelang + lower each) {floor_s:.2f} s, tl-inspect --no-cache -j1 {cold_s:.2f} s, "
        f"ratio {cold_s / floor_s:.2f}x (target <= 1.10x)"
    )
    print(
        f"peak RSS per worker: max {max(memory):.0f} MB, mean {sum(memory) / len(memory):.0f} MB "
        f"over {len(memory)} workers (target < 2048 MB)"
    )


if __name__ == "__main__":
    main()
