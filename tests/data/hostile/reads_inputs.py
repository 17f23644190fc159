"""Defect 5: the kernel depends on a JSON file and an environment variable read at import, and the file
is saved again while it is inspected (here by itself, right after it was read)."""
import json
import os

import tilelang
import tilelang.language as T

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sizes.json")) as f:
    N = json.load(f)["N"]
SCALE = float(os.environ.get("HOSTILE_SCALE", "2"))
if os.environ.get("HOSTILE_SAVE_DURING_RUN"):
    with open(__file__, "a") as me:
        me.write("# saved again while it was inspected\n")


@T.prim_func
def scaled(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(N):
            B[i] = A[i] * SCALE
