"""How a module-level kernel was built: the factory call that binds it in the user's source
(`add_2044 = add(2044)`), so that a proof can call the factory again with an aligned length and every
constant derived from it follows (the TileLang book's "change N to a divisible value").

Only literal arguments are evaluated (numbers, strings, tuples, arithmetic on them): the call is found
in the source, never run as written.
"""

from __future__ import annotations

import ast
import functools
import inspect

from tl_inspect.inspector.discovery.origins import module_text, user_function
from tl_inspect.inspector.discovery.static_values import ARITHMETIC


def module_level_call(module, name: str) -> tuple[object, dict] | None:
    """(the factory, its arguments by parameter name) of the module's top-level `name = factory(...)`,
    None when there is no such single assignment or an argument is not a literal."""
    calls = _top_level_calls(getattr(module, "__file__", None) or "")
    call = calls.get(name)
    if call is None:
        return None
    factory = _resolve(module, call.func)
    if not callable(factory):
        return None
    try:
        args = [_literal(arg) for arg in call.args]
        kwargs = {kw.arg: _literal(kw.value) for kw in call.keywords}
        bound = inspect.signature(_signature_of(factory)).bind(*args, **kwargs)
    except (ValueError, TypeError):
        return None
    if any(
        p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in bound.signature.parameters.values()
        if p.name in bound.arguments
    ):
        return None
    return factory, dict(bound.arguments)


@functools.lru_cache(maxsize=16)
def _top_level_calls(path: str) -> dict:
    """Name -> the call assigned to it once at the top level of the file at `path`."""

    try:
        tree = ast.parse(module_text(path))
    except (SyntaxError, ValueError):
        return {}
    calls: dict = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
            # a name bound twice was built by whichever call ran last: not worth guessing
            calls[target] = stmt.value if target not in calls and isinstance(stmt.value, ast.Call) else None
    return {name: call for name, call in calls.items() if call is not None}


def _resolve(module, node):
    """The object a callee written as `name` or `a.b.name` is bound to in the module, without calling anything."""
    if isinstance(node, ast.Name):
        return vars(module).get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _resolve(module, node.value)
        return getattr(owner, node.attr, None) if owner is not None else None
    return None


def _literal(node):
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        return ARITHMETIC[type(node.op)](_literal(node.left), _literal(node.right))
    return ast.literal_eval(node)


def _signature_of(factory):

    return user_function(factory)
