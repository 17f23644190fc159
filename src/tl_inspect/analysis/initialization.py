"""Which buffers each statement of a kernel reads, accumulates into or writes, in program order: the
def-use walk of the kernel model (`KernelModel.buffer_accesses`), from which it finds each buffer's
first access (what missing-clear reports when it reads uninitialised memory)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tl_inspect.tir import nodes as ir
from tl_inspect.tir.render import render, render_store

# loops whose first iteration a guard such as `if k > 0:` can single out
SEQUENTIAL_LOOPS = ("serial", "unrolled", "while")

# a load in a branch of a select (`T.if_then_else(k == 0, 0, acc[i])`) is a GUARDED_READ: it may never run
READ, GUARDED_READ, ACCUMULATE, WRITE = "read", "guarded-read", "accumulate", "write"

# how a statement touches a buffer, which says how to name it: the store's own target read back
# (`acc[i] = acc[i] + v`), a buffer in a store, a call, an `if` condition, the bounds of a loop, the value
# of a binding, or a tile operator (the gemm and reduce ones accumulate in their own way)
TARGET, STORE, CALL, CONDITION, LOOP_BOUNDS, VALUE, GEMM, REDUCE, TILE_OP = (
    "target",
    "store",
    "call",
    "condition",
    "loop-bounds",
    "value",
    "gemm",
    "reduce",
    "tile-op",
)


@dataclass(frozen=True)
class BufferAccess:
    """One statement touching one buffer."""

    buffer: str
    access: str  # READ | GUARDED_READ | ACCUMULATE | WRITE
    form: str  # TARGET | STORE | CALL | CONDITION | LOOP_BOUNDS | VALUE | GEMM | REDUCE | TILE_OP
    stmt: Any  # an ir statement: its `form` says which, and so which fields it has
    line: int | None
    loop_guarded: bool  # under an `if` that tests a sequential loop around it (`if k > 0:`)
    tile_op: Any = None  # the `kernel.TileOp` of a tile operator statement

    @property
    def statement(self) -> str:
        """The statement as the user wrote it (`acc[i] += v`, `k * 2`), or the tile operator (`reduce_max`)."""
        stmt = self.stmt
        if self.form in (TARGET, STORE):
            return render_store(stmt)
        if self.form == CALL:
            return _short(_render_call(stmt.expr))
        if self.form == CONDITION:
            return _short(render(stmt.cond))
        if self.form == LOOP_BOUNDS:
            return stmt.var
        if self.form == VALUE:
            return _short(render(stmt.value))
        if self.form == GEMM:
            return "gemm"
        if self.form == REDUCE:
            return "reduce_" + (self.tile_op.kind or "*")
        return self.tile_op.op


def buffer_accesses(func: ir.IRFunc, tile_ops) -> tuple:
    """Every buffer access of the function in program order; `tile_ops` are its tile operator calls,
    typed, in the same order."""
    ops = iter(tile_ops)
    found: list[BufferAccess] = []
    for stmt, ancestors in ir.walk(func.body):
        op = next(ops) if isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr) else None
        touched = list(_tile_op_accesses(op) if op is not None else _accesses(stmt))
        if touched:
            line, guarded = ir.stmt_line(stmt, ancestors), _loop_guarded(ancestors)
            found.extend(
                BufferAccess(buffer, access, form, stmt, line, guarded, op) for buffer, access, form in touched
            )
    return tuple(found)


def _loop_guarded(ancestors) -> bool:
    """Whether the statement sits under an `if` that tests a sequential loop around it (`if k > 0:`):
    such a read may be skipped on the first iteration, after which the loop has written the buffer."""
    loop_vars = {a.var for a in ancestors if isinstance(a, ir.For) and a.kind in SEQUENTIAL_LOOPS}
    return any(isinstance(a, ir.If) and ir.vars_of(a.cond) & loop_vars for a in ancestors)


def _accesses(stmt):
    """(buffer, access, form) for each buffer the statement touches, in the order it touches them."""
    if isinstance(stmt, ir.Store):
        touched = list(_expr_accesses(stmt.indices + (stmt.value,)))
        if (stmt.buffer, READ) in touched:
            yield stmt.buffer, ACCUMULATE, TARGET
        for buffer, access in touched:
            if buffer != stmt.buffer or access == GUARDED_READ:
                yield buffer, access, STORE
        yield stmt.buffer, WRITE, TARGET
        return
    form, exprs = {
        ir.Eval: (CALL, lambda: (stmt.expr,)),
        ir.If: (CONDITION, lambda: (stmt.cond,)),
        ir.For: (LOOP_BOUNDS, lambda: (stmt.min, stmt.extent)),
        ir.Let: (VALUE, lambda: (stmt.value,)),
        ir.Attr: (VALUE, lambda: (stmt.value,)),
    }.get(type(stmt), (None, tuple))
    if form is not None:
        yield from ((buffer, access, form) for buffer, access in _expr_accesses(exprs()))


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _expr_accesses(exprs, guarded: bool = False):
    """(buffer, READ | GUARDED_READ | ACCUMULATE | WRITE) for each buffer the expressions touch, in
    evaluation order.

    A load in a branch of a select (`T.if_then_else(k == 0, 0, acc[i])`) may never run: a GUARDED_READ.
    A buffer whose address escapes (`T.address_of`, `buf.data`, `T.access_ptr` with write access) counts
    as written: the callee may initialise it, and nothing here can tell. The walk keeps its own
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

        # defaults bind this item's steps and outputs: the helpers run before the next item is popped
        def visit(sub, inside=guarded, results=outputs, steps=steps):
            steps.append((tuple(sub), inside, results))

        def touch(buffer, access, steps=steps, outputs=outputs):
            steps.append((buffer, WRITE if outputs else access))

        for expr in pending:
            head = expr[0]
            if head == "load":
                visit(expr[2])
                if guarded:  # never a write, even among a call's outputs: it may not run at all
                    steps.append((expr[1], GUARDED_READ))
                else:
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
                visit(expr[2][1 : size + 2])
                visit(expr[2][size + 2 : 2 * size + 2], results=True)
                visit(expr[2][2 * size + 2 :])
            else:
                visit(expr[2])
        work.extend(reversed(steps))


