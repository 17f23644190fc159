"""Rewrites that read an access's buffer at the lane-contiguous index over the same loop variables: the
proof for an index no rewrite of its own fixes (a permutation, a reversed walk, interleaved pairs, a
run-time offset). Runs inside the worker only (it needs tilelang)."""

from __future__ import annotations

from tilelang import tvm  # noqa: F401  (tilelang first: it puts its TVM on the path)
from tvm import tirx
from tvm.tirx.stmt_functor import ir_transform

from tl_inspect.inspector.rewrites.primfunc import line_of, tvm_base_name, with_body, with_span_of
from tl_inspect.model import Cause


def contiguous_index(func, cause: Cause, whole_loop: bool):
    """(the kernel with every access of the cause's buffer at its line reading the lane-contiguous index
    over the same loop variables, the change), or None. The rebuilt kernel moves other elements: it shows
    that the index pattern, not the loop or the length, is what keeps the access narrow. Interleaved
    accesses (`2 * i`, `2 * i + 1`) that would read one index each read their own span of the row
    (`i`, `i + span`) where the row holds the spans and they stay 16-byte aligned: the layout splitting
    them into separate tensors gives, moving as many bytes."""
    extents = _loop_extents(func)
    lane = _named(extents, cause.lane_var)
    if lane is None or cause.index_line is None:
        return None
    lines = _lines_in_loop(func, cause.loop_line) if whole_loop else {cause.index_line}
    rebuilt = _read_contiguously(func, cause, extents, lane, lines, spans=True)
    if rebuilt is not None and rebuilt[3] is None:
        rebuilt = _read_contiguously(func, cause, extents, lane, lines, spans=False)
    if rebuilt is None:
        return None
    body, written, changed, kernel = rebuilt
    shown = " and ".join(f"`{access}`" for access in dict.fromkeys(written))
    at = " and ".join(str(line) for line in sorted(changed))
    return with_body(func, body), (
        f"{shown} accessed at line{'s' if len(changed) > 1 else ''} {at} instead, "
        f"contiguous in `{lane.name}` ({kernel})"
    )


def _read_contiguously(func, cause: Cause, extents: dict, lane, lines: set, spans: bool):
    """(body, the accesses written, the lines changed, what the kernel moves) of contiguous_index's
    rewrite, with each interleaved access in its own span where `spans`; the last is None where a span
    would leave the row or its alignment (then rewrite without spans); None where nothing changed."""
    written: list = []
    collapsed: dict = {}  # contiguous index -> the distinct original indices that land on it
    spans_fit = True

    def contiguous(buffer, indices):
        nonlocal spans_fit
        last = indices[-1]
        used = [v for v in extents if v is not lane and _uses(last, v)]
        if not _uses(last, lane):
            return None
        # row-major over the variables, outermost (first in `extents`) to the lane variable
        terms, stride = [lane], extents[lane]
        for var in reversed(used):
            terms.insert(0, var * stride)
            stride *= extents[var]
        index = terms[0]
        for term in terms[1:]:
            index = index + term
        originals = collapsed.setdefault(str(index), [])
        if str(last) not in originals:
            originals.append(str(last))
        span = originals.index(str(last))
        if spans and span:
            row_bytes = stride * buffer.dtype.bits // 8
            spans_fit &= row_bytes % 16 == 0 and tvm.arith.Analyzer().can_prove((span + 1) * stride <= buffer.shape[-1])
            index = index + span * stride
        contiguous_indices = [*indices[:-1], index]
        written.append(f"{cause.buffer}[{', '.join(str(i) for i in contiguous_indices)}]")
        return contiguous_indices

    def load(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer.name == cause.buffer:
            indices = contiguous(node.buffer, list(node.indices))
            return tirx.BufferLoad(node.buffer, indices) if indices else None
        return None

    def in_expr(expr):
        return ir_transform(tirx.Evaluate(expr), None, load, ["tirx.BufferLoad"]).value

    changed: set = set()

    def post(node):
        if line_of(node) not in lines:
            return None
        before = len(written)
        if isinstance(node, tirx.BufferStore):
            indices = contiguous(node.buffer, list(node.indices)) if node.buffer.name == cause.buffer else None
            store = tirx.BufferStore(node.buffer, in_expr(node.value), indices if indices else node.indices)
            new = with_span_of(store, node)
        elif isinstance(node, tirx.Bind):
            new = with_span_of(tirx.Bind(node.var, in_expr(node.value)), node)
        else:
            return None
        if len(written) > before:
            changed.add(line_of(node))
        return new

    body = ir_transform(func.body, None, post, ["tirx.BufferStore", "tirx.Bind"])
    if not written:
        return None
    interleaved = any(len(originals) > 1 for originals in collapsed.values())
    if not interleaved:
        kernel = f"{MOVES_OTHER}, {ONLY_THE_INDEX}"
    elif not spans:
        kernel = f"{READS_FEWER}, {ONLY_THE_INDEX}"
    else:
        kernel = SPANS if spans_fit else None
    return body, written, changed, kernel


MOVES_OTHER = "a kernel that moves other elements"
READS_FEWER = "a kernel that reads fewer elements"
ONLY_THE_INDEX = "only to show the index is the cause"
SPANS = (
    "the interleaved elements in contiguous spans of the row, as separate tensors would hold them: as many bytes move"
)


def reads_fewer_elements(change: str) -> bool:
    """Whether a proof's variant moves fewer bytes than the kernel: its time is not what a fix would gain."""
    return f"({READS_FEWER}," in change


def _lines_in_loop(func, loop_line: int | None) -> set:
    """The lines of the statements inside the loop written at `loop_line`."""
    lines: set = set()

    def visit(node):
        if isinstance(node, tirx.For) and line_of(node) == loop_line and not lines:
            tirx.stmt_functor.post_order_visit(
                node.body,
                lambda inner: lines.add(line_of(inner) if isinstance(inner, (tirx.BufferStore, tirx.Bind)) else None),
            )

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return lines - {None}


def reversed_walk(func, cause: Cause) -> bool:
    """Whether an access of the cause's buffer at its line steps backwards as its lane variable advances."""
    lane = _named(_loop_extents(func), cause.lane_var)
    found = []

    def visit(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer.name == cause.buffer and lane is not None:
            coefficient = tvm.arith.detect_linear_equation(node.indices[-1], [lane])
            found.append(bool(coefficient) and int(coefficient[0]) < 0)

    for stmt in _statements_at(func, cause.index_line):
        tirx.stmt_functor.post_order_visit(stmt, visit)
    return any(found)


def _statements_at(func, line: int | None) -> list:
    found = []

    def visit(node):
        if isinstance(node, (tirx.BufferStore, tirx.Bind)) and line_of(node) == line:
            found.append(node)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return found


def _loop_extents(func) -> dict:
    """Loop and block variable -> extent, outermost first."""
    extents = {}

    def pre(node):
        if isinstance(node, tirx.For) and isinstance(node.extent, tirx.IntImm):
            extents[node.loop_var] = int(node.extent)
        return None

    ir_transform(func.body, pre, None, ["tirx.For"])
    return extents


def _named(extents: dict, var: str):
    """The loop variable tl-inspect calls `var`."""
    exact = next((v for v in extents if v.name == var), None)
    return exact if exact is not None else next((v for v in extents if v.name == tvm_base_name(var)), None)


def _uses(expr, var) -> bool:
    return any(v.same_as(var) for v in tirx.analysis.undefined_vars(expr))
