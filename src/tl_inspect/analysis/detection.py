"""Why a global access is narrower or less coalesced than its block footprint allows.

A cause is a `tl_inspect.model.Cause`: one kind of `tl_inspect.causes` with the facts its message is
rendered from. Detection reads the kernel's facts (the unit the access belongs to, its index expressions and
predicates) and the access as the device code emitted it (its lane-varying guard). No prose here: each
cause kind phrases itself.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from tl_inspect.analysis.collisions import advances
from tl_inspect.analysis.footprints import MAX_VECTOR_BITS, UnitFootprint
from tl_inspect.analysis.units import MemRef, Unit, count, product
from tl_inspect.causes.transposed import THREAD_ORDER
from tl_inspect.model import Access, Cause
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.indexing import affine, aligned_run, coefficient, comparisons, misalignment
from tl_inspect.tir.render import render, render_access

if TYPE_CHECKING:
    from tl_inspect.analysis.kernel import KernelModel


class Plans:
    """The plans of one kernel's units, each built on first use: a unit's causes may read another's plan."""

    def __init__(self, facts: KernelModel):
        self.facts = facts
        self._built: dict = {}

    def __getitem__(self, unit: Unit) -> UnitPlan:
        if unit not in self._built:
            self._built[unit] = UnitPlan(self, unit)
        return self._built[unit]


