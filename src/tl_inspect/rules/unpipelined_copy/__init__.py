"""TLV020 unpipelined-copy: a copy into shared memory inside `T.Pipelined` lowered as synchronous loads."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tl_inspect.analysis.statements import Copy
from tl_inspect.gpu import arch as gpu_arch
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.tir import nodes as ir

# the transfer sizes `cp.async` accepts (tilelang's ptx_async_copy_injector: IsValidCPAsyncTransferBytes)
CP_ASYNC_BYTES = (4, 8, 16)


@dataclass(frozen=True)
class SynchronousCopy(Violation):
    """A global-to-shared copy of a pipelined loop that tilelang lowered as plain loads and stores."""

    src: str
    dst: str
    stages: int
    loop_line: int | None
    arch: str
    reason: str

    def message(self) -> str:
        loop = f" on line {self.loop_line}" if self.loop_line else ""
        return (
            f"The copy of `{self.src}` into the shared tile `{self.dst}` inside `T.Pipelined(..., num_stages="
            f"{self.stages})`{loop} was lowered as synchronous loads: no cp.async and no TMA on {self.arch}, so "
            f"every stage waits for its own load and the pipeline overlaps nothing for this operand. "
            f"Why: {self.reason}"
        )


class UnpipelinedCopy(Rule):
    """A `T.copy` into shared memory inside `T.Pipelined` that tilelang lowered as synchronous loads.

    ## What it does
    For every global-to-shared copy (a `T.copy`, or a store of a global load into a shared tile)
    inside a `T.Pipelined` loop of 2 or more stages, reads the device code tilelang generated for it:
    when none of its loads is a `cp.async` (`tl::cp_async_gs`) or a TMA load (`tl::tma_load`), it
    reports the copy with the reason tilelang's lowering had:
    - the source and the tile differ in dtype (a casting copy is never asynchronous);
    - each thread moves fewer than 4 bytes per instruction (cp.async moves 4, 8 or 16 bytes), because
      a row length, a tile width or a start offset is not a multiple of the vector width;
    - on sm_90 and later, a global stride or the tile's last dimension is not a multiple of 16 bytes,
      which TMA requires: tilelang then falls back to plain loads, not to cp.async.
    Copies that were lowered to cp.async or TMA (even with a predicated tail) stay quiet.

    ## Why is this slow?
    `T.Pipelined` only overlaps memory with compute when the copies of the next stages are issued
    asynchronously. A synchronous copy makes every iteration wait for its own tile; the gemm of the
    stage before cannot hide it. On tilelang 0.1.15 (lowered for sm_80 and sm_90 on this machine) a
    128x128x32 fp16 GEMM with K = 1023 loads A element by element (`A_shared[...] = A[...]`) on both
    archs while B stays on cp.async / TMA; K = 1028 (rows of 2056 bytes) keeps cp.async on sm_80 but
    drops to 8-byte synchronous loads on sm_90; a float32 A copied into a float16 tile is synchronous on
    both. tilelang issue #1201 asks for exactly this check ("check async copy is used for auto
    T.Pipelined"); #1493 is a user whose hand-written shared-memory loads never became cp.async.
    On an H200 (`benchmarks/gpu_miscompiles.py`, a 4096 x 4096 x K fp16 GEMM, 128x128x32 tiles, 3 stages,
    built for sm_90), K = 4096 ran at 0.367 ms (375 TFLOP/s) with TMA for both copies. K = 4095 took
    0.974 ms (2.66x) and K = 4100, with 8-byte aligned rows, took 0.866 ms (2.36x). A float32 A copied into
    a float16 tile took 1.020 ms (2.78x). In each of the three, one of the two copies had lost its TMA load.

    ## Example
    ```python
    A: T.Tensor((M, 1023), T.float16)          # rows of 2046 bytes
    for ko in T.Pipelined(T.ceildiv(1023, BK), num_stages=3):
        T.copy(A[by * BM, ko * BK], A_shared)   # scalar loads, no cp.async, no TMA
    ```

    ## Use instead
    ```python
    A: T.Tensor((M, 1024), T.float16)          # pad K to a multiple of 8 elements (16 bytes)
    for ko in T.Pipelined(T.ceildiv(1024, BK), num_stages=3):
        T.copy(A[by * BM, ko * BK], A_shared)   # cp.async (sm_80) / TMA (sm_90)
    ```
    Convert dtypes before the kernel (or copy into a tile of the source dtype and cast from shared).

    ## References
    - tilelang issue #1201 (check that async copy is used for `T.Pipelined`), #1493 (shared-memory
      loads in a pipelined loop that are not cp.async), #2525.
    - tilelang 0.1.15 `src/cuda/op/copy_analysis.cc` (`CheckGlobalStrides`: "TMA bulk copy cannot
      support a global stride of ...", `CheckBulkLoad`: last dim multiple of 16 bytes, equal dtypes;
      `CheckCPAsyncCopyPreconditions`: global to shared, equal dtypes) and
      `src/cuda/transform/ptx_async_copy_injector.cc` (cp.async of 4, 8 or 16 bytes only).
    """

    code = "TLV020"
    slug = "unpipelined-copy"
    severity = "warning"
    flags = (
        "a copy into shared memory inside `T.Pipelined` that tilelang lowered as synchronous loads (no cp.async, "
        "no TMA), with tilelang's reason: a dtype change, under 4 bytes per thread, a stride TMA refuses"
    )
    measured = "4096² GEMM, K = 4095: 2.66x; fp32 A into an fp16 tile: 2.78x"
    fix = (
        "Make the copy eligible: the same dtype in global memory and in the tile, and rows, tile widths and offsets "
        "that are multiples of 16 bytes (pad the tensor)"
    )

    def check(self, ctx: RuleContext) -> None:
        for src, dst, loops, line in _copies(ctx):
            pipelined = next((loop for loop in reversed(loops) if loop.stages is not None), None)
            if pipelined is None or pipelined.stages < 2 or line is None:
                continue
            loads = [a for a in ctx.kernel.accesses if a.buffer == src.name and a.kind == "load" and a.line == line]
            if not loads or any(a.via for a in loads):
                continue
            reason = _reason(ctx, src, dst, loads)
            ctx.report(
                line,
                SynchronousCopy(src.name, dst.name, pipelined.stages, pipelined.line, ctx.kernel.arch, reason),
                cuda_lines=sorted({c for a in loads for c in a.cuda_lines}),
                evidence=[
                    f"CUDA: {ctx.kernel.source.splitlines()[c - 1].strip()}"
                    for c in sorted({c for a in loads for c in a.cuda_lines})[:1]
                    if c <= len(ctx.kernel.source.splitlines())
                ],
            )


def _copies(ctx: RuleContext):
    """(global source, shared tile, loops, line) of every `T.copy` and every store of a global load into a
    shared tile."""
    facts = ctx.facts
    for op in facts.tile_ops:
        if isinstance(op, Copy):
            src, dst = facts.buffer(op.src.buffer), facts.buffer(op.dst.buffer)
            if src is not None and dst is not None and src.scope == "global" and dst.is_shared:
                yield src, dst, op.loops, op.line
    for store in facts.stores:
        dst = facts.buffer(store.buffer)
        if dst is None or not dst.is_shared:
            continue
        for load in ir.loads_of(store.value):
            src = facts.buffer(load[1])
            if src is not None and src.scope == "global":
                yield src, dst, store.loops, store.line
                break


def _reason(ctx: RuleContext, src, dst, loads) -> str:
    if src.dtype != dst.dtype:
        return (
            f"`{src.name}` is {src.dtype} and `{dst.name}` is {dst.dtype}; tilelang lowers only copies between "
            f"equal dtypes to cp.async or TMA, a casting copy is loads, conversions and stores"
        )
    bits = max(a.bits for a in loads)
    element = ir.dtype_bits(src.dtype) // 8
    why = _misalignment(loads)
    if bits // 8 not in CP_ASYNC_BYTES and bits < 32:
        return (
            f"each thread loads {bits // 8} byte{'s' if bits > 8 else ''} per instruction, and cp.async moves "
            f"only {', '.join(map(str, CP_ASYNC_BYTES[:-1]))} or {CP_ASYNC_BYTES[-1]} bytes{why}"
        )
    if gpu_arch.of(ctx.kernel.arch).number >= 90:
        stride = _row_stride_bytes(src, element)
        if stride is not None and stride % 16:
            return (
                f"TMA needs every global stride to be a multiple of 16 bytes and the rows of `{src.name}` are "
                f"{stride} bytes; on {ctx.kernel.arch} tilelang then falls back to {bits // 8}-byte synchronous "
                f"loads, not to cp.async{why}"
            )
    return f"tilelang's copy lowering chose a normal copy ({bits // 8} bytes per thread per instruction){why}"


def _misalignment(loads) -> str:
    cause = next((a.cause for a in loads if a.cause is not None), None)
    if cause is not None and cause.kind == "misaligned-rows" and cause.row:
        return (
            f" (rows of `{cause.buffer}` are {cause.row} elements, not a multiple of the {cause.width}-element vector)"
        )
    return ""


def _row_stride_bytes(buffer, element: int) -> int | None:
    if len(buffer.shape) < 2 or not all(isinstance(e, int) for e in buffer.shape[1:]):
        return None
    return math.prod(buffer.shape[1:][-1:]) * element
