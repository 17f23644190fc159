"""From the suite's timings to the cost table's terms: each term is the value for which the cost model,
pricing the case's kernels as tl-inspect inspected them, predicts what the GPU measured.

A term scales what it prices: the accesses it priced (`Access.cost_term`) cost in proportion to it
(never under 1x), and the kernel-level terms (the block floor, the arithmetic rate, full memory speed)
enter `cost.kernel_time` through the table it is given. The terms only the whole launch's estimate reads
(LAUNCH_TERMS: the bytes in flight, the streaming and L2 speeds, a walk's stores) are predicted by that
estimate's launch time (`estimate.launch_parts` over the form's ledger), the rest by `cost.launch_ns` as
the findings are priced. So the prediction for a trial value is the model's own arithmetic on the
inspected accesses, and a bisection finds the value that meets the measurement.
A case whose prediction does not reach its measurement over four orders of magnitude of the term (its
accesses are not what bounds its time) fits nothing, and says so.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass

from tl_inspect.analysis import cost, estimate
from tl_inspect.gpu import cost_table
from tl_inspect.gpu.calibration.suite import RATIO
from tl_inspect.gpu.cost_table import CostTable

SEARCH_SPAN = 64  # the bisection looks from the base value / 64 to the base value x 64
STEPS = 60


# the terms of the whole launch's estimate (tl_inspect.analysis.estimate), which `cost.launch_ns` does not read
LAUNCH_TERMS = (
    "bytes_in_flight",
    "loop_loads_in_flight",
    "walk_store_ns",
    "streaming_read_bytes_per_ns",
    "streaming_write_bytes_per_ns",
    "l2_bytes_per_ns",
    "tensor_peak_fraction",
)


@dataclass(frozen=True)
class Priced:
    """One form as tl-inspect inspected it: what the model needs to predict its time."""

    accesses: tuple  # tl_inspect.model.Access as priced with the shipped table, less what explains it
    workload: object  # tl_inspect.analysis.workload.Workload
    ledger: object = None  # tl_inspect.model.Ledger: the launch the estimate prices

    @classmethod
    def of(cls, artifact, workload) -> Priced:
        """The form of `artifact`, to be sent back from the worker that inspected it: its accesses without
        what explains a finding (the guard, causes, proof), which the cost model does not read and which
        can hold the compiler's objects (a guard's tvm strings), whose pickled copies crash when freed."""
        return cls(
            tuple(
                dataclasses.replace(a, guard=None, cause=None, causes=(), proof=None, gain=None, measured=None)
                for a in artifact.accesses
            ),
            workload,
            artifact.ledger,
        )


@dataclass(frozen=True)
class Timed:
    """One case as the GPU timed it."""

    term: str
    label: str
    fit: str
    ms_good: float
    bytes_good: int
    ms_bad: float | None = None
    bytes_bad: int | None = None
    spread: float = 0.0

    @property
    def measured(self) -> float:
        """What the term must reproduce: the slowdown per byte (RATIO) or the good form's ns."""
        if self.fit == RATIO:
            return (self.ms_bad / self.bytes_bad) / (self.ms_good / self.bytes_good)
        return self.ms_good * 1e6


def predicted_ns(form: Priced, nbytes: int, base: CostTable, term: str, value: float) -> float:
    """The model's time for `form`'s launch moving `nbytes` with the term at `value` (the rest as in
    `base`): for a term of LAUNCH_TERMS the estimate's launch time over the form's ledger (which counts
    the launch's bytes itself), else as `cost.launch_ns` prices the findings at a launch's own size."""
    table = base.with_term(term, value)
    if term in LAUNCH_TERMS:
        if form.ledger is None or form.ledger.blocks is None:
            raise ValueError(f"{term}: the form has no launch the estimate can count")
        return estimate.total_ns(estimate.launch_parts(form.accesses, form.ledger, form.workload, table))
    scale = value / base[term]
    replaced = {
        id(a): (max(1.0, a.cost * scale), a.cost_bound or cost.MEMORY)
        for a in form.accesses
        if a.cost_term == term and a.cost
    }
    return cost.launch_ns(form.accesses, nbytes, table, replaced, workload=form.workload)


def fit_case(timed: Timed, bad: Priced | None, good: Priced, base: CostTable) -> float | None:
    """The term's value that makes the model predict the case's measurement; None when none does."""
    if timed.term in LAUNCH_TERMS and any(
        f.ledger is None or f.ledger.blocks is None for f in (bad, good) if f is not None
    ):
        return None  # a launch the estimate cannot count (a run-time grid) predicts nothing
    if timed.fit != RATIO:

        def predict(x):
            return predicted_ns(good, timed.bytes_good, base, timed.term, x)
    else:

        def predict(x):
            return (predicted_ns(bad, timed.bytes_bad, base, timed.term, x) / timed.bytes_bad) / (
                predicted_ns(good, timed.bytes_good, base, timed.term, x) / timed.bytes_good
            )

    return _solve(predict, timed.measured, base[timed.term])


def _solve(predict, target: float, start: float) -> float | None:
    lo, hi = start / SEARCH_SPAN, start * SEARCH_SPAN
    below, above = predict(lo) - target, predict(hi) - target
    if below * above > 0 or below == above:
        return None
    for _ in range(STEPS):
        mid = math.sqrt(lo * hi)
        off = predict(mid) - target
        if (off > 0) == (above > 0):
            hi, above = mid, off
        else:
            lo, below = mid, off
    return math.sqrt(lo * hi)


@dataclass(frozen=True)
class Fitted:
    term: str
    base: float
    value: float | None  # the median over its cases; None when no case fitted it
    cases: tuple  # (label, that case's value or None)


def fit_terms(fits: list, base: CostTable) -> list:
    """One Fitted per term of the table, from `fits`: (Timed, its case's value or None), in suite order."""
    by_term: dict = {}
    for timed, value in fits:
        by_term.setdefault(timed.term, []).append((timed.label, value))
    out = []
    for term in cost_table.TERMS:
        cases = tuple(by_term.get(term, ()))
        values = [v for _, v in cases if v is not None]
        out.append(Fitted(term, base[term], statistics.median(values) if values else None, cases))
    return out