class UnitPlan(UnitFootprint):
    """One unit's footprints and the search for the causes of its narrow or uncoalesced accesses."""

    def __init__(self, plans: Plans, unit: Unit):
        super().__init__(plans.facts, unit)
        self.plans = plans

    def causes(self, ref: MemRef, access: Access, width: int) -> list:
        """Every cause found for `ref` emitted as `access`, the primary (the one to prove) first."""
        # an invariant store or a strided access decides the whole loop's width; rows or offsets off the
        # vector boundary come next (tilelang's per-element bounds check on a ragged row follows from
        # them); a bounds check on a length that is not a multiple of the width last
        causes = self._invariant_store_causes()
        causes += [cause for cause, _ in self._limiters()]
        causes += self._alignment_causes(width)
        causes += self._guard_causes(access)
        causes += self._predicate_causes(width)
        # a full-width access whose neighbouring threads are rows apart is held back by its layout too
        apart = (access.lane_stride_bytes or 0) > 2 * (access.bits // 8)
        causes += self._fragment_causes(width, apart)
        causes += self._per_thread_causes(width, ref)
        distinct = []
        for cause in causes:
            if cause not in distinct:
                distinct.append(cause)
        return distinct

    def _guard_causes(self, access: Access) -> list:
        """The bounds check the device code puts around the access, when it differs inside a vector group."""
        if access.guard is None:
            return []
        cond, bound = access.guard
        # the check must be uniform over a full vector group of the element type; a precision cast may
        # cap the loop's vectors lower, but a length padded to the full group suits both
        width = MAX_VECTOR_BITS // ir.dtype_bits(access.dtype)
        value = ir.int_value(bound)
        if value is not None and value % width == 0:
            return []
        return [dataclasses.replace(self._tail_cause(cond, bound, width), inserted=self._inserted(cond))]

    def _inserted(self, cond) -> bool:
        """Whether a device bounds check is tilelang's: none of the user's own conditions compares the
        same bound."""
        # the user's own checks: the unit's predicates, and the `if`s around its statements (explicit
        # thread indexing, `if idx < N:`)
        written = [
            *self.unit.predicates,
            *(cond for store in self.facts.stores if store.line == self.unit.line for cond in store.conditions),
        ]
        bounds = {render(side) for pred in written for pair in comparisons(pred) for side in pair}
        return not any(render(side) in bounds for pair in comparisons(cond) for side in pair[1:])

    def _tail_cause(self, cond, bound, width: int) -> Cause:
        value = ir.int_value(bound)
        return Cause(
            "tail-guard",
            width=width,
            predicate=render(cond),
            bound=render(bound),
            bound_value=value,
            loop=self.unit.header,
            loop_line=self.unit.line,
            lane_var=self.inner or "",
        )

    def _predicate_causes(self, width: int) -> list:
        causes = []
        for cond in self.unit.predicates:
            for lhs, rhs in comparisons(cond):
                varying = affine(("sub", lhs, rhs))
                if varying is None or coefficient(varying, self.inner) in (None, 0):
                    continue
                if misalignment(varying, self.inner, width) is None:
                    continue
                bound = rhs if self.inner in ir.vars_of(lhs) else lhs
                causes.append(self._tail_cause(cond, bound, MAX_VECTOR_BITS // min(r.bits for r in self.unit.refs)))
        return causes

    def _invariant_store_causes(self) -> list:
        """A store whose index does not advance with the lane variable: tilelang scalarizes the loop."""
        if self.unit.kind != "parallel" or self.inner is None:
            return []
        stores = [(r.buffer, r.indices) for r in self.unit.refs if r.kind == "store"] + list(self.unit.local_stores)
        extent = dict(self.unit.loops).get(self.inner) or 1
        env = {**self.facts.env(), **{v: 0 for v, _ in self.unit.loops + self.unit.outer}}
        return [
            Cause(
                "invariant-store",
                buffer=buffer,
                index=render_access(buffer, indices),
                index_line=self.unit.line,
                loop=self.unit.header,
                loop_line=self.unit.line,
                lane_var=self.inner,
            )
            for buffer, indices in stores
            if not advances(indices, self.inner, extent, env)
        ]

    def _limiters(self) -> list:
        """(cause, fixable) for memory accesses of the loop whose index defeats the vectorizer."""
        found = []
        interleaved_buffers: set[str] = set()
        for ref in self.unit.refs:
            if self.gathers(ref):
                found.append(
                    (
                        Cause(
                            "non-affine",
                            buffer=ref.buffer,
                            index=ref.text,
                            index_line=ref.line,
                            lane_var=self.inner or "",
                        ),
                        False,
                    )
                )
                continue
            if self.inner not in ir.vars_of(ref.flat):
                continue
            poly = affine(ref.flat)
            coeff = coefficient(poly, self.inner) if poly else None
            if coeff in (1, -1):
                continue
            # a transposed view is fixable by tiling: some other variable (the block index, an outer
            # loop) walks the memory contiguously; a column read or a strided gather is not
            fixable = self.potential_lanes(ref) > 1
            own = self.grid.footprint(ref.flat)
            interleaved = (
                coeff is not None
                and self.contiguous_lanes(ref.buffer, MAX_VECTOR_BITS // ref.bits) > 1
                and own is not None
                and aligned_run(own, MAX_VECTOR_BITS // ref.bits) == 1
            )
            if interleaved:
                if ref.buffer in interleaved_buffers:
                    continue
                interleaved_buffers.add(ref.buffer)
                kind = "interleaved"
            else:
                kind = "non-affine" if coeff is None else "transposed"
            found.append(
                (
                    Cause(
                        kind,
                        buffer=ref.buffer,
                        index=ref.text,
                        index_line=ref.line,
                        stride=abs(coeff) if coeff else None,
                        loop=self.unit.header,
                        loop_line=self.unit.line,
                        lane_var=self.inner or "",
                        threads=self.facts.thread_count,
                    ),
                    fixable,
                )
            )
        return found

    def _fragment_causes(self, width: int, apart: bool = False) -> list:
        """A fragment whose layout another loop fixed with fewer contiguous elements per thread: the
        first loop that used it, or one that accumulates into it through an invariant index."""
        causes = []
        for fragment in sorted(self.unit.fragments):
            if fragment in self.facts.annotated_layouts:
                causes.append(
                    Cause(
                        "annotated-layout",
                        width=width,
                        buffer=fragment,
                        elements=self.facts.fragment_runs.get(fragment) or 0,
                        loop=self.unit.header,
                        loop_line=self.unit.line,
                    )
                )
                continue
            run = self.facts.fragment_runs.get(fragment)  # None when it cannot be told
            if run is not None and run >= width and not apart:
                continue
            for other in self.facts.units:
                if other is self.unit or fragment not in other.fragments:
                    continue
                other_plan = self.plans[other]
                limiters = other_plan._limiters()
                if any(not fixable for _, fixable in limiters):
                    continue  # the layout comes from a genuinely scalar loop (a gather)
                reasons = (
                    other_plan._invariant_store_causes()
                    + [c for c, _ in limiters]
                    + other_plan._alignment_causes(width)
                )
                if reasons or (run and other.kind == "parallel"):
                    # without a reason of its own, the loop's other fragments (a per-row value read across
                    # the row) chose the layout: no rewrite proves it
                    causes.append(
                        Cause(
                            "fragment-layout",
                            width=width,
                            buffer=fragment,
                            elements=run or 0,
                            loop=other.header,
                            loop_line=other.line,
                            origin=reasons[0] if reasons else None,
                        )
                    )
                    break
        return causes

    def _alignment_causes(self, width: int) -> list:
        causes = []
        rows: list = []
        for other in self.unit.refs:
            if self.gathers(other) or self.inner not in ir.vars_of(other.flat):
                continue
            poly = affine(other.flat)
            if poly is None or coefficient(poly, self.inner) not in (1, -1):
                continue
            lanes = min(width, MAX_VECTOR_BITS // other.bits)
            if lanes < 2:
                continue
            if _misaligned_rows(other, lanes):
                row = other.shape[-1]
                cause = Cause(
                    "misaligned-rows",
                    width=lanes,
                    buffer=other.buffer,
                    index=other.text,
                    index_line=other.line,
                    row=render(row) if isinstance(row, tuple) else str(row),
                    row_value=row if isinstance(row, int) else None,
                    loop=self.unit.header,
                    loop_line=self.unit.line,
                )
                if all(c.row != cause.row for c in rows):
                    rows.append(cause)
                continue
            # terms of the unit's other loop variables and of the thread indices spread the work over
            # threads (a thread owning 4 elements starts at `i * 4`); only what is the same for the whole
            # block offsets an access
            spread = {v for v, _ in self.unit.loops} | set(self.facts.thread_vars)
            offsets = {term: coeff for term, coeff in poly.items() if not set(term) & spread or self.inner in term}
            problem = misalignment(offsets, self.inner, lanes)
            if problem is not None:
                term, coeff = problem
                offset = " * ".join(term + ((str(coeff),) if coeff != 1 or not term else ()))
                causes.append(
                    Cause(
                        "misaligned-offset",
                        width=lanes,
                        buffer=other.buffer,
                        index=other.text,
                        index_line=other.line,
                        offset=offset,
                        offset_value=coeff if not term else None,
                        stride=poly.get((self.inner,)) if self.inner else None,
                        lane_var=self.inner or "",
                        loop=self.unit.header,
                        loop_line=self.unit.line,
                    )
                )
        return rows + causes

    def _per_thread_causes(self, width: int, ref: MemRef) -> list:
        """Too few elements per thread: a thread's share must split into groups of `width` lanes."""
        unit = self.unit
        if unit.kind == "thread":
            return self._explicit_thread_causes(width, ref)
        threads = self.facts.thread_count
        total = product(e for _, e in unit.loops)
        if not total or total % (threads * width) == 0:
            return []
        if unit.kind == "parallel" and total > threads and total % threads:
            return []  # a ragged loop is finished by a bounds check, judged as a predicate
        return [
            Cause(
                "few-per-thread",
                width=width,
                loop=unit.header,
                loop_line=unit.line,
                threads=threads,
                elements=count(total / threads),
            )
        ]

    def _explicit_thread_causes(self, width: int, ref: MemRef) -> list:
        """Kernels that index with the thread variables themselves get exactly the loops they write."""
        unit = self.unit
        transposed = self._thread_order_cause()
        if transposed is not None:
            return [transposed]
        if unit.serial_var is not None and unit.serial_var == self.inner:
            accumulates = accumulates_over(self.facts.stores, unit.serial_var)
            # staged loads are copied as they are, without the cast that caps the lanes
            return [
                Cause(
                    "serial-loop",
                    width=MAX_VECTOR_BITS // ref.bits if accumulates else width,
                    loop=unit.header,
                    loop_line=unit.line,
                    lane_var=unit.serial_var,
                    accumulates=accumulates,
                )
            ]
        if self.inner in self.facts.thread_vars:
            return [
                Cause(
                    "few-per-thread",
                    width=width,
                    loop="",
                    loop_line=unit.line,
                    lane_var=self.inner,
                    threads=self.facts.thread_count,
                    elements=1,
                )
            ]
        return []

    def _thread_order_cause(self) -> Cause | None:
        """threadIdx.x stepping through rows while threadIdx.y walks a row contiguously: neighbouring
        lanes are a row apart (a split-K GEMV with the thread dimensions the wrong way round)."""
        tags = self.facts.thread_tags
        x = next((v for v, tag in tags.items() if tag == "threadIdx.x"), None)
        y = next((v for v, tag in tags.items() if tag == "threadIdx.y"), None)
        if x is None or y is None:
            return None
        for ref in self.unit.refs:
            poly = affine(ref.flat) if ref.is_global else None
            if poly is None:
                continue
            across, along = coefficient(poly, x), coefficient(poly, y)
            if across not in (None, 0, 1, -1) and along in (1, -1):
                return Cause(
                    "transposed",
                    buffer=ref.buffer,
                    index=ref.text,
                    index_line=ref.line,
                    stride=abs(across),
                    lane_var=x,
                    loop=THREAD_ORDER,
                    loop_line=self.unit.line,
                    threads=self.facts.thread_count,
                )
        return None


def accumulates_over(stores, var: str) -> bool:
    """Whether a loop over `var` accumulates into a value it does not index (`s += X[r, var]`)."""
    return any(
        store.accumulates and not any(ir.uses(i, var) for i in store.indices)
        for store in stores
        if any(loop.var == var for loop in store.loops)
    )


def _misaligned_rows(ref: MemRef, lanes: int) -> bool:
    """Rows whose length is not a known multiple of the vector width start at misaligned addresses."""
    if len(ref.shape) < 2 or not any(ir.vars_of(index) for index in ref.indices[:-1]):
        return False  # a single row: its offset is judged with the rest of the index
    row = ref.shape[-1]
    return not isinstance(row, int) or row % lanes != 0
