"""The cases a factory is inspected with: as written, with each sweep expanded into its cartesian product,
and the label each case gives its kernel (`add[N=1024]`). Plain Python; it never imports tilelang."""

from __future__ import annotations

import itertools
import math
import reprlib

SWEEP_KEY = "sweep"
# cases of one factory: each is a compile of a second or more
MAX_CASES = 1024


def expand_cases(value, where: str) -> list[dict]:
    """A factory's cases as written (a list of argument dicts, or one dict with a sweep) with each `"sweep": {NAME:
    [values]}` expanded into the cartesian product of its lists, the dict's other names fixed. A case given
    twice is inspected once; more than `MAX_CASES` cases is an error, found before any is built."""
    # a lone dict without a sweep is more likely a forgotten list than one case: it stays an error
    written = [value] if isinstance(value, dict) and SWEEP_KEY in value else value
    if not isinstance(written, (list, tuple)) or not all(isinstance(case, dict) for case in written):
        raise ValueError(
            f"{where}: expected a list of keyword-argument dicts, or one dict with "
            f"{SWEEP_KEY!r}: {{NAME: [values]}}, got {shown(value)}"
        )
    swept_cases = []
    for case in written:
        fixed = {name: v for name, v in case.items() if name != SWEEP_KEY}
        swept = case.get(SWEEP_KEY, {})
        if not isinstance(swept, dict) or not all(
            isinstance(values, (list, tuple)) and values for values in swept.values()
        ):
            raise ValueError(
                f"{where}: {SWEEP_KEY!r} expects {{NAME: [value, ...]}} with non-empty lists, got {shown(swept)}"
            )
        overlap = sorted(set(fixed) & set(swept))
        if overlap:
            raise ValueError(f"{where}: {', '.join(overlap)} both fixed and swept")
        swept_cases.append((fixed, swept))
    count = sum(math.prod(len(values) for values in swept.values()) for _, swept in swept_cases)
    if count > MAX_CASES:
        raise ValueError(f"{where}: {count} cases; at most {MAX_CASES} are inspected (sweep fewer values)")
    cases: dict = {}
    for fixed, swept in swept_cases:
        for values in itertools.product(*swept.values()):
            case = {**fixed, **dict(zip(swept, values))}
            cases.setdefault(_identity(case), case)
    return list(cases.values())


def _identity(case: dict):
    """Equal for the same arguments given twice; a value whose repr fails is never a duplicate."""
    try:
        return repr(sorted(case.items(), key=lambda item: item[0]))
    except Exception:  # noqa: BLE001 - the user's `__repr__` may raise anything
        return object()


def shown(value) -> str:
    """A value of the user's as an error message quotes it: abbreviated, never a 17 MB line."""
    try:
        return reprlib.repr(value)
    except Exception:  # noqa: BLE001
        return f"a {type(value).__name__}"


def case_label(case: dict) -> str:
    return ",".join(f"{name}={value}" for name, value in case.items())
