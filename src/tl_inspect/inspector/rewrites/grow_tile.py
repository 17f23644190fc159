"""Rewrites that give each thread a whole vector by growing the block's tile: the same threads per block,
`k` times the elements per block, `k` times fewer blocks. Fewer threads over the same grid stay on the
block floor (measured 1.00x on the H200), so a proof of one or two elements per thread must shrink the
grid, as the fix does.

Runs inside the worker only (it needs tilelang).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang import tvm  # tilelang first: it puts its TVM on the path
from tvm import tirx
from tvm.tirx.stmt_functor import ir_transform, post_order_visit, substitute

from tl_inspect.inspector.rewrites.primfunc import line_of, tvm_base_name, with_span_of

# the grid is divided by the growth factor; where it does not divide, the growth is doubled (each thread
# then moves two or four vectors) up to this many times before the grid is rounded up instead
DOUBLINGS = 2


@dataclass(frozen=True)
class Grown:
    """A kernel whose tile grew `factor` times: `elements` per block where there were `elements // factor`,
    over `blocks` blocks where there were `blocks_before` (expressions where the grid is a run-time one)."""

    func: object
    factor: int
    elements: int
    threads: int
    blocks_before: object
    blocks: object

    def grid(self) -> str:
        """The grid the grown tile runs over, in the user's terms."""
        if isinstance(self.blocks_before, int) and self.blocks_before % self.factor:
            # the last block runs past the old grid's end: tilelang's bounds check on the buffers' length
            # (uniform inside each vector group where that length is a multiple of the width) cuts it off
            return (
                f"a grid of {self.blocks} blocks instead of {self.blocks_before}, the last one cut off by the "
                f"bounds check"
            )
        return f"a grid {self.factor}x smaller"


def grow_parallel(func, loop_line: int, factor: int) -> Grown | None:
    """The `T.Parallel` nest at `loop_line` with its innermost extent E grown to E * k and the block
    index `b` that steps over its tiles (`b * E + i`) read as `b * k` in every index and bound, the grid
    ceil(G / k). None where another statement of the kernel also uses `b` (its tiles would not grow with
    the loop's) or no block index steps over the loop's tiles."""
    loop = _first(
        func.body, lambda n: isinstance(n, tirx.For) and n.kind == tirx.ForKind.PARALLEL and line_of(n) == loop_line
    )
    if loop is None:
        return None
    inner = loop
    while isinstance(inner.body, tirx.For) and inner.body.kind == tirx.ForKind.PARALLEL:
        inner = inner.body
    if not isinstance(inner.extent, tirx.IntImm):
        return None
    extent = int(inner.extent)
    grid = _grid_loop(func, loop, lambda b: _steps(loop, b, inner.loop_var, extent))
    if grid is None:
        return None
    k = _factor(grid, factor)

    def post(node):
        if node.same_as(inner):
            return with_span_of(
                tirx.For(
                    node.loop_var,
                    node.min,
                    tirx.IntImm(node.extent.dtype, extent * k),
                    node.kind,
                    node.body,
                    node.thread_binding,
                    node.annotations,
                ),
                node,
            )
        return None

    grown = ir_transform(loop, None, post, ["tirx.For"])
    body = _regrid(func.body, grid, k, lambda stmt: grown if stmt.same_as(loop) else None)
    elements = _product(loop) * k
    return Grown(func.with_body(body), k, elements, _threads(func), _extent(grid), _ceildiv(grid, k))


