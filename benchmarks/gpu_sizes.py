"""Each pattern's finding across launch sizes, 100 KB to 1 GB: its estimates against `--measure` on this
GPU, to check how the cost model prices a launch that the launch itself and the block dispatch partly hide.

  python benchmarks/gpu_sizes.py [--json OUT] [--pattern NAME]...

runs `tl-inspect --measure --sweep` over each pattern below (the kernels the fixtures and rule examples
hold, at other sizes) and prints a Markdown table: MB a launch, the estimate at scale, the estimate at
this launch's size, and the measured slowdown with both medians. Without a CUDA GPU it says so and exits 0.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def powers(low: int, high: int, step: int = 2, plus: int = 0) -> str:
    return ",".join(str((1 << k) + plus) for k in range(low, high + 1, step))


# (name, kernel, the swept argument and its values, fixed arguments)
PATTERNS = [
    ("tail_guard", "fixtures/kernels/vec_all_scalar.py::add_flat_index", ("N", powers(14, 26, plus=1)), {}),
    ("one_per_thread", "src/tl_inspect/rules/scalarized_load/bad_add.py::add", ("N", powers(14, 26)), {"block": 128}),
    ("grown_tile", "fixtures/kernels/vec_grow_tile.py::relu", ("N", powers(14, 26)), {"threads": 128, "block": 128}),
    ("serial_per_thread", "src/tl_inspect/rules/scalarized_load/bad_scale.py::scale", ("N", powers(14, 26)), {}),
    (
        "explicit_index",
        "src/tl_inspect/gpu/calibration/access_kernels.py::add_explicit_index",
        ("N", powers(14, 26)),
        {},
    ),
    ("row_walk", "src/tl_inspect/gpu/calibration/access_kernels.py::row_walk", ("M", powers(8, 20)), {"N": 256}),
    (
        "lone_thread",
        "src/tl_inspect/gpu/calibration/access_kernels.py::row_lone_thread",
        ("M", powers(6, 14, 1)),
        {"N": 16384},
    ),
    (
        "lone_thread_short_rows",
        "src/tl_inspect/gpu/calibration/access_kernels.py::row_lone_thread",
        ("M", powers(8, 18)),
        {"N": 512},
    ),
    (
        "odd_rows",
        "src/tl_inspect/rules/scalarized_load/bad_scale_rows.py::scale_rows",
        ("M", powers(6, 16)),
        {"N": 4095},
    ),
    ("transpose", "fixtures/kernels/vec_transpose.py::transpose_direct", ("M", powers(9, 14, 1)), {"N": 4096}),
]


def run(name: str, kernel: str, sweep: tuple, fixed: dict, out_dir: str) -> list[dict]:
    out = os.path.join(out_dir, f"{name}.json")
    command = [
        sys.executable,
        "-m",
        "tl_inspect",
        kernel,
        "--measure",
        "--measure-budget",
        "600",
        "--no-cache",
        "--sweep",
        f"{sweep[0]}={sweep[1]}",
        "--format",
        "json",
        "-o",
        out,
    ]
    for key, value in fixed.items():
        command += ["-a", f"{key}={value}"]
    subprocess.run(command, cwd=ROOT, check=False)
    if not os.path.exists(out):
        return [{"pattern": name, "kernel": kernel, "error": "no report"}]
    rows = []
    for entry in json.load(open(out))["kernels"]:
        for finding in entry["findings"]:
            cost = finding.get("cost") or {}
            if not cost:
                continue
            rows.append(
                {
                    "pattern": name,
                    "kernel": entry["name"],
                    "line": finding["line"],
                    "rule": finding["rule"],
                    "launch_bytes": cost.get("launch_bytes"),
                    "estimate": cost.get("estimate"),
                    "at_size": cost.get("estimate_at_size"),
                    "measured": cost.get("measured"),
                    "unmeasured": cost.get("unmeasured"),
                }
            )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="OUT", help="also write every row as JSON")
    parser.add_argument("--pattern", action="append", default=[], help="only this pattern (repeatable)")
    options = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("gpu_sizes: no CUDA device here; nothing measured")
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as out_dir:
        for name, kernel, sweep, fixed in PATTERNS:
            if not options.pattern or name in options.pattern:
                rows += run(name, kernel, sweep, fixed, out_dir)
    print("| pattern | kernel | line | MB a launch | estimate | at this size | measured | ms before / after |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        got = row.get("measured")
        size = f"{row['launch_bytes'] / 1e6:.2f}" if row.get("launch_bytes") else "?"
        timed = (
            f"**{got['slowdown']:.2f}** | {got['ms_before']:.4f} / {got['ms_after']:.4f}"
            if got
            else f"{row.get('unmeasured') or row.get('error')} | -"
        )
        at_size = f"{row['at_size']:.2f}" if row.get("at_size") else "-"
        print(
            f"| {row['pattern']} | {row.get('kernel')} | {row.get('line')} | {size} | {row.get('estimate')} | "
            f"{at_size} | {timed} |"
        )
    if options.json:
        with open(options.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
