"""Convert TVM TIR objects into the plain data of `tl_inspect.tir.nodes` (runs inside the worker only)."""

from __future__ import annotations

import os

import tvm
from tilelang.ir import get_buffer_span, get_stmt_span
from tvm import tirx

from tl_inspect.tir import nodes as ir

_BINARY = {
    tirx.Add: "add",
    tirx.Sub: "sub",
    tirx.Mul: "mul",
    tirx.Div: "div",
    tirx.FloorDiv: "floordiv",
    tirx.FloorMod: "floormod",
    tirx.Mod: "mod",
    tirx.Min: "min",
    tirx.Max: "max",
    tirx.EQ: "eq",
    tirx.NE: "ne",
    tirx.LT: "lt",
    tirx.LE: "le",
    tirx.GT: "gt",
    tirx.GE: "ge",
    tirx.And: "and",
    tirx.Or: "or",
}
_FOR_KINDS = {
    tirx.ForKind.SERIAL: "serial",
    tirx.ForKind.PARALLEL: "parallel",
    tirx.ForKind.VECTORIZED: "vectorized",
    tirx.ForKind.UNROLLED: "unrolled",
    tirx.ForKind.THREAD_BINDING: "thread_binding",
}


class SpanFilter:
    """Keeps spans that point into the user's file; everything else counts as no span."""

    def __init__(self, user_file: str):
        self.user_file = os.path.realpath(user_file)
        self._seen: dict[str, bool] = {}

    def line(self, span) -> int | None:
        if span is None:
            return None
        name = span.source_name.name
        if name not in self._seen:
            self._seen[name] = os.path.realpath(name) == self.user_file
        return int(span.line) if self._seen[name] and span.line > 0 else None

    def is_user_file(self, name: str) -> bool:
        if name not in self._seen:
            self._seen[name] = os.path.realpath(name) == self.user_file
        return self._seen[name]


class _Names:
    """One name per variable object in a function: TVM lets two different variables share a name (a
    second `T.thread_binding` of threadIdx.x and the loop var under it are both `v`), and plain data
    only has names. The first keeps its name, the next get `_1`, `_2`, as TVMScript prints them."""

    def __init__(self):
        self.by_var: dict = {}
        self.taken: set = set()

    def __call__(self, var) -> str:
        name = self.by_var.get(var)
        if name is None:
            name, n = var.name, 0
            while name in self.taken:
                n += 1
                name = f"{var.name}_{n}"
            self.taken.add(name)
            self.by_var[var] = name
        return name


_names: _Names | None = None  # set while one function is converted


def var_name(var) -> str:
    return _names(var) if _names is not None else var.name


def expr(node) -> ir.Expr:
    if isinstance(node, tirx.Var):
        return ("var", var_name(node))
    if isinstance(node, tirx.IntImm):
        return ("int", int(node.value))
    if isinstance(node, tirx.FloatImm):
        return ("float", float(node.value))
    if isinstance(node, tirx.BufferLoad):
        return ("load", node.buffer.name, tuple(expr(i) for i in node.indices), str(node.dtype))
    if isinstance(node, tirx.Ramp):
        return ("ramp", expr(node.base), expr(node.stride), int(node.lanes))
    if isinstance(node, tirx.Broadcast):
        return ("bcast", expr(node.value), int(node.lanes))
    if isinstance(node, tirx.Cast):
        return ("cast", str(node.dtype), expr(node.value))
    if isinstance(node, tirx.Select):
        return ("select", expr(node.condition), expr(node.true_value), expr(node.false_value))
    if isinstance(node, tirx.Not):
        return ("not", expr(node.a))
    op = _BINARY.get(type(node))
    if op is not None:
        return (op, expr(node.a), expr(node.b))
    if isinstance(node, tirx.Call):
        name = node.op.name if hasattr(node.op, "name") else str(node.op)
        return ("call", name, tuple(_call_arg(a) for a in node.args))
    if isinstance(node, tirx.StringImm):
        return ("other", repr(node.value))
    return ("other", str(node))


def _call_arg(node) -> ir.Expr:
    if isinstance(node, tirx.BufferRegion):
        return (
            "call",
            "region",
            (("other", node.buffer.name),)
            + tuple(
                ("ramp", expr(r.min), ("int", 1), 0) if not _is_one(r.extent) else expr(r.min) for r in node.region
            ),
        )
    if isinstance(node, tvm.ir.PrimExpr):
        return expr(node)
    return ("other", str(node))


def _is_one(extent) -> bool:
    return isinstance(extent, tirx.IntImm) and int(extent.value) == 1


