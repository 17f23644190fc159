from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause


class NonAffine(CauseKind):
    """an index that is not affine in the lane variable"""

    name, chain_step = "non-affine", "index"
    proved_by = "none yet (stays `unproven`)"

    @staticmethod
    def because(c: Cause) -> str:
        return f"{c.index} is not affine in `{c.lane_var}`"

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"`{c.index}` is not affine in the lane variable {c.lane_var}"
