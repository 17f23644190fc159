"""What a worker's exit leaves: its records read into the file's result, why it stopped in the user's words,
and the results of two workers of one file joined."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field, replace

from tl_inspect.inspector.processes.job import EXIT_CANNOT_WRITE
from tl_inspect.inspector.processes.records import records
from tl_inspect.model import FileResult, KernelArtifact

# what one worker may write into its folder (its TMPDIR, its captured output) before it is stopped
DISK_LIMIT_BYTES = 1 << 30
DISK_MAX_ENTRIES = 100_000  # more files than this in a worker's folder also count as too much


def merged(earlier: FileResult, later: FileResult) -> FileResult:
    """The result of a file whose worker was replaced: the first worker's import, both workers' kernels."""
    return replace(
        later,
        kernels=earlier.kernels + later.kernels,
        notes=earlier.notes,
        needs_cases=earlier.needs_cases,
        warnings=earlier.warnings,
        error=earlier.error or later.error,
        error_line=earlier.error_line if earlier.error else later.error_line,
        peak_rss_mb=max(earlier.peak_rss_mb, later.peak_rss_mb),
        seconds=earlier.seconds + later.seconds,
    )


@dataclass
class _Written:
    """What a worker's records say, read in order."""

    kernels: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    needs_cases: tuple = ()
    warnings: tuple = ()
    import_error: str | None = None
    error_line: int | None = None
    fatal: str | None = None
    current: str | None = None  # the kernel started and not finished
    planned: list = field(default_factory=list)
    finished: bool = False
    dependencies: tuple = ()

    def add(self, kind: str, payload) -> None:
        if kind == "import":
            self.import_error, self.error_line, self.warnings = (
                payload["error"],
                payload["error_line"],
                payload["warnings"],
            )
        elif kind == "notes":
            self.notes.extend(payload)
        elif kind == "needs_cases":
            self.needs_cases = tuple((name, tuple(params)) for name, params in payload.items())
        elif kind == "plan":
            self.planned = payload
        elif kind == "start":
            self.current = payload
        elif kind == "kernel":
            self.kernels.append(payload)
            self.current = None
        elif kind == "fatal":
            self.fatal = payload
        elif kind == "error":
            self.import_error = self.import_error or payload
        elif kind == "done":
            self.finished = True
            self.dependencies = payload["dependencies"]
        elif kind == "foreign":
            self.fatal = "the file's code wrote into the worker's result file: what came after is lost"
            self.finished = True


def collect(item, timeout: float, max_memory: int) -> tuple[FileResult, tuple]:
    """The worker's result, and the kernels it did not reach because it died in one of them."""
    job = item.job
    written = _Written()
    for kind, payload in records(os.path.join(item.workdir, "result.pickle")):
        written.add(kind, payload)
    kernels = written.kernels
    error = written.fatal.splitlines()[0] if written.fatal else written.import_error
    error_line = written.error_line if error == written.import_error else None
    remaining: tuple = ()
    if not written.finished:
        reason = _stop_reason(item, timeout, max_memory)
        reached = {k.name for k in kernels} | {written.current}
        remaining = tuple(name for name in written.planned if name not in reached)
        if written.current:
            kernels.append(
                KernelArtifact(
                    name=written.current,
                    file=job.path,
                    line=None,
                    arch=job.arch,
                    status="error",
                    error=f"worker {reason} while compiling this kernel",
                )
            )
        else:
            error, error_line = f"worker {reason}" + ("" if kernels else " while importing the module"), None
            # no kernel to blame, so a fresh worker could die the same way: name what was not inspected
            kernels += [
                KernelArtifact(
                    name=name,
                    file=job.path,
                    line=None,
                    arch=job.arch,
                    status="error",
                    error=f"not inspected: the worker {reason} before this kernel",
                )
                for name in remaining
            ]
            remaining = ()
    seconds = time.monotonic() - (item.started or item.submitted)
    return FileResult(
        path=job.path,
        kernels=tuple(kernels),
        error=error,
        error_line=error_line,
        notes=tuple(written.notes),
        needs_cases=written.needs_cases,
        warnings=written.warnings,
        peak_rss_mb=item.peak_mib,
        seconds=seconds,
        dependencies=written.dependencies,
    ), remaining


def _stop_reason(item, timeout: float, max_memory: int) -> str:
    """Why a worker stopped before it finished, as the error says it after "worker"."""
    reason = f"timed out after {timeout:g} s" if item.timed_out else exit_reason(item.exit_code, item.workdir)
    if item.over_disk:
        reason = (
            f"was stopped: it wrote more than {DISK_LIMIT_BYTES >> 20} MiB (or {DISK_MAX_ENTRIES} files) "
            f"into its temporary folder"
        )
    if item.peak_mib > 0.9 * max_memory:
        # allocations failing in C code crash the process instead of raising MemoryError
        reason += f" at its memory limit of {max_memory} MiB (--max-memory)"
    return reason


def exit_reason(code, workdir: str) -> str:
    if code == EXIT_CANNOT_WRITE:
        scratch = os.path.dirname(workdir)
        try:
            info = os.statvfs(scratch)
            full = info.f_bavail * info.f_frsize < 1 << 20
        except OSError:
            full = False
        return f"could not write its files in {scratch}: " + (
            "the disk is full" if full else "the folder is not writable"
        )
    if code is not None and code < 0:
        try:
            return f"crashed ({signal.Signals(-code).name})"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"
