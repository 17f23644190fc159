"""Issue 20, class 5: `signal.signal` and `asyncio.get_event_loop()` at import work in plain Python (on the main
thread); so must they here."""
import asyncio
import signal

import tilelang
import tilelang.language as T

signal.signal(signal.SIGUSR1, lambda number, frame: None)
loop = asyncio.get_event_loop()


@T.prim_func
def doubled(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(1024):
            B[i] = A[i] * 2
