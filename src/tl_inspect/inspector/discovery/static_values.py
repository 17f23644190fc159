"""Values read from a file's source without running it (inference.py): `Unknown` for those that need running
it, literals, and what the file's `argparse` options default to (`args.m` is the default of `--m`)."""

from __future__ import annotations

import ast
import builtins
import math
import operator
from dataclasses import dataclass

PARSE_METHODS = ("parse_args", "parse_known_args")
# the arithmetic a shape may be written with (`(1 << 20) - 4`, `M // 2`), evaluated without running the file
ARITHMETIC = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
# the comparisons a conditional size may test (`64 if D <= 128 else 32`, `dtype == "float16"`)
COMPARISONS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
# functions whose result depends on their arguments alone, so calling them on known values is what the file
# would compute (`math.ceil(S / 64)`, `max(M, 64)`); found by identity, so `from math import ceil` is one too
PURE_FUNCTIONS = (int, float, min, max, abs, round, math.ceil, math.floor, math.prod, math.log2)


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be known without running the file, and why (a phrase: "`a` is a loop variable")."""

    reason: str


@dataclass(frozen=True)
class FunctionRef:
    """A factory or helper of the file held in a name (`kernel = gemm_2cta if two_cta else gemm`,
    `KERNELS[name]`), known by the name the walk calls it under."""

    name: str


@dataclass(eq=False)
class Instance:
    """An object of one of the file's classes made in a walked call (`config = MatmulConfig(M, N, K)`): the
    attributes its `__init__` sets, as the walk knows them."""

    cls: str
    fields: dict


@dataclass(frozen=True)
class ArgparseResult:
    """What `parser.parse_args()` returns: its options' defaults, by destination."""

    defaults: dict


def argparse_defaults(tree: ast.Module) -> dict:
    """dest -> default of every `add_argument("--name", ..., default=...)` in the file (type= applied)."""
    defaults = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and last_name(node.func) == "add_argument" and node.args):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        dest = literal(keywords.get("dest")) or next(
            (f.lstrip("-").replace("-", "_") for f in flags if f.startswith("--")),
            flags[0].lstrip("-") if flags else None,
        )
        if not dest:
            continue
        action = literal(keywords.get("action"))
        if "default" in keywords:
            default = literal(keywords["default"], Unknown(f"`--{dest}`'s default is computed at run time"))
        elif action in ("store_true", "store_false"):
            default = action == "store_false"
        else:
            default = Unknown(f"`--{dest}` has no default")
        kind = last_name(keywords["type"]) if "type" in keywords else None
        if isinstance(default, str) and kind in ("int", "float"):
            try:
                default = int(default) if kind == "int" else float(default)
            except ValueError:
                default = Unknown(f"`--{dest}`'s default {default!r} is not a {kind}")
        defaults[dest] = default
    return defaults


def returns_parsed_arguments(function) -> bool:
    """`def parse_args(): ...; return parser.parse_args()`: its call is the argparse result."""
    return any(
        isinstance(n, ast.Return) and isinstance(n.value, ast.Call) and last_name(n.value.func) == "parse_args"
        for n in ast.walk(function)
    )


def literal(node, otherwise=None):
    if node is None:
        return otherwise
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return otherwise


def last_name(node) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def builtin(name: str):
    """What a name the file neither assigns nor imports means: a builtin, else None."""
    return getattr(builtins, name, None)


def is_static_function(callee) -> bool:
    """Whether calling `callee` on known values gives exactly the value the file would pass."""
    if any(callee is function for function in PURE_FUNCTIONS):
        return True
    # `T.dtype("float16")`, `T.dtype(dtype)`: tilelang's dtype class, a constructor from a dtype's name
    if isinstance(callee, type) and is_tilelang_dtype_class(callee):
        return True
    # `dtype.as_torch()` of a known tilelang dtype: the torch dtype of the same name
    owner = getattr(callee, "__self__", None)
    return (
        is_tilelang_dtype_class(type(owner))
        and getattr(callee, "__func__", None) is not None
        and callee.__func__ is getattr(type(owner), "as_torch", None)
    )


def is_tilelang_dtype_class(kind) -> bool:
    # tilelang's `T.dtype` is tvm_ffi's; read by name so this module needs no tilelang import
    return kind.__name__ == "dtype" and kind.__module__.startswith("tvm_ffi")


def dtype_named(module, name):
    """`getattr(torch, "float16")`: a dtype of a module, read by a known name; None for anything else (a
    function or a missing name), which would need the file run to mean anything."""
    value = getattr(module, name, None) if isinstance(name, str) else None
    return value if type(value).__name__ == "dtype" else None
