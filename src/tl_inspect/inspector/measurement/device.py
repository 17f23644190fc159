"""`--measure`'s refusal where kernels for the arch cannot run here, asked without initialising CUDA (the
parent and the zygote fork workers after asking), and the run's measuring budget, shared by its workers
through a locked file."""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from contextlib import contextmanager

from tl_inspect.gpu.device import missing_gpu


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
