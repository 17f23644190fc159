"""What `--measure` needs of the machine, asked without initialising CUDA (the parent and the zygote fork
workers after asking), and the run's measuring budget, shared by its workers through a locked file."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager

from tl_inspect.gpu.arch import normalised


def _gpus() -> list:
    """[(name, compute capability "9.0"), ...] of this machine's CUDA devices, as the driver lists them."""
    try:
        found = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        found = ""
    return [tuple(part.strip() for part in line.rsplit(",", 1)) for line in found.splitlines() if "," in line]


def gpu_names() -> list:
    return [name for name, _ in _gpus()]


def missing_gpu(arch: str) -> str | None:
    """Why kernels for `arch` cannot run here (one line), or None: a CUDA device of that arch and nvcc."""
    gpus = _gpus()
    if not gpus:
        return f"a CUDA GPU of arch {arch} is needed to run kernels, and none is here"
    if not any(normalised(cap) == normalised(arch) for _, cap in gpus):
        names = ", ".join(f"{name} (sm_{cap.replace('.', '')})" for name, cap in gpus)
        return f"a CUDA GPU of arch {arch} is needed to run kernels; this machine has {names} (try --arch)"
    if shutil.which("nvcc") is None:
        return f"nvcc is needed to build kernels for the {arch} GPU here, and it is not on PATH"
    return None


class Budget:
    """Seconds of measuring left to the run, in a file: each worker times holding its lock, so no two
    kernels are timed on the GPU at once, and spends what its timing took (compiling is not counted)."""

    def __init__(self, path: str):
        self.path = path

    @classmethod
    def create(cls, folder: str, seconds: float) -> Budget:
        budget = cls(os.path.join(folder, "measure-budget"))
        budget._write(float(seconds))
        return budget

    def left(self) -> float:
        """The seconds left now, read without waiting for the GPU (the file is replaced whole, never
        rewritten in place, so a reader never sees it half written)."""
        with open(self.path) as f:
            return float(f.read())

    def _write(self, seconds: float) -> None:
        with open(self.path + ".new", "w") as f:
            f.write(repr(seconds))
        os.replace(self.path + ".new", self.path)

    @contextmanager
    def held(self):
        """The GPU to this worker alone; yields a function giving the seconds left, spent as they pass."""
        with open(self.path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            started, left = time.monotonic(), self.left()
            try:
                yield lambda: left - (time.monotonic() - started)
            finally:
                self._write(max(0.0, left - (time.monotonic() - started)))
                fcntl.flock(lock, fcntl.LOCK_UN)


class NoGpu(Exception):
    """--measure on a machine that cannot run the kernels: its one-line reason."""


@contextmanager
def measuring(arch: str, seconds: float | None):
    """The path of the budget file a run's jobs share (`Job.measure_budget`), "" when `seconds` is None
    (no --measure); raises NoGpu, before anything is inspected, where kernels for `arch` cannot run."""
    if seconds is None:
        yield ""
        return
    reason = missing_gpu(arch)
    if reason:
        raise NoGpu(f"--measure: {reason}")
    with tempfile.TemporaryDirectory(prefix="tl-inspect-measure-") as folder:
        yield Budget.create(folder, seconds).path


def measure_timeout(timeout: float, budget: str) -> float:
    """A worker's time limit under --measure (`budget` the budget file, "" without): it may wait for the GPU
    while the others spend the budget, then spend what is left, and finish the kernel it started."""
    if not budget:
        return timeout
    with open(budget) as f:
        return timeout + 2 * float(f.read())
