"""TLV005 padded-denominator: a mean or variance divided by the padded tile length."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from tl_inspect import ir
from tl_inspect.model import STAGE_FRONTEND
from tl_inspect.rules.base import Rule, RuleContext, Violation, parse_source

SUM_REDUCTIONS = ("sum", "abssum")
# `T.reduce_*` arguments: tl.tileop.reduce(src, dst, type, dim, clear)
REDUCE_TYPE_ARG, REDUCE_DIM_ARG = 2, 3
PADDED_NAME = re.compile(r"pad", re.IGNORECASE)
UNPADDED_NAME = re.compile(r"(un|non_?|no_?)pad", re.IGNORECASE)
ROUND_UP_CALLS = ("ceildiv", "cdiv", "ceil_div")
POWER_OF_TWO_CALLS = ("next_power_of_2", "next_pow2", "next_power_of_two")


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


class PaddedDenominator(Rule):
    """A mean or variance divides a sum by the padded tile length instead of the true length.

    ## What it does
    Tracks which tiles are padded: filled through a mask (`T.if_then_else(i < N, X[..], 0)`,
    `if k * block_N + i < N:`) or copied from beyond the end of a tensor, so that only `N` of their
    `block_N` elements are real. It then flags a division of a sum over such a tile (`T.reduce_sum`, or
    `+=` accumulation) by the padded length: the tile extent, `block_N`, `N_padded`, or a rounded-up
    size such as `T.ceildiv(N, 128) * 128`, and the same through a reciprocal (`s * (1.0 / block_N)`).
    Dividing by the true `N` is clean, and so is dividing by the tile when the row is exactly one tile.

    ## Why is this wrong?
    The padding contributes zeros to the sum but the denominator still counts it, so the mean, the
    variance and the `rsqrt` of LayerNorm/RMSNorm come out scaled by `N / block_N` (for N = 1000 in a
    1024 tile, every mean is 2.3 % too small, as measured on an H200). The kernel runs and the error
    is silent. In CUDA the length is folded into a constant (`s[0] / 0x1p+10f`), so the mistake is
    only visible in the source.

    ## Example
    ```python
    for i in T.Parallel(block_N):
        x[i] = T.if_then_else(i < N, X[bx, i], 0.0)
    T.reduce_sum(x, s, dim=0)
    mean = s[0] / block_N
    ```

    ## Use instead
    ```python
    mean = s[0] / N  # the true length, not block_N
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md): the mean of 1000 values padded to 1024 had a
      median relative error of 2.3e-02 when divided by 1024, 6.0e-08 when divided by 1000.
    - tl-inspect facts memo G.5 (`softmax_padded`: `Y[bx] = s[0] / T.float32(1024.0)` in the frontend
      TIR, `s[0] / 0x1p+10f` in CUDA, while only 1000 elements are loaded).
    """

    code = "TLV005"
    slug = "padded-denominator"
    severity = "warning"
    flags = "a mean or variance divided by the padded tile length instead of the true length"
    measured = "every mean 2.3 % low (1000 values in a 1024 tile)"
    fix = "Divide by the true reduction length (`N`), not the padded tile length"

    def check(self, ctx: RuleContext) -> None:
        snapshot = ctx.kernel.snapshot(STAGE_FRONTEND)
        func = snapshot.func() if snapshot else None
        if func is None:
            return
        flow = PaddingFlow(func)
        source = _Source(ctx)
        reported: set[int] = set()
        for site in flow.divisions:
            violation = self._violation(flow, source, site)
            line = source.division_line(site.line) if violation else None
            if line and line not in reported:
                reported.add(line)
                ctx.report(line, violation, evidence=[f"TIR: {ir.render(site.expr)}"])

    def _violation(self, flow: PaddingFlow, source: _Source, site: _Division) -> Violation | None:
        sums = tuple(sorted(flow.sums_read(site.numerator)))
        if not sums:
            return None
        if site.length is not None:
            for name in sums:
                for padding in sorted(flow.padded_sums.get(name, ()), key=lambda p: p.padded):
                    if padding.padded == site.length and padding.true != site.length:
                        return DividedByPaddedLength(sums, site.length, padding)
        if site.rounded_up:
            return DividedByRoundedUpLength(sums, source.denominator_text(site.line) or ir.render(site.denominator))
        reason = source.padded_denominator(site.line)
        return DividedByPaddedName(sums, reason) if reason else None


def _sum_over(sums: tuple) -> str:
    return f"a sum over `{'`, `'.join(sums)}`"


@dataclass(frozen=True)
class DividedByPaddedLength(Violation):
    """The denominator is the length of a range the flow knows is padded."""

    sums: tuple  # the buffers holding the sums the numerator reads
    length: int
    padding: Padding

    def message(self) -> str:
        return (f"{_sum_over(self.sums)} is divided by {self.length}, the padded length, but "
                f"{self.padding.describe()}; the padding adds zeros to the sum, not to the count")


@dataclass(frozen=True)
class DividedByRoundedUpLength(Violation):
    """The denominator is `ceildiv(n, c) * c` of a runtime length."""

    sums: tuple
    denominator: str  # as the user wrote it

    def message(self) -> str:
        return f"{_sum_over(self.sums)} is divided by `{self.denominator}`, a length rounded up past the true one"


@dataclass(frozen=True)
class DividedByPaddedName(Violation):
    """The source says the denominator is padded: its name, or how it is computed."""

    sums: tuple
    reason: str  # "`N_padded`", "`n` = `T.ceildiv(N, 128) * 128`, a length rounded up ..."

    def message(self) -> str:
        return f"{_sum_over(self.sums)} is divided by {self.reason}, a padded length, not by the true length"


# ---------------------------------------------------------------- frontend data flow

@dataclass(frozen=True)
class _Division:
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
        self.divisions: list[_Division] = []
        self.lets: dict[str, ir.Expr] = {}
        for stmt, ancestors in ir.walk(func.body):
            extents = _extents(ancestors)
            if isinstance(stmt, ir.Let):
                self._divisions(stmt.value, stmt.line)
                self.lets[stmt.var] = ir.substitute(stmt.value, self.lets)
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
        value = ir.substitute(stmt.value, self.lets)
        indices = tuple(ir.substitute(i, self.lets) for i in stmt.indices)
        conditions = [ir.substitute(a.cond, self.lets) for a in ancestors if isinstance(a, ir.If)]
        conditions += _select_conditions(value)
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
        accumulates = value[0] == "add" and any(
            side[0] == "load" and side[1] == stmt.buffer for side in value[1:3])
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
            sides = [ir.substitute(side, self.lets) for side in node[1:3]]
            if node[0] == "div":
                numerator, denominator = sides
            elif node[0] == "mul" and (_reciprocal(sides[0]) or _reciprocal(sides[1])):
                numerator = sides[1] if _reciprocal(sides[0]) else sides[0]
                denominator = _reciprocal(sides[0]) or _reciprocal(sides[1])
            else:
                continue
            length = _constant_length(denominator)
            self.divisions.append(_Division(
                line=line, expr=node, numerator=numerator, denominator=denominator, length=length,
                rounded_up=_is_rounded_up(denominator)))


def _extents(ancestors) -> dict:
    """Loop variable -> constant extent (None when symbolic) of the enclosing loops, block indices
    (`T.Kernel` grid loops) included."""
    return {a.var: ir.int_value(a.extent) for a in ancestors if isinstance(a, ir.For)}


def _in_block(extents: dict, ancestors) -> set:
    """The loop variables of one thread block: a mask or a sum over them pads or reduces a tile."""
    return {a.var for a in ancestors if isinstance(a, ir.For) and a.kind != "thread_binding"} & set(extents)


def _select_conditions(expr) -> list:
    out = []
    for node in ir.subexprs(expr):
        if node[0] == "select":
            out.append(node[1])
        elif node[0] == "call" and node[1] == "tirx.if_then_else":
            out.append(node[2][0])
    return out


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
        paddings = {Padding(n, true, ir.render(limit)) for n in lengths if n and (true is None or true < n)}
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
    limit = "" if true is not None else ir.render(size)
    return {Padding(n, true, limit) for n in {length, reach} if true is None or true < n}


def _span(index, extents: dict) -> int | None:
    """One past the largest value of an affine index over the loop ranges (None if unknown)."""
    variables = ir.vars_of(index)
    if any(extents.get(v) is None for v in variables):
        return None
    try:
        top = int(ir.evaluate(index, {v: 0 for v in variables}))
    except (KeyError, ValueError, FloatingPointError):
        return None
    for var in variables:
        coeff = ir.linear_coeff(index, var)
        if coeff is None:
            return None
        top += max(0, coeff * (extents[var] - 1))
    return top + 1


def _int_constant(expr) -> int | None:
    while expr[0] == "cast":
        expr = expr[2]
    return expr[1] if expr[0] == "int" else None


def _constant_length(expr) -> int | None:
    value = _constant_number(expr)
    return int(value) if value is not None and value.is_integer() and value > 1 else None


def _reciprocal(expr):
    """The length n when `expr` is 1/n: `1.0 / n` kept symbolic, or the folded constant
    (`s * (1.0 / block_N)` becomes `s * 0.0009765625`)."""
    while expr[0] == "cast":
        expr = expr[2]
    if expr[0] == "div" and _constant_number(expr[1]) == 1.0:
        return expr[2]
    if expr[0] != "float" or not 0 < expr[1] < 1:
        return None
    n = round(1 / expr[1])
    return ("int", n) if n > 1 and abs(1 / expr[1] - n) < 1e-6 * n else None


def _constant_number(expr) -> float | None:
    while expr[0] == "cast":
        expr = expr[2]
    return float(expr[1]) if expr[0] in ("int", "float") else None


def _is_rounded_up(expr) -> bool:
    """`T.ceildiv(n, c) * c` (TIR: `(n + c - 1) // c * c`) of a runtime n."""
    for node in ir.subexprs(expr):
        if node[0] != "mul":
            continue
        for quotient, factor in ((node[1], node[2]), (node[2], node[1])):
            while quotient[0] == "cast":
                quotient = quotient[2]
            if (quotient[0] == "floordiv" and ir.int_value(factor) is not None
                    and quotient[2] == factor and ir.vars_of(quotient[1])):
                return True
    return False


