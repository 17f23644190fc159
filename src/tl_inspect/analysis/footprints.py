"""One unit's footprints: the elements its iterations touch, per buffer, and how many lanes each of its global
accesses could have (the loop's vector cap, precision casts, gathers), read by the cause search
(`tl_inspect.analysis.detection`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tl_inspect.analysis.units import MemRef, Unit
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.indexing import Grid, affine, aligned_run, coefficient, unique

if TYPE_CHECKING:
    from tl_inspect.analysis.kernel import KernelModel

# the widest access one thread makes: 16 bytes (`uint4`, `float4`)
MAX_VECTOR_BITS = 128

# Why an access cannot be wider, whatever the kernel does.
INHERENT_REASONS = {
    "broadcast": "one element, the same for every lane",
    "gather": "the address comes from memory (a gather through a loaded index)",
    "one-per-block": "one value per thread block",
    "atomic": "an atomic update",
    "sparse": "the block touches no aligned run of contiguous elements (a column or a strided gather)",
    "cast-cap": "a precision conversion caps the loop at this width",
    "tile-op-layout": "it moves a fragment whose layout a T.gemm or T.reduce_* fixes (an MMA accumulator)",
}


class UnitFootprint:
    """What one unit's iterations touch, and how many lanes each of its accesses could have: the footprints
    and index shapes its global accesses are judged by."""

    def __init__(self, facts: KernelModel, unit: Unit):
        self.facts = facts
        self.unit = unit
        self.grid = Grid(unit.loops, self.facts.env())
        self.inner = self._innermost()
        self.footprints: dict = {}
        for ref in unit.refs:
            if self.gathers(ref):
                continue
            points = self.grid.footprint(ref.flat)
            if points is not None:
                old = self.footprints.get(ref.buffer)
                self.footprints[ref.buffer] = points if old is None else unique(np.concatenate((old, points)))
        self.cap = self._loop_cap()

    def _innermost(self) -> str | None:
        if not self.unit.loops:
            return None
        if self.unit.kind != "thread":
            return self.unit.loops[-1][0]
        # explicit thread indexing: the variable that moves the address least is the lane variable
        best = None
        for ref in self.unit.refs:
            poly = affine(ref.flat)
            for var, _ in self.unit.loops:
                coeff = coefficient(poly, var) if poly else None
                if coeff and (best is None or abs(coeff) < best[0]):
                    best = (abs(coeff), var)
        return best[1] if best else self.unit.loops[-1][0]

    def _loop_cap(self) -> int:
        """Lanes the loop can have at most: one vector width for every buffer and cast in it."""
        lanes = [
            MAX_VECTOR_BITS // r.bits
            for r in self.unit.refs
            if not self.gathers(r) and self.inner in ir.vars_of(r.flat)
        ]
        lanes += self._cast_caps()
        return max(1, min(lanes)) if lanes else 1

    def _cast_caps(self) -> list:
        caps = []
        for src, dst, used in self.unit.casts:
            if self.inner in used:  # a converted loop invariant is broadcast, it sets no lane count
                caps.append(MAX_VECTOR_BITS // max(ir.dtype_bits(src), ir.dtype_bits(dst)))
        return caps

    def cast_capped(self, ref: MemRef) -> bool:
        return any(cap < MAX_VECTOR_BITS // ref.bits for cap in self._cast_caps())

    def potential_lanes(self, ref: MemRef) -> int:
        """Lanes the access could have: its block footprint's aligned runs, or for a transposed view that
        another variable walks contiguously, the full vector that tiling through shared memory gives."""
        widest = MAX_VECTOR_BITS // ref.bits
        lanes = self.contiguous_lanes(ref.buffer, widest)
        if lanes > 1:
            return lanes
        poly = affine(ref.flat)
        if poly is None or coefficient(poly, self.inner) in (None, 0, 1, -1):
            return 1
        return widest if any(c in (1, -1) and len(t) == 1 for t, c in poly.items()) else 1

    def max_lanes(self, ref: MemRef) -> int:
        return max(1, min(self.potential_lanes(ref), self.cap))

    def gathers(self, ref: MemRef) -> bool:
        """Whether the address of each lane comes from memory (A[Idx[i]]), not from the index algebra."""
        return self.inner is not None and self.inner in ref.gather_vars

    def contiguous_lanes(self, buffer: str, max_lanes: int) -> int:
        points = self.footprints.get(buffer)
        return aligned_run(points, max_lanes) if points is not None else 1

    def inherent(self, ref: MemRef) -> str | None:
        """The reason this access can never be wider, or None."""
        if self.gathers(ref):
            return "gather"
        if self.inner is None or self.inner not in ir.vars_of(ref.flat):
            return "one-per-block" if not self.unit.loops else "broadcast"
        if self.potential_lanes(ref) == 1:
            return "sparse"
        if any(name in self.facts.bound_fragments for name, _ in self.unit.fragment_refs):
            return "tile-op-layout"
        return None
