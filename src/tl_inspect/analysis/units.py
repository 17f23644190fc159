"""The units the compiler vectorizes together (one `T.Parallel` nest, one `T.copy`, one statement
indexed by the thread variables) with their global references as written: the part of the kernel
model (`tl_inspect.analysis.kernel`) that the verdicts read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from tl_inspect.tir import nodes as ir
from tl_inspect.tir.indexing import Grid, flatten, opaque_loads, select_conds
from tl_inspect.tir.render import render


@dataclass(frozen=True)
class MemRef:
    """One load or store of a global or shared buffer, as written in the user's file."""

    kind: str  # "load" | "store"
    buffer: str
    scope: str
    dtype: str
    line: int | None
    text: str  # "A[bx * 1024 + i + 1]"
    flat: tuple  # flattened index; a value loaded from memory (Ids[bx]) stands in as an opaque variable
    indices: tuple = ()
    shape: tuple = ()
    gather_vars: frozenset = frozenset()  # variables the loaded index values depend on
    # bits a global access moves per thread block (distinct elements times element width), 0 for others
    block_bits: int = 0

    @property
    def bits(self) -> int:
        return ir.dtype_bits(self.dtype)

    @property
    def is_global(self) -> bool:
        return self.scope == "global"


# eq=False: two units written alike are still two units, each with its own plan (`KernelModel.plan`)
@dataclass(frozen=True, eq=False)
class Unit:
    """A group of accesses the compiler vectorizes together: one `T.Parallel` nest, one `T.copy`, or
    one statement indexed by the thread variables."""

    kind: str  # "parallel" | "copy" | "thread"
    line: int | None
    header: str  # how the user wrote it: "T.Parallel(128)", "T.copy", "T.serial(8)"
    loops: tuple  # ((var, extent), ...) enumerated, innermost last
    outer: tuple  # ((var, extent), ...) enclosing serial loops, held at their first iteration
    refs: tuple = ()
    casts: frozenset = frozenset()  # (from dtype, to dtype, variables of the converted value)
    fragments: frozenset = frozenset()
    fragment_refs: tuple = ()  # (buffer, indices) of every fragment access
    local_stores: tuple = ()  # (buffer, indices) of register and fragment stores
    predicates: tuple = ()  # conditions of its `if`s and `T.if_then_else`s
    serial_var: str | None = None  # a user T.serial/T.unroll loop that is the innermost variable
    staged: bool = False  # it moves global memory into shared memory (a barrier then waits for it)


@dataclass
class _Parts:
    """What a unit collects while its statements are walked; frozen into the `Unit` at the end."""

    refs: list = field(default_factory=list)
    casts: set = field(default_factory=set)
    fragments: set = field(default_factory=set)
    fragment_refs: list = field(default_factory=list)
    local_stores: list = field(default_factory=list)
    predicates: list = field(default_factory=list)


