"""Runs inside one worker process per user file: import the file, find its kernels (`discovery`), compile
each one for CUDA without a GPU (`lowering`), and stream one record per kernel to the parent through a
pickle file.

The parent reads the records even when this process dies (a segfault in the compiler, a timeout), so
every finished kernel survives and the parent knows which kernel was being compiled.
"""

from __future__ import annotations

import io
import os
import pickle
import resource
import sys
import tempfile
import traceback

from tl_inspect.inspector.discovery import kernels as discovery
from tl_inspect.inspector.discovery.loading import import_user_file
from tl_inspect.inspector.lowering import hooks
from tl_inspect.inspector.lowering.compile import compile_kernel
from tl_inspect.inspector.processes import errors, inputs
from tl_inspect.inspector.processes.capture import Capture, flush_streams, restore_streams
from tl_inspect.inspector.processes.errors import message_of, printable, split_diagnostics
from tl_inspect.inspector.processes.job import EXIT_CANNOT_WRITE, Job
from tl_inspect.model import KernelArtifact


def run(job: Job, max_memory_mib: int, result_path: str, out_path: str, err_path: str) -> None:
    """Never returns: the process exits, with `EXIT_CANNOT_WRITE` when its files cannot be written.

    Runs on the worker's only thread, forked from the zygote's deep-stack thread (`deepstack`)."""
    global _worker_pid
    _worker_pid = os.getpid()
    try:
        sys.dont_write_bytecode = True  # never write __pycache__ next to the user's files
        # temporary files of the user's code, nvcc and ptxas go to the job's folder, removed with the run
        tempfile.tempdir = os.path.join(os.path.dirname(result_path), "tmp")
        os.makedirs(tempfile.tempdir, exist_ok=True)
        os.environ["TMPDIR"] = tempfile.tempdir
        out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        with open(result_path, "ab", buffering=0) as sink:
            _guarded(job, max_memory_mib, sink, out_path, err_path)
        flush_streams()
    except OSError:
        os._exit(EXIT_CANNOT_WRITE)
    os._exit(0)


_worker_pid = 0


class _PlainPickler(pickle.Pickler):
    """Pickles tvm_ffi's `str` subclass as plain `str`: the parent process never imports TVM."""

    def reducer_override(self, obj):
        if isinstance(obj, str) and type(obj) is not str:
            return str, (str.__str__(obj),)
        return NotImplemented


def _emit(sink, kind: str, payload) -> None:
    if os.getpid() != _worker_pid:
        # a child the user's code forked and left running tl-inspect's code (an unguarded `os.fork()` at
        # import): only the worker reports, or every kernel would be reported twice
        os._exit(0)
    buffer = io.BytesIO()
    _PlainPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((kind, payload))
    sink.write(buffer.getvalue())


def _guarded(job: Job, max_memory_mib: int, sink, out_path: str, err_path: str) -> None:
    _limit_memory(max_memory_mib)
    recorder = inputs.Recorder(os.path.dirname(out_path))
    try:
        recorder.install()
        _work(job, sink, Capture(out_path, err_path), lambda: restore_streams(out_path, err_path))
    except MemoryError:
        # tl-inspect's own work between the user's phases ran out: the limit, not a fault of tl-inspect
        _emit(sink, "fatal", f"MemoryError: over the memory limit of {max_memory_mib} MiB per worker (--max-memory)")
    except BaseException as exc:  # noqa: BLE001 - the parent must always get a reason
        _emit(
            sink,
            "fatal",
            f"internal error in tl-inspect: {type(exc).__name__}: {printable(message_of(exc))}\n"
            + "".join(traceback.format_exception(exc)),
        )
    _emit(sink, "done", {"dependencies": recorder.inputs()})


def _limit_memory(mib: int) -> None:
    """Let the worker allocate `mib` MiB beyond what it holds now, tilelang and the compile stack included.

    RLIMIT_DATA counts what is allocated (heap, anonymous mappings), not the address space that
    libraries and thread arenas merely reserve; the hard limit too, so user code cannot raise it."""
    errors.memory_limit_mib = mib
    with open("/proc/self/status") as status:
        held_kib = next(int(line.split()[1]) for line in status if line.startswith("VmData:"))
    limit = held_kib * 1024 + mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def _work(job: Job, sink, capture: Capture, restore_output) -> None:
    hooks.install(job.arch, job.run_nvcc)
    capture.mark()
    # paths are reported as the user gave them, relative to this folder, whatever os.chdir the file does
    home = os.getcwd()
    module, (import_error, error_line) = import_user_file(os.path.abspath(job.path), job.source)
    os.chdir(home)
    restore_output()
    _, import_err_text = capture.since_mark()
    _emit(
        sink,
        "import",
        {"error": import_error, "error_line": error_line, "warnings": split_diagnostics(import_err_text)},
    )
    if module is None:
        return
    name_error = discovery.check_names(module, job)
    if name_error:
        _emit(sink, "error", name_error)
        return
    for name, error in discovery.unusable_cases(module, job):
        if name not in job.skip:
            _emit(
                sink,
                "kernel",
                KernelArtifact(name=name, file=job.path, line=None, arch=job.arch, status="error", error=error),
            )
    specs, notes, needs_cases = discovery.discover(module, job)
    specs = [spec for spec in specs if spec.name not in job.skip]
    _emit(sink, "notes", notes)
    _emit(sink, "needs_cases", needs_cases)
    _emit(sink, "plan", [spec.name for spec in specs])
    for spec in specs:
        _emit(sink, "start", spec.name)
        capture.mark()
        artifact = compile_kernel(spec, job, capture)
        os.chdir(home)
        restore_output()
        _emit(sink, "kernel", artifact)
