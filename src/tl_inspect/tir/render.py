"""TIR expressions and stores written as a user reads them in a message: Python-like, with the fewest
parentheses their precedence needs, and a store cut at a given width."""

from __future__ import annotations

from tl_inspect.tir.nodes import INTEGER_DTYPES, Store, int_value, uncast

_SYMBOLS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "floordiv": "//",
    "floormod": "%",
    "mod": "%",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "and": "and",
    "or": "or",
}


def render(expr) -> str:
    """An expression as the user would write it (`bx * 1024 + i + 1`, parentheses only where needed):
    the one renderer of every message and every piece of evidence."""
    head = expr[0]
    if head == "var":
        return expr[1]
    if head == "int":
        return str(expr[1])
    if head == "float":
        return str(int(expr[1])) if float(expr[1]).is_integer() else repr(expr[1])
    if head == "load":
        return render_access(expr[1], expr[2])
    if head == "ramp":
        base = render(expr[1])
        return (
            f"{base}:{base} + {expr[3]}"
            if int_value(expr[2]) == 1
            else (f"T.Ramp({base}, {render(expr[2])}, {expr[3]})")
        )
    if head == "bcast":
        return f"T.Broadcast({render(expr[1])}, {expr[2]})"
    if head == "cast":
        # index arithmetic is widened to int64 by lowering: the user never wrote those casts
        return render(expr[2]) if expr[1].startswith(INTEGER_DTYPES) else f"T.Cast({expr[1]!r}, {render(expr[2])})"
    if head == "select":
        return f"T.if_then_else({render(expr[1])}, {render(expr[2])}, {render(expr[3])})"
    if head == "call":
        return f"{expr[1]}({', '.join(render(a) for a in expr[2])})"
    if head == "not":
        return f"not {_operand(expr[1], _PRECEDENCE['not'])}"
    if head in ("min", "max"):
        return f"T.{head}({render(expr[1])}, {render(expr[2])})"
    if head in _SYMBOLS:
        level = _PRECEDENCE[head]
        left = _operand(expr[1], level)
        # at equal precedence the right operand keeps its parentheses unless regrouping cannot change
        # the value: a + (b - c) == a + b - c, a * (b * c) == a * b * c, but a * (b // c) != a * b // c
        right_head = uncast(expr[2], INTEGER_DTYPES)[0]
        regroupable = (
            right_head == head and head in ("add", "mul", "and", "or") or (head == "add" and right_head == "sub")
        )
        right = render(expr[2])
        if _PRECEDENCE.get(right_head, 99) < level or (_PRECEDENCE.get(right_head) == level and not regroupable):
            right = f"({right})"
        return f"{left} {_SYMBOLS[head]} {right}"
    return str(expr[1])


def render_access(buffer: str, indices) -> str:
    """`buf[i, j]`: an element of a buffer as the user would index it."""
    return f"{buffer}[{', '.join(render(i) for i in indices)}]"


_PRECEDENCE = {
    "or": 1,
    "and": 2,
    "not": 3,
    "lt": 4,
    "le": 4,
    "gt": 4,
    "ge": 4,
    "eq": 4,
    "ne": 4,
    "add": 5,
    "sub": 5,
    "mul": 6,
    "div": 6,
    "floordiv": 6,
    "floormod": 6,
    "mod": 6,
}


def _operand(expr, level: int) -> str:
    text = render(expr)
    return f"({text})" if _PRECEDENCE.get(uncast(expr, INTEGER_DTYPES)[0], 99) < level else text


def render_store(store: Store, limit: int = 90) -> str:
    """`O[i] += X[i, j]` for an accumulation, `m[i] = T.max(m[i], x[i, j])` for any other store."""
    target = render_access(store.buffer, store.indices)
    value = store.value
    text = f"{target} = {render(value)}"
    if value[0] == "add":
        for own, other in ((value[1], value[2]), (value[2], value[1])):
            if own[0] == "load" and own[1] == store.buffer and own[2] == store.indices:
                text = f"{target} += {render(other)}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
