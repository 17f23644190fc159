"""The run every reporter test renders: real kernels from tests/data, inspected by the real inspector,
with findings written here by hand. Reporters never analyse, so hand-written findings test them
exactly as well as findings from rules, and keep the snapshots independent of which rules exist."""

from __future__ import annotations

import difflib
import inspect
import os
import re

import pytest

from tl_inspect._version import __version__
from tl_inspect.model import Cost, Finding, KernelReport, Proof, RunResult

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SNAPSHOTS = os.path.join(ROOT, "tests", "snapshots")
UPDATE_SNAPSHOTS = os.environ.get("TL_INSPECT_UPDATE_SNAPSHOTS") == "1"
# relative to ROOT, which is the working directory while inspecting and rendering
KERNELS_FILE = "tests/data/report_kernels.py"
BROKEN_FILE = "tests/data/report_broken.py"
HOSTILE_KERNEL = "row_sum[tag=<script>alert('name')</script>{{ 7 * 7 }}]"


class ScalarizedLoad:
    """Flags a global access emitted element by element where a 128-bit access was possible.

    ## What it does
    Finds loads and stores that the CUDA code moves one element at a time.

    ## Why is this slow?
    A warp then issues eight times as many memory instructions; on an H200 an fp16 add runs at
    1441 GB/s instead of 4153 GB/s.

    ## Example
    ```python
    add = ew_add(2047)
    ```

    ## Use instead
    ```python
    add = ew_add(2048)
    ```
    """

    code, slug, severity, kind = "TLV001", "scalarized-load", "error", "codegen"
    fix = "Make the extent a multiple of the vector width"

    @classmethod
    def summary(cls):
        return cls.__doc__.strip().splitlines()[0]

    @classmethod
    def documentation(cls):
        return inspect.cleandoc(cls.__doc__).split("\n", 1)[1].strip()


class LaneDependentPredicate(ScalarizedLoad):
    """Flags a boundary predicate that varies inside a vector group.

    ## What it does
    Finds `if` conditions on the element index that split a group of vector lanes.

    ## Why is this slow?
    The compiler must test every lane, so the group is emitted as scalar code. <b>not bold</b>
    """

    code, slug, severity = "TLV002", "lane-dependent-predicate", "warning"
    fix = "Pad the tensor or peel the tail block"


class InvariantIndexStore(ScalarizedLoad):
    """Flags a store whose index does not advance with the innermost parallel loop.

    ## What it does
    Finds read-modify-write stores such as `acc[i // 8] += v[i]` under `T.Parallel`.

    ## Why is this wrong?
    Threads race on the same element.
    """

    code, slug, severity = "TLV003", "invariant-index-store", "error"
    fix = "Use T.reduce_sum or an inner T.serial loop"


RULES = (ScalarizedLoad, LaneDependentPredicate, InvariantIndexStore)


def findings_for(kernel) -> tuple:
    """Findings as rules would report them on the kernels of tests/data/report_kernels.py."""
    if kernel.name == "add_2047":
        return (
            Finding(
                "TLV002",
                "lane-dependent-predicate",
                "warning",
                "the predicate `bx * 1024 + i < 2047` differs between the 8 lanes of a vector group",
                "Pad the tensor or peel the tail block",
                kernel.file,
                14,
                kernel=kernel.name,
                cuda_lines=kernel.cuda_lines_for([14]) + (20,),
                col=13,
                name="TailGuard",
                args=(("predicate", "bx * 1024 + i < 2047"), ("width", 8)),
            ),
            Finding(
                "TLV001",
                "scalarized-load",
                "error",
                "C, A and B are accessed 16 bits at a time where 128-bit accesses were possible",
                "Make N a multiple of 8 (2047 -> 2048)",
                kernel.file,
                15,
                kernel=kernel.name,
                cuda_lines=kernel.cuda_lines_for([15]),
                expected_bits=128,
                emitted_bits=16,
                col=17,
                evidence=("C[...] = (A[...] + B[...]);",),
                cost=Cost(2.93, "lanes 16 B apart: 2.93x; this access moves 100% of the kernel's bytes", 2.93),
                proof=Proof(
                    "the length 2047 padded to 2048 (a multiple of 8)",
                    "C[tx * 8 + i_s] = A[tx * 8 + i_s];",
                    "uint4 v_ = *(uint4*)(A + tx * 8);",
                    16,
                    128,
                    16,
                    16,
                ),
                name="MisalignedLength",
                args=(("buffers", ["C", "A", "B"]), ("bits", 16), ("width", 8)),
            ),
        )
    if kernel.name == HOSTILE_KERNEL:
        return (
            # a finding whose statement produced no CUDA line of its own
            Finding(
                "TLV001",
                "scalarized-load",
                "info",
                "T.clear(acc) is emitted as scalar stores",
                "Nothing to do: the fragment lives in registers",
                kernel.file,
                27,
                kernel=kernel.name,
                col=13,
                name="ScalarClear",
                args=(("buffer", "acc"),),
            ),
            Finding(
                "TLV003",
                "invariant-index-store",
                "error",
                'acc[i, j // G] is stored by 8 lanes at once: <script>alert("msg")</script> {{ 7 * 7 }}',
                "Use T.reduce_sum(v, acc, dim=1) & drop the += loop",
                kernel.file,
                28,
                end_line=29,
                kernel=kernel.name,
                cuda_lines=kernel.cuda_lines_for([28, 29]),
                col=13,
                name="RacyStore",
                args=(("store", "acc[i, j // G]"), ("lanes", 8)),
            ),
        )
    return ()


def build_run(results: dict) -> RunResult:
    files = tuple(results[path] for path in (KERNELS_FILE, BROKEN_FILE))
    reports = tuple(KernelReport(kernel, findings_for(kernel)) for file in files for kernel in file.kernels)
    return RunResult(version=__version__, arch="sm_90", files=files, reports=reports, rules=RULES)


@pytest.fixture(scope="session")
def report_run(inspected) -> RunResult:
    """The run of tests/data, inspected once per session with paths relative to ROOT."""
    previous = os.getcwd()
    os.chdir(ROOT)
    try:
        return build_run(inspected([KERNELS_FILE, BROKEN_FILE]))
    finally:
        os.chdir(previous)


def scrub(text: str) -> str:
    """What changes between machines and releases but not between renderings."""
    text = text.replace(ROOT, "<ROOT>").replace(__version__, "<VERSION>")
    return re.sub(r"report\.[0-9a-f]{12}\.(css|js)", r"report.<HASH>.\1", text)


def assert_snapshot(name: str, text: str) -> None:
    """Compare with tests/snapshots/NAME; TL_INSPECT_UPDATE_SNAPSHOTS=1 rewrites the gold files."""
    path = os.path.join(SNAPSHOTS, name)
    text = scrub(text)
    if UPDATE_SNAPSHOTS:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    if not os.path.exists(path):
        pytest.fail(f"no snapshot {name}; run with TL_INSPECT_UPDATE_SNAPSHOTS=1 to create it")
    with open(path, encoding="utf-8") as f:
        gold = f.read()
    if text != gold:
        diff = difflib.unified_diff(gold.splitlines(), text.splitlines(), "snapshot", "now", lineterm="")
        pytest.fail(
            f"{name} differs from its snapshot (TL_INSPECT_UPDATE_SNAPSHOTS=1 rewrites it):\n"
            + "\n".join(list(diff)[:80])
        )