def vectorize_threads(func, line: int, lane: str, factor: int) -> Grown | None:
    """A kernel that indexes with its thread index (`idx = bx * 256 + tx`) given `k` contiguous elements
    per thread: its statements wrapped in a `T.vectorized(k)` loop over `v`, with `tx` read as
    `tx * k + v` and `bx` as `bx * k`, the grid ceil(G / k). Only where every statement is per element:
    no barrier or other call, no loop, no buffer of the block's own (shared memory, a running value)."""
    root = _first(func.body, lambda n: isinstance(n, tirx.SBlock) and n.name_hint == "tilelang_root")
    if root is None or root.alloc_buffers or not _per_element(root.body):
        return None
    tx = _thread_var(func, lane)
    threads = _threads(func)
    if tx is None or not _holds_line(root.body, line):
        return None
    grid = _grid_loop(func, root.body, lambda b: _steps(root.body, b, tx, threads))
    if grid is None:
        return None
    k = _factor(grid, factor)
    v = tirx.Var("v", tx.dtype)
    per_thread = tirx.For(
        v,
        tirx.IntImm(tx.dtype, 0),
        tirx.IntImm(tx.dtype, k),
        tirx.ForKind.VECTORIZED,
        substitute(root.body, {tx: tx * k + v}),
    )
    block = tirx.SBlock(
        root.iter_vars,
        root.reads,
        root.writes,
        root.name_hint,
        per_thread,
        root.init,
        root.alloc_buffers,
        root.match_buffers,
        root.annotations,
    )
    body = _regrid(func.body, grid, k, lambda stmt: with_span_of(block, root) if stmt.same_as(root) else None)
    return Grown(func.with_body(body), k, threads * k, threads, _extent(grid), _ceildiv(grid, k))


def regrown(before, after, loop_line: int, factor: int | None) -> Grown | None:
    """How the kernel `after` (the factory called again with a larger tile) grew `before`'s tile, where it
    is the variant a proof needs: the same threads per block, the `T.Parallel` nest at `loop_line`
    `factor` times larger and the grid as many times smaller. None otherwise (an argument that also sets
    the threads launches more of them instead)."""
    loops = [
        _first(
            f.body, lambda n: isinstance(n, tirx.For) and n.kind == tirx.ForKind.PARALLEL and line_of(n) == loop_line
        )
        for f in (before, after)
    ]
    grids = [_blocks(f) for f in (before, after)]
    if factor is None or None in loops or _threads(before) != _threads(after):
        return None
    elements = _product(loops[1])
    if elements != _product(loops[0]) * factor or None in grids or grids[1] != -(-grids[0] // factor):
        return None
    return Grown(after, factor, elements, _threads(after), grids[0], grids[1])


def _blocks(func) -> int | None:
    """The blocks a kernel launches, where the grid is a constant one."""
    total = 1
    for grid in _grid_loops(func):
        if not isinstance(grid.extent, tirx.IntImm):
            return None
        total *= int(grid.extent)
    return total


def _factor(grid, factor: int) -> int:
    """`factor`, doubled where that makes it divide a constant grid."""
    extent = _extent(grid)
    if not isinstance(extent, int):
        return factor
    for doubling in range(DOUBLINGS + 1):
        if extent % (factor << doubling) == 0:
            return factor << doubling
    return factor


def _regrid(body, grid, k: int, replace):
    """`body` with `grid` (a block-index loop) over ceil(G / k) blocks, its index read as `b * k`, and
    the statements `replace` returns in place of the originals."""

    def post(node):
        if node.same_as(grid):
            inner = substitute(
                ir_transform(node.body, None, replace, ["tirx.For", "tirx.SBlock"]), {node.loop_var: node.loop_var * k}
            )
            blocks = _ceildiv(node, k)
            extent = tirx.IntImm(node.extent.dtype, blocks) if isinstance(blocks, int) else blocks
            return with_span_of(
                tirx.For(node.loop_var, node.min, extent, node.kind, inner, node.thread_binding, node.annotations), node
            )
        return None

    return ir_transform(body, None, post, ["tirx.For"])


def _grid_loop(func, scope, steps):
    """The block-index loop whose variable only `scope` uses and for which `steps(var)` holds."""
    for grid in _grid_loops(func):
        b = grid.loop_var
        if steps(b) and not _used_outside(grid.body, scope, b):
            return grid
    return None


def _steps(stmt, b, lane, extent: int) -> bool:
    """Whether every global access in `stmt` steps over tiles of `extent` lanes with `b` (`b * E + i`
    in its last index), and one does at all."""
    found = []

    def visit(node):
        if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)) and node.buffer.scope() == "global":
            coefficients = tvm.arith.detect_linear_equation(node.indices[-1], [b, lane])
            found.append(
                bool(coefficients)
                and int(coefficients[1]) != 0
                and int(coefficients[0]) == extent * int(coefficients[1])
            )

    post_order_visit(_let_free(stmt), visit)
    return bool(found) and all(found)


