"""Every kernel against its floor: tl-inspect's estimate of each launch's time and gap (time / floor)
set beside the kernel timed on the GPU, as `--measure` times it (the L2 flushed before each launch,
enough launches to move 2 GiB, the mean of the middle 80 %).

  python benchmarks/gpu_floor.py measure -o measured.json PATH...     (on a GPU) `tl-inspect --measure
      --no-proofs --format json` over PATH, a few paths a call so one slow file cannot lose the rest;
  python benchmarks/gpu_floor.py report measured.json [inspected.json]   (anywhere) the table and its
      summary: the estimated gap within 1.5x of the measured one, the Spearman rank correlation of the
      two, the kernels measured 1.5x or more from their floor with no finding, and the quiet cases (a
      performance finding on a kernel of 16 MB or more measured within 1.3x of its floor; an
      `underfilled-gpu` finding at 128 blocks or more). `inspected.json` (`tl-inspect --format json`
      over the same paths, here and now) gives the estimates and findings; without it, the measured
      run's own.
PATH may be FILE.py::KERNEL, a file, a directory, or @FILE listing one of those a line.
"""

import argparse
import json
import os
import subprocess
import sys

# the performance rules: a finding of these says the kernel is slower than it could be
PERFORMANCE = {
    "scalarized-load",
    "lane-dependent-predicate",
    "underfilled-gpu",
    "shared-bank-conflict",
    "unpipelined-copy",
    "replicated-reduce-input",
    "reduce-from-shared",
    "far-from-floor",
}
WITHIN = 1.5  # the estimated gap is to be within this factor of the measured one
FAR = 1.5  # a kernel measured this far from its floor is to have a finding
QUIET_BYTES, QUIET_GAP = 16e6, 1.3
PER_CALL = 12  # paths per tl-inspect call
# kernels whose work depends on their input data, which random inputs do not reproduce
DATA_DEPENDENT = {"group_cast_8192"}


def _paths(given: list) -> list:
    out = []
    for path in given:
        if path.startswith("@"):
            with open(path[1:]) as f:
                out += [line.strip() for line in f if line.strip() and not line.startswith("#")]
        else:
            out.append(path)
    return out


def measure(paths: list, output: str, jobs: int, budget: int) -> int:
    kernels = []
    for start in range(0, len(paths), PER_CALL):
        chunk = paths[start : start + PER_CALL]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tl_inspect",
                "--measure",
                "--no-proofs",
                "--no-cache",
                "--format",
                "json",
                "--exit-zero",
                "-j",
                str(jobs),
                "--measure-budget",
                str(budget),
                *chunk,
            ],
            capture_output=True,
            text=True,
        )
        try:
            kernels += json.loads(done.stdout)["kernels"]
        except ValueError:
            print(f"gpu_floor: {' '.join(chunk)}: no JSON ({done.stderr.strip().splitlines()[-1:]})", flush=True)
        print(
            f"gpu_floor: {min(start + PER_CALL, len(paths))} of {len(paths)} paths, {len(kernels)} kernels", flush=True
        )
        # written after every call: a run cut short keeps what it measured
        with open(output, "w") as f:
            json.dump({"kernels": kernels}, f)
    return 0


def _key(kernel: dict) -> tuple:
    return os.path.normpath(kernel["file"]), kernel["name"]


def spearman(xs: list, ys: list) -> float:
    def ranks(values):
        order = sorted(range(len(values)), key=values.__getitem__)
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var else 0.0


