"""Rewrites of a kernel's frontend PrimFunc that remove one cause of a narrow or uncoalesced access: pad a
constant, assume a divisibility, launch other threads, swap loops, shift an index, drop a layout,
vectorize a loop. Done in memory: no source edit, no re-import, no factory call, so it works for
`add_2047 = add(2047)` as well as for factory cases. `lowering` lowers the rewritten kernel again for
the proofs (tl_inspect.analysis.proofs). A cause names the rewrite that removes it
(`tl_inspect.causes`); the rewrites know nothing of causes beyond the plain `Cause` value.

Runs inside the worker only (it needs tilelang).
"""

from __future__ import annotations

import re

from tilelang import tvm  # noqa: F401  (tilelang first: it puts its TVM on the path)
from tilelang.ir import get_buffer_span, get_stmt_span, set_buffer_span, set_stmt_span
from tvm import tirx
from tvm.tirx.stmt_functor import ir_transform


def with_body(func, body):
    return func.with_body(body)


def pad_constant(func, value: int, padded: int):
    """Every occurrence of the integer `value` (buffer shapes, loop extents, bounds) becomes `padded`."""

    def swap_int(node):
        if isinstance(node, tirx.IntImm) and int(node.value) == value:
            return tirx.IntImm(node.dtype, padded)
        return None

    def padded_expr(expr):
        # ir_transform takes statements: an expression goes through an Evaluate
        return ir_transform(tirx.Evaluate(expr), None, swap_int, ["ir.IntImm"]).value

    remap = {}
    for buf in _buffers(func):
        shape, strides = [padded_expr(d) for d in buf.shape], [padded_expr(d) for d in buf.strides]
        if not all(a.same_as(b) for a, b in zip(shape + strides, list(buf.shape) + list(buf.strides))):
            remap[buf] = with_span_of(
                tirx.decl_buffer(
                    shape,
                    buf.dtype,
                    buf.name,
                    data=buf.data,
                    strides=strides,
                    elem_offset=buf.elem_offset,
                    scope=buf.scope(),
                    offset_factor=buf.offset_factor,
                ),
                buf,
            )
    body = ir_transform(func.body, None, swap_int, ["ir.IntImm"])
    return _remap_buffers(func, body, remap)


def pad_rows(func, buffer: str):
    """(the kernel with the shared buffer `buffer` one element longer in its last dimension, the change),
    or None when no such buffer of two or more dimensions with a constant row is declared: the classic
    fix of a bank conflict, which moves each row one bank on."""
    remap = {}
    for buf in _buffers(func):
        if (
            buf.name == buffer
            and buf.scope().startswith("shared")
            and len(buf.shape) >= 2
            and isinstance(buf.shape[-1], tirx.IntImm)
            and not buf.strides
        ):
            shape = [*buf.shape[:-1], tirx.IntImm(buf.shape[-1].dtype, int(buf.shape[-1]) + 1)]
            remap[buf] = with_span_of(tirx.decl_buffer(shape, buf.dtype, buf.name, scope=buf.scope()), buf)
    if not remap:
        return None
    ((old, new),) = remap.items()
    before = ", ".join(str(d) for d in old.shape)
    after = ", ".join(str(d) for d in new.shape)
    return _remap_buffers(func, func.body, remap), f"`{buffer}` declared ({after}) instead of ({before})"


def assume_multiple(func, name: str, width: int):
    """`T.assume(name % width == 0)` at the top of the kernel body."""
    var = next((v for v in _free_vars(func) if v.name == name), None)
    if var is None:
        return None
    fact = tirx.Evaluate(
        tirx.assume(tirx.EQ(tirx.FloorMod(var, tirx.IntImm(var.dtype, width)), tirx.IntImm(var.dtype, 0)))
    )

    def post(node):
        if isinstance(node, tirx.SBlock) and node.name_hint == "tilelang_root":
            return rebuilt_block(node, body=tirx.SeqStmt([fact, node.body]))
        return None

    return with_body(func, ir_transform(func.body, None, post, ["tirx.SBlock"]))


