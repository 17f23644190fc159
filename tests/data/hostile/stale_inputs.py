"""Issue 20, class 3: the kernel depends on a file read relative to the current folder, on an optional module
(found beside this file or on PYTHONPATH once it exists) and on an optional flag file; the cache must
notice each change, including a module or file that was missing and now exists."""
import json
import os

import tilelang
import tilelang.language as T

try:
    from optional_sizes import N
except ImportError:
    N = 1024
if os.path.exists("double.flag"):
    N *= 2
with open("relative_scale.json") as f:
    SCALE = json.load(f)["scale"]


@T.prim_func
def scaled(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(N):
            B[i] = A[i] * SCALE
