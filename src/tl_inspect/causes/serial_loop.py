from __future__ import annotations

import re

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause


class SerialLoop(CauseKind):
    """a per-thread `T.serial` loop over contiguous elements"""

    name, chain_step, key = "serial-loop", "per-thread", ("lane_var",)
    proved_by = "the loop written as `T.vectorized`"

    @staticmethod
    def because(c: Cause) -> str:
        return f"`{c.lane_var}` is a {c.loop} loop over contiguous elements, which is never vectorized"

    @staticmethod
    def fix(c: Cause) -> str:
        return f"write the per-thread loop as T.vectorized({c.width})"

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"each thread walks its elements one at a time in a T.serial loop ({c.lane_var})"

    @staticmethod
    def change(c: Cause) -> str | None:
        # tl-inspect names repeated variables `k_1`, `k_2`...; the user wrote `k`
        return f"`{re.sub(r'_[0-9]+$', '', c.lane_var)}` written as T.vectorized" if c.lane_var else None

    @staticmethod
    def rewrite(func, c: Cause):
        from tl_inspect.inspector.rewrites import vectorize_loop

        return vectorize_loop(func, c.lane_var, c.loop_line)
