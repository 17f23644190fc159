"""TLV007 low-precision-accumulation: a sum accumulated in a float16/bfloat16 fragment or local."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tl_inspect.analysis.kernel import Buffer
from tl_inspect.analysis.statements import Reduce
from tl_inspect.files.cst import call_name
from tl_inspect.fixes import fix_from
from tl_inspect.model import SAFE, Fix
from tl_inspect.rules.base import Rule, RuleContext, Violation

SUM_REDUCTIONS = ("sum", "abssum")
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


@dataclass(frozen=True)
class RoundedSum(Violation):
    """A running sum kept in a half-precision register buffer: `T.reduce_<reduction>`, or a store `statement`."""

    buffer: str
    dtype: str
    declared_line: int | None
    terms: int | None  # None: a run-time number of terms
    reduction: str = ""  # "sum" or "abssum" for a `T.reduce_*`
    statement: str = ""  # `s[0] += x` for a store

    def message(self) -> str:
        declared = f" (declared on line {self.declared_line})" if self.declared_line else ""
        terms = f"{self.terms} terms" if self.terms is not None else "a run-time number of terms"
        if self.reduction:
            return (
                f"`T.reduce_{self.reduction}` sums {terms} into the {self.dtype} fragment `{self.buffer}`"
                f"{declared}: tilelang accumulates in the output's dtype, so every partial sum is rounded to "
                f"{self.dtype}; {MEASURED['reduce']}"
            )
        return (
            f"`{self.statement}` adds {terms} into the {self.dtype} `{self.buffer}`{declared}: every addition "
            f"rounds the running sum to {self.dtype}, so the error grows with the length; {MEASURED['store']}"
        )

    def fix_title(self) -> str:
        return (
            f"Accumulate `{self.buffer}` in float32 (its `T.alloc_*(..., T.float32)`) and cast once when "
            f"writing the result"
        )

    def autofix(self, source, finding) -> Fix | None:
        """The accumulator's declared dtype made float32, in the spelling of the user's dtype argument."""
        statement = source.statement(self.declared_line) if self.declared_line else None
        assign = statement.body[0] if statement is not None else None
        call = assign.value if isinstance(assign, cst.Assign) else None
        if not (
            isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call_name(call).startswith("alloc_")
        ):
            return None
        dtypes = [a.value for i, a in enumerate(call.args) if (a.keyword.value == "dtype" if a.keyword else i == 1)]
        if not dtypes:
            return None
        dtype = dtypes[0]
        if isinstance(dtype, cst.SimpleString):
            wide = dtype.with_changes(value=dtype.value[0] + "float32" + dtype.value[-1])
        else:
            wide = cst.parse_expression(f"{source.code(call.func.value)}.float32")
        return fix_from(SAFE, source.text, source.replaced(dtype, wide))


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
    flags = (
        "a sum accumulated in a float16/bfloat16 fragment or local (`T.reduce_sum` into a half-precision "
        "output, `acc += x` in a loop)"
    )
    measured = (
        "4096-value row sums: median relative error 2.3e-04 (fp16), 1.9e-03 (bf16), 5.4e-03 (serial fp16) "
        "vs 2.8e-08 in fp32"
    )
    fix = "Accumulate in float32 (`T.alloc_fragment(..., T.float32)`) and cast once when writing the result"

    def check(self, ctx: RuleContext) -> None:
        for op in ctx.facts.tile_ops:
            if isinstance(op, Reduce) and op.kind in SUM_REDUCTIONS and op.line:
                buffer = ctx.facts.buffer(op.dst.buffer)
                if _rounds(buffer, op.terms):
                    self._report(
                        ctx,
                        op.line,
                        buffer,
                        RoundedSum(buffer.name, buffer.dtype, buffer.declared_line, op.terms, reduction=op.kind),
                    )
        for store in ctx.facts.stores:
            if store.accumulates and store.line and store.repeats != 1:
                buffer = ctx.facts.buffer(store.buffer)
                if buffer.is_register and _rounds(buffer, store.repeats):
                    self._report(
                        ctx,
                        store.line,
                        buffer,
                        RoundedSum(
                            buffer.name, buffer.dtype, buffer.declared_line, store.repeats, statement=store.text
                        ),
                    )

    def _report(self, ctx: RuleContext, line: int, buffer: Buffer, violation: RoundedSum) -> None:
        # the accumulator's declaration, and that of the buffer `<out>_clear` a reduction sums into
        declarations = sorted(
            filter(None, (buffer.cuda_declaration, ctx.facts.cuda_declaration(f"{buffer.name}_clear")))
        )
        ctx.report(line, violation, evidence=[f"CUDA: {text}" for _, text in declarations])


def _rounds(buffer: Buffer | None, terms: int | None) -> bool:
    """Whether a sum of `terms` values into the buffer loses precision worth a warning."""
    return buffer is not None and is_low_precision(buffer.dtype) and (terms is None or terms >= MIN_TERMS)