def _let_free(stmt):
    """`stmt` with its `Bind`s (`idx = bx * 256 + tx`) substituted into what follows them, so that
    indices read in the thread and block variables."""
    values: dict = {}

    def pre(node):
        if isinstance(node, tirx.Bind):
            values[node.var] = substitute(node.value, values)
        return None

    ir_transform(stmt, pre, None, ["tirx.Bind"])
    return substitute(stmt, values) if values else stmt


def _used_outside(body, scope, var) -> bool:
    """Whether a statement of `body` that is not `scope` nor inside it uses `var`."""

    def pre(node):
        # a Stmt returned from pre replaces the node and stops the descent
        return tirx.Evaluate(0) if node.same_as(scope) else None

    rest = ir_transform(body, pre, None, ["tirx.For", "tirx.SBlock", "tirx.SeqStmt", "tirx.Bind", "tirx.BufferStore"])
    return any(v.same_as(var) for v in tirx.analysis.undefined_vars(rest))


def _per_element(body) -> bool:
    """Whether `body` holds only element assignments, bindings and conditions: no call statement (a
    barrier, an atomic), no loop, no block."""
    allowed = (tirx.BufferStore, tirx.Bind, tirx.SeqStmt, tirx.IfThenElse)
    kinds = []
    post_order_visit(body, lambda n: kinds.append(isinstance(n, allowed)) if isinstance(n, tirx.Stmt) else None)
    return all(kinds)


def _holds_line(body, line: int) -> bool:
    return _first(body, lambda n: isinstance(n, tirx.BufferStore) and line_of(n) == line) is not None


def _thread_var(func, name: str):
    """The variable `T.launch_thread_idx(0)` binds (what `T.get_thread_binding()` returns), if the user
    calls it `name`."""
    bind = _first(
        func.body,
        lambda n: (
            isinstance(n, tirx.Bind)
            and isinstance(n.value, tirx.Call)
            and getattr(n.value.op, "name", "") == "tl.launch_thread_idx"
            and int(n.value.args[0]) == 0
        ),
    )
    return bind.var if bind is not None and bind.var.name in (name, tvm_base_name(name)) else None


def _threads(func) -> int:
    root = _first(func.body, lambda n: isinstance(n, tirx.SBlock) and "tl.launch_threads" in n.annotations)
    return int(root.annotations["tl.launch_threads"][0]) if root is not None else 0


def _product(loop) -> int:
    total = 1
    while isinstance(loop, tirx.For) and loop.kind == tirx.ForKind.PARALLEL:
        total *= int(loop.extent)
        loop = loop.body
    return total


def _extent(grid):
    return int(grid.extent) if isinstance(grid.extent, tirx.IntImm) else grid.extent


def _ceildiv(grid, k: int):
    extent = _extent(grid)
    return -(-extent // k) if isinstance(extent, int) else tirx.floordiv(extent + (k - 1), k)


def _grid_loops(func) -> list:
    """The block-index loops of a kernel, outermost first."""
    return _all(
        func.body,
        lambda n: (
            isinstance(n, tirx.For)
            and n.thread_binding is not None
            and n.thread_binding.thread_tag.startswith("blockIdx")
        ),
    )


def _first(body, match):
    found = _all(body, match)
    return found[0] if found else None


def _all(body, match) -> list:
    found = []
    tirx.stmt_functor.pre_order_visit(body, lambda n: (found.append(n) if match(n) else None, True)[1])
    return found
