"""Compile user files in isolated worker processes, several at a time, each under a wall-clock limit.

tilelang's caches and registries leak state between files and a deep expression can crash the
compiler, so every file gets a fresh process. Workers are forked by a zygote process that has already
imported tilelang (about 2 s saved per file); the environment it gets disables tilelang's kernel cache
and points its cache directory at a temporary folder, so nothing lands in ~/.tilelang.

A worker that crashes or times out in one kernel costs that kernel only: a fresh worker compiles the
file's remaining kernels. Each worker runs under the time limit (counted from its fork for the import,
then from the start of each kernel), a memory limit and a limit on what it writes into its folder, and
is killed with everything it started on every way out (docs/reliability.md). The limits are enforced
here, in a process the user's code may not signal (`shield`).
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from tl_inspect.inspector.processes import cache
from tl_inspect.inspector.processes import shield
from tl_inspect.inspector.processes.job import EXIT_CANNOT_WRITE, Job
from tl_inspect.inspector.processes.zygote import Zygote, discard_early, release_zygote, take_zygote
from tl_inspect.model import FileResult, KernelArtifact

DEFAULT_TIMEOUT_SECONDS = 120.0
# how long the worker process may take to import tilelang and fork a first worker: a machine's load, not
# the user's file, decides it, so a short --timeout for the file must not cut it
STARTUP_SECONDS = 60.0
_POLL_SECONDS = 0.02
# what one worker may write into its folder (its TMPDIR, its captured output) before it is stopped
DISK_LIMIT_BYTES = 1 << 30
_DISK_CHECK_SECONDS = 0.5
_DISK_MAX_ENTRIES = 100_000  # more files than this in a worker's folder also count as too much


@dataclass
class _Running:
    """One worker for one file, from the queue to its exit."""

    index: int
    job: Job
    earlier: FileResult | None = None  # what earlier workers for this file found, when this one resumes
    # runs with no other worker beside it: it was running when something killed the zygote
    alone: bool = False
    workdir: str = ""
    submitted: float = 0.0
    pid: int | None = None
    started: float = 0.0  # when the zygote forked the worker
    # the time limit counts from the fork for the import, then from the start of each kernel
    budget_from: float = 0.0
    budgeted: set = field(default_factory=set)  # the kernels whose start renewed the limit
    exit_code: int | None = None
    peak_mib: float = 0.0
    timed_out: bool = False
    over_disk: bool = False  # killed for what it wrote into its folder


def inspect_jobs(jobs: list[Job], workers: int = 0, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 max_memory: int | None = None, on_done: Callable[[FileResult], None] | None = None,
                 use_cache: bool = False, cache_max_mb: int = cache.DEFAULT_MAX_MB) -> list[FileResult]:
    """Run every job, return their results in the order of `jobs`.

    `workers` 0 means one per CPU; `max_memory` (MiB per worker) None means the machine's memory
    divided by the workers; `cache_max_mb` bounds the result cache when `use_cache` stores results."""
    results: list[FileResult | None] = [cache.load(job) if use_cache else None for job in jobs]
    for result in results:
        if result is not None and on_done:
            on_done(result)
    todo = [i for i, result in enumerate(results) if result is None]
    # the memory is shared by the workers that will run, not by those asked for (`-j 1000` on one file)
    workers = max(1, min(workers or os.cpu_count() or 1, len(todo)))
    max_memory = max_memory or os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // workers // 2**20
    # the user's code may not write into this process's memory or pipes through /proc/<pid>/ either
    with shield.undumpable():
        fresh = _run(jobs, todo, workers, timeout, max_memory, on_done)
    for index in todo:
        results[index] = fresh[index]
        if use_cache:
            cache.store(jobs[index], fresh[index])
    if use_cache and todo:
        cache.evict(cache_max_mb << 20)
    return results


def _run(jobs: list[Job], todo: list[int], workers: int, timeout: float, max_memory: int,
         on_done) -> dict[int, FileResult]:
    """Run the jobs at the given indices in workers; their results by index."""
    if not todo:
        discard_early()  # every result was cached: no worker to fork
        return {}
    try:
        scratch, zygote = take_zygote()
    except OSError as exc:
        reason = f"cannot create tl-inspect's temporary folder in {tempfile.gettempdir()}: {exc.strerror}"
        return {index: FileResult(path=jobs[index].path, error=reason) for index in todo}
    running: dict[int, _Running] = {}
    try:
        results: dict[int, FileResult] = {}
        pending = [_Running(index, jobs[index]) for index in todo]

        def finish(item: _Running, result: FileResult, remaining: tuple = ()) -> None:
            del running[item.index]
            if item.workdir:  # what the worker wrote must not fill the disk for the next ones
                shutil.rmtree(item.workdir, ignore_errors=True)
            if item.earlier:
                result = _merged(item.earlier, result)
            if remaining:
                # the worker died in one kernel: a fresh one compiles the kernels after it
                resumed = replace(item.job, skip=tuple(k.name for k in result.kernels))
                pending.insert(0, _Running(item.index, resumed, result))
                return
            results[item.index] = result
            if on_done:
                on_done(result)

        disk_checked = time.monotonic()
        while pending or running:
            while pending and len(running) < workers and not any(r.alone for r in running.values()) and (
                    not pending[0].alone or not running):
                item = pending.pop(0)
                running[item.index] = item
                try:
                    item.workdir = tempfile.mkdtemp(prefix=f"job{item.index}-", dir=scratch)
                except OSError as exc:
                    finish(item, FileResult(path=item.job.path, error=f"cannot create a temporary folder in "
                                                                      f"{scratch}: {exc.strerror}"))
                    continue
                item.submitted = time.monotonic()
                zygote.submit(item.index, item.job, max_memory, item.workdir)
            try:
                message = _parsed(zygote.messages.get(timeout=_POLL_SECONDS))
            except queue.Empty:
                message = None
            if message and message[0] == "started" and message[1] in running:
                item = running[message[1]]
                item.pid = message[2]
                item.started = item.budget_from = time.monotonic()
            elif message and message[0] == "exited":
                for item in list(running.values()):
                    if item.pid == message[1]:
                        item.exit_code, item.peak_mib = message[2], message[3] / 1024
                        finish(item, *_collect(item, timeout, max_memory))
            elif message and message[0] == "gone" and zygote.started_any:
                # a user file killed the zygote, its workers' parent: find which one and spare the others
                for item in list(running.values()):
                    if item.pid:
                        _kill_worker(item.pid)
                    if item.alone:
                        finish(item, FileResult(path=item.job.path, error="the file killed tl-inspect's worker "
                                                                          "process (the worker's parent)"))
                    else:
                        del running[item.index]
                        shutil.rmtree(item.workdir, ignore_errors=True)
                        pending.insert(0, replace(item, alone=True, pid=None, started=0.0, budget_from=0.0,
                                                  budgeted=set()))
                zygote.close()
                zygote = Zygote(scratch)
            elif message and message[0] == "gone" or _never_started(running.values(), max(timeout, STARTUP_SECONDS)):
                reason = zygote.failure(max(timeout, STARTUP_SECONDS))
                for item in list(running.values()) + pending:
                    lost = FileResult(path=item.job.path, error=reason)
                    results[item.index] = _merged(item.earlier, lost) if item.earlier else lost
                return results
            now = time.monotonic()
            for item in running.values():
                if item.pid and not item.timed_out and now - item.budget_from > timeout and \
                        not _renewed(item, now, timeout):
                    item.timed_out = True
                    _kill_worker(item.pid)
            if now - disk_checked > _DISK_CHECK_SECONDS:
                disk_checked = now
                for item in running.values():
                    if item.pid and not item.over_disk and _over_disk_limit(item.workdir):
                        item.over_disk = True
                        _kill_worker(item.pid)
        return results
    finally:
        with _signals_held():
            # on every way out (an error, Ctrl-C, SIGTERM): no worker, no descendant, no scratch folder
            for item in running.values():
                if item.pid:
                    _kill_worker(item.pid)
            release_zygote(scratch, zygote)


def _renewed(item: _Running, now: float, timeout: float) -> bool:
    """Give the kernel the worker is compiling its own time limit, counted from its start, when it started
    after the limit now running out began: a slow kernel must not cost the innocent ones after it. Once
    per planned kernel, so the file's own code cannot renew it for ever by writing records."""
    path = os.path.join(item.workdir, "result.pickle")
    planned, current = set(), None
    for kind, payload in _records(path):
        if kind == "plan":
            planned = planned or {name for name in payload if isinstance(name, str)}
        elif kind == "start":
            current = payload
        elif kind == "kernel":
            current = None
    if current not in planned or current in item.budgeted:
        return False
    item.budgeted.add(current)
    try:
        # the start record is the file's last write
        written = now - max(0.0, time.time() - os.stat(path).st_mtime)
    except OSError:
        return False
    item.budget_from = min(now, max(item.budget_from, written))
    return now - item.budget_from <= timeout


