"""The statements of a kernel as the kernel model (`tl_inspect.analysis.kernel`) hands them to rules:
each store with its indices and value resolved and the loops around it, each tile operator call as a
typed value (`Copy`, `Reduce`, `Gemm`, `AtomicAdd`), so that no rule indexes call arguments."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tl_inspect.tir import nodes as ir
from tl_inspect.tir.render import render_store

# `T.reduce_*` lowers to tl.tileop.reduce(src, dst, type, dim, clear)
_REDUCE_TYPE_ARG, _REDUCE_DIM_ARG, _REDUCE_CLEAR_ARG = 2, 3, 4
# index of `clear_accum` among the 13 positional slots every gemm tile operator starts with
# (tilelang/language/gemm_op.py, `_gemm_dense_slots`)
_GEMM_CLEAR_ACCUM_ARG = 9


@dataclass(frozen=True)
class Store:
    """One store of the frontend function, its indices and value with `x = ...` bindings resolved."""

    stmt: ir.Store  # as written
    indices: tuple
    value: ir.Expr
    loops: tuple  # the `ir.For`s around it, outermost first
    conditions: tuple  # conditions of the `if`s around it, resolved
    line: int | None

    @property
    def buffer(self) -> str:
        return self.stmt.buffer

    @property
    def nest(self) -> tuple:
        """The `T.Parallel` loops around the store, outermost first."""
        return tuple(loop for loop in self.loops if loop.kind == "parallel")

    @functools.cached_property
    def accumulates(self) -> bool:
        """`acc[i] = acc[i] + x` (`+=`, or `- x`), or a rescaled running sum `acc[i] = acc[i] * c + x`."""
        value, own = self.value, ("load", self.buffer, self.indices)
        if value[0] not in ("add", "sub"):
            return False
        operands = (value[1], value[2]) if value[0] == "add" else (value[1],)
        return any(
            operand[:3] == own or (operand[0] == "mul" and any(f[:3] == own for f in operand[1:]))
            for operand in operands
        )

    @property
    def repeats(self) -> int | None:
        """Times the loops around the store write one element: the extents of the loops whose variable
        does not index it (None when one of them is not a constant)."""
        return repeats(self.loops, set().union(*map(ir.vars_of, self.indices)))

    @property
    def text(self) -> str:
        """`O[i] += X[i, j]`, as the user wrote it."""
        return render_store(self.stmt)


@dataclass(frozen=True)
class TileOp:
    """A tile operator call (`T.copy`, `T.fill`, ...): its buffer regions in argument order."""

    op: str  # "copy", "gemm_py", "reduce", "fill", ...
    regions: tuple  # ir.Region
    call: ir.Expr
    loops: tuple  # the `ir.For`s around it, outermost first
    line: int | None


@dataclass(frozen=True)
class SourceToDestination(TileOp):
    """A tile operator that reads its first region into its second."""

    @property
    def src(self) -> ir.Region:
        return self.regions[0]

    @property
    def dst(self) -> ir.Region:
        return self.regions[1]


@dataclass(frozen=True)
class Copy(SourceToDestination):
    """`T.copy(src, dst)`."""


@dataclass(frozen=True)
class Reduce(SourceToDestination):
    """`T.reduce_<kind>(src, dst, dim, clear)`."""

    kind: str = ""  # "sum", "max", "abssum", ...; "" when the IR does not say
    dim: int | None = None
    clear: bool = True

    @property
    def terms(self) -> int | None:
        """Values reduced into one output element: the reduced extent, times the loops around a
        `clear=False` reduction that add into the same output (None when not a constant)."""
        extents = self.src.extents
        terms = (
            ir.int_value(extents[self.dim])
            if self.dim is not None and -len(extents) <= self.dim < len(extents)
            else None
        )
        if terms is not None and not self.clear:
            terms = _times(terms, repeats(self.loops, set().union(*map(ir.vars_of, self.dst.start))))
        return terms


@dataclass(frozen=True)
class Gemm(TileOp):
    """`T.gemm(a, b, c, clear_accum=...)`."""

    clear_accum: bool | None = None  # None: decided at run time (`clear_accum=(k == 0)`)

    @property
    def c(self) -> ir.Region:
        return self.regions[2]


@dataclass(frozen=True)
class AtomicAdd(TileOp):
    """The tile form `T.atomic_add(dst, src)` (or another tile atomic): it adds to what `dst` holds."""


def repeats(loops, index_vars: set) -> int | None:
    """The product of the extents of the loops (not thread bindings) whose variable is not in
    `index_vars`: how often they repeat a statement on the same element (None when one is not a constant)."""
    count = 1
    for loop in loops:
        if loop.kind != "thread_binding" and loop.var not in index_vars:
            count = _times(count, ir.int_value(loop.extent))
    return count


def _times(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a * b


def tile_op_of(call, loops: tuple, line) -> TileOp:
    op, regions, args = ir.tile_op(call), tuple(ir.regions(call)), call[2]
    if op == "copy" and len(regions) == 2:
        return Copy(op, regions, call, loops, line)
    if op == "reduce" and len(regions) >= 2:
        kind = args[_REDUCE_TYPE_ARG][1].strip("'\"") if args[_REDUCE_TYPE_ARG][0] == "other" else ""
        return Reduce(
            op,
            regions,
            call,
            loops,
            line,
            kind,
            ir.int_value(args[_REDUCE_DIM_ARG]),
            not _is_false(args, _REDUCE_CLEAR_ARG),
        )
    if "gemm" in op:
        clear = args[_GEMM_CLEAR_ACCUM_ARG] if _GEMM_CLEAR_ACCUM_ARG < len(args) else None
        return Gemm(op, regions, call, loops, line, None if ir.int_value(clear) is None else bool(ir.int_value(clear)))
    if op.startswith("atomic"):
        return AtomicAdd(op, regions, call, loops, line)
    return TileOp(op, regions, call, loops, line)


def _is_false(args, index: int) -> bool:
    return index < len(args) and ir.int_value(args[index]) == 0
