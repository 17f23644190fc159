"""Process-wide adjustments to tilelang 0.1.15, installed once in each worker before a user file runs.

Each worker compiles exactly one user file and then exits, so none of this leaks into another file. The
Python API compiles kernel objects in the caller's process, and uses only `macro_spans_at_call_site`,
which it undoes.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager

import tilelang
import tvm_ffi
from tilelang.backend.target import register_target_normalizer
from tilelang.language.eager import builder as _builder
from tvm.target import Target

from tl_inspect.gpu.device import missing_gpu

TILELANG_DIR = os.path.dirname(os.path.abspath(tilelang.__file__)) + os.sep


def cuda_target(arch: str) -> dict:
    return {"kind": "cuda", "arch": arch}


def install(arch: str, run_nvcc: bool) -> None:
    """A worker's adjustments: the job's arch as the default target, and macros' statements at their call sites."""
    use_arch(arch, run_nvcc)
    _attribute_macro_spans_to_call_site()


def use_arch(arch: str, run_nvcc: bool = False) -> None:
    """`arch` becomes the default target of the user's code and its import-time compiles skip nvcc,
    unless a device of that arch is here: then the user's file compiles and runs its kernels as in
    plain Python (tl-inspect lowers each kernel for the arch itself). The pytest plugin does the same."""
    if not _kernels_can_run(arch):
        os.environ["TILELANG_DEFAULT_TARGET"] = json.dumps(cuda_target(arch))
        tilelang.env.TILELANG_DEFAULT_TARGET = cuda_target(arch)
        _map_bare_cuda_target(arch)
        if not run_nvcc:
            _skip_nvcc()


def _kernels_can_run(arch: str) -> bool:
    """Whether a kernel the user's file compiles at import can also run here, as it would in plain Python:
    a CUDA device of the job's arch and nvcc to build for it."""
    return missing_gpu(arch) is None


def _map_bare_cuda_target(arch: str) -> None:
    """User code often hard-codes target="cuda", which would mean sm_50; give it the chosen arch."""

    def normalize(target):
        if isinstance(target, str) and target.strip() == "cuda":
            return Target(cuda_target(arch))
        return None

    register_target_normalizer("cuda", normalize, override=True)


def _skip_nvcc() -> None:
    """Import-time `tilelang.compile` / `@tilelang.jit` calls get an empty cubin instead of running nvcc.

    The CUDA text tl-inspect reads is produced by codegen before this callback; kernels built this way
    cannot be launched (there is no device of the arch to launch them on), and the kernel cache is
    disabled so the fake binary is never stored.
    """
    tvm_ffi.register_global_func(
        "tilelang_callback_cuda_compile",
        f=lambda code, target, pass_config=None: bytearray(64),
        override=True,
    )


@contextmanager
def macro_spans_at_call_site():
    """The span adjustment for a factory called in the caller's own process (the Python API), undone
    afterwards: that process is the user's, not a worker that exits after one file."""
    original = _builder.Builder.set_fileline
    _attribute_macro_spans_to_call_site()
    try:
        yield
    finally:
        _builder.Builder.set_fileline = original


def _attribute_macro_spans_to_call_site() -> None:
    """`T.reduce_*` and other tilelang macros stamp their own file's lines on the statements they build.

    The builder keeps the user's call sites on `macro_fileline_stack`; use the innermost user frame.
    """
    original = _builder.Builder.set_fileline
    if getattr(original, "_tl_inspect", False):
        return

    def set_fileline(self, filename, lineno, name):
        if filename and filename.startswith(TILELANG_DIR):
            for frame_file, frame_line, _ in reversed(self.macro_fileline_stack):
                if frame_line > 0 and not frame_file.startswith(TILELANG_DIR):
                    filename, lineno = frame_file, frame_line
                    break
        return original(self, filename, lineno, name)

    set_fileline._tl_inspect = True
    _builder.Builder.set_fileline = set_fileline