def _over_disk_limit(folder: str) -> bool:
    """The worker's folder holds more than `DISK_LIMIT_BYTES`, or more than `_DISK_MAX_ENTRIES` entries."""
    used, entries, stack = 0, 0, [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    entries += 1
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        used += entry.stat(follow_symlinks=False).st_blocks * 512
                    if used > DISK_LIMIT_BYTES or entries > _DISK_MAX_ENTRIES:
                        return True
        except OSError:
            continue  # removed while it was listed
    return False


def _parsed(words: list[str]) -> tuple | None:
    """A zygote message as (kind, numbers...); None for a line that is not one."""
    numbers = {"started": 2, "exited": 3, "gone": 0}
    if not words or numbers.get(words[0]) != len(words) - 1:
        return None
    try:
        return (words[0], *map(int, words[1:]))
    except ValueError:
        return None


def _never_started(running: Iterable[_Running], timeout: float) -> bool:
    """The zygote has not forked a worker for a job within the time limit: its start-up hangs."""
    return any(not item.pid and time.monotonic() - item.submitted > timeout for item in running)


def _kill_worker(pid: int) -> None:
    """Kill a worker and everything it started (each worker leads its own process group; the worker
    itself by its pid too, as it may have moved to another group)."""
    for kill, target in ((os.kill, pid), (os.killpg, pid)):
        try:
            kill(target, signal.SIGKILL)
        except OSError:
            pass  # already gone


@contextmanager
def _signals_held():
    """A second Ctrl-C or a SIGTERM must not cut the cleanup short: hold them until it is done."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = {sig: signal.signal(sig, lambda number, frame: caught.append(number))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


def _merged(earlier: FileResult, later: FileResult) -> FileResult:
    """The result of a file whose worker was replaced: the first worker's import, both workers' kernels."""
    return replace(later, kernels=earlier.kernels + later.kernels, notes=earlier.notes,
                   needs_cases=earlier.needs_cases, warnings=earlier.warnings,
                   error=earlier.error or later.error,
                   error_line=earlier.error_line if earlier.error else later.error_line,
                   peak_rss_mb=max(earlier.peak_rss_mb, later.peak_rss_mb), seconds=earlier.seconds + later.seconds)


# the plain types a worker's records are made of, besides tl-inspect's own classes
_PLAIN_TYPES = {"str", "int", "float", "bool", "complex", "tuple", "list", "dict", "set", "frozenset", "bytes",
                "bytearray", "NoneType", "slice", "range"}
# each record's kind and the type of its payload
_RECORDS = {"import": dict, "notes": list, "needs_cases": dict, "plan": list, "start": str,
            "kernel": KernelArtifact, "fatal": str, "error": str, "done": dict}
_FOREIGN = ("foreign", None)  # what ends the records when the file holds data the worker did not write


class _ResultUnpickler(pickle.Unpickler):
    """Builds only tl-inspect's own classes and plain types. The user's code runs in the process that writes
    the result file and may write into it: unpickling it must never call anything (`os.kill`, `exec`)."""

    def find_class(self, module: str, name: str):
        if module == "builtins" and name in _PLAIN_TYPES or module.split(".")[0] == "tl_inspect":
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a worker's result")


def _records(path: str) -> Iterable[tuple]:
    """Every complete record the worker wrote; a record cut short by a crash ends the stream, and data
    that is no record ends it with `_FOREIGN`."""
    try:
        with open(path, "rb") as f:
            while True:
                try:
                    record = _ResultUnpickler(f).load()
                except EOFError:
                    return
                except Exception as exc:  # noqa: BLE001 - whatever the bytes, the parent goes on
                    truncated = isinstance(exc, pickle.UnpicklingError) and "truncated" in str(exc)
                    if not truncated:
                        yield _FOREIGN
                    return
                if not (isinstance(record, tuple) and len(record) == 2 and record[0] in _RECORDS
                        and isinstance(record[1], _RECORDS[record[0]]) and _well_formed(*record)):
                    yield _FOREIGN
                    return
                yield record
    except FileNotFoundError:
        return


def _well_formed(kind: str, payload) -> bool:
    if kind == "import":
        return {"error", "error_line", "warnings"} <= set(payload)
    if kind == "done":
        return isinstance(payload.get("dependencies"), tuple)
    if kind == "kernel":
        return isinstance(payload.name, str)
    return True


def _collect(item: _Running, timeout: float, max_memory: int) -> tuple[FileResult, tuple]:
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
    for kind, payload in _records(os.path.join(item.workdir, "result.pickle")):
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
        reason = f"timed out after {timeout:g} s" if item.timed_out else _exit_reason(item.exit_code, item.workdir)
        if item.over_disk:
            reason = (f"was stopped: it wrote more than {DISK_LIMIT_BYTES >> 20} MiB (or {_DISK_MAX_ENTRIES} files) "
                      f"into its temporary folder")
        if item.peak_mib > 0.9 * max_memory:
            # allocations failing in C code crash the process instead of raising MemoryError
            reason += f" at its memory limit of {max_memory} MiB (--max-memory)"
        reached = {k.name for k in kernels} | {current}
        remaining = tuple(name for name in planned if name not in reached)
        if current:
            kernels.append(KernelArtifact(name=current, file=job.path, line=None, arch=job.arch,
                                          status="error", error=f"worker {reason} while compiling this kernel"))
        else:
            error, error_line = f"worker {reason}" + ("" if kernels else " while importing the module"), None
            # no kernel to blame, so a fresh worker could die the same way: name what was not inspected
            kernels += [KernelArtifact(name=name, file=job.path, line=None, arch=job.arch, status="error",
                                       error=f"not inspected: the worker {reason} before this kernel")
                        for name in remaining]
            remaining = ()
    seconds = time.monotonic() - (item.started or item.submitted)
    return FileResult(path=job.path, kernels=tuple(kernels), error=error, error_line=error_line, notes=tuple(notes),
                      needs_cases=needs_cases, warnings=warnings, peak_rss_mb=item.peak_mib, seconds=seconds,
                      dependencies=dependencies), remaining


def _exit_reason(code, workdir: str) -> str:
    if code == EXIT_CANNOT_WRITE:
        scratch = os.path.dirname(workdir)
        try:
            info = os.statvfs(scratch)
            full = info.f_bavail * info.f_frsize < 1 << 20
        except OSError:
            full = False
        return f"could not write its files in {scratch}: " + (
            "the disk is full" if full else "the folder is not writable")
    if code is not None and code < 0:
        try:
            return f"crashed ({signal.Signals(-code).name})"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"
