from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause


class NonAffine(CauseKind):
    """an index that is not affine in the lane variable"""

    name, chain_step = "non-affine", "index"
    proved_by = (
        "the access read at the lane-contiguous index over the same loop variables (the proof; the fix permutes "
        "an aligned load)"
    )

    @staticmethod
    def because(c: Cause) -> str:
        return f"{c.index} is not affine in `{c.lane_var}`"

    @staticmethod
    def fix(c: Cause) -> str:
        return (
            f"load {c.buffer} contiguously (T.copy the aligned tile into shared memory or a fragment) and "
            f"permute it there, or in registers"
        )

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"`{c.index}` is not affine in the lane variable {c.lane_var}"
