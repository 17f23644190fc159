"""Shape sweeps as the reporters show them: per access of a factory's kernels, the width and verdict
each swept value gives it. Plain data; it never imports tilelang."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.model import RunResult


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
    varying = [
        name for name in dict.fromkeys(n for case in cases for n in case) if len({case.get(name) for case in cases}) > 1
    ]
    columns = tuple(
        ",".join(f"{n}={case[n]}" for n in varying if n in case) or k.name for case, k in zip(cases, kernels)
    )
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
        cells = tuple(
            Cell(None, None, error=True) if k.status != "ok" else found.get(key, Cell(None, None))
            for k, found in per_kernel
        )
        rows.append(Row(*key, cells))
    return Sweep(file, factory, columns, tuple(k.name for k in kernels), tuple(rows))