class _Converter:
    def __init__(self, spans: SpanFilter):
        self.spans = spans
        self.buffers: dict[str, ir.BufferInfo] = {}

    def buffer(self, buf) -> str:
        if buf.name not in self.buffers:
            shape = tuple(int(s.value) if isinstance(s, tirx.IntImm) else expr(s) for s in buf.shape)
            self.buffers[buf.name] = ir.BufferInfo(
                name=buf.name,
                scope=buf.scope(),
                dtype=str(buf.dtype),
                shape=shape,
                line=self.spans.line(get_buffer_span(buf)),
            )
        return buf.name

    def body(self, stmt) -> tuple:
        if stmt is None:
            return ()
        if isinstance(stmt, tirx.SeqStmt):
            out: list = []
            for s in stmt.seq:
                out.extend(self.body(s))
            return tuple(out)
        return self.stmt(stmt)

    def stmt(self, s) -> tuple:
        line = self.spans.line(get_stmt_span(s))
        if isinstance(s, tirx.For):
            return (
                ir.For(
                    var=var_name(s.loop_var),
                    kind=_FOR_KINDS.get(s.kind, str(s.kind)),
                    min=expr(s.min),
                    extent=expr(s.extent),
                    body=self.body(s.body),
                    line=line,
                    has_parallel_layout="parallel_loop_layout" in s.annotations,
                    thread=str(s.thread_binding.thread_tag) if s.thread_binding is not None else "",
                    stages=_stages(s),
                ),
            )
        if isinstance(s, tirx.IfThenElse):
            return (
                ir.If(cond=expr(s.condition), then=self.body(s.then_case), orelse=self.body(s.else_case), line=line),
            )
        if isinstance(s, tirx.BufferStore):
            return (
                ir.Store(
                    buffer=self.buffer(s.buffer),
                    indices=tuple(expr(i) for i in s.indices),
                    value=expr(s.value),
                    dtype=str(s.value.dtype),
                    line=line,
                ),
            )
        if isinstance(s, tirx.Evaluate):
            return (ir.Eval(expr=expr(s.value), line=line),)
        if isinstance(s, tirx.SBlockRealize):
            return self.body(s.block)
        if isinstance(s, tirx.SBlock):
            return (self._block(s, line),)
        if isinstance(s, (tirx.DeclBuffer, tirx.AllocBuffer)):
            alloc = ir.Alloc(self.buffer(s.buffer), line or self.spans.line(get_buffer_span(s.buffer)))
            return (alloc,) + self.body(getattr(s, "body", None))
        if isinstance(s, tirx.AttrStmt):
            return (self._attr(s, line),)
        if isinstance(s, tirx.Bind):
            return (ir.Let(var=var_name(s.var), value=expr(s.value), body=(), line=line),)
        if isinstance(s, tirx.LetStmt if hasattr(tirx, "LetStmt") else ()):
            return (ir.Let(var=var_name(s.var), value=expr(s.value), body=self.body(s.body), line=line),)
        if isinstance(s, tirx.While):
            return (
                ir.For(
                    var="while",
                    kind="while",
                    min=("int", 0),
                    extent=expr(s.condition),
                    body=self.body(s.body),
                    line=line,
                ),
            )
        if isinstance(s, tirx.AssertStmt):
            return self.body(getattr(s, "body", None))
        body = getattr(s, "body", None)
        return self.body(body) if isinstance(body, tirx.Stmt) else ()

    def _block(self, s, line) -> ir.Block:
        allocs = tuple(ir.Alloc(self.buffer(b), self.spans.line(get_buffer_span(b))) for b in s.alloc_buffers)
        init = self.body(s.init) if s.init is not None else ()
        # T.annotate_layout keys its map by the buffer's data variable (a Buffer after LayoutInference)
        annotated = tuple(
            key.name for key in s.annotations.get("layout_map", {}) if isinstance(key, (tirx.Var, tirx.Buffer))
        )
        return ir.Block(body=allocs + init + self.body(s.body), line=line, annotated_layouts=annotated)

    def _attr(self, s, line) -> ir.Attr:
        node = (
            var_name(s.node.var)
            if isinstance(s.node, tirx.IterVar)
            else (var_name(s.node) if isinstance(s.node, tirx.Var) else "")
        )
        tag = str(s.node.thread_tag) if isinstance(s.node, tirx.IterVar) else ""
        return ir.Attr(
            key=str(s.attr_key), node=node, value=_attr_value(s.value), body=self.body(s.body), line=line, tag=tag
        )


def _attr_value(value) -> ir.Expr:
    return expr(value) if isinstance(value, tvm.ir.PrimExpr) else ("other", str(value)[:200])


def convert_func(name: str, func: tirx.PrimFunc, spans: SpanFilter, script: bool = True) -> ir.IRFunc:
    global _names
    conv = _Converter(spans)
    _names = _Names()
    try:
        for buf in func.buffer_map.values():
            conv.buffer(buf)
        body = conv.body(func.body)
        attrs = func.attrs or {}
        launch = {str(tag): expr(extent) for tag, extent in (attrs.get("thread_extent") or {}).items()}
    finally:
        _names = None
    dyn_shared = attrs.get("dyn_shared_memory_buf")
    return ir.IRFunc(
        name=name,
        buffers=dict(conv.buffers),
        body=body,
        script=func.script() if script else "",
        launch=launch,
        dyn_shared_bytes=int(dyn_shared) if dyn_shared is not None else 0,
    )


def convert_module(stage: str, mod, spans: SpanFilter, script: bool = True) -> ir.Snapshot:
    """`script=False` leaves out the TVMScript text, which only `--dump` shows (a proof's rebuilt kernel
    is never shown)."""
    if isinstance(mod, tirx.PrimFunc):
        return ir.Snapshot(stage, (convert_func(str(mod.attrs["global_symbol"]), mod, spans, script),))
    funcs = tuple(
        convert_func(gv.name_hint, func, spans, script)
        for gv, func in mod.functions.items()
        if isinstance(func, tirx.PrimFunc)
    )
    return ir.Snapshot(stage, funcs)


def _stages(loop) -> int | None:
    """`num_stages` of a `T.Pipelined` loop, None for another loop."""
    value = loop.annotations.get("num_stages") if "num_stages" in loop.annotations else None
    return (
        int(value)
        if value is not None and hasattr(value, "value")
        else (int(value) if isinstance(value, int) else None)
    )
