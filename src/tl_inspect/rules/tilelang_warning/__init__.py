"""TLV008 tilelang-warning: a warning tilelang printed while compiling the kernel, at the user's line."""

from __future__ import annotations

import os
import re

from tl_inspect import ir
from tl_inspect.analysis.initialization import first_accesses, uninitialised
from tl_inspect.model import STAGE_FRONTEND
from tl_inspect.rules.base import Rule, RuleContext

# tl.LegalizeVectorizedLoop (src/transform/legalize_vectorized_loop.cc)
SERIAL_FALLBACK = re.compile(r"T\.vectorized loop over `(?P<var>\w+)` with extent (?P<extent>\d+) is lowered as "
                             r"a serial loop")
# tl.VerifyBufferInit (src/transform/verify_buffer_init.cc); the location only when a statement has a span
READ_BEFORE_INIT = re.compile(r"\[\d+\] `(?P<buffer>\w+)` is read before anything writes it"
                              r"(?:\n\s+--> (?P<file>.+?):(?P<line>\d+):\d+)?")
# VerifyBufferInit's reports on registers belong to missing-clear, which follows them more closely (reads
# guarded by `if k > 0:`) and cites tilelang's message; on `T.alloc_var`, which starts at zero, they are
# false alarms (docs/tilelang-facts.md, I). Plain reads of shared memory are what missing-clear leaves to tilelang.
REPORTED_SCOPES = ("shared", "shared.dyn")


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
    flags = ("tilelang's own compile-time warnings at the user's line: a `T.vectorized` loop lowered serially, a "
             "shared buffer read before anything writes it")
    measured = "serial `T.vectorized(8)` sum 1.04x"
    default = False
    fix = "Follow tilelang's advice in the message"

    def check(self, ctx: RuleContext) -> None:
        snapshot = ctx.kernel.snapshot(STAGE_FRONTEND)
        func = snapshot.func() if snapshot else None
        if func is None:
            return
        first = first_accesses(func)
        for warning in ctx.kernel.warnings:
            for match in SERIAL_FALLBACK.finditer(warning):
                line = _vectorized_loop_line(func, match.group("var"), int(match.group("extent")))
                if line:
                    ctx.report(line, f"tilelang lowers this `T.vectorized` loop over `{match.group('var')}` "
                                     f"as a serial loop: it found no vectorization plan for it (a scalar "
                                     f"accumulator updated inside the loop is the usual cause)",
                               fix="Load into a local buffer under `T.vectorized`, then accumulate in a "
                                   "`T.serial` or `T.unroll` loop", evidence=[_first_line(warning)])
            for match in READ_BEFORE_INIT.finditer(warning):
                buffer = match.group("buffer")
                if buffer not in func.buffers or func.scope_of(buffer) not in REPORTED_SCOPES:
                    continue
                if buffer in first and uninitialised(func, first[buffer]):
                    continue  # a read-modify-write of uninitialised memory: missing-clear's cause
                line = _user_line(ctx, match) or _first_read_line(func, buffer)
                if line:
                    ctx.report(line, f"tilelang reports that `{buffer}` is read before anything writes it "
                                     f"(its own check, tl.VerifyBufferInit)",
                               fix=f"Initialise `{buffer}` before its first read (`T.clear`, `T.fill` or a "
                                   f"`T.copy` into it), or confirm that the read cannot happen first",
                               evidence=[f"tilelang: {match.group(0).strip()}"])


def _vectorized_loop_line(func: ir.IRFunc, var: str, extent: int) -> int | None:
    return next((stmt.line for stmt, _ in ir.walk(func.body)
                 if isinstance(stmt, ir.For) and stmt.kind == "vectorized" and stmt.var == var
                 and ir.int_value(stmt.extent) == extent and stmt.line), None)


def _user_line(ctx: RuleContext, match) -> int | None:
    if match.group("file") and os.path.realpath(match.group("file")) == os.path.realpath(ctx.kernel.file):
        return int(match.group("line"))
    return None


def _first_read_line(func: ir.IRFunc, buffer: str) -> int | None:
    """The line of the first statement, in program order, that reads `buffer`."""
    for stmt, ancestors in ir.walk(func.body):
        if isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr):
            read = any(r.buffer == buffer and r.access != ir.REGION_WRITE for r in ir.regions(stmt.expr))
        else:
            read = any(load[1] == buffer for e in ir.own_exprs(stmt) for load in ir.loads_of(e))
        if read:
            return ir.stmt_line(stmt, ancestors)
    return None


def _first_line(text: str) -> str:
    return "tilelang: " + text.strip().splitlines()[0].removeprefix(": ").strip()
