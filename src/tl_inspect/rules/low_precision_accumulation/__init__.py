"""TLV007 low-precision-accumulation: a sum accumulated in a float16/bfloat16 fragment or local."""

from __future__ import annotations

from tl_inspect import ir
from tl_inspect.model import STAGE_FRONTEND
from tl_inspect.rules.base import Rule, RuleContext

ACCUMULATOR_SCOPES = ("local", "local.fragment", "local.var")
SUM_REDUCTIONS = ("sum", "abssum")
# `T.reduce_*` arguments: tl.tileop.reduce(src, dst, type, dim, clear)
REDUCE_TYPE_ARG, REDUCE_DIM_ARG, REDUCE_CLEAR_ARG = 2, 3, 4
# below 16 terms a float16 sum's worst-case relative error (n * 2^-11) stays under 1 %: a few partial
# results combined in half precision are a deliberate, harmless choice
MIN_TERMS = 16
# measured on an NVIDIA H200 (docs/gpu-impact.md): row sums of 4096 values in [0, 1)
MEASURED = {
    "reduce": "a 4096-value `T.reduce_sum` into float16 had a median relative error of 2.3e-04 (bfloat16: "
              "1.9e-03, up to 1.1e-02) on an H200, against 2.8e-08 into float32",
    "store": "a 4096-term `s[0] += x` in a float16 local had a median relative error of 5.4e-03, up to "
             "3.7e-02, on an H200, against 2.3e-07 in float32",
}


def is_low_precision(dtype: str) -> bool:
    return dtype.startswith(("float16", "bfloat16", "float8", "float6", "float4"))


