"""The padding data flow of padded-denominator: which tiles hold padded data or sums over it.

A tile is padded when it is filled through a mask (`T.if_then_else(i < N, X[..], 0)`) or copied from
beyond the end of a tensor; the padding follows copies, element-wise stores and sums (`T.reduce_sum`,
`+=`), and every division of the kernel is collected with its denominator resolved.
"""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.tir import nodes as ir
from tl_inspect.tir.evaluate import evaluate, substitute
from tl_inspect.tir.indexing import affine, coefficient, select_conds
from tl_inspect.tir.render import render

SUM_REDUCTIONS = ("sum", "abssum")
# `T.reduce_*` arguments: tl.tileop.reduce(src, dst, type, dim, clear)
REDUCE_TYPE_ARG, REDUCE_DIM_ARG = 2, 3


@dataclass(frozen=True)
class Padding:
    """A length `padded` that a masked or out-of-bounds range covers, of which only `true` are real."""

    padded: int
    true: int | None  # None: a runtime length (`T.dynamic`), possibly smaller
    limit: str = ""  # the runtime length, as TIR text

    def times(self, count: int) -> Padding:
        """The padding of `count` such ranges summed together."""
        true = self.true * count if self.true is not None else None
        return Padding(self.padded * count, true, self.limit)

    def describe(self) -> str:
        if self.true is not None:
            return f"only {self.true} of those {self.padded} elements are real"
        return f"the real length `{self.limit}` is only known at run time and can be shorter"


@dataclass(frozen=True)
class Division:
    line: int
    expr: ir.Expr  # the division (or multiplication by a reciprocal)
    numerator: ir.Expr  # with let-bound variables resolved
    denominator: ir.Expr
    length: int | None  # the constant denominator as an integer length
    rounded_up: bool  # the denominator is `ceildiv(n, c) * c` of a runtime n


