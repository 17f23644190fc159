"""How wide each global access of a kernel could have been, and why the compiler emitted it narrower.

Shared by the vectorization rules (scalarized-load, lane-dependent-predicate). It reads a kernel's
plain-data artefacts only:
  * the frontend snapshot says what the user wrote: `T.Parallel` nests, `T.copy` regions, explicit
    per-thread statements, their index expressions and predicates;
  * `KernelArtifact.accesses` (the device code) says how many lanes each global access got;
  * the post-`tl.VectorizeLoop` snapshot shows the serial `*_s` loops the vectorizer fell back to.

What the pattern allows is measured on the block's footprint: the flat indices an access touches
across one thread block, enumerated over the loop variables of its nest. An access can be 128-bit
only where that footprint holds aligned runs of contiguous elements; a column read or a single
element per block never can, and stays silent. Why it was not is read from the index expressions:
a lane-dependent bounds check, a strided or non-affine index in the same loop, a misaligned offset or
row length, or too few elements per thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tl_inspect import ir
from tl_inspect.model import STAGE_DEVICE, STAGE_FRONTEND, STAGE_VECTORIZE, KernelArtifact

MAX_VECTOR_BITS = 128
# an access moving less than 1/SIGNIFICANT_SHARE of the bytes of the kernel's largest access (a
# per-row statistic beside a row-wise pass, a group scale beside the quantized data) cannot matter
SIGNIFICANT_SHARE = 8
# footprints are enumerated over at most this many index points; outer loops are cut first
ENUMERATION_LIMIT = 1 << 20
# a run-time length (`T.dynamic("N")`) takes this value when a footprint is enumerated
RUNTIME_VALUE = 4096
SCALARIZED_SUFFIX = "_s"
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


@dataclass(frozen=True)
class Cause:
    # "predicate" | "invariant-store" | "strided" | "interleaved" | "non-affine" | "gather" | "misaligned"
    # | "fragment-layout" | "per-thread" | "serial"
    kind: str
    text: str
    fix: str


@dataclass(frozen=True)
class Verdict:
    """One global access that was emitted narrower than its footprint allowed."""

    ref: MemRef
    unit: Unit
    line: int  # the user line the generated code maps the access to: the statement, else its loop header
    emitted_lanes: int
    expected_lanes: int
    causes: tuple
    cuda_lines: tuple = ()

    @property
    def emitted_bits(self) -> int:
        return self.emitted_lanes * self.ref.bits

    @property
    def expected_bits(self) -> int:
        return self.expected_lanes * self.ref.bits


@dataclass(frozen=True)
class ScalarLoop:
    """A serial `*_s` loop that `tl.VectorizeLoop` produced because an `if` inside varies per lane."""

    var: str
    width: int
    cond: tuple
    buffers: dict  # user line -> global buffers accessed one lane at a time under the `if`


@dataclass
class KernelVectors:
    verdicts: list  # Verdict, flagged accesses only
    scalar_loops: list  # ScalarLoop
    insignificant_lines: set  # lines whose global accesses are all too small to matter


def analyse(kernel: KernelArtifact) -> KernelVectors:
    cached = _CACHE.get(id(kernel))
    if cached is not None and cached[0] is kernel:
        return cached[1]
    result = _Analysis(kernel).run()
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[id(kernel)] = (kernel, result)
    return result


_CACHE: dict = {}


# ---------------------------------------------------------------- analysis of one kernel

class _Analysis:
    def __init__(self, kernel: KernelArtifact):
        self.kernel = kernel
        frontend = kernel.snapshot(STAGE_FRONTEND)
        self.func = frontend.func() if frontend else None
        self.thread_vars: dict[str, int] = {}
        self.block_vars: set[str] = set()
        self.lets: dict[str, tuple] = {}
        # fragments whose layout a tile op fixes (MMA operands, reduction outputs) or that accumulate
        # through an invariant index: what each thread holds of them is not the access pattern's choice
        self.bound_fragments: set[str] = set()
        self.units: list[Unit] = []
        self.fragment_origin: dict[str, Unit] = {}  # the first unit using a fragment fixes its layout
        self.fragment_runs = {lay.name: _run_length(lay.thread_grid) for lay in kernel.layouts
                              if lay.kind == "buffer" and lay.thread_grid}
        self._plans: dict[int, _UnitPlan] = {}

    def plan(self, unit: Unit) -> _UnitPlan:
        if id(unit) not in self._plans:
            self._plans[id(unit)] = _UnitPlan(self, unit)
        return self._plans[id(unit)]

    def run(self) -> KernelVectors:
        scalar_loops = _scalar_loops(self.kernel)
        if self.func is None:
            return KernelVectors([], scalar_loops, set())
        self._collect_names()
        self._visit(self.func.body, ())
        for unit in self.units:
            for fragment in unit.fragments:
                self.fragment_origin.setdefault(fragment, unit)
            if unit.kind == "parallel":
                plan = self.plan(unit)
                self.bound_fragments |= {buffer for buffer, indices in unit.local_stores
                                         if not plan.advances(indices)}
        emitted = _emitted_lanes(self.kernel)
        weights = self._weights()
        heaviest = max(weights.values(), default=0)
        insignificant: dict[int, bool] = {}
        verdicts = []
        by_line = {s_line: loop for loop in scalar_loops for s_line in loop.buffers}
        for unit in self.units:
            plan = self.plan(unit)
            if any(name in self.bound_fragments and plan.advances(indices)
                   for name, indices in unit.fragment_refs):
                continue  # each lane reads a fragment whose layout a tile op or an accumulation fixed
            for ref in unit.refs:
                if not ref.is_global or plan.gathers(ref):
                    continue  # a gathered address is data: nothing says it could be a vector
                # statements that lowering rebuilds (a cast split by DecoupleTypeCast) lose their own line
                # and carry the loop header's instead
                line = next((n for n in (ref.line, unit.line) if (n, ref.buffer, ref.kind) in emitted), None)
                if line is None:
                    continue
                small = weights.get(id(ref), 0) * SIGNIFICANT_SHARE < heaviest
                insignificant[line] = insignificant.get(line, True) and small
                if small:
                    continue
                verdict = plan.judge(ref, line, emitted[(line, ref.buffer, ref.kind)], by_line.get(line))
                if verdict is not None:
                    verdicts.append(verdict)
        return KernelVectors(verdicts, scalar_loops,
                             {line for line, small in insignificant.items() if small})

    # ------------------------------------------------------------ names and units

    def _collect_names(self) -> None:
        for stmt, _ in ir.walk(self.func.body):
            if isinstance(stmt, ir.Let):
                value = stmt.value
                if value[0] == "call" and value[1] == "tl.launch_thread_idx":
                    self.thread_vars[stmt.var] = 1
                else:
                    self.lets[stmt.var] = value
            elif isinstance(stmt, ir.For) and stmt.kind == "thread_binding":
                self.block_vars.add(stmt.var)
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
            self.thread_vars[name] = extents.get(name, 1)
        if not any(v > 1 for v in self.thread_vars.values()):
            sizes = [lay.thread_size for lay in self.kernel.layouts if lay.thread_size]
            if sizes and self.thread_vars:
                self.thread_vars[next(iter(self.thread_vars))] = max(sizes)

    @property
    def threads(self) -> int:
        return math.prod(self.thread_vars.values()) or 1

    def _visit(self, stmts, outer: tuple) -> None:
        for stmt in stmts:
            if isinstance(stmt, ir.For) and stmt.kind == "parallel":
                self.units.append(self._parallel_unit(stmt, outer))
            elif isinstance(stmt, ir.For) and stmt.kind != "thread_binding":
                if _int_or_none(stmt.extent) == 1:
                    # a single iteration (`T.serial(TILE_K)` with TILE_K = 1): its variable is the
                    # constant start, not a run-time offset that could break alignment
                    self.lets[stmt.var] = stmt.min
                loop = (stmt.var, _int_or_none(stmt.extent), stmt.kind)
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
            loops.append((node.var, _int_or_none(node.extent)))
            inner = [s for s in node.body if not isinstance(s, ir.Alloc)]
            if len(inner) == 1 and isinstance(inner[0], ir.For) and inner[0].kind == "parallel":
                node = inner[0]
                continue
            break
        extents = ", ".join(str(e) if e is not None else "?" for _, e in loops)
        unit = Unit("parallel", loop.line, f"T.Parallel({extents})", tuple(loops),
                    _outer_loops(outer))
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
        unit.predicates.extend(self._inline(cond) for cond in _select_conds(value))
        for sub in ir.subexprs(value):
            if sub[0] == "load":
                self._add_ref(unit, "load", sub[1], sub[2], line)
            elif sub[0] == "cast":
                source = _dtype_of(sub[2])
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
        text = f"{buffer}[{', '.join(source_text(i) for i in indices)}]"
        opaque = [_opaque_loads(i) for i in indices]
        unit.refs.append(MemRef(kind, buffer, scope, dtype, line, text,
                                _flatten(tuple(i for i, _ in opaque), info.shape if info else ()),
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
        regions = [(r.buffer, r.start, tuple(_int_or_none(e) for e in r.extents)) for r in ir.regions(stmt.expr)]
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
        unit = Unit("copy", stmt.line, "T.copy", loops, _outer_loops(outer))
        indices = []
        names = iter(name for name, _ in loops)
        for b, e in zip(base, extents):
            indices.append(self._inline(b) if e == 1 else ("add", self._inline(b), ("var", next(names))))
        info = self.func.buffers.get(glob)
        text = f"{glob}[{', '.join(_region_text(b, e) for b, e in zip(base, extents))}]"
        opaque = [_opaque_loads(i) for i in indices]
        unit.refs.append(MemRef(kind, glob, "global", info.dtype if info else "float32", stmt.line, text,
                                _flatten(tuple(i for i, _ in opaque), info.shape if info else ()),
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

    def _weights(self) -> dict:
        """Bits each global access moves per thread block (distinct elements times element width)."""
        weights = {}
        for unit in self.units:
            grid = _Grid(unit.loops, self._env())
            for ref in unit.refs:
                if not ref.is_global:
                    continue
                if ref.gather_vars & {v for v, _ in unit.loops}:
                    elements = _product(e for v, e in unit.loops if e) or 1
                else:
                    footprint = grid.footprint(ref.flat)
                    elements = (len(footprint) if footprint is not None else 1) * grid.cut
                used = ir.vars_of(ref.flat) | ref.gather_vars
                elements *= _product(e for v, e in unit.outer if v in used and e) or 1
                weights[id(ref)] = elements * ref.bits
        return weights

    def _env(self) -> dict:
        env = {v: 0 for v in self.block_vars}
        env.update({v: 0 for v in self.thread_vars})
        return env


class _UnitPlan:
    """Footprints and index shapes of one unit, to judge its global accesses."""

    def __init__(self, analysis: _Analysis, unit: Unit):
        self.analysis = analysis
        self.unit = unit
        self.grid = _Grid(unit.loops, analysis._env())
        self.inner = self._innermost()
        self.footprints = {}
        for ref in unit.refs:
            if self.gathers(ref):
                continue
            points = self.grid.footprint(ref.flat)
            if points is not None:
                old = self.footprints.get(ref.buffer)
                self.footprints[ref.buffer] = points if old is None else np.union1d(old, points)
        self.cap = self._loop_cap()

    def _innermost(self) -> str | None:
        if not self.unit.loops:
            return None
        if self.unit.kind != "thread":
            return self.unit.loops[-1][0]
        # explicit thread indexing: the variable that moves the address least is the lane variable
        best = None
        for ref in self.unit.refs:
            poly = _affine(ref.flat)
            for var, _ in self.unit.loops:
                coeff = _coefficient(poly, var) if poly else None
                if coeff and (best is None or abs(coeff) < best[0]):
                    best = (abs(coeff), var)
        return best[1] if best else self.unit.loops[-1][0]

    def _loop_cap(self) -> int:
        """Lanes the loop can have at most: one vector width for every buffer and cast in it."""
        lanes = [MAX_VECTOR_BITS // r.bits for r in self.unit.refs
                 if not self.gathers(r) and self.inner in ir.vars_of(r.flat)]
        for src, dst, used in self.unit.casts:
            if self.inner not in used:
                continue  # a converted loop invariant is broadcast, it sets no lane count
            lanes.append(MAX_VECTOR_BITS // max(ir.dtype_bits(src), ir.dtype_bits(dst)))
        return max(1, min(lanes)) if lanes else 1

    def potential_lanes(self, ref: MemRef) -> int:
        """Lanes the access could have: its block footprint's aligned runs, or for a transposed view that
        another variable walks contiguously, the full vector that tiling through shared memory gives."""
        widest = MAX_VECTOR_BITS // ref.bits
        lanes = self.contiguous_lanes(ref.buffer, widest)
        if lanes > 1:
            return lanes
        poly = _affine(ref.flat)
        if poly is None or _coefficient(poly, self.inner) in (None, 0, 1, -1):
            return 1
        return widest if any(c in (1, -1) and len(t) == 1 for t, c in poly.items()) else 1

    def gathers(self, ref: MemRef) -> bool:
        """Whether the address of each lane comes from memory (A[Idx[i]]), not from the index algebra."""
        return self.inner is not None and self.inner in ref.gather_vars

    def contiguous_lanes(self, buffer: str, max_lanes: int) -> int:
        points = self.footprints.get(buffer)
        return _aligned_run(points, max_lanes) if points is not None else 1

    def judge(self, ref: MemRef, line: int, lanes: int, scalar_loop: ScalarLoop | None) -> Verdict | None:
        if self.inner is None or self.inner not in ir.vars_of(ref.flat):
            return None  # the same element for every lane: a broadcast, never a vector
        expected = min(self.potential_lanes(ref), self.cap)
        if lanes >= expected:
            return None
        limiters = self._limiters()
        if any(not fixable for _, fixable in limiters):
            return None  # a gather or a strided read with no contiguous footprint: genuinely scalar
        causes = []
        if scalar_loop is not None:
            causes.append(scalar_loop_cause(scalar_loop))
        causes += self._predicate_causes(expected)
        causes += self._invariant_store_causes()
        causes += [cause for cause, _ in limiters]
        causes += self._alignment_causes(ref, expected)
        causes += self._fragment_causes(expected)
        causes += self._per_thread_causes(expected, lanes)
        if not causes:
            return None
        return Verdict(ref, self.unit, line, lanes, expected, tuple(_unique(causes)),
                       _cuda_lines(self.analysis.kernel, ref, line))

    # ------------------------------------------------------------ causes

    def _predicate_causes(self, width: int) -> list:
        causes = []
        for cond in self.unit.predicates:
            for lhs, rhs in _comparisons(cond):
                varying = _affine(("sub", lhs, rhs))
                if varying is None or _coefficient(varying, self.inner) in (None, 0):
                    continue
                problem = _misalignment(varying, self.inner, width, self._fixed_vars())
                if problem is None:
                    continue
                bound = rhs if self.inner in ir.vars_of(lhs) else lhs
                causes.append(Cause(
                    "predicate",
                    f"the bounds check `{source_text(cond)}` varies inside {_article(width)} {width}-wide "
                    f"vector group ({_bound_reason(bound, width)})",
                    _predicate_fix(bound, width),
                ))
        return causes

    def advances(self, indices) -> bool:
        """Whether an index moves with the lane variable, one element per lane step (not `i // 8`)."""
        if self.inner is None:
            return True
        for index in indices:
            poly = _affine(index)
            if poly is not None and _coefficient(poly, self.inner):
                return True
        return False

    def _invariant_store_causes(self) -> list:
        """A store whose index does not advance with the lane variable: tilelang scalarizes the loop."""
        if self.unit.kind != "parallel":
            return []
        stores = [(r.buffer, r.indices) for r in self.unit.refs if r.kind == "store"] + self.unit.local_stores
        causes = []
        for buffer, indices in stores:
            if self.advances(indices):
                continue
            text = f"{buffer}[{', '.join(source_text(i) for i in indices)}]"
            causes.append(Cause(
                "invariant-store",
                f"the loop stores {text}, whose index does not advance with `{self.inner}`, so tilelang "
                f"scalarizes the whole loop (a read-modify-write)",
                "reduce with T.reduce_* over a fragment shaped (groups, group size), or give each lane an "
                "element of its own",
            ))
        return causes

    def _limiters(self) -> list:
        """(cause, fixable) for memory accesses of the loop whose index defeats the vectorizer."""
        found = []
        interleaved_buffers: set[str] = set()
        for ref in self.unit.refs:
            if self.gathers(ref):
                found.append((Cause("gather", f"the loop gathers {ref.text} through a data-dependent index",
                                    "gather in a loop of its own"), False))
                continue
            if self.inner not in ir.vars_of(ref.flat):
                continue
            poly = _affine(ref.flat)
            coeff = _coefficient(poly, self.inner) if poly else None
            if coeff in (1, -1):
                continue
            # a transposed view is fixable by tiling: some other variable (the block index, an outer
            # loop) walks the memory contiguously; a column read or a strided gather is not
            fixable = self.potential_lanes(ref) > 1
            where = "shared memory " if ref.scope.startswith("shared") else ""
            own = self.grid.footprint(ref.flat)
            interleaved = coeff is not None and self.contiguous_lanes(
                ref.buffer, MAX_VECTOR_BITS // ref.bits) > 1 and own is not None and _aligned_run(
                own, MAX_VECTOR_BITS // ref.bits) == 1
            if interleaved:
                if ref.buffer in interleaved_buffers:
                    continue
                interleaved_buffers.add(ref.buffer)
                text = (f"{where}{ref.text} has stride {abs(coeff)} along `{self.inner}`, interleaved with the "
                        f"loop's other {ref.buffer} accesses")
                fix = (f"move {ref.buffer} contiguously (a vectorized T.copy into a fragment or shared tile) and "
                       f"pick the interleaved elements there, or store the data de-interleaved")
                kind = "interleaved"
            elif coeff is None:
                text = f"{where}{ref.text} is not affine in `{self.inner}`"
                fix = ("make the index affine in the innermost loop variable, or copy the tile with an "
                       "aligned T.copy into shared memory and index it there")
                kind = "non-affine"
            else:
                text = (f"{where}{ref.text} has stride {abs(coeff)} along the innermost variable "
                        f"`{self.inner}` (a transposed or strided view)")
                fix = ("keep global accesses contiguous in the innermost variable: transpose inside shared "
                       "memory (Bs[i, j] = As[j, i]) and move tiles with T.copy")
                kind = "strided"
            found.append((Cause(kind, text, fix), fixable))
        return found

    def _fragment_causes(self, width: int) -> list:
        """A fragment whose layout an earlier loop fixed with fewer contiguous elements per thread."""
        causes = []
        for fragment in sorted(self.unit.fragments):
            origin = self.analysis.fragment_origin.get(fragment)
            run = self.analysis.fragment_runs.get(fragment)
            if origin is None or origin is self.unit or run is None or run >= width:
                continue
            origin_plan = self.analysis.plan(origin)
            limiters = origin_plan._limiters()
            if any(not fixable for _, fixable in limiters):
                continue  # the layout comes from a genuinely scalar loop (a gather)
            reasons = [c for c, _ in limiters] + [
                c for r in origin.refs if not origin_plan.gathers(r)
                for c in origin_plan._alignment_causes(r, width)]
            if not reasons:
                continue  # nothing to say about where the narrow layout comes from
            causes.append(Cause(
                "fragment-layout",
                f"fragment {fragment} holds runs of {run} contiguous element{'s' * (run != 1)} per thread, "
                f"a layout fixed by the {origin.header} at line {origin.line}, where {reasons[0].text}",
                reasons[0].fix,
            ))
        return causes

    def _alignment_causes(self, ref: MemRef, width: int) -> list:
        causes = []
        misaligned_rows: dict = {}  # (row length, lanes, bits) -> buffers
        for other in self.unit.refs:
            if self.gathers(other) or self.inner not in ir.vars_of(other.flat):
                continue
            poly = _affine(other.flat)
            if poly is None or _coefficient(poly, self.inner) not in (1, -1):
                continue
            lanes = min(width, MAX_VECTOR_BITS // other.bits)
            if lanes < 2:
                continue
            if _misaligned_rows(other, lanes):
                buffers = misaligned_rows.setdefault((other.shape[-1], lanes, other.dtype), [])
                if other.buffer not in buffers:
                    buffers.append(other.buffer)
                continue
            problem = _misalignment(poly, self.inner, lanes, self._fixed_vars())
            if problem is not None:
                where = "shared memory " if other.scope.startswith("shared") else ""
                causes.append(Cause(
                    "misaligned",
                    f"{where}{other.text} starts {problem}, off the {lanes * other.bits // 8}-byte boundary a "
                    f"{lanes * other.bits}-bit access needs",
                    "keep vector accesses 16-byte aligned: copy an aligned window with T.copy into shared "
                    "memory, shift it there, and write back with T.copy",
                ))
        rows = [_row_cause(row, lanes, dtype, buffers) for (row, lanes, dtype), buffers in misaligned_rows.items()]
        return rows + causes

    def _per_thread_causes(self, width: int, lanes: int) -> list:
        """Too few elements per thread: a thread's share must split into groups of `width` lanes.
        Only the cause when the access reached what the share allows; narrower still has another cause."""
        unit = self.unit
        if unit.kind == "thread":
            return self._explicit_thread_causes(width)
        threads = self.analysis.threads
        total = _product(e for _, e in unit.loops)
        if not total or (unit.kind == "parallel" and total % threads):
            return []  # a ragged loop is finished by a bounds check, judged as a predicate
        if total % (threads * width) == 0 or total % (threads * 2 * lanes) == 0:
            return []
        tile = threads * width
        if unit.kind == "copy":
            return [Cause("per-thread",
                          f"the T.copy moves {total} elements over {threads} threads, which does not split "
                          f"into {width}-element groups per thread",
                          f"copy tiles of a multiple of {threads} x {width} = {tile} elements, or use fewer "
                          f"threads")]
        count = _count(total / threads)
        return [Cause("per-thread",
                      f"{unit.header} over {threads} threads gives each thread {count} "
                      f"element{'s' * (count != 1)}, too few for {width}-lane accesses",
                      f"give each thread {width} contiguous elements: a tile of {tile} elements for "
                      f"{threads} threads (or fewer threads)")]

    def _explicit_thread_causes(self, width: int) -> list:
        """Kernels that index with the thread variables themselves get exactly the loops they write."""
        unit = self.unit
        if unit.serial_var is not None and unit.serial_var == self.inner:
            return [Cause("serial", f"`{unit.serial_var}` is a {unit.header} loop, which the compiler never "
                                    f"vectorizes", f"write the per-thread loop as T.vectorized({width})")]
        if self.inner in self.analysis.thread_vars:
            return [Cause("per-thread",
                          f"consecutive elements go to consecutive threads through `{self.inner}`, so each "
                          f"thread accesses one element at a time",
                          f"give each thread {width} contiguous elements: index with {self.inner} * {width} + k "
                          f"in a T.vectorized({width}) loop")]
        return []

    def _fixed_vars(self) -> set:
        """Variables that are not lane-varying but known: the block indices and the outer loops."""
        return set(self.analysis.block_vars) | {v for v, _ in self.unit.outer} | {
            v for v, _ in self.unit.loops if v != self.inner} | set(self.analysis.thread_vars)


# ---------------------------------------------------------------- emitted code

def _emitted_lanes(kernel: KernelArtifact) -> dict:
    lanes: dict = {}
    for access in kernel.accesses:
        key = (access.line, access.buffer, access.kind)
        lanes[key] = min(lanes.get(key, access.lanes), access.lanes)
    return lanes


def _cuda_lines(kernel: KernelArtifact, ref: MemRef, line: int) -> tuple:
    return tuple(sorted({n for a in kernel.accesses if a.line == line and a.buffer == ref.buffer
                         and a.kind == ref.kind for n in a.cuda_lines}))


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


def _scalar_loops(kernel: KernelArtifact) -> list:
    snapshot = kernel.snapshot(STAGE_VECTORIZE)
    if snapshot is None:
        return []
    loops = []
    for func in snapshot.funcs:
        for stmt, _ in ir.walk(func.body):
            # the vectorizer's fallback loop has no span; a user's own `for x_s in T.serial(...)` has one
            if not (isinstance(stmt, ir.For) and stmt.var.endswith(SCALARIZED_SUFFIX) and stmt.kind == "serial"
                    and stmt.line is None):
                continue
            width = ir.int_value(stmt.extent)
            for inner, ancestors in ir.walk(stmt.body, (stmt,)):
                if isinstance(inner, ir.If) and ir.uses(inner.cond, stmt.var):
                    lines = _global_access_lines(func, inner.then, ancestors + (inner,))
                    cond = inner.cond
                elif isinstance(inner, (ir.Store, ir.Let)):
                    # a bounds check folded into the value: T.if_then_else(idx < N, A[idx], 0)
                    cond = next((c for c in _select_conds(inner.value) if ir.uses(c, stmt.var)), None)
                    lines = _global_access_lines(func, (inner,), ancestors) if cond is not None else {}
                else:
                    continue
                if lines and width:
                    loops.append(ScalarLoop(stmt.var, width, cond, lines))
    return loops


def _select_conds(expr) -> list:
    conds = []
    for sub in ir.subexprs(expr):
        if sub[0] == "select":
            conds.append(sub[1])
        elif sub[0] == "call" and sub[1] == "tirx.if_then_else" and len(sub[2]) == 3:
            conds.append(sub[2][0])
    return conds


def _global_access_lines(func: ir.IRFunc, stmts, ancestors) -> dict:
    """User line -> global buffers accessed there, for the statements under a lane-varying check."""
    found: dict = {}
    for stmt, inner in ir.walk(stmts, ancestors):
        if isinstance(stmt, (ir.Store, ir.Let)):
            names = [load[1] for load in ir.loads_of(stmt.value)]
            if isinstance(stmt, ir.Store):
                names.append(stmt.buffer)
            names = [n for n in names if func.scope_of(n) == "global"]
            line = ir.stmt_line(stmt, inner)
            if names and line is not None:
                found.setdefault(line, [])
                found[line] += [n for n in names if n not in found[line]]
    return found


def scalar_loop_cause(loop: ScalarLoop) -> Cause:
    bound = _bound_of(loop.cond, loop.var)
    return Cause(
        "predicate",
        f"the bounds check `{source_text(loop.cond)}` varies inside the {loop.width}-wide vector group, "
        f"so the vectorizer fell back to a serial `{loop.var}` loop"
        + (f" ({_bound_reason(bound, loop.width)})" if bound is not None else ""),
        _predicate_fix(bound, loop.width),
    )


# ---------------------------------------------------------------- predicates

def _comparisons(cond) -> list:
    """(smaller side, larger side) of every ordering comparison in a condition."""
    out = []
    for sub in ir.subexprs(cond):
        if sub[0] in ("lt", "le"):
            out.append((sub[1], sub[2]))
        elif sub[0] in ("gt", "ge"):
            out.append((sub[2], sub[1]))
    return out


def _bound_of(cond, var: str):
    for lhs, rhs in _comparisons(cond):
        if ir.uses(lhs, var) and not ir.uses(rhs, var):
            return rhs
        if ir.uses(rhs, var) and not ir.uses(lhs, var):
            return lhs
    return None


def _bound_reason(bound, width: int) -> str:
    value = ir.int_value(bound) if bound is not None else None
    if value is not None:
        return f"{value} is not a multiple of {width}"
    if bound is not None and ir.vars_of(bound):
        return f"{source_text(bound)} is only known at run time"
    return f"the bound is not a multiple of {width}"


def _predicate_fix(bound, width: int) -> str:
    value = ir.int_value(bound) if bound is not None else None
    if value is not None:
        padded = -(-value // width) * width
        return (f"pad the length to a multiple of {width} ({value} -> {padded}), or split the loop into an "
                f"aligned body and a separate tail")
    if bound is not None and ir.vars_of(bound):
        name = source_text(bound)
        return (f"if {name} is always a multiple of {width}, say so with T.assume({name} % {width} == 0); "
                f"otherwise pad it, or split the loop into an aligned body and a separate tail")
    return f"pad the length to a multiple of {width}, or split the loop into an aligned body and a tail"


# ---------------------------------------------------------------- alignment

def _misaligned_rows(ref: MemRef, lanes: int) -> bool:
    """Rows whose length is not a known multiple of the vector width start at misaligned addresses."""
    if len(ref.shape) < 2 or not any(ir.vars_of(index) for index in ref.indices[:-1]):
        return False  # a single row: its offset is judged with the rest of the index
    row = ref.shape[-1]
    return not isinstance(row, int) or row % lanes != 0


def _row_cause(row, lanes: int, dtype: str, buffers: list) -> Cause:
    names = _join(buffers)
    bits = lanes * ir.dtype_bits(dtype)
    if isinstance(row, int):
        padded = -(-row // lanes) * lanes
        return Cause(
            "misaligned",
            f"rows of {names} hold {row} {dtype} elements, not a multiple of {lanes}, so most rows start off "
            f"the {bits // 8}-byte boundary a {bits}-bit access needs",
            f"pad the row length to a multiple of {lanes} (e.g. {padded}) and slice the padding off outside "
            f"the kernel",
        )
    name = source_text(row) if isinstance(row, tuple) else str(row)
    return Cause(
        "misaligned",
        f"rows of {names} have the run-time length {name}, so the compiler cannot prove that rows start on a "
        f"{bits // 8}-byte boundary",
        f"if {name} is always a multiple of {lanes}, say so with T.assume({name} % {lanes} == 0); otherwise "
        f"pad the rows",
    )


def _misalignment(poly: dict, inner: str, lanes: int, fixed: set) -> str | None:
    """How the non-lane part of an affine index breaks `lanes`-element alignment, or None if it keeps it."""
    for term, coeff in poly.items():
        if inner in term:
            continue
        if coeff % lanes and any(v not in fixed for v in term):
            return f"at a run-time offset ({' * '.join(term)})"
        if coeff % lanes:
            if not term:
                return f"{coeff % lanes} element{'s' * (coeff % lanes != 1)} past an aligned offset"
            return f"at {' * '.join(term)} * {coeff}, which is not a multiple of {lanes}"
    return None


# ---------------------------------------------------------------- affine index algebra

def _affine(expr) -> dict | None:
    """Polynomial of an index: {sorted tuple of variable names: integer coefficient}; None if it is not
    a sum of products of variables (floordiv, modulo, selects, loads)."""
    head = expr[0]
    if head == "int":
        return {(): expr[1]} if expr[1] else {}
    if head == "var":
        return {(expr[1],): 1}
    if head == "cast":
        return _affine(expr[2])
    if head in ("add", "sub"):
        a, b = _affine(expr[1]), _affine(expr[2])
        if a is None or b is None:
            return None
        out = dict(a)
        for term, coeff in b.items():
            out[term] = out.get(term, 0) + (coeff if head == "add" else -coeff)
        return {t: c for t, c in out.items() if c}
    if head == "mul":
        a, b = _affine(expr[1]), _affine(expr[2])
        if a is None or b is None:
            return None
        out: dict = {}
        for ta, ca in a.items():
            for tb, cb in b.items():
                term = tuple(sorted(ta + tb))
                out[term] = out.get(term, 0) + ca * cb
        return {t: c for t, c in out.items() if c}
    return None


def _coefficient(poly: dict, var: str) -> int | None:
    """Integer coefficient of `var`, 0 if absent, None if it multiplies another variable."""
    coeff = 0
    for term, c in poly.items():
        if var in term:
            if term != (var,):
                return None
            coeff = c
    return coeff


def _flatten(indices: tuple, shape: tuple):
    if len(indices) <= 1 or len(shape) != len(indices):
        return indices[0] if len(indices) == 1 else _linear_sum(indices, shape)
    return _linear_sum(indices, shape)


def _linear_sum(indices: tuple, shape: tuple):
    flat = None
    stride: tuple | None = ("int", 1)
    for d in range(len(indices) - 1, -1, -1):
        term = indices[d] if ir.int_value(stride) == 1 else ("mul", indices[d], stride)
        flat = term if flat is None else ("add", term, flat)
        if d > 0:
            dim = shape[d] if d < len(shape) else 1
            dim_expr = ("int", dim) if isinstance(dim, int) else dim
            stride = ("int", ir.int_value(stride) * dim) if (
                isinstance(dim, int) and ir.int_value(stride) is not None) else ("mul", stride, dim_expr)
    return flat


# ---------------------------------------------------------------- footprints

class _Grid:
    """The index points of a unit's loops, as broadcastable numpy arrays."""

    def __init__(self, loops: tuple, env: dict):
        extents = [e if e else 1 for _, e in loops]
        self.cut = 1
        for k in range(len(extents)):
            if math.prod(extents) <= ENUMERATION_LIMIT:
                break
            self.cut *= extents[k]
            extents[k] = 1
        if math.prod(extents) > ENUMERATION_LIMIT:
            self.cut *= math.ceil(extents[-1] / ENUMERATION_LIMIT)
            extents[-1] = ENUMERATION_LIMIT
        self.env = dict(env)
        for k, ((name, _), extent) in enumerate(zip(loops, extents)):
            shape = [1] * len(loops)
            shape[k] = extent
            self.env[name] = np.arange(extent, dtype=np.int64).reshape(shape)

    def footprint(self, flat) -> np.ndarray | None:
        try:
            values = ir.evaluate(flat, self.env, default=RUNTIME_VALUE)
        except (KeyError, ValueError, ZeroDivisionError, FloatingPointError):
            return None
        return np.unique(np.asarray(values, dtype=np.int64).ravel())


