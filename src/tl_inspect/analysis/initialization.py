"""Which buffers a kernel reads before anything initialises them: the first access of every
`T.alloc_fragment`, `T.alloc_local` and `T.alloc_shared` buffer in program order, computed once and
read by missing-clear (which owns reads and accumulations of uninitialised memory) and by
tilelang-warning (which leaves those to it)."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect import ir

# `T.alloc_fragment` and `T.alloc_local` hand out uninitialised registers; `T.alloc_var` starts at its
# initialiser or zero (docs/tilelang-facts.md, I)
UNINITIALISED_SCOPES = ("local.fragment", "local")
# shared memory starts uninitialised too, but only its read-modify-writes are checked (see missing-clear)
SHARED_SCOPES = ("shared", "shared.dyn")
# loops whose first iteration a guard such as `if k > 0:` can single out
SEQUENTIAL_LOOPS = ("serial", "unrolled", "while")
# index of `clear_accum` among the 13 positional slots every gemm tile operator starts with
# (tilelang/language/gemm_op.py, `_gemm_dense_slots`)
GEMM_CLEAR_ACCUM_ARG = 9
# index of `clear` in `T.reduce_*` (tl.tileop.reduce(src, dst, type, dim, clear))
REDUCE_CLEAR_ARG = 4

READ, ACCUMULATE, WRITE = "read", "accumulate", "write"


@dataclass(frozen=True)
class FirstAccess:
    buffer: str
    access: str  # READ | ACCUMULATE | WRITE
    what: str  # how the statement touches it: "`acc[i] += v` reads", "`T.gemm` ... accumulates into"
    stmt: object
    line: int | None


def first_accesses(func: ir.IRFunc) -> dict:
    """buffer -> its first `FirstAccess`, for every fragment, local and shared buffer the kernel
    allocates. A read that a loop guard may skip on the first iteration (`if k > 0:`) does not count."""
    candidates = {
        stmt.buffer for stmt, _ in ir.walk(func.body)
        if isinstance(stmt, ir.Alloc) and func.scope_of(stmt.buffer) in UNINITIALISED_SCOPES + SHARED_SCOPES
    }
    found: dict = {}
    for stmt, ancestors in ir.walk(func.body):
        for buffer, access, what in _accesses(stmt):
            if buffer not in candidates or buffer in found:
                continue
            if access == READ and _loop_guarded(ancestors):
                continue
            found[buffer] = FirstAccess(buffer, access, what, stmt, ir.stmt_line(stmt, ancestors))
    return found


def uninitialised(func: ir.IRFunc, first: FirstAccess) -> bool:
    """Whether a first access reads garbage for certain: an accumulation, or a read of registers.
    Shared memory can be filled by other threads or the copy engine in ways the frontend IR does not
    show, so only a read-modify-write of it is certain."""
    return first.access == ACCUMULATE or (first.access == READ and func.scope_of(first.buffer) not in SHARED_SCOPES)


def _loop_guarded(ancestors) -> bool:
    """Whether the statement sits under an `if` that tests a sequential loop around it (`if k > 0:`):
    such a read may be skipped on the first iteration, after which the loop has written the buffer."""
    loop_vars = {a.var for a in ancestors if isinstance(a, ir.For) and a.kind in SEQUENTIAL_LOOPS}
    return any(isinstance(a, ir.If) and ir.vars_of(a.cond) & loop_vars for a in ancestors)


def _accesses(stmt):
    """(buffer, READ | ACCUMULATE | WRITE, description) for each buffer the statement touches, in the
    order the statement touches them. The description of a READ names the statement, that of an
    ACCUMULATE says how it accumulates."""
    if isinstance(stmt, ir.Store):
        text = f"`{ir.render_store(stmt)}`"
        touched = list(_expr_accesses(stmt.indices + (stmt.value,)))
        if (stmt.buffer, READ) in touched:
            yield stmt.buffer, ACCUMULATE, f"{text} reads"
        for buffer, access in touched:
            if buffer != stmt.buffer:
                yield buffer, access, _verb(text, access)
        yield stmt.buffer, WRITE, ""
    elif isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr):
        yield from _tile_op_accesses(stmt.expr)
    elif isinstance(stmt, ir.Eval):
        text = f"`{_short(_render_call(stmt.expr))}`"
        yield from ((b, a, _verb(text, a)) for b, a in _expr_accesses((stmt.expr,)))
    elif isinstance(stmt, ir.If):
        text = f"the condition `if {_short(ir.render(stmt.cond))}:`"
        yield from ((b, a, _verb(text, a)) for b, a in _expr_accesses((stmt.cond,)))
    elif isinstance(stmt, ir.For):
        text = f"the bounds of the loop over `{stmt.var}`"
        yield from ((b, a, _verb(text, a)) for b, a in _expr_accesses((stmt.min, stmt.extent)))
    elif isinstance(stmt, (ir.Let, ir.Attr)):
        text = f"`{_short(ir.render(stmt.value))}`"
        yield from ((b, a, _verb(text, a)) for b, a in _expr_accesses((stmt.value,)))


def _verb(text: str, access: str) -> str:
    return f"{text} accumulates into" if access == ACCUMULATE else text


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _expr_accesses(exprs, guarded: bool = False):
    """(buffer, READ | ACCUMULATE | WRITE) for each buffer the expressions touch, in evaluation order.

    A load in a branch of a select (`T.if_then_else(k == 0, 0, acc[i])`) may never run, so it is left
    out. A buffer whose address escapes (`T.address_of`, `buf.data`, `T.access_ptr` with write access)
    counts as written: the callee may initialise it, and nothing here can tell. The walk keeps its own
    stack: a long sum is as deep as it has terms."""
    # each work item is (buffer, access) to yield, or (expressions, guarded, outputs) to visit, where
    # `outputs` marks results a call writes (every buffer in them counts as written)
    work: list[tuple] = [(tuple(exprs), guarded, False)]
    while work:
        item = work.pop()
        if isinstance(item[0], str):
            yield item
            continue
        pending, guarded, outputs = item
        steps: list[tuple] = []

        def visit(sub, inside=guarded, results=outputs):
            steps.append((tuple(sub), inside, results))

        def touch(buffer, access):
            steps.append((buffer, WRITE if outputs else access))

        for expr in pending:
            head = expr[0]
            if head == "load":
                visit(expr[2])
                if not guarded:
                    touch(expr[1], READ)
            elif head == "var":
                touch(expr[1], WRITE)
            elif head == "select":
                visit((expr[1],))
                visit(expr[2:], True)
            elif head != "call":
                visit(ir.operands(expr))
            elif expr[1] == "tirx.if_then_else":
                visit(expr[2][:1])
                visit(expr[2][1:], True)
            elif expr[1] in ("tirx.address_of", "tl.access_ptr") and expr[2] and expr[2][0][0] == "load":
                load = expr[2][0]
                visit(load[2])
                mode = ir.int_value(expr[2][2]) if len(expr[2]) > 2 else None
                touch(load[1], READ if mode == ir.REGION_READ else WRITE)
            elif expr[1].startswith("tl.atomic_") and expr[2] and _read_write_pointer(expr[2][0]):
                # `T.atomic_add(dst[i], v)` reads and writes dst[i] through `T.access_ptr(dst[i], 1, 3)`
                load = _read_write_pointer(expr[2][0])
                visit(load[2])
                touch(load[1], ACCUMULATE)
                visit(expr[2][1:])
            elif expr[1] == "tirx.tvm_thread_allreduce" and ir.int_value(expr[2][0]):
                # (size, value * size, condition, result * size, thread vars...): the results are outputs
                size = ir.int_value(expr[2][0])
                visit(expr[2][1:size + 2])
                visit(expr[2][size + 2:2 * size + 2], results=True)
                visit(expr[2][2 * size + 2:])
            else:
                visit(expr[2])
        work.extend(reversed(steps))


def _render_call(expr) -> str:
    """`T.atomic_add(C_shared[tn], v)` for the `tl.atomic_add_elem_op(tl.access_ptr(...), v)` it lowers to."""
    target = expr[0] == "call" and expr[1].startswith("tl.atomic_") and expr[2] and _read_write_pointer(expr[2][0])
    if not target:
        return ir.render(expr)
    name = expr[1][len("tl."):].removesuffix("_elem_op").removesuffix("_ret")
    return f"T.{name}({', '.join(ir.render(a) for a in (target,) + expr[2][1:])})"


def _read_write_pointer(expr):
    """The load inside `T.access_ptr(buf[i], 1, mode)` when the access reads and writes, else None."""
    if expr[0] == "call" and expr[1] == "tl.access_ptr" and len(expr[2]) > 2 and expr[2][0][0] == "load":
        return expr[2][0] if ir.int_value(expr[2][2]) == ir.REGION_READ_WRITE else None
    return None


def _tile_op_accesses(call):
    op = ir.tile_op(call)
    args = call[2]
    for region in ir.regions(call):
        access = {ir.REGION_READ: READ, ir.REGION_WRITE: WRITE}.get(region.access, ACCUMULATE)
        if "gemm" in op and access == ACCUMULATE and not _is_false(args, GEMM_CLEAR_ACCUM_ARG):
            # `clear_accum=(k == 0)` zeroes the accumulator on the first iteration
            access = WRITE
        if op == "reduce" and access == WRITE and _is_false(args, REDUCE_CLEAR_ARG):
            access = ACCUMULATE
        if op.startswith("atomic") and access == WRITE:
            # the tile form `T.atomic_add(dst, src)` marks dst written, but adds to what it holds
            access = ACCUMULATE
        if "gemm" in op:
            name = "gemm"
            what = "`T.gemm` without `clear_accum=True` accumulates into"
        elif op == "reduce":
            name = "reduce_" + (args[2][1].strip("'\"") if len(args) > 2 and args[2][0] == "other" else "*")
            what = f"`T.{name}(..., clear=False)` accumulates into"
        else:
            name = op
            what = f"`T.{op}` reads and writes"
        yield region.buffer, access, f"`T.{name}(...)`" if access == READ else what


def _is_false(args, index: int) -> bool:
    return index < len(args) and ir.int_value(args[index]) == 0
