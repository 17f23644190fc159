"""A process that imports tilelang once and forks one worker per user file on request.

multiprocessing's forkserver re-imports the parent's `__main__` in every child, which breaks any
caller whose main module is not importable (a script without a main guard, stdin, a notebook); this
zygote forks children that run only tl-inspect's worker.

Nothing a user file starts may outlive its worker: each worker leads its own process group, killed
whole when the worker ends, and the zygote is the child subreaper of everything below it, so a
process that leaves its group (`setsid`, a daemon) is re-parented here and killed. When the parent
closes stdin (finished, interrupted or killed), every worker and descendant is killed and the
scratch folder removed.

Protocol, one line per message. In (stdin): `<job id> <base64 pickle of (Job, memory limit in MiB,
result, stdout, stderr paths)>`. Out (the original stdout): `started <job id> <pid>` and `exited <pid> <exit code> <peak RSS
in KiB>`, the exit code negative for a signal as in `subprocess`.
"""

from __future__ import annotations

import base64
import ctypes
import os
import pickle
import select
import shutil
import signal
import sys

_PR_SET_CHILD_SUBREAPER = 36


def main(scratch: str) -> None:
    import tl_inspect.inspector.preload  # noqa: F401  (what every forked worker needs, loaded once)
    from tl_inspect.inspector import worker

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    commands = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
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
                os.setpgid(0, 0)
                commands.close()
                replies.close()
                worker.run(job, max_memory_mib, *paths)
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
    shutil.rmtree(scratch, ignore_errors=True)


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
    sys.exit(main(sys.argv[1]))
