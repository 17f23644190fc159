"""TIR expressions evaluated over arrays of loop-variable values (numpy), and rewritten with some variables
replaced: what footprints, guards and index algebra are computed with."""

from __future__ import annotations

from typing import Callable

import numpy as np

from tl_inspect.tir.render import render


def _trunc_div(a, b):
    quotient = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) >= 0) == (np.asarray(b) > 0), quotient, -quotient)


_OPS: dict[str, Callable] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "floordiv": np.floor_divide,
    "floormod": np.mod,
    "div": _trunc_div,
    "mod": lambda a, b: a - b * _trunc_div(a, b),
    "min": np.minimum,
    "max": np.maximum,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "and": np.logical_and,
    "or": np.logical_or,
}


def evaluate(expr, env: dict, default=None):
    """Integer value of an index expression, its variables bound in `env` to ints or numpy arrays
    (arrays evaluate every point at once). An unbound variable takes `default`, or raises KeyError
    when there is none; an expression with a load or another call raises ValueError."""
    head = expr[0]
    if head == "int":
        return expr[1]
    if head == "var":
        if expr[1] not in env and default is None:
            raise KeyError(expr[1])
        return env.get(expr[1], default)
    if head == "cast":
        return evaluate(expr[2], env, default)
    if head == "select" or (head == "call" and expr[1] == "tirx.if_then_else" and len(expr[2]) == 3):
        cond, then, orelse = expr[1:4] if head == "select" else expr[2]
        return np.where(evaluate(cond, env, default), evaluate(then, env, default), evaluate(orelse, env, default))
    if head == "not":
        return np.logical_not(evaluate(expr[1], env, default))
    if head in _OPS:
        with np.errstate(divide="raise"):
            return _OPS[head](evaluate(expr[1], env, default), evaluate(expr[2], env, default))
    raise ValueError(f"cannot evaluate {render(expr)}")


def substitute(expr, env: dict):
    """`expr` with every ("var", name) whose name is in `env` replaced by `env[name]`."""
    if not isinstance(expr, tuple) or not expr:
        return expr
    head = expr[0]
    if head == "var":
        return env.get(expr[1], expr)
    if head in ("int", "float", "other"):
        return expr
    out = [head]
    for item in expr[1:]:
        if isinstance(item, tuple) and item and isinstance(item[0], str):
            out.append(substitute(item, env))
        elif isinstance(item, tuple):
            out.append(tuple(substitute(sub, env) for sub in item))
        else:
            out.append(item)
    return tuple(out)
