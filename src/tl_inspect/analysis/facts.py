"""The shared facts of one kernel, computed once and read by every rule and by the verdicts.

Built from the frontend snapshot (what the user wrote) and the device snapshot (thread extents):
thread and block variables with their extents, `x = ...` bindings resolved, and the units the
compiler vectorizes together (one `T.Parallel` nest, one `T.copy`, one statement indexed by the
thread variables) with their global references as written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tl_inspect import ir
from tl_inspect.indexing import Grid, flatten, opaque_loads, select_conds
from tl_inspect.model import STAGE_DEVICE, STAGE_FRONTEND, STAGE_VECTORIZE, KernelArtifact

_GEMM_MARKERS = ("gemm", "mma")
_REDUCE_OP = "tl.tileop.reduce"


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

    @property
    def bits(self) -> int:
        return ir.dtype_bits(self.dtype)

    @property
    def is_global(self) -> bool:
        return self.scope == "global"


@dataclass
class Unit:
    """A group of accesses the compiler vectorizes together: one `T.Parallel` nest, one `T.copy`, or
    one statement indexed by the thread variables."""

    kind: str  # "parallel" | "copy" | "thread"
    line: int | None
    header: str  # how the user wrote it: "T.Parallel(128)", "T.copy", "T.serial(8)"
    loops: tuple  # ((var, extent), ...) enumerated, innermost last
    outer: tuple  # ((var, extent), ...) enclosing serial loops, held at their first iteration
    refs: list = field(default_factory=list)
    casts: set = field(default_factory=set)  # (from dtype, to dtype, variables of the converted value)
    fragments: set = field(default_factory=set)
    fragment_refs: list = field(default_factory=list)  # (buffer, indices) of every fragment access
    local_stores: list = field(default_factory=list)  # (buffer, indices) of register and fragment stores
    predicates: list = field(default_factory=list)  # conditions of its `if`s and `T.if_then_else`s
    serial_var: str | None = None  # a user T.serial/T.unroll loop that is the innermost variable



class KernelFacts:
    """Facts of one kernel, built once by `verdicts.judge` and read by every cause it looks for."""

    def __init__(self, kernel: KernelArtifact):
        self.kernel = kernel
        frontend = kernel.snapshot(STAGE_FRONTEND)
        self.func = frontend.func() if frontend else None
        self.thread_vars: dict[str, int] = {}
        self.thread_tags: dict[str, str] = {}
        self.block_vars: set[str] = set()
        self.lets: dict[str, tuple] = {}
        # fragments whose layout a tile op fixes (MMA operands, reduction outputs): what each thread
        # holds of them is not the access pattern's choice
        self.bound_fragments: set[str] = set()
        self.annotated_layouts: set[str] = set()  # buffers whose layout the user fixed (T.annotate_layout)
        self.units: list[Unit] = []
        self.plans: dict = {}  # id(unit) -> its causes.UnitPlan, built on first use
        self.fragment_origin: dict[str, Unit] = {}  # the first unit using a fragment fixes its layout
        self.fragment_runs = {lay.name: lay.run for lay in kernel.layouts if lay.kind == "buffer" and lay.run}
        if self.func is not None:
            self._collect_names()
            self._visit(self.func.body, ())
            for unit in self.units:
                for fragment in unit.fragments:
                    self.fragment_origin.setdefault(fragment, unit)

    def inline(self, expr):
        return self._inline(expr)

    def _collect_names(self) -> None:
        for stmt, _ in ir.walk(self.func.body):
            if isinstance(stmt, ir.Let):
                value = stmt.value
                if value[0] == "call" and value[1] == "tl.launch_thread_idx":
                    self.thread_vars[stmt.var] = 1
                    self.thread_tags[stmt.var] = "threadIdx." + "xyz"[ir.int_value(value[2][0]) or 0]
                else:
                    self.lets[stmt.var] = value
            elif isinstance(stmt, ir.For) and stmt.kind == "thread_binding" and stmt.thread.startswith("threadIdx"):
                # `T.thread_binding(0, 128, thread="threadIdx.x")` inside the kernel: a thread index too
                self.thread_vars[stmt.var] = int_or_none(stmt.extent) or 1
                self.thread_tags[stmt.var] = stmt.thread
            elif isinstance(stmt, ir.For) and stmt.kind == "thread_binding":
                self.block_vars.add(stmt.var)
            elif isinstance(stmt, ir.Block):
                self.annotated_layouts |= set(stmt.annotated_layouts)
            elif isinstance(stmt, ir.Eval) and stmt.expr[0] == "call":
                regions = ir.regions(stmt.expr)
                if any(m in stmt.expr[1] for m in _GEMM_MARKERS):
                    fixed = [region.buffer for region in regions]
                elif stmt.expr[1] == _REDUCE_OP:
                    fixed = [region.buffer for region in regions[1:2]]
                else:
                    fixed = []
                self.bound_fragments |= {b for b in fixed if self.func.scope_of(b).startswith("local")}
        extents = _thread_extents(self.kernel)
        for name in self.thread_vars:
            self.thread_vars[name] = extents.get(name, self.thread_vars[name])
        if not any(v > 1 for v in self.thread_vars.values()):
            sizes = [lay.thread_size for lay in self.kernel.layouts if lay.thread_size]
            if sizes and self.thread_vars:
                self.thread_vars[next(iter(self.thread_vars))] = max(sizes)

    @property
    def threads(self) -> int:
        """Threads per block, as launched (a `T.thread_binding` inside `T.Kernel` re-binds the same index)."""
        device = self.kernel.snapshot(STAGE_DEVICE)
        launched = [ir.int_value(extent) for func in (device.funcs if device else ())
                    for tag, extent in func.launch.items() if tag.startswith("threadIdx")]
        if launched and all(launched):
            return math.prod(launched)
        return math.prod(self.thread_vars.values()) or 1

    def _visit(self, stmts, outer: tuple) -> None:
        for stmt in stmts:
            if isinstance(stmt, ir.For) and stmt.kind == "parallel":
                self.units.append(self._parallel_unit(stmt, outer))
            elif isinstance(stmt, ir.For) and stmt.kind != "thread_binding":
                if int_or_none(stmt.extent) == 1:
                    # a single iteration (`T.serial(TILE_K)` with TILE_K = 1): its variable is the
                    # constant start, not a run-time offset that could break alignment
                    self.lets[stmt.var] = stmt.min
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
        unit = Unit("parallel", loop.line, f"T.Parallel({extents})", tuple(loops),
                    outer_loops(outer))
        self._collect_body(unit, node.body)
        return unit

    def _collect_body(self, unit: Unit, stmts) -> None:
        for stmt, _ in ir.walk(stmts):
            if isinstance(stmt, ir.If):
                unit.predicates.append(self._inline(stmt.cond))
                self._scan_value(unit, stmt.cond, stmt.line)
            elif isinstance(stmt, ir.Store):
                self._add_ref(unit, "store", stmt.buffer, stmt.indices, stmt.line)
                self._scan_value(unit, stmt.value, stmt.line)
            elif isinstance(stmt, ir.Let):
                self._scan_value(unit, stmt.value, stmt.line)

    def _scan_value(self, unit: Unit, value, line) -> None:
        unit.predicates.extend(self._inline(cond) for cond in select_conds(value))
        for sub in ir.subexprs(value):
            if sub[0] == "load":
                self._add_ref(unit, "load", sub[1], sub[2], line)
            elif sub[0] == "cast":
                source = dtype_of(sub[2])
                if source and ir.dtype_bits(source) != ir.dtype_bits(sub[1]):
                    unit.casts.add((source, sub[1], frozenset(ir.vars_of(self._inline(sub[2])))))

    def _add_ref(self, unit: Unit, kind: str, buffer: str, indices, line) -> None:
        info = self.func.buffers.get(buffer)
        scope = info.scope if info else "global"
        if scope.startswith("local"):
            indices = tuple(self._inline(i) for i in indices)
            if scope == "local.fragment":
                unit.fragments.add(buffer)
                unit.fragment_refs.append((buffer, indices))
            if kind == "store":
                unit.local_stores.append((buffer, indices))
            return
        indices = tuple(self._inline(i) for i in indices)
        dtype = info.dtype if info else "float32"
        text = f"{buffer}[{', '.join(ir.render(i) for i in indices)}]"
        opaque = [opaque_loads(i) for i in indices]
        unit.refs.append(MemRef(kind, buffer, scope, dtype, line, text,
                                flatten(tuple(i for i, _ in opaque), info.shape if info else ()),
                                tuple(i for i, _ in opaque), info.shape if info else (),
                                frozenset().union(*(g for _, g in opaque))))

    def _inline(self, expr, depth: int = 0):
        """Replace names bound by `x = ...` with their values, so that indices read as written."""
        if depth > 8 or not isinstance(expr, tuple) or not expr:
            return expr
        if expr[0] == "var" and expr[1] in self.lets:
            return self._inline(self.lets[expr[1]], depth + 1)
        if expr[0] in ("int", "float", "other", "var"):
            return expr
        return tuple(
            self._inline(item, depth + 1) if isinstance(item, tuple) and item and isinstance(item[0], str)
            else tuple(self._inline(i, depth + 1) for i in item) if isinstance(item, tuple)
            else item
            for item in expr
        )

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
        glob, base, extents, kind = (src, src_base, src_ext, "load") if scopes[0] == "global" else (
            dst, dst_base, dst_ext, "store")
        other = dst if kind == "load" else src
        loops = tuple((f"_copy{d}", e) for d, e in enumerate(extents) if e != 1)
        unit = Unit("copy", stmt.line, "T.copy", loops, outer_loops(outer))
        indices = []
        names = iter(name for name, _ in loops)
        for b, e in zip(base, extents):
            indices.append(self._inline(b) if e == 1 else ("add", self._inline(b), ("var", next(names))))
        info = self.func.buffers.get(glob)
        text = f"{glob}[{', '.join(region_text(b, e) for b, e in zip(base, extents))}]"
        opaque = [opaque_loads(i) for i in indices]
        unit.refs.append(MemRef(kind, glob, "global", info.dtype if info else "float32", stmt.line, text,
                                flatten(tuple(i for i, _ in opaque), info.shape if info else ()),
                                tuple(i for i, _ in opaque), info.shape if info else (),
                                frozenset().union(*(g for _, g in opaque))))
        other_info = self.func.buffers.get(other)
        if other_info is not None:
            if other_info.scope == "local.fragment":
                unit.fragments.add(other)
                unit.fragment_refs.append((other, tuple(("var", name) for name, _ in loops)))
            if ir.dtype_bits(other_info.dtype) != ir.dtype_bits(unit.refs[0].dtype):
                unit.casts.add((other_info.dtype, unit.refs[0].dtype, frozenset(name for name, _ in loops)))
        return unit

    def _thread_unit(self, stmt, outer: tuple) -> Unit | None:
        """A statement outside `T.Parallel` that indexes global memory with the thread variables."""
        exprs = [stmt.value] + (list(stmt.indices) if isinstance(stmt, ir.Store) else [])
        used = set().union(*(ir.vars_of(self._inline(e)) for e in exprs))
        threads = [(v, self.thread_vars[v]) for v in self.thread_vars if v in used]
        if not threads:
            return None
        loops = [(v, e) for v, e, kind in outer if v in used and kind in ("serial", "unrolled", "vectorized")]
        serial = [(v, kind) for v, e, kind in outer if v in used and kind in ("serial", "unrolled")]
        unit = Unit("thread", stmt.line, "", tuple(threads) + tuple(loops),
                    tuple((v, e) for v, e, _ in outer if (v, e) not in loops))
        if isinstance(stmt, ir.Store):
            self._add_ref(unit, "store", stmt.buffer, stmt.indices, stmt.line)
        self._scan_value(unit, stmt.value, stmt.line)
        if not any(r.is_global for r in unit.refs):
            return None
        if serial:
            unit.serial_var = serial[-1][0]
            unit.header = f"T.{'serial' if serial[-1][1] == 'serial' else 'unroll'}"
        return unit

    # ------------------------------------------------------------ significance

    def weights(self) -> dict:
        """Bits each global access moves per thread block (distinct elements times element width)."""
        weights = {}
        for unit in self.units:
            grid = Grid(unit.loops, self.env())
            for ref in unit.refs:
                if not ref.is_global:
                    continue
                if ref.gather_vars & {v for v, _ in unit.loops}:
                    elements = product(e for v, e in unit.loops if e) or 1
                else:
                    footprint = grid.footprint(ref.flat)
                    elements = (len(footprint) if footprint is not None else 1) * grid.cut
                used = ir.vars_of(ref.flat) | ref.gather_vars
                elements *= product(e for v, e in unit.outer if v in used and e) or 1
                weights[id(ref)] = elements * ref.bits
        return weights

    def env(self) -> dict:
        env = {v: 0 for v in self.block_vars}
        env.update({v: 0 for v in self.thread_vars})
        return env


def region_text(base, extent) -> str:
    if extent == 1:
        return ir.render(base)
    start = ir.render(base)
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




def _thread_extents(kernel: KernelArtifact) -> dict:
    for stage in (STAGE_VECTORIZE, STAGE_DEVICE):
        snapshot = kernel.snapshot(stage)
        if snapshot is None:
            continue
        found = {}
        for func in snapshot.funcs:
            for stmt, _ in ir.walk(func.body):
                if isinstance(stmt, ir.Attr) and stmt.key == "thread_extent" and ir.int_value(stmt.value):
                    found[stmt.node] = ir.int_value(stmt.value)
        if found:
            return found
    return {}