def report(measured_path: str, inspected_path: str | None) -> int:
    with open(measured_path) as f:
        measured = {_key(k): k for k in json.load(f)["kernels"] if k.get("measured")}
    inspected = measured
    if inspected_path:
        with open(inspected_path) as f:
            inspected = {_key(k): k for k in json.load(f)["kernels"]}
    rows = []
    for key, m in measured.items():
        k = inspected.get(key)
        estimate = (k or {}).get("estimate") or {}
        if k is None or not estimate.get("floor_us") or key[1] in DATA_DEPENDENT:
            continue
        time_us = m["measured"]["time_us"]
        rows.append(
            {
                "file": key[0],
                "name": key[1],
                "mb": (k["ledger"] or {}).get("unique_bytes") or 0,
                "measured_us": time_us,
                "measured_gap": time_us / estimate["floor_us"],
                "estimate_us": estimate["time_us"],
                "estimated_gap": estimate["gap"],
                "limited_by": estimate["limited_by"],
                "floor_us": estimate["floor_us"],
                "blocks": (k["ledger"] or {}).get("blocks"),
                "findings": sorted({f["slug"] for f in k["findings"] if f["slug"] in PERFORMANCE}),
                # findings a rebuilt kernel proved: the one kind a kernel near its floor may still get
                "unproven": sorted(
                    {
                        f["slug"]
                        for f in k["findings"]
                        if f["slug"] in PERFORMANCE
                        and isinstance(f.get("evidence"), dict)
                        and f["evidence"]["kind"] == "static"
                    }
                ),
            }
        )
    rows.sort(key=lambda r: -r["measured_gap"])
    print(
        "| kernel | MB unique | floor us | measured us | measured gap | estimated us | estimated gap | ratio | "
        "limited by | performance findings |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        gap = r["estimated_gap"]
        estimated, ratio = ("-", "-") if gap is None else (f"{gap:.2f}x", f"{gap / r['measured_gap']:.2f}")
        print(
            f"| {r['name']} | {r['mb'] / 1e6:.1f} | {r['floor_us']:.1f} | {r['measured_us']:.1f} | "
            f"{r['measured_gap']:.2f}x | {r['estimate_us']:.1f} | {estimated} | {ratio} | {r['limited_by']} | "
            f"{', '.join(r['findings']) or '-'} |"
        )
    gapped = [r for r in rows if r["estimated_gap"]]
    within = [r for r in gapped if 1 / WITHIN <= r["estimated_gap"] / r["measured_gap"] <= WITHIN]
    far = [r for r in rows if r["measured_gap"] >= FAR]
    silent = [r for r in far if not r["findings"] and r["estimated_gap"] is not None]
    near = [r for r in rows if r["mb"] >= QUIET_BYTES and r["measured_gap"] < QUIET_GAP and r["findings"]]
    loud = [r for r in near if r["unproven"]]
    underfilled = [r for r in rows if "underfilled-gpu" in r["findings"] and (r["blocks"] or 0) >= 128]
    print(
        f"\n{len(rows)} kernels timed; {len(gapped)} with an estimated gap ({len(rows) - len(gapped)} without: "
        f"the ledger cannot count their work)"
    )
    print(
        f"estimated gap within {WITHIN}x of the measured one: {len(within)} of {len(gapped)} "
        f"({100 * len(within) / max(len(gapped), 1):.0f} %)"
    )
    print(
        f"Spearman rank correlation of the two gaps: "
        f"{spearman([r['estimated_gap'] for r in gapped], [r['measured_gap'] for r in gapped]):.3f}"
    )
    # a kernel without a finding may still be explained: its estimate is far from the floor too and says why
    explained = [r for r in silent if r["estimated_gap"] >= FAR]
    missed = [r for r in silent if r["estimated_gap"] < FAR]
    print(
        f"measured {FAR}x or more from the floor: {len(far)}; with no performance finding: {len(silent)}, of "
        f"which {len(explained)} estimated {FAR}x or more with what limits them"
        + "".join(
            f"\n  {r['name']}: estimated {r['estimated_gap']:.2f}x, limited by {r['limited_by']}" for r in explained
        )
        + f"\nmissed (no finding, estimated under {FAR}x): {len(missed)}"
        + "".join(
            f"\n  {r['name']}: measured {r['measured_gap']:.2f}x, estimated {r['estimated_gap']:.2f}x" for r in missed
        )
    )
    print(
        f"kernels of {QUIET_BYTES / 1e6:.0f} MB or more measured within {QUIET_GAP}x with a performance finding: "
        f"{len(near)}"
        + (f" ({', '.join(r['name'] for r in near)})" if near else "")
        + f"; of them with one no rebuilt kernel proves: {len(loud)}"
        + (f" ({', '.join(r['name'] for r in loud)})" if loud else "")
    )
    print(
        f"underfilled-gpu at 128 blocks or more: {len(underfilled)}"
        + (f" ({', '.join(r['name'] for r in underfilled)})" if underfilled else "")
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("measure")
    run.add_argument("paths", nargs="+")
    run.add_argument("-o", "--output", required=True)
    run.add_argument("-j", "--jobs", type=int, default=os.cpu_count())
    run.add_argument("--budget", type=int, default=600, help="seconds of GPU time per tl-inspect call")
    show = sub.add_parser("report")
    show.add_argument("measured")
    show.add_argument("inspected", nargs="?")
    options = parser.parse_args()
    if options.command == "measure":
        return measure(_paths(options.paths), options.output, options.jobs, options.budget)
    return report(options.measured, options.inspected)


if __name__ == "__main__":
    sys.exit(main())
