"""Zero-configuration discovery over a folder of kernel files written without tl-inspect in mind (issue 16):
how many of the files that define kernels get at least one kernel inspected, how many cases were inferred
and compiled, and every file still not inspected with its reason, grouped.

Run by hand (not by the tests), on a checkout you provide, never committed here:
`python benchmarks/discovery_sweep.py PATH/TO/tilelang/examples [--jobs 2] [--timeout 60] [--json OUT]`.
It runs `tl-inspect -j JOBS --no-proofs --timeout T --no-cache --format json` on the folder (proofs do
not change what is discovered) and reads that JSON. A file "defines kernels" when its source has
`T.prim_func`, `@tilelang.jit`, `@jit`, `@tilelang.autotune`, `@autotune` or `@T.macro`; it is "inspected"
when at least one of its kernels compiled. The goal is 80 % of the files that define kernels.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

# the same test as the sweeps before this script, so that the figures compare
DEFINES_KERNELS = re.compile(r"@(T\.prim_func|tilelang\.jit|jit\b|tilelang\.autotune|autotune\b|T\.macro)|T\.prim_func")
# the reason a file was not inspected, read from its error or its first note, as the group it is counted in
GROUPS = (
    (re.compile(r"No module named '([\w.]+)'"), "a dependency is not installed: {0}"),
    (re.compile(r"needed a CUDA device at import"), "a CUDA device is needed at import"),
    (re.compile(r"SystemExit"), "the file exits at import"),
    (re.compile(r"\(while importing the module\)"), "the file fails at import (tilelang API it expects)"),
    (re.compile(r"worker timed out"), "the worker timed out (--timeout)"),
    (re.compile(r"its calls are not inferable: [^:]+: (.*?)(;|$)"), "calls not inferable: {0}"),
    (re.compile(r"no call of it was found"), "no call of the factory found in the file"),
)

ADVICE = re.compile(r"factory needs arguments \(.*?\); add TL_INSPECT_CASES = .*? -a NAME=VALUE; ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", help="the folder of kernel files (e.g. a tilelang checkout's examples/)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=60, help="seconds per file")
    parser.add_argument("--json", help="keep tl-inspect's JSON here (default: a temporary file)")
    options = parser.parse_args()
    output = options.json or os.path.join(tempfile.mkdtemp(), "sweep.json")
    folder = os.path.abspath(options.examples)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tl_inspect.cli",
            "-j",
            str(options.jobs),
            "--no-proofs",
            "--timeout",
            str(options.timeout),
            "--no-cache",
            "--format",
            "json",
            "-o",
            output,
            os.path.basename(folder),
        ],
        cwd=os.path.dirname(folder),
        stderr=subprocess.DEVNULL,
        check=False,
    )
    with open(output, encoding="utf-8") as report:
        print_sweep(json.load(report), os.path.dirname(folder))
    return 0


def print_sweep(report: dict, root: str) -> None:
    files = {entry["path"]: entry for entry in report["files"]}
    kernels = collections.defaultdict(list)
    for kernel in report["kernels"]:
        kernels[kernel["file"]].append(kernel)
    defining = [path for path in files if DEFINES_KERNELS.search(_source(os.path.join(root, path)))]
    inspected = [path for path in defining if any(k["status"] == "ok" for k in kernels.get(path, []))]
    inferred = [k for ks in kernels.values() for k in ks if " line " in (k.get("discovered_as") or "")]
    print(
        f"files: {len(files)} read, {len(defining)} define kernels, {len(inspected)} inspected "
        f"({100 * len(inspected) / max(len(defining), 1):.1f} %)"
    )
    print(f"cases inferred from calls: {len(inferred)}, compiled: {sum(k['status'] == 'ok' for k in inferred)}")
    missed = collections.defaultdict(list)
    for path in sorted(set(defining) - set(inspected)):
        failed = [f"{k['name']}: {k['error']}" for k in kernels.get(path, []) if k["status"] != "ok"]
        entry = files[path]
        if entry["error"] or not failed:
            reason = entry["error"] or (entry["notes"][0] if entry["notes"] else "no kernel found")
            missed[_group(reason)].append((path, reason))
        else:
            missed["its kernels do not compile for sm_90 (tilelang's error)"].append((path, failed[0]))
    for group, entries in sorted(missed.items(), key=lambda item: (-len(item[1]), item[0])):
        print(f"\n{len(entries)} not inspected: {group}")
        for path, reason in entries:
            # the note's advice (which TL_INSPECT_CASES line to add) is the same for every file: its reason is not
            print(f"  {path}: {ADVICE.sub('', reason)[:240]}")


def _group(reason: str) -> str:
    for pattern, group in GROUPS:
        found = pattern.search(reason)
        if found:
            return group.format(*(re.sub(r"`[^`]*`", "`...`", g) for g in found.groups()))
    return "other: " + reason.split(":")[0]


def _source(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as source:
        return source.read()


if __name__ == "__main__":
    sys.exit(main())
