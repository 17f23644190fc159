"""A process that imports tilelang once and forks one worker per user file on request.

multiprocessing's forkserver re-imports the parent's `__main__` in every child, which breaks any
caller whose main module is not importable (a script without a main guard, stdin, a notebook); this
zygote forks children that run only tl-inspect's worker.

Protocol, one line per message. In (stdin): `<job id> <base64 pickle of (Job, result, stdout, stderr
paths)>`. Out (the original stdout): `started <job id> <pid>` and `exited <pid> <exit code>`, the exit
code negative for a signal as in `subprocess`.
"""

from __future__ import annotations

import base64
import os
import pickle
import select
import signal
import sys


def main() -> None:
    import tl_inspect.inspector.preload  # noqa: F401  (what every forked worker needs, loaded once)
    from tl_inspect.inspector import worker

    commands = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    children: set[int] = set()
    pending = b""
    open_input = True
    while open_input or children:
        if open_input:
            ready, _, _ = select.select([commands], [], [], 0.02)
            if ready:
                chunk = commands.read(65536)
                pending += chunk
                if not chunk:
                    # the parent is gone or finished: no worker may outlive it
                    open_input = False
                    for pid in children:
                        os.kill(pid, signal.SIGKILL)
        else:
            select.select([], [], [], 0.02)
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            job_id, payload = line.split(b" ", 1)
            job, *paths = pickle.loads(base64.b64decode(payload))
            pid = os.fork()
            if pid == 0:
                commands.close()
                replies.close()
                worker.run(job, *paths)
            children.add(pid)
            replies.write(f"started {job_id.decode()} {pid}\n")
        for pid in list(children):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                replies.write(f"exited {pid} {os.waitstatus_to_exitcode(status)}\n")


if __name__ == "__main__":
    sys.exit(main())
