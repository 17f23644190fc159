"""A process that imports tilelang once and forks one worker per user file on request.

multiprocessing's forkserver re-imports the parent's `__main__` in every child, which breaks any
caller whose main module is not importable (a script without a main guard, stdin, a notebook); this
zygote forks children that run only tl-inspect's worker.

Nothing a user file starts may outlive its worker: each worker leads its own process group, killed
whole when the worker ends, and the zygote is the child subreaper of everything below it, so a
process that leaves its group (`setsid`, a daemon) is re-parented here and killed. When the parent
closes stdin (finished, interrupted or killed), every worker and descendant is killed and the
scratch folder removed. A worker may not signal, trace or read the memory of the zygote or of the
tl-inspect process (`shield`): nothing the user's code does can stop the time limit.

Protocol, one line per message. In (stdin): `<job id> <base64 pickle of (Job, memory limit in MiB,
result, stdout, stderr paths)>`. Out (the original stdout): `started <job id> <pid>` and
`exited <pid> <exit code> <peak RSS in KiB>`, the exit code negative for a signal as in `subprocess`.

The parent's end is `Zygote`. The command line starts one before its own imports (`start_early`), so
that tilelang's import (about 2 s) overlaps them; the pool takes it (`take_zygote`) or starts its own.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import os
import pickle
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

from tl_inspect.tir.deepstack import call_on_deep_stack

_PR_SET_CHILD_SUBREAPER = 36
# torch.cuda.is_available() through NVML, which does not initialise CUDA (`cudaGetDeviceCount` would, and
# every forked worker would then fail with "Cannot re-initialize CUDA in forked subprocess")
_NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"
_EXIT_SOFTWARE = 70  # sysexits' EX_SOFTWARE: a worker that failed before it could report anything


class Zygote:
    """The parent's end: starts the zygote, sends it jobs, and queues its replies as lists of words (then
    `["gone"]` when it exits)."""

    def __init__(self, scratch: str):
        cache = os.path.join(scratch, "tilelang-cache")
        os.makedirs(cache, exist_ok=True)
        env = dict(os.environ)
        # read by tilelang at import: hermetic cache, quiet compiles (the target is set per job, at fork)
        env.update(
            {
                "TILELANG_CACHE_DIR": cache,
                "TILELANG_DISABLE_CACHE": "1",
                "TILELANG_PRINT_ON_COMPILATION": "0",
                "PYTHONDONTWRITEBYTECODE": "1",
            }
        )
        self.log_path = os.path.join(scratch, "zygote.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                # -P: a copy.py or random.py in the current folder must not shadow the standard library
                [sys.executable, "-P", "-m", "tl_inspect.inspector.processes.zygote", scratch],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=os.getcwd(),
                start_new_session=True,
            )
        self.messages: queue.Queue = queue.Queue()
        self.started_any = False  # a worker was forked: the zygote did start
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            words = line.decode(errors="replace").split()
            self.started_any = self.started_any or words[:1] == ["started"]
            self.messages.put(words)
        self.messages.put(["gone"])

    def submit(self, job_id: int, job, max_memory_mib: int, workdir: str) -> None:
        paths = [os.path.join(workdir, n) for n in ("result.pickle", "stdout.txt", "stderr.txt")]
        payload = base64.b64encode(pickle.dumps((job, max_memory_mib, *paths)))
        try:
            self.process.stdin.write(f"{job_id} ".encode() + payload + b"\n")
            self.process.stdin.flush()
        except OSError:
            pass  # the zygote is gone; its "gone" message decides what becomes of this job

    def failure(self, timeout: float) -> str:
        if self.process.poll() is None:
            return f"the tilelang worker did not start within {timeout:g} s"
        with open(self.log_path, errors="replace") as log:
            lines = [ln.strip() for ln in log.read().splitlines() if ln.strip()]
        return "could not start the tilelang worker: " + (lines[-1] if lines else "no output")

    def close(self) -> None:
        """Closing stdin makes the zygote kill every worker and what they started, then exit."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# (scratch folder, zygote) started by `start_early` and not taken yet
_early: tuple[str, Zygote] | None = None
# (scratch folder, zygote) that every inspection shares while `kept_warm` holds it
_warm: tuple[str, Zygote] | None = None


@contextlib.contextmanager
def kept_warm():
    """Inspections inside share one zygote: tilelang is imported once, and each re-check of a file costs
    only its own lowering in a forked worker (the language server, --watch). Stopped on the way out."""
    global _warm
    _warm = _take_early() or _new_zygote()
    try:
        yield
    finally:
        scratch, zygote = _warm
        _warm = None
        zygote.close()
        shutil.rmtree(scratch, ignore_errors=True)


def start_early() -> None:
    """Start the zygote for this process's next inspection now, before the caller imports and reads what
    it needs (rules, configuration, reporters)."""
    global _early
    try:
        _early = _new_zygote()
    except OSError:
        pass  # no temporary folder: the inspection says so when it takes a zygote


