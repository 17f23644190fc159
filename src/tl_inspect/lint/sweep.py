"""Shape sweeps: the cases of a factory called over several values, and per access the width and verdict
each value gives it. Plain data for the reporters; it never imports tilelang."""

from __future__ import annotations

import itertools
import math
import reprlib
from dataclasses import dataclass

from tl_inspect.model import RunResult

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
        raise ValueError(f"{where}: expected a list of keyword-argument dicts, or one dict with "
                         f"{SWEEP_KEY!r}: {{NAME: [values]}}, got {shown(value)}")
    swept_cases = []
    for case in written:
        fixed = {name: v for name, v in case.items() if name != SWEEP_KEY}
        swept = case.get(SWEEP_KEY, {})
        if not isinstance(swept, dict) or not all(
                isinstance(values, (list, tuple)) and values for values in swept.values()):
            raise ValueError(f"{where}: {SWEEP_KEY!r} expects {{NAME: [value, ...]}} with non-empty lists, "
                             f"got {shown(swept)}")
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


@dataclass(frozen=True)
class Cell:
    bits: int | None  # None: this case has no such access
    verdict: str | None
    error: bool = False  # the case could not be compiled


@dataclass(frozen=True)
class Row:
    buffer: str
    direction: str  # load | store
    line: int | None
    cells: tuple  # one Cell per column

    @property
    def steady(self) -> bool:
        """The access has the same width and verdict for every value that compiled."""
        seen = {(c.bits, c.verdict) for c in self.cells if not c.error}
        return len(seen) <= 1

    @property
    def partial(self) -> bool:
        """Some values could not be compiled: `steady` speaks only for the others."""
        return any(c.error for c in self.cells)


@dataclass(frozen=True)
class Sweep:
    file: str
    factory: str
    columns: tuple  # labels of the swept values only: "N=2047"
    kernels: tuple  # the kernel name of each column, for links
    rows: tuple


def sweeps(run: RunResult) -> list[Sweep]:
    """One sweep per factory inspected over two or more cases, in run order."""
    groups: dict[tuple, list] = {}
    for report in run.reports:
        k = report.kernel
        if k.factory and k.case:
            groups.setdefault((k.file, k.factory), []).append(k)
    return [_sweep(file, factory, kernels) for (file, factory), kernels in groups.items() if len(kernels) > 1]


def _sweep(file: str, factory: str, kernels: list) -> Sweep:
    cases = [dict(k.case) for k in kernels]
    varying = [name for name in dict.fromkeys(n for case in cases for n in case)
               if len({case.get(name) for case in cases}) > 1]
    columns = tuple(",".join(f"{n}={case[n]}" for n in varying if n in case) or k.name
                    for case, k in zip(cases, kernels))
    keys: dict[tuple, None] = {}
    per_kernel = []
    for k in kernels:
        found: dict[tuple, Cell] = {}
        for a in k.accesses:
            key = (a.buffer, a.kind, a.line)
            keys.setdefault(key)
            # several instructions of one access (a vector loop and its tail): the narrowest speaks for it
            if key not in found or a.bits < found[key].bits:
                found[key] = Cell(a.bits, a.verdict)
        per_kernel.append((k, found))
    rows = []
    for key in sorted(keys, key=lambda key: (key[2] or 0, key[1], key[0])):
        cells = tuple(Cell(None, None, error=True) if k.status != "ok" else found.get(key, Cell(None, None))
                      for k, found in per_kernel)
        rows.append(Row(*key, cells))
    return Sweep(file, factory, columns, tuple(k.name for k in kernels), tuple(rows))
