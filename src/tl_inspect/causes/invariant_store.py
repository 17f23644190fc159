from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase


class InvariantStore(CauseKind):
    """a store in the same `T.Parallel` loop whose index does not advance with the lane

    Its owner phrases its findings from its own analysis of the collision, so it has no `because`."""

    name, chain_step = "invariant-store", "store"
    proved_by = "reported by invariant-index-store on its own terms"

    chain_answer = Phrase("`{index}` stays put while {lane_var} advances: every lane writes one element")
