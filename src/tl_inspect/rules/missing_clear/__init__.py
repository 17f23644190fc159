"""TLV004 missing-clear: an accumulator updated, or a buffer read, before anything initialises it."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tl_inspect.analysis import initialization as access
from tl_inspect.analysis.kernel import SHARED_SCOPES
from tl_inspect.files.cst import call_name
from tl_inspect.fixes import fix_from
from tl_inspect.model import SAFE, Fix
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.render import render

REDUCE_FIX = (
    "Initialise `{buffer}` before the first `T.{reduce}(..., clear=False)` with the reduction's "
    "identity (`T.clear({buffer})` for a sum, `T.fill({buffer}, -T.infinity(dtype))` for a max), or drop "
    "`clear=False`"
)
READ_FIX = (
    "Initialise `{buffer}` before its first read with the value the first iteration expects: "
    "`T.fill({buffer}, -T.infinity(dtype))` for a running max, `T.clear({buffer})` for a running sum, "
    "or a `T.copy` into it"
)
SHARED_FIX = (
    "Zero the shared accumulator before the first atomic add or `+=`: `T.clear({buffer})`, or a store "
    "of 0 by one thread (`if tk == 0: {buffer}[tn] = 0`) ahead of the accumulation"
)


@dataclass(frozen=True)
class UninitialisedRead(Violation):
    """A register buffer read before anything writes it."""

    buffer: str
    operation: str  # how the statement touches it: an `initialization` form ("call", "condition", ...)
    statement: str  # the statement as written, or the tile operator's name
    scope: str
    declared_line: int | None

    def message(self) -> str:
        return (
            f"`{self.buffer}` is read by {_reader(self.operation, self.statement)} before anything writes it: "
            f"the {_kind(self.scope)}{_declared(self.declared_line)} starts uninitialised, so the read returns "
            f"garbage"
        )

    def fix_title(self) -> str:
        return READ_FIX.format(buffer=self.buffer)


@dataclass(frozen=True)
class UninitialisedAccumulation(Violation):
    """A register or shared buffer accumulated into before anything writes it."""

    buffer: str
    operation: str
    statement: str
    scope: str
    declared_line: int | None

    def message(self) -> str:
        what, declared = _accumulator(self.operation, self.statement), _declared(self.declared_line)
        if self.scope in SHARED_SCOPES:
            return (
                f"{what} shared buffer `{self.buffer}`{declared} before anything writes it: shared memory "
                f"starts uninitialised, so the accumulation starts from garbage"
            )
        return (
            f"{what} {_kind(self.scope)} `{self.buffer}`{declared} before anything writes it: "
            f"the registers start uninitialised, so the accumulation starts from garbage"
        )

    def fix_title(self) -> str | None:
        if self.scope in SHARED_SCOPES:
            return SHARED_FIX.format(buffer=self.buffer)
        if self.operation == access.REDUCE:
            return REDUCE_FIX.format(buffer=self.buffer, reduce=self.statement)
        gemm = ", or `clear_accum=True` on the first `T.gemm`" if self.operation == access.GEMM else ""
        return f"Initialise the accumulator first: `T.clear({self.buffer})` or `T.fill({self.buffer}, 0)`{gemm}"

    def autofix(self, source, finding) -> Fix | None:
        """`clear_accum=True` on a `T.gemm` that runs once (in no loop of its kernel), else the identity
        of the accumulation stored into the buffer right after its declaration: in a K loop
        `clear_accum=True` would clear the sum of the earlier iterations each time."""
        if self.operation == access.GEMM:
            cleared = _clearing_gemm(source, finding.line)
            if cleared is not None:
                return fix_from(SAFE, source.text, cleared)
        identity = _identity(self.operation, self.statement)
        declaration = source.statement(self.declared_line) if self.declared_line else None
        if identity is None or declaration is None:
            return None
        allocation = _allocation(declaration.body[0], self.buffer)
        if allocation is None:
            return None
        language = source.code(allocation.func.value)  # the user's alias of tilelang.language, `T`
        dtypes = [
            a.value for i, a in enumerate(allocation.args) if (a.keyword.value == "dtype" if a.keyword else i == 1)
        ]
        if identity == "0":
            call = f"{language}.clear({self.buffer})"
        elif dtypes:
            call = f"{language}.fill({self.buffer}, {identity.format(T=language, dtype=source.code(dtypes[0]))})"
        else:
            return None
        return fix_from(SAFE, source.text, source.inserted_after(declaration, call))


class MissingClear(Rule):
    """An accumulator is updated with `+=` (or `T.gemm`), or a buffer read, before anything initialises it.

    ## What it does
    Follows every `T.alloc_fragment` / `T.alloc_local` buffer through the kernel in program order and
    flags its first access when that access reads it: an accumulation (`acc[i] += ...` in `T.Parallel`,
    `T.serial`, `T.Pipelined`, a `T.gemm` without `clear_accum=True`, a `T.reduce_*(..., clear=False)`)
    or a plain read (`T.copy(scores_max, scores_max_prev)`, `acc_o[i, j] *= scale[i]`), when no
    `T.clear`, `T.fill`, `T.copy`, plain store, gemm or reduce output has written the buffer before.
    A buffer whose address is handed to a call (`T.address_of`, `buf.data`, a writing `T.access_ptr`)
    or that receives a `T.tvm_thread_allreduce` result counts as written. Reads in a branch of
    `T.if_then_else`, or under an `if` that tests a sequential loop (`if k > 0:`), may be skipped on
    the first iteration and are not flagged. `T.alloc_var` scalars start initialised and are not flagged.

    `T.alloc_shared` buffers are checked only for a read-modify-write (`T.atomic_add(S[i], v)`,
    `S[i] += v`) that is their first access: other threads, TMA or asynchronous copies may fill shared
    memory in ways a plain read cannot tell apart.

    ## Why is this wrong?
    Fragments and locals are registers: `T.alloc_fragment((M, N), "float32")` becomes
    `float acc[128];` in CUDA with no initialiser, so the sum starts from whatever the registers held
    and the result is garbage that changes from run to run. A running max copied to `scores_max_prev`
    before its first `T.fill(scores_max, -T.infinity(...))` feeds garbage into the first rescale
    (`exp2(garbage - max)` can be `inf`, and `inf * 0` is NaN). Shared memory is not zeroed either: a
    split-K reduction that `T.atomic_add`s into `C_shared` without zeroing it first adds onto what the
    previous block left there. tilelang's own `tl.VerifyBufferInit` prints 'Buffer read before
    initialization' on stderr, but without a source line for the `T.Parallel` case, not for shared
    memory, and with false alarms on `T.alloc_var`.

    ## Example
    ```python
    acc = T.alloc_fragment((block_M, block_N), "float32")
    for k in T.serial(num_k):
        for i, j in T.Parallel(block_M, block_N):
            acc[i, j] += A[i, k * block_N + j]
    ```
    ```python
    for k in T.Pipelined(num_k):
        T.copy(scores_max, scores_max_prev)  # nothing has written scores_max yet
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
    ```
    ```python
    C_shared = T.alloc_shared((BLOCK_N,), "float32")
    T.atomic_add(C_shared[tn], partial[0])
    ```

    ## Use instead
    ```python
    acc = T.alloc_fragment((block_M, block_N), "float32")
    T.clear(acc)
    for k in T.serial(num_k):
        for i, j in T.Parallel(block_M, block_N):
            acc[i, j] += A[i, k * block_N + j]
    ```
    or `T.gemm(A_s, B_s, acc, clear_accum=(k == 0))` / `T.gemm(..., clear_accum=True)` for a single
    GEMM; `T.fill(scores_max, -T.infinity(accum_dtype))` before the loop for a running max; and
    `if tk == 0: C_shared[tn] = 0` (or `T.clear(C_shared)`) before the first atomic add.

    `--fix` offers one safe fix per finding: `clear_accum=True` on a `T.gemm` that no loop of its
    kernel repeats (a single GEMM); otherwise the buffer's initialisation right after its declaration:
    `T.clear(acc)` before a sum (a `T.gemm` in a K loop included, where `clear_accum=True` would clear
    the earlier iterations' sum each time), `T.fill(acc, -T.infinity(dtype))` before a
    `T.reduce_max(..., clear=False)`. A plain read gets no fix: the value it must start from is the
    algorithm's.

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md): a split-K style `acc[i, j] += ...` over 16 steps
      into a 128x128 fragment gave 3157 of 16384 wrong outputs without `T.clear`, none with it.
    - docs/tilelang-facts.md, G.4 (`splitk_noclear`: `float acc[128];` then `acc += ...` in CUDA) and I
      (`T.alloc_var` starts at zero).
    - tilelang examples: flash attention forward initialises `scores_max` with
      `T.fill(scores_max, -T.infinity(accum_dtype))`; the split-K GEMV zeroes `C_shared[tn]` under
      `if tk == 0:` before `T.atomic_add`.
    """

    code = "TLV004"
    slug = "missing-clear"
    severity = "error"
    flags = (
        "a fragment or local buffer read or accumulated into (`+=`, `T.gemm`, `T.reduce_*(clear=False)`) "
        "before anything initialises it, or a shared buffer whose first access is an atomic add"
    )
    measured = "3157 of 16384 outputs wrong"
    fix = (
        "Initialise the accumulator first: `T.clear(acc)` or `T.fill(acc, 0)`, or `clear_accum=True` on "
        "the first `T.gemm`"
    )

    def check(self, ctx: RuleContext) -> None:
        for first in ctx.facts.uninitialised_reads.values():
            if not first.line:
                continue
            buffer = ctx.facts.buffer(first.buffer)
            violation = UninitialisedRead if first.access == access.READ else UninitialisedAccumulation
            evidence = [f"TIR: {_render_stmt(first.stmt)}"]
            if buffer.cuda_declaration:
                evidence.append(f"CUDA: {buffer.cuda_declaration[1]}")
            if any(f"`{buffer.name}` is read before anything writes it" in w for w in ctx.kernel.warnings):
                evidence.append(f"tilelang VerifyBufferInit: `{buffer.name}` is read before anything writes it")
            ctx.report(
                first.line,
                violation(buffer.name, first.form, first.statement, buffer.scope, buffer.declared_line),
                evidence=evidence,
            )


def _clearing_gemm(source, line: int) -> str | None:
    """The file with `clear_accum=True` on the `T.gemm` of `line` where no loop of its kernel repeats it."""
    statement = source.statement(line)
    call = statement.body[0].value if statement is not None and isinstance(statement.body[0], cst.Expr) else None
    kernel = source.kernel_block(line)
    if not (isinstance(call, cst.Call) and call_name(call) == "gemm") or kernel is None:
        return None
    if any(source.start(loop) > source.start(kernel) for loop in source.enclosing((cst.For, cst.While), line)):
        return None
    given = next((a for a in call.args if a.keyword and a.keyword.value == "clear_accum"), None)
    if given is not None:  # `clear_accum=False`: its value made True where it stands
        return source.replaced(given, given.with_changes(value=cst.Name("True")))
    flag = cst.Arg(
        cst.Name("True"),
        keyword=cst.Name("clear_accum"),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return source.replaced(call, call.with_changes(args=[*args, flag]))


def _identity(operation: str, statement: str) -> str | None:
    """The value an accumulation must start from, as `T.fill` takes it ("0" for a sum); None where it
    is not a sum, a max or a min (`s[i] = s[i] * a + b` starts from whatever its algorithm says)."""
    if operation == access.TARGET and "+=" in statement or operation == access.GEMM or statement == "atomic_add":
        return "0"
    return (
        {
            "reduce_sum": "0",
            "reduce_abssum": "0",
            "reduce_max": "-{T}.infinity({dtype})",
            "reduce_absmax": "0",
            "reduce_min": "{T}.infinity({dtype})",
        }.get(statement)
        if operation == access.REDUCE
        else None
    )


def _allocation(statement, buffer: str):
    """The `T.alloc_*(shape, dtype)` call of `buffer = T.alloc_*(...)`, else None."""
    if not (
        isinstance(statement, cst.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0].target, cst.Name)
        and statement.targets[0].target.value == buffer
    ):
        return None
    call = statement.value
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call_name(call).startswith("alloc_"):
        return call
    return None


def _reader(operation: str, statement: str) -> str:
    """How a message names the statement that reads the buffer."""
    if operation == access.CONDITION:
        return f"the condition `if {statement}:`"
    if operation == access.LOOP_BOUNDS:
        return f"the bounds of the loop over `{statement}`"
    if operation in (access.GEMM, access.REDUCE, access.TILE_OP):
        return f"`T.{statement}(...)`"
    return f"`{statement}`"


def _accumulator(operation: str, statement: str) -> str:
    """How a message names the statement that accumulates into the buffer, with its verb."""
    if operation == access.TARGET:
        return f"`{statement}` reads"
    if operation == access.GEMM:
        return "`T.gemm` without `clear_accum=True` accumulates into"
    if operation == access.REDUCE:
        return f"`T.{statement}(..., clear=False)` accumulates into"
    if operation == access.TILE_OP:
        return f"`T.{statement}` reads and writes"
    return f"{_reader(operation, statement)} accumulates into"


def _kind(scope: str) -> str:
    return "fragment" if scope == "local.fragment" else "local buffer"


def _declared(line: int | None) -> str:
    return f" (declared on line {line})" if line else ""


def _render_stmt(stmt) -> str:
    if isinstance(stmt, ir.Store):
        return f"{stmt.buffer}[{', '.join(render(i) for i in stmt.indices)}] = {render(stmt.value)}"
    if isinstance(stmt, ir.Eval):
        return render(stmt.expr)
    return type(stmt).__name__
