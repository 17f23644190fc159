"""TLV005 padded-denominator: a mean or variance divided by the padded tile length."""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from tl_inspect.fixes import fix_from
from tl_inspect.model import SAFE, Fix
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.rules.padded_denominator.flow import Division, Padding, PaddingFlow
from tl_inspect.tir.render import render

PADDED_NAME = re.compile(r"pad", re.IGNORECASE)
UNPADDED_NAME = re.compile(r"(un|non_?|no_?)pad", re.IGNORECASE)
ROUND_UP_CALLS = ("ceildiv", "cdiv", "ceil_div")
POWER_OF_TWO_CALLS = ("next_power_of_2", "next_pow2", "next_power_of_two")


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
    - docs/tilelang-facts.md, G.5 (`softmax_padded`: `Y[bx] = s[0] / T.float32(1024.0)` in the frontend
      TIR, `s[0] / 0x1p+10f` in CUDA, while only 1000 elements are loaded).
    """

    code = "TLV005"
    slug = "padded-denominator"
    severity = "warning"
    flags = "a mean or variance divided by the padded tile length instead of the true length"
    measured = "every mean 2.3 % low (1000 values in a 1024 tile)"
    fix = "Divide by the true reduction length (`N`), not the padded tile length"

    def check(self, ctx: RuleContext) -> None:
        flow = PaddingFlow(ctx.facts.func)
        source = _Source(ctx)
        reported: set[int] = set()
        for site in flow.divisions:
            violation = self._violation(flow, source, site)
            line = source.division_line(site.line) if violation else None
            if isinstance(violation, DividedByPaddedLength):
                violation = violation.named(ctx.fix_source, line)
            if line and line not in reported:
                reported.add(line)
                ctx.report(line, violation, evidence=[f"TIR: {render(site.expr)}"])

    def _violation(self, flow: PaddingFlow, source: _Source, site: Division) -> Violation | None:
        sums = tuple(sorted(flow.sums_read(site.numerator)))
        if not sums:
            return None
        if site.length is not None:
            for name in sums:
                for padding in sorted(flow.padded_sums.get(name, ()), key=lambda p: p.padded):
                    if padding.padded == site.length and padding.true != site.length:
                        return DividedByPaddedLength(sums, site.length, padding)
        if site.rounded_up:
            return DividedByRoundedUpLength(sums, source.denominator_text(site.line) or render(site.denominator))
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
    true_name: str = ""  # the true length as a name in scope: the run-time length, or one bound to the constant
    written: str = ""  # the denominator as the user wrote it, `BLOCK_N`

    def message(self) -> str:
        return (
            f"{_sum_over(self.sums)} is divided by {self.length}, the padded length, but "
            f"{self.padding.describe()}; the padding adds zeros to the sum, not to the count"
        )

    def named(self, source, line: int) -> DividedByPaddedLength:
        if self.padding.true is None:
            name = self.padding.limit if self.padding.limit.isidentifier() else None
        else:
            name = _name_of(source, line, self.padding.true)
        denominator = _denominator(source, line)
        return dataclasses.replace(
            self, true_name=name or "", written=source.code(denominator) if denominator is not None else ""
        )

    def fix_title(self) -> str:
        true = self.true_name or (self.padding.limit if self.padding.true is None else str(self.padding.true))
        return _divide_by(true, self.written or self.length)

    def autofix(self, source, finding) -> Fix | None:
        """The denominator replaced by the name of the true length."""
        return _true_denominator(source, finding.line, self.true_name or None)


@dataclass(frozen=True)
class DividedByRoundedUpLength(Violation):
    """The denominator is `ceildiv(n, c) * c` of a runtime length."""

    sums: tuple
    denominator: str  # as the user wrote it

    def message(self) -> str:
        return f"{_sum_over(self.sums)} is divided by `{self.denominator}`, a length rounded up past the true one"

    def fix_title(self) -> str:
        true = _rounded_length(cst.parse_expression(self.denominator))
        return _divide_by(_code(true) if true is not None else "", self.denominator)

    def autofix(self, source, finding) -> Fix | None:
        """`ceildiv(n, c) * c` replaced by `n`, when `n` is a name."""
        denominator = _denominator(source, finding.line)
        true = _rounded_length(denominator) if denominator is not None else None
        return _true_denominator(source, finding.line, true.value if isinstance(true, cst.Name) else None)


def _divide_by(true: str, padded) -> str:
    if not true:
        return f"Divide by the true reduction length, not `{padded}` (the padded length)"
    return f"Divide by the true reduction length `{true}`, not `{padded}` (the padded length)"


def _denominator(source, line: int):
    """The denominator of the first division on `line` (as the rule finds them: `_Collector`)."""
    rights = [
        n.right
        for n in source.nodes(cst.BinaryOperation)
        if isinstance(n.operator, cst.Divide) and source.start(n.right) == line
    ]
    return min(rights, key=lambda n: source.positions[n].start.column, default=None)


def _rounded_length(node):
    """`n` of `ceildiv(n, c) * c` (or `c * ceildiv(n, c)`), else None."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        for quotient, factor in ((node.left, node.right), (node.right, node.left)):
            if _rounds_to(quotient, factor) and isinstance(quotient, cst.Call):
                return quotient.args[0].value
    return None