class UnitBuilder:
    """Walks the frontend function once and collects its units."""

    def __init__(self, func: ir.IRFunc, resolve, thread_vars: dict, env: dict):
        self.func = func
        self.resolve = resolve
        self.thread_vars = thread_vars
        self.env = env
        self.units: list[Unit] = []

    def build(self) -> tuple:
        self._visit(self.func.body, ())
        return tuple(self.units)

    def _unit(
        self,
        parts: _Parts,
        kind: str,
        line,
        header: str,
        loops: tuple,
        outer: tuple,
        serial_var: str | None = None,
        staged: bool = False,
    ) -> Unit:
        grid = Grid(loops, self.env)
        refs = tuple(_weighed(ref, grid, loops, outer) for ref in parts.refs)
        staged = staged or any(r.kind == "store" and r.scope.startswith("shared") for r in refs)
        return Unit(
            kind,
            line,
            header,
            loops,
            outer,
            refs,
            frozenset(parts.casts),
            frozenset(parts.fragments),
            tuple(parts.fragment_refs),
            tuple(parts.local_stores),
            tuple(parts.predicates),
            serial_var,
            staged,
        )

    def _visit(self, stmts, outer: tuple) -> None:
        for stmt in stmts:
            if isinstance(stmt, ir.For) and stmt.kind == "parallel":
                self.units.append(self._parallel_unit(stmt, outer))
            elif isinstance(stmt, ir.For) and stmt.kind != "thread_binding":
                loop = (stmt.var, int_or_none(stmt.extent), stmt.kind)
                self._visit(stmt.body, outer + (loop,))
            elif isinstance(stmt, ir.Eval):
                unit = self._copy_unit(stmt, outer)
                if unit is not None:
                    self.units.append(unit)
            elif isinstance(stmt, (ir.Store, ir.Let)):
                unit = self._thread_unit(stmt, outer)
                if unit is not None:
                    self.units.append(unit)
                self._visit(ir.children(stmt), outer)
            elif isinstance(stmt, ir.If):
                self._visit(stmt.then + stmt.orelse, outer)
            else:
                self._visit(ir.children(stmt), outer)

    def _parallel_unit(self, loop: ir.For, outer: tuple) -> Unit:
        loops = []
        node = loop
        while True:
            loops.append((node.var, int_or_none(node.extent)))
            inner = [s for s in node.body if not isinstance(s, ir.Alloc)]
            if len(inner) == 1 and isinstance(inner[0], ir.For) and inner[0].kind == "parallel":
                node = inner[0]
                continue
            break
        extents = ", ".join(str(e) if e is not None else "?" for _, e in loops)
        parts = _Parts()
        self._collect_body(parts, node.body)
        return self._unit(parts, "parallel", loop.line, f"T.Parallel({extents})", tuple(loops), outer_loops(outer))

    def _collect_body(self, parts: _Parts, stmts) -> None:
        for stmt, _ in ir.walk(stmts):
            if isinstance(stmt, ir.If):
                parts.predicates.append(self.resolve(stmt.cond))
                self._scan_value(parts, stmt.cond, stmt.line)
            elif isinstance(stmt, ir.Store):
                self._add_ref(parts, "store", stmt.buffer, stmt.indices, stmt.line)
                self._scan_value(parts, stmt.value, stmt.line)
            elif isinstance(stmt, ir.Let):
                self._scan_value(parts, stmt.value, stmt.line)

    def _scan_value(self, parts: _Parts, value, line) -> None:
        parts.predicates.extend(self.resolve(cond) for cond in select_conds(value))
        for sub in ir.subexprs(value):
            if sub[0] == "load":
                self._add_ref(parts, "load", sub[1], sub[2], line)
            elif sub[0] == "cast":
                source = dtype_of(sub[2])
                if source and ir.dtype_bits(source) != ir.dtype_bits(sub[1]):
                    parts.casts.add((source, sub[1], frozenset(ir.vars_of(self.resolve(sub[2])))))

    def _add_ref(self, parts: _Parts, kind: str, buffer: str, indices, line) -> None:
        info = self.func.buffers.get(buffer)
        scope = info.scope if info else "global"
        indices = tuple(self.resolve(i) for i in indices)
        if scope.startswith("local"):
            if scope == "local.fragment":
                parts.fragments.add(buffer)
                parts.fragment_refs.append((buffer, indices))
            if kind == "store":
                parts.local_stores.append((buffer, indices))
            return
        dtype = info.dtype if info else "float32"
        text = f"{buffer}[{', '.join(render(i) for i in indices)}]"
        parts.refs.append(_memref(kind, buffer, scope, dtype, line, text, indices, info))

    def _copy_unit(self, stmt: ir.Eval, outer: tuple) -> Unit | None:
        if stmt.expr[0] != "call" or stmt.expr[1] != "tl.tileop.copy":
            return None
        regions = [(r.buffer, r.start, tuple(int_or_none(e) for e in r.extents)) for r in ir.regions(stmt.expr)]
        if len(regions) != 2:
            return None
        (src, src_base, src_ext), (dst, dst_base, dst_ext) = regions
        scopes = [self.func.scope_of(src), self.func.scope_of(dst)]
        if "global" not in scopes:
            return None
        glob, base, extents, kind = (
            (src, src_base, src_ext, "load") if scopes[0] == "global" else (dst, dst_base, dst_ext, "store")
        )
        other = dst if kind == "load" else src
        loops = tuple((f"_copy{d}", e) for d, e in enumerate(extents) if e != 1)
        parts = _Parts()
        indices = []
        names = iter(name for name, _ in loops)
        for b, e in zip(base, extents):
            indices.append(self.resolve(b) if e == 1 else ("add", self.resolve(b), ("var", next(names))))
        info = self.func.buffers.get(glob)
        text = f"{glob}[{', '.join(region_text(b, e) for b, e in zip(base, extents))}]"
        ref = _memref(kind, glob, "global", info.dtype if info else "float32", stmt.line, text, indices, info)
        parts.refs.append(ref)
        other_info = self.func.buffers.get(other)
        if other_info is not None:
            if other_info.scope == "local.fragment":
                parts.fragments.add(other)
                parts.fragment_refs.append((other, tuple(("var", name) for name, _ in loops)))
            if ir.dtype_bits(other_info.dtype) != ir.dtype_bits(ref.dtype):
                parts.casts.add((other_info.dtype, ref.dtype, frozenset(name for name, _ in loops)))
        staged = kind == "load" and other_info is not None and other_info.scope.startswith("shared")
        return self._unit(parts, "copy", stmt.line, "T.copy", loops, outer_loops(outer), staged=staged)

    def _thread_unit(self, stmt, outer: tuple) -> Unit | None:
        """A statement outside `T.Parallel` that indexes global memory with the thread variables."""
        exprs = [stmt.value] + (list(stmt.indices) if isinstance(stmt, ir.Store) else [])
        used = set().union(*(ir.vars_of(self.resolve(e)) for e in exprs))
        threads = [(v, self.thread_vars[v]) for v in self.thread_vars if v in used]
        if not threads:
            return None
        loops = [(v, e) for v, e, kind in outer if v in used and kind in ("serial", "unrolled", "vectorized")]
        # a T.vectorized loop that accumulates is lowered serially too (tilelang warns)
        serial = [(v, kind) for v, e, kind in outer if v in used and kind in ("serial", "unrolled", "vectorized")]
        parts = _Parts()
        if isinstance(stmt, ir.Store):
            self._add_ref(parts, "store", stmt.buffer, stmt.indices, stmt.line)
        self._scan_value(parts, stmt.value, stmt.line)
        if not any(r.is_global for r in parts.refs):
            return None
        header = f"T.{LOOP_WORDS[serial[-1][1]]}" if serial else ""
        return self._unit(
            parts,
            "thread",
            stmt.line,
            header,
            tuple(threads) + tuple(loops),
            tuple((v, e) for v, e, _ in outer if (v, e) not in loops),
            serial[-1][0] if serial else None,
        )


