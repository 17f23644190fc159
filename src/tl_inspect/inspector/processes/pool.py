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
import queue
import shutil
import signal
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from tl_inspect.inspector.processes import cache, shield
from tl_inspect.inspector.processes.job import Job
from tl_inspect.inspector.processes.outcome import DISK_LIMIT_BYTES, DISK_MAX_ENTRIES, collect, merged
from tl_inspect.inspector.processes.records import records
from tl_inspect.inspector.processes.zygote import Zygote, discard_early, release_zygote, take_zygote
from tl_inspect.model import FileResult

DEFAULT_TIMEOUT_SECONDS = 120.0
# how long the worker process may take to import tilelang and fork a first worker: a machine's load, not
# the user's file, decides it, so a short --timeout for the file must not cut it
STARTUP_SECONDS = 60.0
_POLL_SECONDS = 0.02
_DISK_CHECK_SECONDS = 0.5


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


def inspect_jobs(
    jobs: list[Job],
    workers: int = 0,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    max_memory: int | None = None,
    on_done: Callable[[FileResult], None] | None = None,
    use_cache: bool = False,
    cache_max_mb: int = cache.DEFAULT_MAX_MB,
) -> list[FileResult]:
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


def _run(
    jobs: list[Job], todo: list[int], workers: int, timeout: float, max_memory: int, on_done
) -> dict[int, FileResult]:
    """Run the jobs at the given indices in workers; their results by index."""
    if not todo:
        discard_early()  # every result was cached: no worker to fork
        return {}
    try:
        scratch, zygote = take_zygote()
    except OSError as exc:
        reason = f"cannot create tl-inspect's temporary folder in {tempfile.gettempdir()}: {exc.strerror}"
        return {index: FileResult(path=jobs[index].path, error=reason) for index in todo}
    pool = _Pool(
        scratch, zygote, [_Running(index, jobs[index]) for index in todo], workers, timeout, max_memory, on_done
    )
    try:
        return pool.run()
    finally:
        with _signals_held():
            # on every way out (an error, Ctrl-C, SIGTERM): no worker, no descendant, no scratch folder
            for item in pool.running.values():
                if item.pid:
                    _kill_worker(item.pid)
            release_zygote(scratch, pool.zygote)


class _Pool:
    """The workers of one run, from the first fork to the last exit: started while there is room, told
    about by the zygote, stopped at their limits, and replaced when one dies in a kernel."""

    def __init__(
        self,
        scratch: str,
        zygote: Zygote,
        pending: list[_Running],
        workers: int,
        timeout: float,
        max_memory: int,
        on_done,
    ):
        self.scratch, self.zygote, self.pending = scratch, zygote, pending
        self.workers, self.timeout, self.max_memory, self.on_done = workers, timeout, max_memory, on_done
        self.running: dict[int, _Running] = {}
        self.results: dict[int, FileResult] = {}
        self.disk_checked = time.monotonic()

    def run(self) -> dict[int, FileResult]:
        while self.pending or self.running:
            self.start_pending()
            try:
                message = _parsed(self.zygote.messages.get(timeout=_POLL_SECONDS))
            except queue.Empty:
                message = None
            if not self.handle(message):
                return self.results
            self.enforce_limits(time.monotonic())
        return self.results

    def start_pending(self) -> None:
        while (
            self.pending
            and len(self.running) < self.workers
            and not any(r.alone for r in self.running.values())
            and (not self.pending[0].alone or not self.running)
        ):
            item = self.pending.pop(0)
            self.running[item.index] = item
            try:
                item.workdir = tempfile.mkdtemp(prefix=f"job{item.index}-", dir=self.scratch)
            except OSError as exc:
                self.finish(
                    item,
                    FileResult(
                        path=item.job.path, error=f"cannot create a temporary folder in {self.scratch}: {exc.strerror}"
                    ),
                )
                continue
            item.submitted = time.monotonic()
            self.zygote.submit(item.index, item.job, self.max_memory, item.workdir)

    def handle(self, message) -> bool:
        """Act on one zygote message; False when the zygote failed and every result is final."""
        startup = max(self.timeout, STARTUP_SECONDS)
        if message and message[0] == "started" and message[1] in self.running:
            item = self.running[message[1]]
            item.pid = message[2]
            item.started = item.budget_from = time.monotonic()
        elif message and message[0] == "exited":
            for item in list(self.running.values()):
                if item.pid == message[1]:
                    item.exit_code, item.peak_mib = message[2], message[3] / 1024
                    self.finish(item, *collect(item, self.timeout, self.max_memory))
        elif message and message[0] == "gone" and self.zygote.started_any:
            self.zygote_killed()
        elif message and message[0] == "gone" or _never_started(self.running.values(), startup):
            reason = self.zygote.failure(startup)
            for item in list(self.running.values()) + self.pending:
                lost = FileResult(path=item.job.path, error=reason)
                self.results[item.index] = merged(item.earlier, lost) if item.earlier else lost
            return False
        return True

    def zygote_killed(self) -> None:
        """A user file killed the zygote, its workers' parent: find which one and spare the others."""
        for item in list(self.running.values()):
            if item.pid:
                _kill_worker(item.pid)
            if item.alone:
                self.finish(
                    item,
                    FileResult(
                        path=item.job.path, error="the file killed tl-inspect's worker process (the worker's parent)"
                    ),
                )
            else:
                del self.running[item.index]
                shutil.rmtree(item.workdir, ignore_errors=True)
                self.pending.insert(
                    0, replace(item, alone=True, pid=None, started=0.0, budget_from=0.0, budgeted=set())
                )
        self.zygote.close()
        self.zygote = Zygote(self.scratch)

    def enforce_limits(self, now: float) -> None:
        for item in self.running.values():
            if (
                item.pid
                and not item.timed_out
                and now - item.budget_from > self.timeout
                and not _renewed(item, now, self.timeout)
            ):
                item.timed_out = True
                _kill_worker(item.pid)
        if now - self.disk_checked > _DISK_CHECK_SECONDS:
            self.disk_checked = now
            for item in self.running.values():
                if item.pid and not item.over_disk and _over_disk_limit(item.workdir):
                    item.over_disk = True
                    _kill_worker(item.pid)

    def finish(self, item: _Running, result: FileResult, remaining: tuple = ()) -> None:
        del self.running[item.index]
        if item.workdir:  # what the worker wrote must not fill the disk for the next ones
            shutil.rmtree(item.workdir, ignore_errors=True)
        if item.earlier:
            result = merged(item.earlier, result)
        if remaining:
            # the worker died in one kernel: a fresh one compiles the kernels after it
            resumed = replace(item.job, skip=tuple(k.name for k in result.kernels))
            self.pending.insert(0, _Running(item.index, resumed, result))
            return
        self.results[item.index] = result
        if self.on_done:
            self.on_done(result)


def _renewed(item: _Running, now: float, timeout: float) -> bool:
    """Give the kernel the worker is compiling its own time limit, counted from its start, when it started
    after the limit now running out began: a slow kernel must not cost the innocent ones after it. Once
    per planned kernel, so the file's own code cannot renew it for ever by writing records."""
    path = os.path.join(item.workdir, "result.pickle")
    planned, current = set(), None
    for kind, payload in records(path):
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
    """The worker's folder holds more than `DISK_LIMIT_BYTES`, or more than `DISK_MAX_ENTRIES` entries."""
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
                    if used > DISK_LIMIT_BYTES or entries > DISK_MAX_ENTRIES:
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
    previous = {
        sig: signal.signal(sig, lambda number, frame: caught.append(number)) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])
