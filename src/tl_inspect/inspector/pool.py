"""Compile user files in isolated worker processes, several at a time, each under a wall-clock limit.

tilelang's caches and registries leak state between files and a deep expression can crash the
compiler, so every file gets a fresh process. Workers are forked from a forkserver that has already
imported tilelang (about 2 s saved per file); the environment it inherits disables tilelang's kernel
cache and points its cache directory at a temporary folder, so nothing lands in ~/.tilelang.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from tl_inspect.inspector.worker import Job
from tl_inspect.model import FileResult, KernelArtifact

DEFAULT_TIMEOUT_SECONDS = 120.0
_POLL_SECONDS = 0.02


@dataclass
class _Running:
    index: int
    job: Job
    process: multiprocessing.Process
    workdir: str
    started: float


def inspect_jobs(jobs: list[Job], workers: int = 0, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 on_done: Callable[[FileResult], None] | None = None) -> list[FileResult]:
    """Run every job, return their results in the order of `jobs`."""
    if not jobs:
        return []
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    scratch = tempfile.mkdtemp(prefix="tl-inspect-")
    try:
        context = _forkserver(scratch, jobs[0].arch)
        results: list[FileResult | None] = [None] * len(jobs)
        pending = list(enumerate(jobs))
        running: list[_Running] = []
        while pending or running:
            while pending and len(running) < workers:
                index, job = pending.pop(0)
                running.append(_start(context, index, job, scratch))
            time.sleep(_POLL_SECONDS)
            for item in list(running):
                elapsed = time.monotonic() - item.started
                if item.process.is_alive() and elapsed < timeout:
                    continue
                timed_out = item.process.is_alive()
                if timed_out:
                    item.process.kill()
                item.process.join()
                running.remove(item)
                result = _collect(item, timed_out, timeout, elapsed)
                results[item.index] = result
                if on_done:
                    on_done(result)
        return results
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _forkserver(scratch: str, arch: str):
    cache = os.path.join(scratch, "tilelang-cache")
    os.makedirs(cache, exist_ok=True)
    # read by tilelang at import in the forkserver: hermetic cache, quiet compiles, CUDA default target
    os.environ.update({
        "TILELANG_CACHE_DIR": cache,
        "TILELANG_DISABLE_CACHE": "1",
        "TILELANG_PRINT_ON_COMPILATION": "0",
        "TILELANG_DEFAULT_TARGET": json.dumps({"kind": "cuda", "arch": arch}),
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tl_inspect.inspector.preload"])
    return context


def _start(context, index: int, job: Job, scratch: str) -> _Running:
    from tl_inspect.inspector import worker

    workdir = tempfile.mkdtemp(prefix=f"job{index}-", dir=scratch)
    process = context.Process(
        target=worker.run,
        args=(job, *(os.path.join(workdir, n) for n in ("result.pickle", "stdout.txt", "stderr.txt"))),
        daemon=True,
    )
    process.start()
    return _Running(index, job, process, workdir, time.monotonic())


def _records(path: str) -> Iterable[tuple]:
    """Every complete record the worker wrote; a record cut short by a crash ends the stream."""
    try:
        with open(path, "rb") as f:
            while True:
                try:
                    yield pickle.load(f)
                except (EOFError, pickle.UnpicklingError, AttributeError, ValueError):
                    return
    except FileNotFoundError:
        return


def _collect(item: _Running, timed_out: bool, timeout: float, elapsed: float) -> FileResult:
    job = item.job
    kernels: list[KernelArtifact] = []
    notes: list[str] = []
    warnings: tuple = ()
    import_error = None
    fatal = None
    current = None
    finished = False
    peak = 0.0
    for kind, payload in _records(os.path.join(item.workdir, "result.pickle")):
        if kind == "import":
            import_error, warnings = payload["error"], payload["warnings"]
        elif kind == "notes":
            notes.extend(payload)
        elif kind == "start":
            current = payload
        elif kind == "kernel":
            kernels.append(payload)
            current = None
        elif kind == "fatal":
            fatal = payload
        elif kind == "done":
            finished = True
            peak = payload["peak_rss_mb"]
    error = fatal.splitlines()[0] if fatal else import_error
    if not finished:
        reason = f"timed out after {timeout:g} s" if timed_out else _exit_reason(item.process.exitcode)
        if current:
            kernels.append(KernelArtifact(name=current, file=job.path, line=None, arch=job.arch,
                                          status="error", error=f"worker {reason} while compiling this kernel"))
        else:
            error = f"worker {reason}" + ("" if kernels else " while importing the module")
    return FileResult(path=job.path, kernels=tuple(kernels), error=error, notes=tuple(notes),
                      warnings=warnings, peak_rss_mb=peak, seconds=elapsed)


def _exit_reason(code) -> str:
    if code is not None and code < 0:
        try:
            return f"crashed ({signal.Signals(-code).name})"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"