def _render_call(expr) -> str:
    """`T.atomic_add(C_shared[tn], v)` for the `tl.atomic_add_elem_op(tl.access_ptr(...), v)` it lowers to."""
    target = expr[0] == "call" and expr[1].startswith("tl.atomic_") and expr[2] and _read_write_pointer(expr[2][0])
    if not target:
        return render(expr)
    name = expr[1][len("tl.") :].removesuffix("_elem_op").removesuffix("_ret")
    return f"T.{name}({', '.join(render(a) for a in (target,) + expr[2][1:])})"


def _read_write_pointer(expr):
    """The load inside `T.access_ptr(buf[i], 1, mode)` when the access reads and writes, else None."""
    if expr[0] == "call" and expr[1] == "tl.access_ptr" and len(expr[2]) > 2 and expr[2][0][0] == "load":
        return expr[2][0] if ir.int_value(expr[2][2]) == ir.REGION_READ_WRITE else None
    return None


def _tile_op_accesses(op):
    form = GEMM if "gemm" in op.op else REDUCE if op.op == "reduce" else TILE_OP
    for region in op.regions:
        access = {ir.REGION_READ: READ, ir.REGION_WRITE: WRITE}.get(region.access, ACCUMULATE)
        if form == GEMM and access == ACCUMULATE and op.clear_accum is not False:
            # `clear_accum=(k == 0)` zeroes the accumulator on the first iteration
            access = WRITE
        if form == REDUCE and access == WRITE and getattr(op, "clear", True) is False:
            access = ACCUMULATE
        if op.op.startswith("atomic") and access == WRITE:
            # the tile form `T.atomic_add(dst, src)` marks dst written, but adds to what it holds
            access = ACCUMULATE
        yield region.buffer, access, form
