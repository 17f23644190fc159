"""Values read from a file's source without running it (inference.py): `Unknown` for those that need running
it, literals, and what the file's `argparse` options default to (`args.m` is the default of `--m`)."""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass

PARSE_METHODS = ("parse_args", "parse_known_args")
# the arithmetic a shape may be written with (`(1 << 20) - 4`, `M // 2`), evaluated without running the file
ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
              ast.LShift: operator.lshift, ast.RShift: operator.rshift}


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be known without running the file, and why (a phrase: "`a` is a loop variable")."""
    reason: str


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
            (f.lstrip("-").replace("-", "_") for f in flags if f.startswith("--")), flags[0].lstrip("-") if flags else None)
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
    return any(isinstance(n, ast.Return) and isinstance(n.value, ast.Call) and last_name(n.value.func) == "parse_args"
               for n in ast.walk(function))


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
