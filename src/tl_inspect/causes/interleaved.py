from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause


class Interleaved(CauseKind):
    """an access interleaved with other accesses of the same buffer in the loop"""

    name, chain_step = "interleaved", "index"
    proved_by = "none yet (stays `unproven`)"

    @staticmethod
    def because(c: Cause) -> str:
        return f"{c.index} is interleaved with the loop's other {c.buffer} accesses"

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"`{c.index}` is interleaved with other accesses of {c.buffer} in the loop"
