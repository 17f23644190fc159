"""A thread's walk over its own row, with its global loads staged through a local vector: the rewrite
that proves a `serial-loop` whose body accumulates (tilelang keeps such a loop serial, `T.vectorized`
or not) and a `lone-thread` walk. The loop over `j` becomes a loop over chunks of one 128-bit vector:
a `T.vectorized` copy of the chunk into a `T.alloc_local((width,), dtype)`, then the original body
over the chunk reading the local; a length the width does not divide keeps its last elements in a
serial tail. The rule examples' GOOD `chunk_sums` is this form, written by hand.

Runs inside the worker only (it needs tilelang).
"""

from __future__ import annotations

from tilelang import tvm  # tilelang first: it puts its TVM on the path
from tvm import tirx
from tvm.tirx.stmt_functor import ir_transform, post_order_visit, substitute

# the span helpers stay rewrites' own: the two modules rebuild nodes the same way
from tl_inspect.inspector.rewrites.primfunc import line_of, rebuilt_block, tvm_base_name, with_span_of

VECTOR_BITS = 128


def stage_loads(func, var: str, line: int | None, width: int):
    """The kernel with the global loads of the loop over `var` around `line` staged `width` elements
    at a time through a local, or None when the loop has no such load or is shorter than `width`."""
    base = tvm_base_name(var)
    params = set(func.buffer_map.values())
    staged: list = []

    def post(node):
        if (
            isinstance(node, tirx.For)
            and not staged
            and node.loop_var.name in (var, base)
            and node.kind in (tirx.ForKind.SERIAL, tirx.ForKind.UNROLLED, tirx.ForKind.VECTORIZED)
            and (line is None or line in _lines(node))
        ):
            built = _staged_loop(node, params, line, width)
            if built is not None:
                staged.append(built)
                return built[0]
        return None

    body = ir_transform(func.body, None, post, ["tirx.For"])
    if not staged:
        return None
    _, locals_ = staged[0]

    def allocate(node):
        if isinstance(node, tirx.SBlock) and node.name_hint == "tilelang_root":
            return rebuilt_block(node, alloc_buffers=[*node.alloc_buffers, *locals_])
        return None

    return func.with_body(ir_transform(body, None, allocate, ["tirx.SBlock"]))


def _staged_loop(loop, params: set, line: int | None, width: int):
    """(the chunked loop, its local buffers), or None when the loop cannot be chunked."""
    if (
        not isinstance(loop.extent, tirx.IntImm)
        or int(loop.extent) < width
        or not (isinstance(loop.min, tirx.IntImm) and int(loop.min) == 0)
    ):
        return None
    loads = _walking_loads(loop, params, width)
    if not loads:
        return None
    chunks, tail = divmod(int(loop.extent), width)
    name = loop.loop_var.name
    outer, lane, step = (tirx.Var(f"{name}_{suffix}", loop.loop_var.dtype) for suffix in ("chunk", "lane", "step"))
    start = outer * width
    locals_, copies = {}, []
    anchor = _statement_at(loop, line)
    for load in loads:
        key = _key(load)
        if key in locals_:
            continue
        local = tirx.decl_buffer((width,), load.buffer.dtype, f"{load.buffer.name}_{name}", scope="local")
        locals_[key] = local
        source = tirx.BufferLoad(load.buffer, [substitute(i, {loop.loop_var: start + lane}) for i in load.indices])
        copy = with_span_of(tirx.BufferStore(local, source, [lane]), anchor)
        copies.append(with_span_of(tirx.For(lane, 0, width, tirx.ForKind.VECTORIZED, copy), loop))

    def from_local(node):
        if isinstance(node, tirx.BufferLoad) and _key(node) in locals_:
            return tirx.BufferLoad(locals_[_key(node)], [step])
        return None

    reading = ir_transform(loop.body, None, from_local, ["tirx.BufferLoad"])
    walk = tirx.For(step, 0, width, tirx.ForKind.SERIAL, substitute(reading, {loop.loop_var: start + step}))
    chunked = with_span_of(tirx.For(outer, 0, chunks, tirx.ForKind.SERIAL, tirx.SeqStmt([*copies, walk])), loop)
    if tail:
        rest = tirx.Var(f"{name}_tail", loop.loop_var.dtype)
        ends = substitute(loop.body, {loop.loop_var: chunks * width + rest})
        chunked = tirx.SeqStmt([chunked, with_span_of(tirx.For(rest, 0, tail, tirx.ForKind.SERIAL, ends), loop)])
    return chunked, list(locals_.values())


def _walking_loads(loop, params: set, width: int) -> list:
    """The loads of parameter buffers the loop walks one element a step along their last dimension,
    whose `width` elements make a 128-bit vector, that the loop never stores to."""
    stored, found = set(), []

    def visit(node):
        if isinstance(node, tirx.BufferStore):
            stored.add(node.buffer)
        if isinstance(node, tirx.BufferLoad) and node.buffer in params:
            *rows, last = node.indices
            step = tvm.arith.detect_linear_equation(last, [loop.loop_var])
            # a step of one element; a symbolic step (`X[r, j * S]`) is no walk to stage
            if (
                step
                and isinstance(step[0], tirx.IntImm)
                and int(step[0]) == 1
                and not any(_uses(i, loop.loop_var) for i in rows)
                and tvm.runtime.DataType(node.buffer.dtype).bits * width == VECTOR_BITS
            ):
                found.append(node)

    post_order_visit(loop.body, visit)
    return [load for load in found if load.buffer not in stored]


def _key(load) -> tuple:
    """Two loads of one element: the same buffer and structurally the same indices."""
    return load.buffer, tuple(str(i) for i in load.indices)


def _uses(expr, var) -> bool:
    return any(v.same_as(var) for v in tirx.analysis.undefined_vars(expr))


def _lines(loop) -> set:
    lines: set = set()
    post_order_visit(
        loop, lambda node: lines.add(line_of(node)) if isinstance(node, (tirx.BufferStore, tirx.Bind)) else None
    )
    return lines


def _statement_at(loop, line: int | None):
    """The statement at `line` in the loop (the staged copy takes its span, so the wide load maps to
    the user's line), else the loop itself."""
    found = []
    post_order_visit(
        loop,
        lambda node: (
            found.append(node) if isinstance(node, (tirx.BufferStore, tirx.Bind)) and line_of(node) == line else None
        ),
    )
    return found[0] if found else loop