def _name_of(source, line: int, value: int) -> str | None:
    """The one name bound to the integer `value` at module level or in a function around `line`."""
    scopes = [source.wrapper.module] + [f for f in source.enclosing(cst.FunctionDef, line)]
    names = set()
    for scope in scopes:
        body = scope.body if isinstance(scope, cst.Module) else scope.body.body
        for statement in body:
            for small in getattr(statement, "body", ()) if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        names.update(_bound(target.target, small.value, value))
        if isinstance(scope, cst.FunctionDef):
            names.update(
                p.name.value for p in scope.params.params if p.default is not None and _integer(p.default) == value
            )
    return names.pop() if len(names) == 1 else None


def _bound(target, value, wanted: int):
    if isinstance(target, cst.Name) and _integer(value) == wanted:
        yield target.value
    elif isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements):
        for t, v in zip(target.elements, value.elements):
            yield from _bound(t.value, v.value, wanted)


def _integer(node) -> int | None:
    return int(node.value) if isinstance(node, cst.Integer) and node.value.isdigit() else None


def _true_denominator(source, line: int, name: str | None) -> Fix | None:
    denominator = _denominator(source, line)
    if name is None or denominator is None or source.code(denominator) == name:
        return None
    return fix_from(SAFE, source.text, source.replaced(denominator, cst.Name(name)))


@dataclass(frozen=True)
class DividedByPaddedName(Violation):
    """The source says the denominator is padded: its name, or how it is computed."""

    sums: tuple
    reason: str  # "`N_padded`", "`n` = `T.ceildiv(N, 128) * 128`, a length rounded up ..."

    def message(self) -> str:
        return f"{_sum_over(self.sums)} is divided by {self.reason}, a padded length, not by the true length"

    def fix_title(self) -> str:
        return _divide_by("", self.reason.split(" = ")[0].strip("`"))


class _Source:
    """Divisions in the user's file and what their denominators are bound to."""

    def __init__(self, ctx: RuleContext):
        self.ctx = ctx

    @functools.cached_property
    def parsed(self) -> _Collector:
        return _collect(self.ctx.cst)

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
def _collect(wrapper) -> _Collector:
    """Collected once per file, not once per kernel: a file often holds many kernels, and `ctx.cst`
    parses it once."""
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
        return (
            isinstance(inner, cst.BinaryOperation)
            and isinstance(inner.operator, cst.Divide)
            and _code(inner.right) == _code(factor)
        )
    if isinstance(quotient, cst.BinaryOperation) and isinstance(quotient.operator, cst.FloorDivide):
        return _code(quotient.right) == _code(factor) and "-" in _code(quotient.left)
    return False


def _call_name(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")


def _code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)
