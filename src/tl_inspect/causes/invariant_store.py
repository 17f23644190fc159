from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause


class InvariantStore(CauseKind):
    """a store in the same `T.Parallel` loop whose index does not advance with the lane

    Its owner phrases its findings from its own analysis of the collision, so it has no `because`."""

    name, chain_step = "invariant-store", "store"
    proved_by = "reported by invariant-index-store on its own terms"

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"`{c.index}` stays put while {c.lane_var} advances: every lane writes one element"
