"""The layouts LayoutInference fixed, as plain data: each fragment's and shared buffer's layout and each
`T.Parallel` loop's, with the thread grid of a small fragment and how many consecutive elements a thread
owns (runs inside the worker only)."""

from __future__ import annotations

import numpy as np
from tilelang.ir import get_buffer_span, get_stmt_span
from tilelang.layout import Fragment
from tvm import tirx
from tvm.tirx.stmt_functor import post_order_visit

from tl_inspect.inspector.lowering.convert import SpanFilter, expr
from tl_inspect.model import Layout
from tl_inspect.tir.evaluate import evaluate
from tl_inspect.tir.indexing import run_length

# a fragment is drawn as a thread grid only when it is this small
MAX_GRID_ELEMENTS = 64 * 64
# how far fragments are mapped to tell how many consecutive elements each thread owns
RUN_ELEMENTS = 1 << 18


def fixed_layouts(mod, spans: SpanFilter) -> tuple:
    """Fragment/shared buffer layouts and `T.Parallel` loop layouts from the module after LayoutInference."""
    found: list[Layout] = []
    seen: set = set()

    def visit(node):
        if isinstance(node, tirx.SBlock) and "layout_map" in node.annotations:
            for buf, layout in node.annotations["layout_map"].items():
                if not isinstance(buf, tirx.Buffer) or buf.name in seen:
                    continue
                seen.add(buf.name)
                found.append(_layout("buffer", buf.name, buf.scope(), spans.line(get_buffer_span(buf)), layout))
        if isinstance(node, tirx.For) and "parallel_loop_layout" in node.annotations:
            found.append(
                _layout(
                    "loop",
                    node.loop_var.name,
                    "",
                    spans.line(get_stmt_span(node)),
                    node.annotations["parallel_loop_layout"],
                )
            )

    for func in mod.functions.values():
        if isinstance(func, tirx.PrimFunc):
            post_order_visit(func.body, visit)
    return tuple(found)


def _const(value) -> int | None:
    try:
        return int(value)
    except TypeError:
        return None


def _layout(kind: str, name: str, scope: str, line, layout) -> Layout:
    # a layout tilelang builds for a store it wraps in `T.parallel(1)` (a fragment read inside a
    # `T.serial` loop) has extents in the serial loop's variable: those are kept as None
    input_shape = tuple(_const(x) for x in layout.get_input_shape())
    output_shape = tuple(_const(x) for x in layout.get_output_shape())
    if isinstance(layout, Fragment):
        constant = None not in input_shape
        return Layout(
            kind=kind,
            name=name,
            scope=scope,
            line=line,
            layout_type="Fragment",
            input_shape=input_shape,
            output_shape=output_shape,
            thread=str(layout.forward_thread),
            index=tuple(str(i) for i in layout.forward_index),
            replicate=_const(layout.replicate_size) or 1,
            thread_size=_const(layout.get_thread_size()) or 0,
            thread_grid=_thread_grid(layout, input_shape) if constant else None,
            run=_run(layout, input_shape) if constant else 0,
        )
    index = tuple(str(i) for i in layout.get_forward_index()) if hasattr(layout, "get_forward_index") else ()
    return Layout(
        kind=kind,
        name=name,
        scope=scope,
        line=line,
        layout_type=type(layout).__name__,
        input_shape=input_shape,
        output_shape=output_shape,
        index=index,
    )


def _thread_grid(fragment, shape: tuple, limit: int = MAX_GRID_ELEMENTS):
    """Owning thread (replica 0) of each element, as rows, for fragments of at most `limit` elements."""
    names = [v.name for v in fragment.get_forward_vars()]
    # a replicated fragment's first forward var is the replica index; draw replica 0
    env = {name: 0 for name in names if name.startswith("_rep")}
    in_vars = [name for name in names if name not in env]
    if not 1 <= len(shape) <= 2 or _product(shape) > limit or len(in_vars) != len(shape):
        return None
    rows, cols = (1, shape[0]) if len(shape) == 1 else shape
    row_index, col_index = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    env.update(zip(in_vars, [col_index] if len(shape) == 1 else [row_index, col_index]))
    try:
        grid = np.broadcast_to(evaluate(expr(fragment.forward_thread), env), (rows, cols))
    except (KeyError, ValueError, FloatingPointError):
        return None
    return tuple(tuple(int(t) for t in row) for row in grid)


def _run(fragment, shape: tuple) -> int:
    """Typical number of consecutive elements of a row one thread owns (0 when it cannot be told)."""
    grid = _thread_grid(fragment, shape, RUN_ELEMENTS)
    return run_length(grid) if grid else 0


def _product(shape) -> int:
    out = 1
    for s in shape:
        out *= s
    return out
