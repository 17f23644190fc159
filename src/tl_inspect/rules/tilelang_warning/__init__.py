"""TLV008 tilelang-warning: a warning tilelang printed while compiling the kernel, at the user's line."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from tl_inspect.analysis.initialization import WRITE
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.tir import nodes as ir

# tl.LegalizeVectorizedLoop (src/transform/legalize_vectorized_loop.cc)
SERIAL_FALLBACK = re.compile(
    r"T\.vectorized loop over `(?P<var>\w+)` with extent (?P<extent>\d+) is lowered as "
    r"a serial loop"
)
# tl.VerifyBufferInit (src/transform/verify_buffer_init.cc); the location only when a statement has a span
READ_BEFORE_INIT = re.compile(
    r"\[\d+\] `(?P<buffer>\w+)` is read before anything writes it"
    r"(?:\n\s+--> (?P<file>.+?):(?P<line>\d+):\d+)?"
)


@dataclass(frozen=True)
class SerialVectorizedLoop(Violation):
    """tl.LegalizeVectorizedLoop lowered a `T.vectorized` loop serially."""

    var: str
    extent: int

    def message(self) -> str:
        return (
            f"tilelang lowers this `T.vectorized` loop over `{self.var}` as a serial loop: it found no "
            f"vectorization plan for it (a scalar accumulator updated inside the loop is the usual cause)"
        )

    def fix_title(self) -> str:
        return "Load into a local buffer under `T.vectorized`, then accumulate in a `T.serial` or `T.unroll` loop"


@dataclass(frozen=True)
class SharedReadBeforeInit(Violation):
    """tl.VerifyBufferInit found a shared buffer read before anything writes it."""

    buffer: str

    def message(self) -> str:
        return (
            f"tilelang reports that `{self.buffer}` is read before anything writes it (its own check, "
            f"tl.VerifyBufferInit)"
        )

    def fix_title(self) -> str:
        return (
            f"Initialise `{self.buffer}` before its first read (`T.clear`, `T.fill` or a `T.copy` into it), or "
            f"confirm that the read cannot happen first"
        )


class TilelangWarning(Rule):
    """tilelang printed a warning about this kernel while compiling it.

    ## What it does
    Turns tilelang's own compile-time warnings, which it prints to stderr and which no report keeps,
    into findings on the user's line:
    - "T.vectorized loop over `k` with extent 8 is lowered as a serial loop" (tl.LegalizeVectorizedLoop):
      reported on the `T.vectorized` loop the user wrote; the loops tilelang vectorizes by itself are
      left to the rules that explain why (`invariant-index-store`).
    - "Buffer read before initialization" (tl.VerifyBufferInit) for a shared buffer: reported on the
      line tilelang names, else on the first statement that reads the buffer; a shared buffer whose
      first access is a read-modify-write is `missing-clear`'s, whatever the selection. Fragments and
      locals are left to
      `missing-clear`, which cites tilelang's message in its evidence and, unlike tilelang's check,
      knows that `T.alloc_var` starts at zero and that a read under `if k > 0:` follows a write.

    The rule is off by default: select it with `--extend-select tilelang-warning`.

    ## Why is this slow or wrong?
    A `T.vectorized` loop that tilelang lowers serially does not get the vector accesses its author
    asked for. What that costs depends on the loop: summing 8 contiguous fp32 values per thread in
    `T.vectorized(8)` ran on an H200 only 1.04x slower than a vector load followed by a serial sum
    (0.297 ms against 0.284 ms, N = 2^28), since the scalar loads still touch the same sectors. That
    is under the 1.10x tl-inspect requires of a default warning, hence off by default. A shared
    buffer read before anything writes it holds whatever the previous block left there.

    ## Example
    ```python
    acc = T.alloc_local((1,), T.float32)
    acc[0] = 0
    for k in T.vectorized(8):
        acc[0] += X[base + k]
    ```

    ## Use instead
    ```python
    v = T.alloc_local((8,), T.float32)
    for k in T.vectorized(8):
        v[k] = X[base + k]
    for k in T.serial(8):
        acc[0] += v[k]
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md, `benchmarks/gpu_rules.py`): 1.04x, above.
    - tilelang 0.1.15: `src/transform/legalize_vectorized_loop.cc`, `src/transform/verify_buffer_init.cc`.
    - docs/tilelang-facts.md, C.1 (both warnings go to fd 2 from C++) and I (the `T.alloc_var` false alarm).
    """

    code = "TLV008"
    slug = "tilelang-warning"
    severity = "info"
    flags = (
        "tilelang's own compile-time warnings at the user's line: a `T.vectorized` loop lowered serially, a "
        "shared buffer read before anything writes it"
    )
    measured = "serial `T.vectorized(8)` sum 1.04x"
    default = False
    fix = "Follow tilelang's advice in the message"

    def check(self, ctx: RuleContext) -> None:
        for warning in ctx.kernel.warnings:
            for match in SERIAL_FALLBACK.finditer(warning):
                var, extent = match.group("var"), int(match.group("extent"))
                line = next(
                    (
                        loop.line
                        for loop in ctx.facts.loops
                        if loop.kind == "vectorized"
                        and loop.var == var
                        and ir.int_value(loop.extent) == extent
                        and loop.line
                    ),
                    None,
                )
                if line:
                    ctx.report(line, SerialVectorizedLoop(var, extent), evidence=[_first_line(warning)])
            for match in READ_BEFORE_INIT.finditer(warning):
                buffer = ctx.facts.buffer(match.group("buffer"))
                # registers are missing-clear's, which follows them more closely (reads guarded by
                # `if k > 0:`); on `T.alloc_var`, which starts at zero, tilelang's report is a false alarm
                # (docs/tilelang-facts.md, I); a shared buffer's read-modify-write of uninitialised memory is
                # missing-clear's too: what is left is a plain read of shared memory
                if buffer is None or not buffer.is_shared or buffer.name in ctx.facts.uninitialised_reads:
                    continue
                line = _user_line(ctx, match) or next(
                    (a.line for a in ctx.facts.buffer_accesses if a.buffer == buffer.name and a.access != WRITE), None
                )
                if line:
                    ctx.report(
                        line, SharedReadBeforeInit(buffer.name), evidence=[f"tilelang: {match.group(0).strip()}"]
                    )


def _user_line(ctx: RuleContext, match) -> int | None:
    if match.group("file") and os.path.realpath(match.group("file")) == os.path.realpath(ctx.kernel.file):
        return int(match.group("line"))
    return None


def _first_line(text: str) -> str:
    return "tilelang: " + text.strip().splitlines()[0].removeprefix(": ").strip()
