"""Index algebra: affine forms of index expressions, flattening, and footprints over a thread block.

Expressions are `tl_inspect.tir.nodes` tuples. An affine form is a polynomial {sorted tuple of variable
names: integer coefficient}; a footprint is the set of flat element indices an access touches when
its loop variables run over their extents.
"""

from __future__ import annotations

import math

import numpy as np

from tl_inspect.tir import nodes as ir
from tl_inspect.tir.evaluate import evaluate
from tl_inspect.tir.render import render

# footprints are enumerated over at most this many index points; outer loops are cut first
ENUMERATION_LIMIT = 1 << 20
# a run-time length (`T.dynamic("N")`, a scalar argument) takes this value when an index is evaluated
RUNTIME_VALUE = 4096


def affine(expr) -> dict | None:
    """Polynomial of an index; None if it is not a sum of products of variables (floordiv, modulo,
    selects, loads)."""
    head = expr[0]
    if head == "int":
        return {(): expr[1]} if expr[1] else {}
    if head == "var":
        return {(expr[1],): 1}
    if head == "cast":
        return affine(expr[2])
    if head in ("add", "sub"):
        a, b = affine(expr[1]), affine(expr[2])
        if a is None or b is None:
            return None
        out = dict(a)
        for term, coeff in b.items():
            out[term] = out.get(term, 0) + (coeff if head == "add" else -coeff)
        return {t: c for t, c in out.items() if c}
    if head == "mul":
        a, b = affine(expr[1]), affine(expr[2])
        if a is None or b is None:
            return None
        out = {}
        for ta, ca in a.items():
            for tb, cb in b.items():
                term = tuple(sorted(ta + tb))
                out[term] = out.get(term, 0) + ca * cb
        return {t: c for t, c in out.items() if c}
    return None


def coefficient(poly: dict, var: str) -> int | None:
    """Integer coefficient of `var`, 0 if absent, None if it multiplies another variable."""
    coeff = 0
    for term, c in poly.items():
        if var in term:
            if term != (var,):
                return None
            coeff = c
    return coeff


def misalignment(poly: dict, inner: str, lanes: int) -> tuple | None:
    """The term of an affine index that breaks `lanes`-element alignment: (variables, coefficient),
    variables () for a constant offset; None if every term off the lane variable keeps alignment."""
    for term, coeff in poly.items():
        if inner not in term and coeff % lanes:
            return term, coeff
    return None


def flatten(indices: tuple, shape: tuple):
    """The row-major flat index of a multi-dimensional access."""
    if len(indices) == 1:
        return indices[0]
    flat = None
    stride: tuple = ("int", 1)
    for d in range(len(indices) - 1, -1, -1):
        term = indices[d] if ir.int_value(stride) == 1 else ("mul", indices[d], stride)
        flat = term if flat is None else ("add", term, flat)
        if d > 0:
            dim = shape[d] if d < len(shape) else 1
            dim_expr = ("int", dim) if isinstance(dim, int) else dim
            stride = (
                ("int", ir.int_value(stride) * dim)
                if (isinstance(dim, int) and ir.int_value(stride) is not None)
                else ("mul", stride, dim_expr)
            )
    return flat


def comparisons(cond) -> list:
    """(smaller side, larger side) of every ordering comparison in a condition."""
    out = []
    for sub in ir.subexprs(cond):
        if sub[0] in ("lt", "le"):
            out.append((sub[1], sub[2]))
        elif sub[0] in ("gt", "ge"):
            out.append((sub[2], sub[1]))
    return out


def bound_of(cond, varying) -> tuple | None:
    """(comparison, bound) of the first comparison in `cond` with one side using a variable of
    `varying` and the other side free of them: the bound the varying index is checked against."""
    for lhs, rhs in comparisons(cond):
        left, right = ir.vars_of(lhs) & varying, ir.vars_of(rhs) & varying
        if left and not right:
            return (lhs, rhs), rhs
        if right and not left:
            return (lhs, rhs), lhs
    return None


def select_conds(expr) -> list:
    """Conditions of the `T.if_then_else`s and selects inside an expression."""
    conds = []
    for sub in ir.subexprs(expr):
        if sub[0] == "select":
            conds.append(sub[1])
        elif sub[0] == "call" and sub[1] == "tirx.if_then_else" and len(sub[2]) == 3:
            conds.append(sub[2][0])
    return conds


def opaque_loads(expr) -> tuple:
    """The expression with each loaded value (Ids[bx]) replaced by an opaque variable, and the
    variables those loads are indexed by."""
    if not isinstance(expr, tuple) or not expr or expr[0] in ("int", "float", "var", "other"):
        return expr, frozenset()
    if expr[0] == "load":
        return ("var", render(expr)), frozenset().union(*(ir.vars_of(i) for i in expr[2]))
    gathered: frozenset = frozenset()
    parts = []
    for item in expr:
        if isinstance(item, tuple) and item and isinstance(item[0], str):
            item, used = opaque_loads(item)
            gathered |= used
        elif isinstance(item, tuple):
            pairs = [opaque_loads(i) for i in item]
            item = tuple(i for i, _ in pairs)
            gathered = gathered.union(*(g for _, g in pairs))
        parts.append(item)
    return tuple(parts), gathered


class Grid:
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
            values = evaluate(flat, self.env, default=RUNTIME_VALUE)
        except (KeyError, ValueError, ZeroDivisionError, FloatingPointError):
            return None
        return unique(np.asarray(values, dtype=np.int64))


def unique(values) -> np.ndarray:
    """The distinct values of an integer array, sorted, as `np.unique` gives them. By sorting: numpy 2.4's
    `np.unique` hashes, and took 10-30x longer on the index arrays of a footprint (1e5-1e6 elements)."""
    ordered = np.sort(np.asarray(values).ravel())
    return ordered[_first_of_each(ordered)]


def unique_counts(values) -> np.ndarray:
    """How many times each distinct value of an integer array occurs, in the order of `unique`."""
    ordered = np.sort(np.asarray(values).ravel())
    starts = np.flatnonzero(_first_of_each(ordered))
    return np.diff(np.append(starts, ordered.size))


def _first_of_each(ordered: np.ndarray) -> np.ndarray:
    first = np.ones(ordered.size, dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return first


def run_length(grid) -> int:
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


def aligned_run(points: np.ndarray, max_lanes: int) -> int:
    """Widest power-of-two vector (at most max_lanes) whose aligned groups cover half the footprint."""
    lanes = max_lanes
    while lanes >= 2:
        counts = unique_counts(points // lanes)
        if (counts == lanes).sum() * lanes * 2 >= len(points):
            return lanes
        lanes //= 2
    return 1
