from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause
from tl_inspect.wording import plural


class LoneThread(CauseKind):
    """one thread of each block walks the block's elements alone (`threads=1`, or `if tx == 0`)"""

    name, chain_step, key = "lone-thread", "per-thread", ("loop_line",)
    proved_by = "none yet (stays `unproven`)"

    @staticmethod
    def because(c: Cause) -> str:
        return (f"one thread of each block walks {plural(c.elements, 'element')} of {c.buffer} alone, one "
                f"at a time, while the rest of the block has nothing to do")

    @staticmethod
    def fix(c: Cause) -> str:
        return ("spread the walk over the block's threads: T.copy the row into a fragment and reduce it with "
                "T.reduce_*, or walk it in a T.Parallel loop")

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"one thread of {c.threads} walks {plural(c.elements, 'element')} of {c.buffer}"
