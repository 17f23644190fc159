"""Issue 20, class 1: move this worker into the zygote's process group, out of reach of a kill of its own
group, then hang; --timeout must still end it."""
import os
import time

import tilelang

os.setpgid(0, os.getpgid(os.getppid()))
time.sleep(600)
