"""TLV006 launch-limit-exceeded: a grid, block or shared-memory size that CUDA refuses at launch."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from tl_inspect.gpu import arch as gpu_arch
from tl_inspect.model import STAGE_DEVICE
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.tir import nodes as ir

# CUDA's limits on every architecture tilelang targets (CUDA C++ Programming Guide, "Technical
# Specifications per Compute Capability")
MAX_GRID = {"blockIdx.x": 2**31 - 1, "blockIdx.y": 65535, "blockIdx.z": 65535}
MAX_BLOCK = {"threadIdx.x": 1024, "threadIdx.y": 1024, "threadIdx.z": 64}
MAX_THREADS_PER_BLOCK = 1024
# `__shared__` arrays are limited to 48 KiB per block; only dynamic shared memory may go beyond, by opt-in
MAX_STATIC_SHARED = 48 * 1024
# what the launch raised on an NVIDIA H200 (docs/gpu-impact.md)
LAUNCH_ERROR = "tilelang's `InternalError` naming the grid and block"
SHARED_ERROR = "`InternalError: Failed to set the allowed dynamic shared memory size`"
FIX_GRID = (
    "Put the long extent first: `T.Kernel(rows, ...)` maps it to grid x (up to 2^31 - 1 blocks), "
    "or give each block several rows"
)
FIX_THREADS = "Use at most 1024 threads per block (`threads=` of `T.Kernel`) and give each thread more elements"
FIX_SHARED = (
    "Shrink the shared tiles (smaller block sizes or fewer pipeline stages), or keep part of the data in fragments"
)


class LaunchLimitExceeded(Rule):
    """A grid extent, a block size or a shared-memory size that CUDA refuses when the kernel launches.

    ## What it does
    Reads the launch configuration tilelang compiled the kernel for and compares it with CUDA's limits:
    a grid y or z extent over 65535 (grid x may reach 2^31 - 1), more than 1024 threads per block (or
    more than 64 along z), and more shared memory per block than the target architecture allows
    (227 KiB on sm_90 and sm_100, 163 KiB on sm_80, 99 KiB on sm_86/sm_89/sm_120), counting the
    dynamic shared memory tilelang requests for `T.alloc_shared` tiles and its own reduction
    workspace. `__shared__` arrays (`T.alloc_shared(..., scope="shared")`) over 48 KiB are flagged
    too: ptxas rejects them. Extents known only at run time are not checked.

    ## Why is this wrong?
    None of these fail when tilelang compiles the kernel: `T.Kernel(1, 65536)` lowers and nvcc
    accepts it; `threads=2048` becomes `__launch_bounds__(2048, 1)`; a 256 KiB shared tile is only a
    number in the launch call. The launch itself then fails, for every input, on the GPU you deploy
    to. On an H200 all three compiled and then failed at launch, while 65535 rows, 1024 threads and
    224 KiB launched and computed the right output:
    ```
    grid y = 65536   InternalError: ... grid=(1,65536,1),  block=(32,1,1) dyn_smem_bytes=0
    threads = 2048   InternalError: ... grid=(1,1,1),  block=(2048,1,1) dyn_smem_bytes=0
    256 KiB shared   InternalError: Failed to set the allowed dynamic shared memory size to 262144
    ```

    ## Example
    ```python
    with T.Kernel(1, M, threads=128) as (bx, by):   # M = 65536 rows on grid y
        for j in T.Parallel(N):
            Y[by, j] = X[by, j] * 2
    ```

    ## Use instead
    ```python
    with T.Kernel(M, threads=128) as by:            # grid x takes up to 2^31 - 1 blocks
        for j in T.Parallel(N):
            Y[by, j] = X[by, j] * 2
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md, `benchmarks/gpu_rules.py`): grid y = 65536,
      2048 threads and 256 KiB of dynamic shared memory compiled and failed at launch; 65535, 1024 and
      224 KiB launched.
    - CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" (grid and block
      limits, maximum shared memory per thread block).
    - docs/tilelang-facts.md, F: a 1 MiB `T.alloc_shared` compiles (`dyn_shared_memory_buf = 1048576`);
      `threads=4096` compiles to `__launch_bounds__(4096, 1)`.
    """

    code = "TLV006"
    slug = "launch-limit-exceeded"
    severity = "error"
    flags = (
        "a grid y/z extent over 65535, more than 1024 threads per block, or more shared memory per block than "
        "the arch allows (227 KiB on sm_90): compiles, then fails at every launch"
    )
    measured = "grid y = 65536, 2048 threads, 256 KiB: `InternalError` at launch; 65535, 1024, 224 KiB launch"
    fix = FIX_GRID

    def check(self, ctx: RuleContext) -> None:
        device = ctx.kernel.snapshot(STAGE_DEVICE)
        if device is None or not device.funcs:
            return
        kernel_line = ctx.facts.kernel_line or ctx.kernel.line
        if kernel_line is None:
            return
        extents = ctx.facts.launch
        evidence = [f"device launch: {_render_launch(extents)}"]
        for tag, limit in MAX_GRID.items():
            if (extents.get(tag) or 0) > limit:
                ctx.report(kernel_line, GridTooLarge(tag, extents[tag], limit), evidence=evidence)
        for tag, limit in MAX_BLOCK.items():
            if (extents.get(tag) or 0) > limit:
                ctx.report(kernel_line, BlockAxisTooLarge(tag, extents[tag], limit), evidence=evidence)
        threads = math.prod(extents.get(tag) or 1 for tag in MAX_BLOCK)
        if threads > MAX_THREADS_PER_BLOCK and all((extents.get(t) or 0) <= m for t, m in MAX_BLOCK.items()):
            ctx.report(kernel_line, TooManyThreads(threads), evidence=evidence)
        self._check_shared(ctx, device.func(), kernel_line)

    def _check_shared(self, ctx: RuleContext, device: ir.IRFunc, kernel_line: int) -> None:
        static = sum(_bytes(info) for info in device.buffers.values() if info.scope == "shared")
        tiles = sorted(
            (buffer for buffer in map(ctx.facts.buffer, ctx.facts.func.buffers) if buffer.is_shared),
            key=_bytes,
            reverse=True,
        )
        line = next((buffer.declared_line for buffer in tiles if buffer.declared_line), kernel_line)
        listed = ", ".join(f"`{buffer.name}` {_kib(_bytes(buffer))}" for buffer in tiles[:4])
        evidence = [f"shared tiles: {listed}"] if listed else []
        if static > MAX_STATIC_SHARED:
            ctx.report(line, StaticSharedTooLarge(static), evidence=evidence)
        limit_kib = gpu_arch.of(ctx.kernel.arch).max_shared_kib
        total = static + device.dyn_shared_bytes
        if limit_kib is not None and total > limit_kib * 1024:
            ctx.report(
                line,
                SharedMemoryTooLarge(total, limit_kib, ctx.kernel.arch),
                evidence=evidence + [f"device: dyn_shared_memory_buf = {device.dyn_shared_bytes}"],
            )


class _LaunchFailure(Violation):
    """A launch CUDA refuses; each kind names its own fix."""

    fix: ClassVar[str]

    def fix_title(self) -> str:
        return self.fix


@dataclass(frozen=True)
class GridTooLarge(_LaunchFailure):
    fix: ClassVar[str] = FIX_GRID
    tag: str  # "blockIdx.y"
    blocks: int
    limit: int

    def message(self) -> str:
        return (
            f"The grid has {self.blocks} blocks along {self.tag[-1]} (`{self.tag}`), over CUDA's limit of "
            f"{self.limit}: the kernel compiles, but every launch fails with {LAUNCH_ERROR}"
        )


@dataclass(frozen=True)
class BlockAxisTooLarge(_LaunchFailure):
    fix: ClassVar[str] = FIX_THREADS
    tag: str  # "threadIdx.z"
    threads: int
    limit: int

    def message(self) -> str:
        return (
            f"The block has {self.threads} threads along {self.tag[-1]}, over CUDA's limit of {self.limit}: "
            f"every launch fails with {LAUNCH_ERROR}"
        )


@dataclass(frozen=True)
class TooManyThreads(_LaunchFailure):
    fix: ClassVar[str] = FIX_THREADS
    threads: int

    def message(self) -> str:
        return (
            f"The block has {self.threads} threads, over CUDA's limit of {MAX_THREADS_PER_BLOCK} per block: "
            f"the kernel compiles (`__launch_bounds__({self.threads}, 1)`), but every launch fails with "
            f"{LAUNCH_ERROR}"
        )


@dataclass(frozen=True)
class StaticSharedTooLarge(_LaunchFailure):
    fix: ClassVar[str] = FIX_SHARED
    size: int  # bytes of `__shared__` arrays

    def message(self) -> str:
        return (
            f"The kernel declares {_kib(self.size)} of static `__shared__` memory, over the "
            f"{_kib(MAX_STATIC_SHARED)} a `__shared__` array may use: nvcc rejects it ('uses too much shared data')"
        )


@dataclass(frozen=True)
class SharedMemoryTooLarge(_LaunchFailure):
    fix: ClassVar[str] = FIX_SHARED
    size: int  # bytes of shared memory per block, static and dynamic
    limit_kib: int
    arch: str

    def message(self) -> str:
        return (
            f"Each block needs {_kib(self.size)} of shared memory, over the {self.limit_kib} KiB per block that "
            f"{self.arch} allows: the kernel compiles, but every launch fails with {SHARED_ERROR}"
        )


def _bytes(info) -> int:
    """Bytes of a buffer (an `ir.BufferInfo` or a model `Buffer`), 0 for a run-time shape."""
    count = 1
    for extent in info.shape:
        if not isinstance(extent, int):
            return 0
        count *= extent
    return count * ir.dtype_bits(info.dtype) // 8


def _kib(size: int) -> str:
    return f"{size / 1024:g} KiB"


def _render_launch(extents: dict) -> str:
    return ", ".join(f"{tag} = {value}" for tag, value in extents.items())