class PaddingFlow:
    """Which buffers hold padded data or sums over it, and every division of the kernel."""

    def __init__(self, func: ir.IRFunc):
        self.func = func
        self.padded_dims: dict[tuple, set] = {}  # (buffer, dim) -> {Padding}
        self.padded_sums: dict[str, set] = {}  # buffer -> {Padding}
        self.sums: set[str] = set()
        self.divisions: list[Division] = []
        self.lets: dict[str, ir.Expr] = {}
        for stmt, ancestors in ir.walk(func.body):
            extents = _extents(ancestors)
            if isinstance(stmt, ir.Let):
                self._divisions(stmt.value, stmt.line)
                self.lets[stmt.var] = substitute(stmt.value, self.lets)
            elif isinstance(stmt, ir.Store):
                self._divisions(stmt.value, stmt.line)
                self._store(stmt, ancestors, extents)
            elif isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr) == "copy":
                self._copy(ir.regions(stmt.expr), extents)
            elif isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr) == "reduce":
                self._reduce(stmt.expr)

    def sums_read(self, expr) -> set:
        return {load[1] for load in ir.loads_of(expr) if load[1] in self.sums}

    # -- statements

    def _store(self, stmt: ir.Store, ancestors, extents: dict) -> None:
        value = substitute(stmt.value, self.lets)
        indices = tuple(substitute(i, self.lets) for i in stmt.indices)
        conditions = [substitute(a.cond, self.lets) for a in ancestors if isinstance(a, ir.If)]
        conditions += select_conds(value)
        masks = [m for c in conditions for m in _masks(c, extents, _in_block(extents, ancestors))]
        loads = ir.loads_of(value)
        for dim, index in enumerate(indices):
            target = self.padded_dims.setdefault((stmt.buffer, dim), set())
            target.update(p for var, paddings in masks for p in paddings if ir.uses(index, var))
            for load in loads:
                for src_dim, src_index in enumerate(load[2]):
                    shared = ir.vars_of(src_index) & ir.vars_of(index) & set(extents)
                    if shared:
                        target.update(self.padded_dims.get((load[1], src_dim), ()))
        accumulates = value[0] == "add" and any(side[0] == "load" and side[1] == stmt.buffer for side in value[1:3])
        if accumulates:
            block_extents = {v: extents[v] for v in _in_block(extents, ancestors)}
            self._accumulate(stmt.buffer, indices, loads, masks, block_extents)
        elif value[0] == "load" and value[1] in self.sums:
            self.sums.add(stmt.buffer)
            self.padded_sums.setdefault(stmt.buffer, set()).update(self.padded_sums.get(value[1], ()))

    def _accumulate(self, buffer: str, indices, loads, masks, extents: dict) -> None:
        """`acc[...] += v`: a sum over the block's loop variables missing from the index."""
        self.sums.add(buffer)
        reduced = {v for v in extents if not any(ir.uses(i, v) for i in indices)}
        paddings = self.padded_sums.setdefault(buffer, set())
        paddings.update(p for var, found in masks if var in reduced for p in found)
        repeat = 1
        for var in reduced:
            repeat *= extents[var] or 1
        for load in loads:
            if load[1] == buffer:
                continue
            for dim, index in enumerate(load[2]):
                if ir.vars_of(index) & reduced:
                    paddings.update(self.padded_dims.get((load[1], dim), ()))
            for padding in self.padded_sums.get(load[1], ()):
                # a running total of sums: of per-tile sums whose mask spans the whole row (split rows)
                # the padding is unchanged; of independent padded rows, it adds up
                paddings.update({padding, padding.times(repeat)})

    def _copy(self, regions: list, extents: dict) -> None:
        if len(regions) != 2:
            return
        src, dst = regions
        src_dims = [d for d, e in enumerate(src.extents) if ir.int_value(e) != 1]
        dst_dims = [d for d, e in enumerate(dst.extents) if ir.int_value(e) != 1]
        info = self.func.buffers.get(src.buffer)
        for s, d in zip(src_dims, dst_dims):
            target = self.padded_dims.setdefault((dst.buffer, d), set())
            target.update(self.padded_dims.get((src.buffer, s), ()))
            if info is not None and info.scope == "global" and s < len(info.shape):
                target.update(_out_of_bounds(src.start[s], src.extents[s], info.shape[s], extents))
        if src.buffer in self.sums:
            self.sums.add(dst.buffer)
            self.padded_sums.setdefault(dst.buffer, set()).update(self.padded_sums.get(src.buffer, ()))

    def _reduce(self, call) -> None:
        regions = ir.regions(call)
        args = call[2]
        if len(regions) != 2 or len(args) <= REDUCE_DIM_ARG or args[REDUCE_TYPE_ARG][0] != "other":
            return
        if args[REDUCE_TYPE_ARG][1].strip("'\"") not in SUM_REDUCTIONS:
            return
        src, dst = regions
        dim = ir.int_value(args[REDUCE_DIM_ARG])
        if dim is None:
            return
        dim %= max(len(src.extents), 1)
        self.sums.add(dst.buffer)
        paddings = self.padded_sums.setdefault(dst.buffer, set())
        paddings.update(self.padded_dims.get((src.buffer, dim), ()))
        count = ir.int_value(src.extents[dim]) if dim < len(src.extents) else None
        if count:
            # a sum of padded row sums (GroupNorm: rows of a group, then the group)
            paddings.update(p.times(count) for p in self.padded_sums.get(src.buffer, ()))

    # -- divisions

    def _divisions(self, expr, line: int | None) -> None:
        if not line:
            return
        for node in ir.subexprs(expr):
            if node[0] not in ("div", "mul"):
                continue
            sides = [substitute(side, self.lets) for side in node[1:3]]
            if node[0] == "div":
                numerator, denominator = sides
            elif node[0] == "mul" and (_reciprocal(sides[0]) or _reciprocal(sides[1])):
                numerator = sides[1] if _reciprocal(sides[0]) else sides[0]
                denominator = _reciprocal(sides[0]) or _reciprocal(sides[1])
            else:
                continue
            length = _constant_length(denominator)
            self.divisions.append(
                Division(
                    line=line,
                    expr=node,
                    numerator=numerator,
                    denominator=denominator,
                    length=length,
                    rounded_up=_is_rounded_up(denominator),
                )
            )


def _extents(ancestors) -> dict:
    """Loop variable -> constant extent (None when symbolic) of the enclosing loops, block indices
    (`T.Kernel` grid loops) included."""
    return {a.var: ir.int_value(a.extent) for a in ancestors if isinstance(a, ir.For)}


