"""A plain-data copy of TileLang's TIR, made by the inspector, read by the IR rules.

TVM objects live only inside the worker process that compiled them, so the inspector converts each
snapshot into these small frozen values: they pickle across processes, cache on disk, and let rules run
without tilelang. Expressions are nested tuples whose first item names the node:

    ("var", name)                      ("int", value)            ("float", value)
    ("load", buffer, (index, ...), dtype)
    ("ramp", base, stride, lanes)      ("bcast", value, lanes)
    ("cast", dtype, value)             ("select", cond, then, else)
    ("call", op_name, (arg, ...))      ("not", a)
    (binary_op, a, b) with binary_op in BINARY_OPS
    ("other", text)                    anything else, kept as TVMScript text
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

Expr = tuple

BINARY_OPS = frozenset(
    {
        "add",
        "sub",
        "mul",
        "div",
        "floordiv",
        "floormod",
        "mod",
        "min",
        "max",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "and",
        "or",
    }
)
INTEGER_DTYPES = ("int", "uint")


@dataclass(frozen=True)
class BufferInfo:
    name: str
    scope: str
    dtype: str
    shape: tuple
    line: int | None = None


@dataclass(frozen=True)
class For:
    var: str
    kind: str  # serial | parallel | vectorized | unrolled | thread_binding
    min: Expr
    extent: Expr
    body: tuple
    line: int | None = None
    has_parallel_layout: bool = False
    thread: str = ""  # the thread tag a thread_binding loop binds: "blockIdx.x", "threadIdx.x"
    # `num_stages` of a `T.Pipelined` loop (its annotation survives until the pipeline is injected);
    # None for any other loop
    stages: int | None = None


@dataclass(frozen=True)
class If:
    cond: Expr
    then: tuple
    orelse: tuple
    line: int | None = None


@dataclass(frozen=True)
class Store:
    buffer: str
    indices: tuple
    value: Expr
    dtype: str  # dtype of the stored value, with lanes: "float16x8"
    line: int | None = None


@dataclass(frozen=True)
class Eval:
    expr: Expr
    line: int | None = None


@dataclass(frozen=True)
class Alloc:
    buffer: str
    line: int | None = None


@dataclass(frozen=True)
class Attr:
    key: str
    node: str
    value: Expr
    body: tuple
    line: int | None = None
    tag: str = ""  # the thread tag of a launched thread variable: "threadIdx.x", "blockIdx.y"


@dataclass(frozen=True)
class Let:
    var: str
    value: Expr
    body: tuple
    line: int | None = None


@dataclass(frozen=True)
class Block:
    """A TIR block (tile programs put `T.Kernel` bodies and allocations in blocks)."""

    body: tuple
    line: int | None = None
    annotated_layouts: tuple = ()  # buffers whose layout the user fixed with T.annotate_layout


Stmt = Union[For, If, Store, Eval, Alloc, Attr, Let, Block]


@dataclass(frozen=True)
class IRFunc:
    name: str
    buffers: dict  # name -> BufferInfo
    body: tuple
    script: str = field(default="", repr=False)
    # device kernels only: launch extent per thread tag ("blockIdx.y" -> Expr), and the bytes of dynamic
    # shared memory every launch requests
    launch: dict = field(default_factory=dict)
    dyn_shared_bytes: int = 0

    def scope_of(self, buffer: str) -> str:
        info = self.buffers.get(buffer)
        return info.scope if info else "global"


@dataclass(frozen=True)
class Snapshot:
    """The module after one pipeline stage; `funcs` holds the device (or single) PrimFuncs."""

    stage: str
    funcs: tuple

    def func(self) -> IRFunc | None:
        return self.funcs[0] if self.funcs else None


def children(stmt) -> tuple:
    return stmt.then + stmt.orelse if isinstance(stmt, If) else getattr(stmt, "body", None) or ()


def walk(stmts, ancestors: tuple = ()) -> Iterator[tuple]:
    """Yield `(stmt, ancestors)` in program order, ancestors outermost first."""
    for stmt in stmts:
        yield stmt, ancestors
        yield from walk(children(stmt), ancestors + (stmt,))


def stmt_line(stmt, ancestors=()) -> int | None:
    """The statement's own Python line, else that of its nearest ancestor that has one."""
    for node in (stmt, *reversed(ancestors)):
        if getattr(node, "line", None):
            return node.line
    return None


