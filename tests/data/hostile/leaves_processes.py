"""Defect 3: at import, fork a child that sleeps, start a `setsid` daemon and make a temporary folder.

Their pids and the folder are written to the file named by $HOSTILE_RECORD; none may outlive the run."""
import os
import subprocess
import sys
import tempfile
import time

import tilelang
import tilelang.language as T

child = os.fork()
if child == 0:
    time.sleep(600)
    os._exit(0)
daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
folder = tempfile.mkdtemp()
with open(os.environ["HOSTILE_RECORD"], "w") as record:
    record.write(f"{child} {daemon.pid} {folder}\n")


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2
