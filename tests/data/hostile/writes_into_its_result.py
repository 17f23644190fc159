"""Issue 20, class 9: while its second case is built, write into the worker's result file a pickle that
would end the parent with no output (`os._exit`), then garbage; the first case must survive."""
import os
import pickle

import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"scaled": [{"N": 2048}, {"N": 4096}]}


class _EndsTheReader:
    def __reduce__(self):
        return os._exit, (7,)


def _write_into_result():
    for fd in os.listdir("/proc/self/fd"):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("result.pickle"):
            os.write(int(fd), pickle.dumps(("kernel", _EndsTheReader())) + b"\x80\x05garbage")


def scaled(N):
    if N == 4096:
        _write_into_result()

    @T.prim_func
    def scaled_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(N // 1024, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] * 3

    return scaled_main
