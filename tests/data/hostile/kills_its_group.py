"""Defect 8: kill this worker's whole process group; only this file may fail."""
import os
import signal

import tilelang

os.killpg(0, signal.SIGKILL)
