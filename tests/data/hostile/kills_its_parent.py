"""Defect 8: kill the process that forked this worker; only this file may fail, and it must be named."""
import os
import signal

import tilelang

os.kill(os.getppid(), signal.SIGKILL)