def launch_threads(func, threads: int):
    """Launch `threads` threads instead of the kernel's own count (T.Kernel's `threads=`)."""

    def post(node):
        if isinstance(node, tirx.SBlock) and "tl.launch_threads" in node.annotations:
            annotations = dict(node.annotations)
            annotations["tl.launch_threads"] = [threads, 1, 1]
            return rebuilt_block(node, annotations=annotations)
        return None

    return with_body(func, ir_transform(func.body, None, post, ["tirx.SBlock"]))


def swap_parallel_nest(func, line: int):
    """Swap the two loops of the `T.Parallel(a, b)` nest at `line`, so the other variable is innermost."""
    swapped = []

    def post(node):
        if (
            isinstance(node, tirx.For)
            and node.kind == tirx.ForKind.PARALLEL
            and isinstance(node.body, tirx.For)
            and node.body.kind == tirx.ForKind.PARALLEL
            and line_of(node) == line
            and not swapped
        ):
            inner = node.body
            swapped.append(True)
            moved = with_span_of(
                tirx.For(
                    node.loop_var, node.min, node.extent, node.kind, inner.body, node.thread_binding, node.annotations
                ),
                inner,
            )
            return with_span_of(
                tirx.For(
                    inner.loop_var, inner.min, inner.extent, inner.kind, moved, inner.thread_binding, inner.annotations
                ),
                node,
            )
        return None

    body = ir_transform(func.body, None, post, ["tirx.For"])
    return with_body(func, body) if swapped else None


def swap_thread_dimensions(func):
    """threadIdx.x and threadIdx.y exchanged: the launch extents and every `T.get_thread_binding(0/1)`."""

    def post(node):
        if isinstance(node, tirx.Call) and getattr(node.op, "name", "") == "tl.launch_thread_idx":
            dim = int(node.args[0])
            if dim in (0, 1):
                return tirx.Call(node.dtype, node.op, [tirx.IntImm(node.args[0].dtype, 1 - dim)])
        if isinstance(node, tirx.SBlock) and "tl.launch_threads" in node.annotations:
            x, y, *rest = list(node.annotations["tl.launch_threads"])
            annotations = dict(node.annotations)
            annotations["tl.launch_threads"] = [y, x, *rest]
            return rebuilt_block(node, annotations=annotations)
        return None

    return with_body(func, ir_transform(func.body, None, post, ["tirx.Call", "tirx.SBlock"]))


