"""What a worker's exit leaves: its records read into the file's result, why it stopped in the user's words,
and the results of two workers of one file joined."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace

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


def collect(item, timeout: float, max_memory: int) -> tuple[FileResult, tuple]:
    """The worker's result, and the kernels it did not reach because it died in one of them."""
    job = item.job
    kernels: list[KernelArtifact] = []
    notes: list[str] = []
    needs_cases: tuple = ()
    warnings: tuple = ()
    import_error = None
    error_line = None
    fatal = None
    current = None
    planned: list = []
    finished = False
    dependencies: tuple = ()
    for kind, payload in records(os.path.join(item.workdir, "result.pickle")):
        if kind == "import":
            import_error, error_line, warnings = payload["error"], payload["error_line"], payload["warnings"]
        elif kind == "notes":
            notes.extend(payload)
        elif kind == "needs_cases":
            needs_cases = tuple((name, tuple(params)) for name, params in payload.items())
        elif kind == "plan":
            planned = payload
        elif kind == "start":
            current = payload
        elif kind == "kernel":
            kernels.append(payload)
            current = None
        elif kind == "fatal":
            fatal = payload
        elif kind == "error":
            import_error = import_error or payload
        elif kind == "done":
            finished = True
            dependencies = payload["dependencies"]
        elif kind == "foreign":
            fatal = "the file's code wrote into the worker's result file: what came after is lost"
            finished = True
    error = fatal.splitlines()[0] if fatal else import_error
    if error != import_error:
        error_line = None
    remaining: tuple = ()
    if not finished:
        reason = f"timed out after {timeout:g} s" if item.timed_out else exit_reason(item.exit_code, item.workdir)
        if item.over_disk:
            reason = (
                f"was stopped: it wrote more than {DISK_LIMIT_BYTES >> 20} MiB (or {DISK_MAX_ENTRIES} files) "
                f"into its temporary folder"
            )
        if item.peak_mib > 0.9 * max_memory:
            # allocations failing in C code crash the process instead of raising MemoryError
            reason += f" at its memory limit of {max_memory} MiB (--max-memory)"
        reached = {k.name for k in kernels} | {current}
        remaining = tuple(name for name in planned if name not in reached)
        if current:
            kernels.append(
                KernelArtifact(
                    name=current,
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
        notes=tuple(notes),
        needs_cases=needs_cases,
        warnings=warnings,
        peak_rss_mb=item.peak_mib,
        seconds=seconds,
        dependencies=dependencies,
    ), remaining


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