class LowPrecisionAccumulation(Rule):
    """A sum, mean or variance is accumulated in a float16/bfloat16 fragment or local.

    ## What it does
    Flags a sum whose running value lives in a half-precision (float16, bfloat16 or float8) register
    buffer: a `T.reduce_sum`/`T.reduce_abssum` whose output fragment is half precision, and an update
    `acc[i] += x` (or `acc[i] = acc[i] * scale + x`) of a half-precision `T.alloc_fragment`,
    `T.alloc_local` or `T.alloc_var` repeated by a loop whose variable does not index it. Sums of fewer
    than 16 terms are left alone. `T.gemm` accumulators are not checked: their dtype is the
    tensor-core instruction's, chosen explicitly.

    ## Why is this wrong?
    tilelang accumulates in the output's dtype: `T.reduce_sum(x, s)` with a float16 `s` becomes
    `half_t s_clear[..]; s_clear = s_clear + x[..]` in CUDA, and a float16 `acc[0] += x` stays a float16
    add. Each addition rounds the running value to 11 significant bits (8 for bfloat16), so the error
    grows with the number of terms, and once the sum is large, small terms stop changing it at all.
    Row sums of 4096 values in [0, 1) on an H200:

    | accumulator | median relative error | max |
    |---|---|---|
    | `T.reduce_sum` into float16 | 2.3e-04 | 1.4e-03 |
    | `T.reduce_sum` into bfloat16 | 1.9e-03 | 1.1e-02 |
    | serial `s[0] += x` in a float16 local | 5.4e-03 | 3.7e-02 |
    | float32 (either form) | 2.8e-08 / 2.3e-07 | 1.5e-07 / 1.4e-06 |

    A norm's mean and variance inherit the error, and the `rsqrt` of a variance computed this way can
    be far off when the variance is small next to the mean.

    ## Example
    ```python
    x = T.alloc_fragment((block_M, N), T.float16)
    s = T.alloc_fragment((block_M,), T.float16)
    T.copy(X[bx * block_M, 0], x)
    T.reduce_sum(x, s, dim=1)
    ```

    ## Use instead
    ```python
    x = T.alloc_fragment((block_M, N), T.float32)
    s = T.alloc_fragment((block_M,), T.float32)   # compute in fp32, cast on write-back
    T.copy(X[bx * block_M, 0], x)
    T.reduce_sum(x, s, dim=1)
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md, `benchmarks/gpu_rules.py`): the table above.
    - The TileLang book's RoPE and norm chapters: "compute in fp32, cast on write-back".
    - tilelang 0.1.15 reduce lowering (`src/backend/common/op/reduce.h`): the buffer `<out>_clear` that
      the partial sums go into is declared with the output's dtype.
    """

    code = "TLV007"
    slug = "low-precision-accumulation"
    severity = "warning"
    flags = ("a sum accumulated in a float16/bfloat16 fragment or local (`T.reduce_sum` into a half-precision "
             "output, `acc += x` in a loop)")
    measured = ("4096-value row sums: median relative error 2.3e-04 (fp16), 1.9e-03 (bf16), 5.4e-03 (serial fp16) "
                "vs 2.8e-08 in fp32")
    fix = "Accumulate in float32 (`T.alloc_fragment(..., T.float32)`) and cast once when writing the result"

    def check(self, ctx: RuleContext) -> None:
        snapshot = ctx.kernel.snapshot(STAGE_FRONTEND)
        func = snapshot.func() if snapshot else None
        if func is None:
            return
        for stmt, ancestors in ir.walk(func.body):
            line = ir.stmt_line(stmt, ancestors)
            if not line:
                continue
            if isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr) == "reduce":
                self._check_reduce(ctx, func, stmt.expr, ancestors, line)
            elif isinstance(stmt, ir.Store) and _accumulates(stmt):
                self._check_store(ctx, func, stmt, ancestors, line)

    def _check_reduce(self, ctx: RuleContext, func: ir.IRFunc, call, ancestors, line: int) -> None:
        args = call[2]
        kind = args[REDUCE_TYPE_ARG][1].strip("'\"") if args[REDUCE_TYPE_ARG][0] == "other" else ""
        found = ir.regions(call)
        if kind not in SUM_REDUCTIONS or len(found) < 2:
            return
        source, out = found[0], found[1]
        info = func.buffers.get(out.buffer)
        if info is None or not is_low_precision(info.dtype):
            return
        dim = ir.int_value(args[REDUCE_DIM_ARG])
        extent = ir.int_value(source.extents[dim]) if dim is not None and -len(source.extents) <= dim < len(
            source.extents) else None
        terms = extent
        if terms is not None and ir.int_value(args[REDUCE_CLEAR_ARG]) == 0:
            # `clear=False` adds into the old value: a running sum over the loops around it
            terms = _times(terms, _repeats(ancestors, ir.vars_of(out.start)))
        if terms is not None and terms < MIN_TERMS:
            return
        declared = f" (declared on line {info.line})" if info.line else ""
        ctx.report(line, f"`T.reduce_{kind}` sums {_count(terms)} into the {info.dtype} fragment `{out.buffer}`"
                         f"{declared}: tilelang accumulates in the output's dtype, so every partial sum is "
                         f"rounded to {info.dtype}; {MEASURED['reduce']}",
                   evidence=_cuda_declarations(ctx.kernel.source, out.buffer))

    def _check_store(self, ctx: RuleContext, func: ir.IRFunc, stmt: ir.Store, ancestors, line: int) -> None:
        info = func.buffers.get(stmt.buffer)
        if info is None or info.scope not in ACCUMULATOR_SCOPES or not is_low_precision(info.dtype):
            return
        index_vars = set().union(*(ir.vars_of(i) for i in stmt.indices)) if stmt.indices else set()
        terms = _repeats(ancestors, index_vars)
        if terms == 1 or (terms is not None and terms < MIN_TERMS):
            return
        declared = f" (declared on line {info.line})" if info.line else ""
        ctx.report(line, f"`{ir.render_store(stmt)}` adds {_count(terms)} into the {info.dtype} "
                         f"`{stmt.buffer}`{declared}: every addition rounds the running sum to {info.dtype}, "
                         f"so the error grows with the length; {MEASURED['store']}",
                   evidence=_cuda_declarations(ctx.kernel.source, stmt.buffer))


def _accumulates(stmt: ir.Store) -> bool:
    """`acc[i] = acc[i] + x` (or `- x`), or a rescaled running sum `acc[i] = acc[i] * c + x`."""
    value = stmt.value
    if value[0] not in ("add", "sub"):
        return False
    own = ("load", stmt.buffer, stmt.indices)
    operands = (value[1], value[2]) if value[0] == "add" else (value[1],)
    for operand in operands:
        if operand[:3] == own:
            return True
        if operand[0] == "mul" and any(factor[:3] == own for factor in operand[1:]):
            return True
    return False


def _repeats(ancestors, index_vars: set) -> int | None:
    """How many times the loops around a statement repeat it on the same element: the product of the
    extents of the enclosing loops whose variable does not index it (None when one is not a constant)."""
    count = 1
    for loop in ancestors:
        if isinstance(loop, ir.For) and loop.kind != "thread_binding" and loop.var not in index_vars:
            count = _times(count, ir.int_value(loop.extent))
    return count


def _times(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a * b


def _count(terms: int | None) -> str:
    return f"{terms} terms" if terms is not None else "a run-time number of terms"


def _cuda_declarations(source: str, buffer: str) -> list:
    """The CUDA declarations of the accumulator and of the clear buffer a reduction sums into."""
    names = (buffer, f"{buffer}_clear")
    return [f"CUDA: {line.strip()}" for line in source.splitlines()
            if any(line.strip().split(" ", 1)[-1].startswith(f"{name}[") for name in names)
            and line.strip().endswith("];")][:2]