def _in_block(extents: dict, ancestors) -> set:
    """The loop variables of one thread block: a mask or a sum over them pads or reduces a tile."""
    return {a.var for a in ancestors if isinstance(a, ir.For) and a.kind != "thread_binding"} & set(extents)


_FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _masks(cond, extents: dict, block_vars: set) -> list:
    """(loop variable, {Padding}) for each `index < length` bound in a condition that cuts one of the
    block's loops short, written either way round (`k * block_N + j >= seq_len` marks the padding)."""
    if cond[0] in ("and", "or"):
        return _masks(cond[1], extents, block_vars) + _masks(cond[2], extents, block_vars)
    if cond[0] == "not":
        return _masks(cond[1], extents, block_vars)
    if cond[0] not in _FLIPPED:
        return []
    op, index, limit = cond
    if not ir.vars_of(index) & set(extents):
        op, index, limit = _FLIPPED[op], limit, index
    loop_vars = ir.vars_of(index) & set(extents)
    if not loop_vars or ir.vars_of(limit) & set(extents) or ir.loads_of(limit) or ir.loads_of(index):
        return []
    # `index < n` and `index >= n` both say n elements are real; `index <= n` and `index > n`, n + 1
    true = _int_constant(limit)
    if true is not None and op in ("le", "gt"):
        true += 1
    span = _span(index, extents)
    out = []
    for var in loop_vars & block_vars:
        lengths = {extents[var], span}
        paddings = {Padding(n, true, render(limit)) for n in lengths if n and (true is None or true < n)}
        if paddings:
            out.append((var, paddings))
    return out


def _out_of_bounds(start, extent, size, extents: dict) -> set:
    """Padding of a copy window `[start, start + extent)` that can run past a dimension of `size`."""
    length = ir.int_value(extent)
    span = _span(start, extents)
    if length is None or span is None:
        return set()
    reach = span - 1 + length
    true = size if isinstance(size, int) else None
    if true is not None and reach <= true:
        return set()
    limit = "" if true is not None else render(size)
    return {Padding(n, true, limit) for n in {length, reach} if true is None or true < n}


def _span(index, extents: dict) -> int | None:
    """One past the largest value of an affine index over the loop ranges (None if unknown)."""
    variables = ir.vars_of(index)
    if any(extents.get(v) is None for v in variables):
        return None
    try:
        top = int(evaluate(index, {v: 0 for v in variables}))
    except (KeyError, ValueError, FloatingPointError):
        return None
    poly = affine(index)
    for var in variables:
        coeff = coefficient(poly, var) if poly is not None else None
        if coeff is None:
            return None
        top += max(0, coeff * (extents[var] - 1))
    return top + 1


def _int_constant(expr) -> int | None:
    expr = ir.uncast(expr)
    return expr[1] if expr[0] == "int" else None


def _constant_length(expr) -> int | None:
    value = _constant_number(expr)
    return int(value) if value is not None and value.is_integer() and value > 1 else None


def _reciprocal(expr):
    """The length n when `expr` is 1/n: `1.0 / n` kept symbolic, or the folded constant
    (`s * (1.0 / block_N)` becomes `s * 0.0009765625`)."""
    expr = ir.uncast(expr)
    if expr[0] == "div" and _constant_number(expr[1]) == 1.0:
        return expr[2]
    if expr[0] != "float" or not 0 < expr[1] < 1:
        return None
    n = round(1 / expr[1])
    return ("int", n) if n > 1 and abs(1 / expr[1] - n) < 1e-6 * n else None


def _constant_number(expr) -> float | None:
    expr = ir.uncast(expr)
    return float(expr[1]) if expr[0] in ("int", "float") else None


def _is_rounded_up(expr) -> bool:
    """`T.ceildiv(n, c) * c` (TIR: `(n + c - 1) // c * c`) of a runtime n."""
    for node in ir.subexprs(expr):
        if node[0] != "mul":
            continue
        for quotient, factor in ((node[1], node[2]), (node[2], node[1])):
            quotient = ir.uncast(quotient)
            if (
                quotient[0] == "floordiv"
                and ir.int_value(factor) is not None
                and quotient[2] == factor
                and ir.vars_of(quotient[1])
            ):
                return True
    return False
