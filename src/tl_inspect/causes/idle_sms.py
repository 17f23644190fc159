from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause


class IdleSms(CauseKind):
    """a grid of fewer blocks than the GPU has SMs, so some SMs have nothing to do"""

    name, chain_step, key = "idle-sms", "per-thread", ("threads",)
    # the launch's own estimate with the same work over one block per SM is the evidence
    proved_by = "the launch's estimate with the same work over one block per SM"
    evidence = "static"

    @staticmethod
    def because(c: Cause) -> str:
        return "the grid has fewer blocks than the GPU has SMs"

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return "fewer blocks than SMs"
