"""The call contexts of a `test_*` function under `@pytest.mark.parametrize`, read from its decorators:
each parameter tuple binds the test's parameters once (inference.py walks the test once per binding).

`@pytest.mark.parametrize("m, n", [(128, 256), (256, 512)])` gives {"m": 128, "n": 256} and
{"m": 256, "n": 512}; stacked decorators give every combination, as pytest runs them. A list that
cannot be evaluated binds its names to an `Unknown` saying so, and the test's calls are refused with it.
"""

from __future__ import annotations

import ast
import itertools

from tl_inspect.inspector.discovery.static_values import Unknown, last_name

# a test with more combinations than the per-factory case cap would only have the extra ones dropped later
MAX_CONTEXTS = 16


def parametrized(function, evaluate, limit: int) -> list[dict]:
    """The bindings of the function's parameters, one per pytest case (at most `limit`); [{}] when it is not
    parametrized."""
    groups = [_cases(decorator, evaluate) for decorator in function.decorator_list if _is_parametrize(decorator)]
    if not groups:
        return [{}]
    combined = (
        dict(item for case in combination for item in case.items()) for combination in itertools.product(*groups)
    )
    return list(itertools.islice(combined, limit))


def _is_parametrize(decorator) -> bool:
    return (
        isinstance(decorator, ast.Call)
        and last_name(decorator.func) == "parametrize"
        and isinstance(decorator.func, ast.Attribute)
        and last_name(decorator.func.value) == "mark"
    )


def _cases(decorator: ast.Call, evaluate) -> list[dict]:
    names_node = (
        decorator.args[0]
        if decorator.args
        else next((k.value for k in decorator.keywords if k.arg == "argnames"), None)
    )
    values_node = (
        decorator.args[1]
        if len(decorator.args) > 1
        else next((k.value for k in decorator.keywords if k.arg == "argvalues"), None)
    )
    names = evaluate(names_node, {}) if names_node is not None else Unknown("the parametrize names are missing")
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not (isinstance(names, (list, tuple)) and names and all(isinstance(n, str) for n in names)):
        return [{}]  # names not known: the parameters fall back to their defaults, or are refused without one
    values = evaluate(values_node, {}) if values_node is not None else Unknown("the parametrize values are missing")
    if isinstance(values, Unknown) or not isinstance(values, (list, tuple)):
        reason = values.reason if isinstance(values, Unknown) else "the parametrize values are not a list"
        return [{name: Unknown(f"`{name}` is parametrized from values not known: {reason}") for name in names}]
    # one name: each value is its case; several: each value is a tuple of their length
    rows = [(value,) for value in values] if len(names) == 1 else list(values)
    if not all(isinstance(row, (tuple, list)) and len(row) == len(names) for row in rows):
        return [{name: Unknown(f"`{name}`'s parametrize cases are not tuples of {len(names)}") for name in names}]
    return [dict(zip(names, row)) for row in rows]