LOOP_WORDS = {"serial": "serial", "unrolled": "unroll", "vectorized": "vectorized"}


def _memref(kind, buffer, scope, dtype, line, text, indices, info) -> MemRef:
    opaque = [opaque_loads(i) for i in indices]
    shape = info.shape if info else ()
    return MemRef(
        kind,
        buffer,
        scope,
        dtype,
        line,
        text,
        flatten(tuple(i for i, _ in opaque), shape),
        tuple(i for i, _ in opaque),
        shape,
        frozenset().union(*(g for _, g in opaque)),
    )


def _weighed(ref: MemRef, grid: Grid, loops: tuple, outer: tuple) -> MemRef:
    """The reference with the bits it moves per thread block, the weight of its verdict."""
    if not ref.is_global:
        return ref
    if ref.gather_vars & {v for v, _ in loops}:
        elements = product(e for v, e in loops if e) or 1
    else:
        footprint = grid.footprint(ref.flat)
        elements = (len(footprint) if footprint is not None else 1) * grid.cut
    used = ir.vars_of(ref.flat) | ref.gather_vars
    elements *= product(e for v, e in outer if v in used and e) or 1
    return dataclasses.replace(ref, block_bits=elements * ref.bits)


def region_text(base, extent) -> str:
    if extent == 1:
        return render(base)
    start = render(base)
    return f"{start}:{start} + {extent}" if start != "0" else f"0:{extent}"


def outer_loops(outer: tuple) -> tuple:
    return tuple((v, e) for v, e, _ in outer)


def int_or_none(expr):
    return ir.int_value(expr) if isinstance(expr, tuple) else expr


def product(values) -> int:
    out = 1
    for v in values:
        if v is None:
            return 0
        out *= v
    return out


def count(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 2)


def dtype_of(expr) -> str | None:
    if expr[0] == "load":
        return expr[3]
    if expr[0] == "cast":
        return expr[1]
    for sub in ir.subexprs(expr):
        if sub[0] == "load":
            return sub[3]
    return None