# ---------------------------------------------------------------- the user's source

class _Source:
    """Divisions in the user's file and what their denominators are bound to."""

    def __init__(self, ctx: RuleContext):
        self.ctx = ctx

    @functools.cached_property
    def parsed(self) -> _Collector:
        return _collect(self.ctx.source_text)

    def _in_statement(self, line: int) -> list:
        end = next((e for s, e in self.parsed.statements if s == line), line)
        return [d for d in self.parsed.divisions if line <= d[0] <= end]

    def division_line(self, line: int) -> int:
        """The line of the first division of the statement that starts on `line`."""
        found = self._in_statement(line)
        return found[0][0] if found else line

    def denominator_text(self, line: int) -> str | None:
        """The source text of the first denominator in the statement on `line`."""
        found = self._in_statement(line)
        return _code(found[0][1]) if found else None

    def padded_denominator(self, line: int) -> str | None:
        """Why a denominator of the statement on `line` is a padded length, from its source alone."""
        for _, denominator in self._in_statement(line):
            reason = _padded_expression(denominator, self.parsed.bindings, depth=0)
            if reason:
                return reason
        return None


@functools.lru_cache(maxsize=4)
def _collect(source_text: str) -> _Collector:
    """Collected once per file, not once per kernel: a file often holds many kernels."""
    wrapper = parse_source(source_text)
    if wrapper is None:
        # syntax newer than libcst knows: keep the IR lines, without source evidence
        return _Collector({})
    collector = _Collector(wrapper.resolve(PositionProvider))
    wrapper.visit(collector)
    return collector