def _run_length(grid) -> int:
    """Typical number of consecutive elements of a row that one thread owns in a fragment layout."""
    runs = []
    for row in grid:
        start = 0
        for k in range(1, len(row) + 1):
            if k == len(row) or row[k] != row[start]:
                runs.append(k - start)
                start = k
    runs.sort()
    return runs[len(runs) // 2] if runs else 1


def _aligned_run(points: np.ndarray, max_lanes: int) -> int:
    """Widest power-of-two vector (at most max_lanes) whose aligned groups cover half the footprint."""
    lanes = max_lanes
    while lanes >= 2:
        _, counts = np.unique(points // lanes, return_counts=True)
        if (counts == lanes).sum() * lanes * 2 >= len(points):
            return lanes
        lanes //= 2
    return 1


# ---------------------------------------------------------------- rendering

_PRECEDENCE = {"or": 1, "and": 2, "lt": 4, "le": 4, "gt": 4, "ge": 4, "eq": 4, "ne": 4,
               "add": 5, "sub": 5, "mul": 6, "div": 6, "floordiv": 6, "floormod": 6, "mod": 6}
_OPERATORS = {"or": "or", "and": "and", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=",
              "add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "floormod": "%", "mod": "%"}


def source_text(expr) -> str:
    """An expression as the user would write it: `bx * 1024 + i + 1`, parentheses only where needed."""
    head = expr[0]
    if head == "cast":
        return source_text(expr[2])
    if head == "load":
        return f"{expr[1]}[{', '.join(source_text(i) for i in expr[2])}]"
    if head == "select":
        return f"T.if_then_else({', '.join(source_text(e) for e in expr[1:])})"
    if head == "call":
        name = expr[1].split(".")[-1]
        return f"T.{name}({', '.join(source_text(a) for a in expr[2])})"
    if head not in _PRECEDENCE:
        return ir.render(expr)
    level = _PRECEDENCE[head]
    left = source_text(expr[1])
    right = source_text(expr[2])
    if _PRECEDENCE.get(_strip_cast(expr[1])[0], 99) < level:
        left = f"({left})"
    # at equal precedence the right operand keeps its parentheses unless regrouping cannot change the
    # value: a + (b - c) == a + b - c, a * (b * c) == a * b * c, but a * (b // c) != a * b // c
    right_head = _strip_cast(expr[2])[0]
    regroupable = right_head == head and head in ("add", "mul", "and", "or") or (
        head == "add" and right_head == "sub")
    if _PRECEDENCE.get(right_head, 99) < level or (_PRECEDENCE.get(right_head) == level and not regroupable):
        right = f"({right})"
    return f"{left} {_OPERATORS[head]} {right}"


def _strip_cast(expr):
    while expr[0] == "cast":
        expr = expr[2]
    return expr


# ---------------------------------------------------------------- small helpers

def _opaque_loads(expr) -> tuple:
    """The expression with each loaded value (Ids[bx]) replaced by an opaque variable, and the variables
    those loads are indexed by."""
    if not isinstance(expr, tuple) or not expr or expr[0] in ("int", "float", "var", "other"):
        return expr, frozenset()
    if expr[0] == "load":
        return ("var", source_text(expr)), frozenset().union(*(ir.vars_of(i) for i in expr[2]))
    gathered: frozenset = frozenset()
    parts = []
    for item in expr:
        if isinstance(item, tuple) and item and isinstance(item[0], str):
            item, used = _opaque_loads(item)
            gathered |= used
        elif isinstance(item, tuple):
            pairs = [_opaque_loads(i) for i in item]
            item = tuple(i for i, _ in pairs)
            gathered = gathered.union(*(g for _, g in pairs))
        parts.append(item)
    return tuple(parts), gathered


def _region_text(base, extent) -> str:
    if extent == 1:
        return source_text(base)
    start = source_text(base)
    return f"{start}:{start} + {extent}" if start != "0" else f"0:{extent}"


def _outer_loops(outer: tuple) -> tuple:
    return tuple((v, e) for v, e, _ in outer)


def _int_or_none(expr):
    return ir.int_value(expr) if isinstance(expr, tuple) else expr


def _product(values) -> int:
    out = 1
    for v in values:
        if v is None:
            return 0
        out *= v
    return out


def _count(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 2)


def _dtype_of(expr) -> str | None:
    if expr[0] == "load":
        return expr[3]
    if expr[0] == "cast":
        return expr[1]
    for sub in ir.subexprs(expr):
        if sub[0] == "load":
            return sub[3]
    return None


def _article(number: int) -> str:
    return "an" if str(number).startswith("8") or number in (11, 18) else "a"


def _join(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _unique(causes) -> list:
    seen, out = set(), []
    for cause in causes:
        if cause.text not in seen:
            seen.add(cause.text)
            out.append(cause)
    return out