def take_zygote() -> tuple[str, Zygote]:
    """The shared zygote of `kept_warm`, else the one started early, else a new one, with its scratch
    folder; the caller hands it to `release_zygote`."""
    global _warm
    if _warm is None:
        return _take_early() or _new_zygote()
    scratch, zygote = _warm
    if zygote.process.poll() is not None:  # a user file killed it in an earlier check
        zygote = Zygote(scratch)
        _warm = (scratch, zygote)
    while not zygote.messages.empty():  # nothing of an earlier inspection may be read as this one's
        zygote.messages.get_nowait()
    return _warm


def release_zygote(scratch: str, zygote: Zygote) -> None:
    """After an inspection: keep the shared zygote (or the one that replaced it), stop any other and
    remove its folder."""
    global _warm
    if _warm is not None and _warm[0] == scratch:
        _warm = (scratch, zygote)
        return
    zygote.close()
    shutil.rmtree(scratch, ignore_errors=True)


def discard_early() -> None:
    """Stop a zygote started early that nothing took (a usage error, every result cached). It has forked
    no worker, and may still be importing tilelang: kill it rather than wait for it to read its input."""
    early = _take_early()
    if early:
        scratch, zygote = early
        zygote.process.kill()
        zygote.process.wait()
        shutil.rmtree(scratch, ignore_errors=True)


def _take_early() -> tuple[str, Zygote] | None:
    global _early
    early, _early = _early, None
    return early


def _new_zygote() -> tuple[str, Zygote]:
    scratch = tempfile.mkdtemp(prefix="tl-inspect-")
    try:
        return scratch, Zygote(scratch)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def main(scratch: str) -> None:
    from tl_inspect.inspector.processes import inputs

    inputs.remember_import_environment()  # before tilelang's import changes PYTHONPATH
    users_nvml_check = os.environ.get(_NVML_CHECK)
    # tilelang asks torch whether CUDA is available at import: the zygote must never initialise CUDA
    os.environ[_NVML_CHECK] = "1"
    import tl_inspect.inspector.processes.preload  # noqa: F401  (what every forked worker needs, loaded once)
    from tl_inspect.inspector.processes import shield

    shield.make_undumpable()
    guarded = (os.getpid(), os.getppid())
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    commands = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    # forked from a thread, a worker has that thread as its only and main thread: the user's import runs
    # where `signal.signal` and `asyncio.get_event_loop()` work, on a stack deep expressions cannot exhaust
    call_on_deep_stack(_serve, commands, replies, guarded, users_nvml_check)
    shutil.rmtree(scratch, ignore_errors=True)


def _serve(commands, replies, guarded: tuple, users_nvml_check: str | None) -> None:
    """Fork a worker per job read from `commands` until the input closes, then kill everything left."""
    from tl_inspect.inspector.processes import shield, worker

    workers: set[int] = set()
    pending = b""
    open_input = True
    while open_input or _children():
        if open_input:
            ready, _, _ = select.select([commands], [], [], 0.02)
            if ready:
                chunk = commands.read(65536)
                pending += chunk
                open_input = bool(chunk)
        else:
            select.select([], [], [], 0.02)
        while open_input and b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            job_id, payload = line.split(b" ", 1)
            job, max_memory_mib, *paths = pickle.loads(base64.b64decode(payload))
            pid = os.fork()
            if pid == 0:
                try:
                    os.setpgid(0, 0)
                    shield.shield_worker(guarded)
                    commands.close()
                    replies.close()
                    # the user's code sees torch as plain Python does
                    if users_nvml_check is None:
                        del os.environ[_NVML_CHECK]
                    else:
                        os.environ[_NVML_CHECK] = users_nvml_check
                    worker.run(job, max_memory_mib, *paths)
                finally:
                    os._exit(_EXIT_SOFTWARE)  # whatever failed, this child must never run the zygote's loop
            _new_group(pid)
            workers.add(pid)
            _reply(replies, f"started {job_id.decode()} {pid}")
        for pid, status, usage in _reaped():
            if pid in workers:
                workers.discard(pid)
                _kill_group(pid)
                _reply(replies, f"exited {pid} {os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
        for pid in _children():
            if pid not in workers or not open_input:
                _kill_group(pid)
                _kill(pid)


def _reply(replies, line: str) -> None:
    try:
        replies.write(line + "\n")
    except OSError:
        pass  # the parent is gone: the cleanup must go on


def _new_group(pid: int) -> None:
    """Also set from this side, so the group exists before the parent can be told the pid."""
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did, or already exited


def _reaped():
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status, usage


def _children() -> set[int]:
    """Every live child: the workers and the orphans re-parented to this subreaper."""
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                found.update(int(pid) for pid in f.read().split())
        except OSError:
            continue
    return found


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass  # the group is already empty


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


if __name__ == "__main__":
    main(sys.argv[1])
    # the cleanup is done: skip tilelang's and torch's teardown (about 0.6 s), which the parent waits for
    os._exit(0)
