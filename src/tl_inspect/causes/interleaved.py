from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause


class Interleaved(CauseKind):
    """an access interleaved with other accesses of the same buffer in the loop"""

    name, chain_step, loop_pattern = "interleaved", "index", True
    proved_by = (
        "each access read at the lane-contiguous index over the same loop variables, in its own span of the "
        "row (the proof; the fix splits the pairs)"
    )

    @staticmethod
    def because(c: Cause) -> str:
        return f"{c.index} is interleaved with the loop's other {c.buffer} accesses"

    @staticmethod
    def fix(c: Cause) -> str:
        return (
            f"store the interleaved parts of {c.buffer} as separate contiguous tensors (or halves), or load "
            f"{c.buffer} contiguously and de-interleave it in registers or shared memory"
        )

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"`{c.index}` is interleaved with other accesses of {c.buffer} in the loop"
