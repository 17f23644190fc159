"""Defect 3: hang at import with a child; the run is then ended by SIGTERM or by Ctrl-C twice.

The worker's and the child's pids are written to the file named by $HOSTILE_RECORD."""
import os
import time

import tilelang

child = os.fork()
if child == 0:
    time.sleep(600)
    os._exit(0)
with open(os.environ["HOSTILE_RECORD"], "w") as record:
    record.write(f"{os.getpid()} {child}\n")
time.sleep(600)