def own_exprs(stmt) -> tuple:
    """The expressions a statement evaluates itself, not those of the statements nested in it."""
    if isinstance(stmt, Store):
        return stmt.indices + (stmt.value,)
    if isinstance(stmt, Eval):
        return (stmt.expr,)
    if isinstance(stmt, If):
        return (stmt.cond,)
    if isinstance(stmt, For):
        return (stmt.min, stmt.extent)
    if isinstance(stmt, (Let, Attr)):
        return (stmt.value,)
    return ()


def subexprs(expr) -> Iterator[Expr]:
    """Every sub-expression, the expression itself first, then its operands in order. Iterative: a sum
    of thousands of terms nests thousands deep, and a recursive generator would be quadratic in it."""
    if not isinstance(expr, tuple) or not expr:
        return
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(operands(node)))


def operands(expr) -> list:
    """The direct sub-expressions of an expression, in order (a load's indices, a call's arguments)."""
    if expr[0] in ("var", "int", "float", "other"):
        return []
    out = []
    for item in expr[1:]:
        if isinstance(item, tuple) and item and isinstance(item[0], str):
            out.append(item)
        elif isinstance(item, tuple):
            out.extend(sub for sub in item if isinstance(sub, tuple) and sub)
    return out


def vars_of(expr) -> set:
    return {e[1] for e in subexprs(expr) if e[0] == "var"}


def loads_of(expr) -> list:
    return [e for e in subexprs(expr) if e[0] == "load"]


def uses(expr, var: str) -> bool:
    return var in vars_of(expr)


def int_value(expr) -> int | None:
    return expr[1] if isinstance(expr, tuple) and expr and expr[0] == "int" else None


def uncast(expr, dtypes: tuple = ("",)):
    """`expr` without the casts around it, of every dtype or only of those starting with `dtypes`."""
    while expr[0] == "cast" and expr[1].startswith(dtypes):
        expr = expr[2]
    return expr


def dtype_bits(dtype: str) -> int:
    """Bits of one element of a TVM dtype string such as "float16x8" or "bfloat16"."""
    base = dtype.split("x")[0]
    digits = "".join(ch for ch in base if ch.isdigit())
    if base.startswith(("float8", "float4", "float6")):
        return int(base[5])
    return int(digits) if digits else 32


def dtype_lanes(dtype: str) -> int:
    parts = dtype.split("x")
    return int(parts[1]) if len(parts) == 2 and parts[1].isdigit() else 1


def element_dtype(dtype: str) -> str:
    return dtype.split("x")[0]


# access modes of a `tl.region(buf[start], access, *extents)` argument of a tile operator
REGION_READ, REGION_WRITE, REGION_READ_WRITE = 1, 2, 3


@dataclass(frozen=True)
class Region:
    """One buffer argument of a tile operator (`T.copy`, `T.gemm`, `T.fill`, `T.reduce_*`, ...)."""

    buffer: str
    start: tuple  # index expression of the first element, one per dimension
    extents: tuple  # expression per dimension
    access: int  # REGION_READ | REGION_WRITE | REGION_READ_WRITE


def tile_op(expr) -> str | None:
    """ "copy", "gemm", "reduce", ... when `expr` is a frontend tile-operator call, else None."""
    if isinstance(expr, tuple) and expr and expr[0] == "call" and expr[1].startswith("tl.tileop."):
        return expr[1][len("tl.tileop.") :]
    return None


def regions(expr) -> list:
    """The `tl.region` arguments of a tile-operator call, in argument order."""
    out = []
    for arg in expr[2] if tile_op(expr) else ():
        if arg[0] == "call" and arg[1] == "tl.region" and arg[2] and arg[2][0][0] == "load":
            load, access = arg[2][0], int_value(arg[2][1])
            out.append(Region(buffer=load[1], start=load[2], extents=tuple(arg[2][2:]), access=access))
    return out