def shift_index(func, buffer: str, shift: int):
    """Every access of `buffer` moved `shift` elements back along its last dimension."""

    def moved(indices):
        return list(indices[:-1]) + [indices[-1] - shift]

    def post(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer.name == buffer:
            return tirx.BufferLoad(node.buffer, moved(node.indices))
        if isinstance(node, tirx.BufferStore) and node.buffer.name == buffer:
            return with_span_of(tirx.BufferStore(node.buffer, node.value, moved(node.indices)), node)
        return None

    return with_body(func, ir_transform(func.body, None, post, ["tirx.BufferLoad", "tirx.BufferStore"]))


def drop_layout_annotation(func, buffer: str):
    """The kernel without the user's layout for `buffer`: tilelang infers one instead."""

    def post(node):
        if isinstance(node, tirx.SBlock) and "layout_map" in node.annotations:
            layouts = {key: value for key, value in node.annotations["layout_map"].items() if key.name != buffer}
            annotations = {key: value for key, value in node.annotations.items() if key != "layout_map"}
            if layouts:
                annotations["layout_map"] = layouts
            return rebuilt_block(node, annotations=annotations)
        return None

    return with_body(func, ir_transform(func.body, None, post, ["tirx.SBlock"]))


def vectorize_loop(func, var: str, line: int | None):
    """The serial loop over `var` around the statement at `line` turned into a vectorized one. `var` is
    the name tl-inspect gave the variable, which is TVM's plus `_1`, `_2`... where names repeat."""
    base = tvm_base_name(var)

    def post(node):
        if (
            isinstance(node, tirx.For)
            and node.kind == tirx.ForKind.SERIAL
            and node.loop_var.name in (var, base)
            and (line is None or _holds_line(node, line))
        ):
            return with_span_of(
                tirx.For(
                    node.loop_var,
                    node.min,
                    node.extent,
                    tirx.ForKind.VECTORIZED,
                    node.body,
                    node.thread_binding,
                    node.annotations,
                ),
                node,
            )
        return None

    return with_body(func, ir_transform(func.body, None, post, ["tirx.For"]))


def tvm_base_name(var: str) -> str:
    """TVM's name of a variable tl-inspect calls `var`: it adds `_1`, `_2`... where names repeat."""
    return re.sub(r"_\d+$", "", var)


def _holds_line(node, line: int) -> bool:
    found = []

    def visit(inner):
        if isinstance(inner, tirx.BufferStore) and line_of(inner) == line:
            found.append(inner)

    tirx.stmt_functor.post_order_visit(node, visit)
    return bool(found)


# ---------------------------------------------------------------- helpers


def rebuilt_block(node, body=None, annotations=None, alloc_buffers=None):
    """The TIR block `node` with the parts given replaced, keeping its Python line."""
    return with_span_of(
        tirx.SBlock(
            node.iter_vars,
            node.reads,
            node.writes,
            node.name_hint,
            node.body if body is None else body,
            node.init,
            node.alloc_buffers if alloc_buffers is None else alloc_buffers,
            node.match_buffers,
            node.annotations if annotations is None else annotations,
        ),
        node,
    )


def with_span_of(new, old):
    """`new` with `old`'s Python line. tilelang keeps spans outside the node's attributes, so a node built
    by a constructor has none; without them the variant's accesses would not map to the user's lines."""
    span = get_buffer_span(old) if isinstance(old, tirx.Buffer) else get_stmt_span(old)
    if span is not None:
        (set_buffer_span if isinstance(old, tirx.Buffer) else set_stmt_span)(new, span)
    return new


def line_of(node) -> int | None:
    """The Python line of a TIR statement, None when tilelang kept no span for it."""
    span = get_stmt_span(node)
    return int(span.line) if span is not None else None


def _buffers(func) -> list:
    found = list(func.buffer_map.values())

    def visit(node):
        if isinstance(node, tirx.SBlock):
            found.extend(node.alloc_buffers)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return found


def _free_vars(func) -> list:
    """The run-time shape variables of the parameters (`T.dynamic("N")`)."""
    found = []
    for buf in func.buffer_map.values():
        for dim in buf.shape:
            if isinstance(dim, tirx.PrimExpr) and not isinstance(dim, tirx.IntImm):
                found.extend(v for v in tirx.analysis.undefined_vars(dim) if v not in found)
    return found


def _remap_buffers(func, body, remap: dict):
    """`body` and the parameters with every buffer in `remap` replaced by its new declaration."""
    if not remap:
        return with_body(func, body)

    def post(node):
        if isinstance(node, tirx.BufferStore) and node.buffer in remap:
            return with_span_of(tirx.BufferStore(remap[node.buffer], node.value, node.indices), node)
        if isinstance(node, tirx.BufferLoad) and node.buffer in remap:
            return tirx.BufferLoad(remap[node.buffer], node.indices)
        if isinstance(node, tirx.SBlock) and any(b in remap for b in node.alloc_buffers):
            return rebuilt_block(node, alloc_buffers=[remap.get(b, b) for b in node.alloc_buffers])
        return None

    body = ir_transform(body, None, post, ["tirx.BufferStore", "tirx.BufferLoad", "tirx.SBlock"])
    buffer_map = {param: remap.get(buf, buf) for param, buf in func.buffer_map.items()}
    return tirx.PrimFunc(func.params, body, func.ret_type, buffer_map, func.attrs)