class _Collector(cst.CSTVisitor):
    def __init__(self, positions):
        self.positions = positions
        self.statements: list[tuple[int, int]] = []
        self.divisions: list[tuple[int, cst.BaseExpression]] = []  # (line, denominator)
        self.bindings: dict[str, list] = {}

    def visit_SimpleStatementLine(self, node) -> None:
        pos = self.positions[node]
        self.statements.append((pos.start.line, pos.end.line))

    def visit_Assign(self, node) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.bindings.setdefault(target.target.value, []).append(node.value)

    def visit_BinaryOperation(self, node) -> None:
        # `s * (1.0 / block_N)` is found through its inner division
        if isinstance(node.operator, cst.Divide):
            self.divisions.append((self.positions[node.right].start.line, node.right))

    def visit_AugAssign(self, node) -> None:
        if isinstance(node.operator, cst.DivideAssign):
            self.divisions.append((self.positions[node].start.line, node.value))


def _padded_expression(node, bindings: dict, depth: int) -> str | None:
    if isinstance(node, cst.Name):
        if PADDED_NAME.search(node.value) and not UNPADDED_NAME.search(node.value):
            return f"`{node.value}`"
        if depth < 3:
            for bound in bindings.get(node.value, ()):
                reason = _padded_expression(bound, bindings, depth + 1)
                if reason:
                    return f"`{node.value}` = {reason}"
        return None
    if isinstance(node, cst.Call) and _call_name(node) in POWER_OF_TWO_CALLS:
        return f"`{_code(node)}`, a power of two rounded up"
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        for quotient, factor in ((node.left, node.right), (node.right, node.left)):
            if _rounds_to(quotient, factor):
                return f"`{_code(node)}`, a length rounded up to a multiple of `{_code(factor)}`"
    return None


def _rounds_to(quotient, factor) -> bool:
    """`ceildiv(n, c)`, `(n + c - 1) // c` or `math.ceil(n / c)` multiplied back by c."""
    if isinstance(quotient, cst.Call) and len(quotient.args) == 2:
        name = _call_name(quotient)
        return name in ROUND_UP_CALLS and _code(quotient.args[1].value) == _code(factor)
    if isinstance(quotient, cst.Call) and len(quotient.args) == 1 and _call_name(quotient) == "ceil":
        inner = quotient.args[0].value
        return (isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Divide)
                and _code(inner.right) == _code(factor))
    if isinstance(quotient, cst.BinaryOperation) and isinstance(quotient.operator, cst.FloorDivide):
        return _code(quotient.right) == _code(factor) and "-" in _code(quotient.left)
    return False


def _call_name(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")


def _code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)
