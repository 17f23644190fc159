"""What one worker is asked to do: one user file and the options it is inspected with."""

from __future__ import annotations

from dataclasses import dataclass, field

from tl_inspect.gpu.arch import DEFAULT_ARCH
from tl_inspect.gpu.cost_table import CostTable

# a worker's exit status when it cannot write its files (a full or read-only disk)
EXIT_CANNOT_WRITE = 75


@dataclass(frozen=True)
class Job:
    path: str  # as the user gave it
    arch: str = DEFAULT_ARCH
    run_nvcc: bool = False
    prove: bool = True  # rebuild each kernel without each cause of a costly access (proofs)
    only: str | None = None  # FILE.py::NAME
    args: dict = field(default_factory=dict)  # -a NAME=VALUE for FILE.py::factory
    cases: dict = field(default_factory=dict)  # factory -> [kwargs, ...] from the configuration
    all_configs: bool = False  # an autotuner gives one kernel per config, not only its first
    skip: tuple = ()  # kernels an earlier worker for this file compiled or crashed on
    infer: bool = True  # cases of factories from the file's own calls (inference.py), unless --no-infer
    max_inferred: int = 16  # inferred cases per factory
    # --measure: the file (inspector.device.Budget) holding the run's measuring seconds left; "" measures nothing
    measure_budget: str = ""
    # the numbers accesses are priced with (--gpu, a fitted table of this machine's GPU); None: the shipped one
    cost_table: CostTable | None = None
    # the file's text to inspect in place of what is on disk: a fix being verified (tl_inspect.fixes), which
    # must not touch the user's file; None: the file as it is
    source: str | None = None
    # a folder the worker writes each kernel's analysis inputs to (tl_inspect.analysis.recording), from which
    # tests/compile keeps the artefacts tests/analysis runs on; "" records nothing
    record_analysis: str = ""
