from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.causes._length import aligned_arguments
from tl_inspect.model import Cause
from tl_inspect.wording import article, plural


class MisalignedOffset(CauseKind):
    """an offset off the vector boundary (`A[i + 1]`), or a walk backwards (`X[N - 1 - i]`)"""

    name, chain_step, key = "misaligned-offset", "index", ("buffer", "offset")
    proved_by = (
        "the offset moved to a multiple of the width (through the factory's argument where one carries "
        "it); a run-time base or a reversed walk: the lane-contiguous index read instead"
    )

    @staticmethod
    def because(c: Cause) -> str:
        if _backwards(c):
            return (
                f"{c.index} walks {c.buffer} backwards: neighbouring lanes read descending addresses, and a "
                f"vector moves ascending ones"
            )
        if c.offset_value is not None:
            return (
                f"{c.index} starts {plural(c.offset_value % c.width, 'element')} past {article(c.width)} "
                f"{c.width}-element boundary, so no {c.width}-element group is aligned"
            )
        return (
            f"{c.index} starts at the run-time offset {c.offset}, which the compiler cannot prove to be a "
            f"multiple of {c.width}"
        )

    @staticmethod
    def fix(c: Cause) -> str:
        if _backwards(c):
            return (
                f"read {c.buffer}'s window forwards (T.copy it into shared memory or a fragment, which moves "
                f"whole vectors) and reverse the order there"
            )
        return (
            "keep vector accesses 16-byte aligned: copy an aligned window with T.copy into shared memory and "
            "shift it there"
        )

    @staticmethod
    def chain_answer(c: Cause) -> str:
        if _backwards(c):
            return f"`{c.index}`: the address falls as `{c.lane_var}` rises"
        return f"`{c.index}`: the offset `{c.offset}` is not a multiple of {c.width}"

    @staticmethod
    def change(c: Cause) -> str | None:
        if not c.buffer or c.offset_value is None:
            return None
        shift = plural(c.offset_value % c.width, "element")
        return f"the offset of {c.buffer} moved by {shift} to a multiple of {c.width}"

    @staticmethod
    def rewrite(func, c: Cause):
        from tl_inspect.inspector.rewrites.contiguous import reversed_walk
        from tl_inspect.inspector.rewrites.primfunc import shift_index

        # a walk against the lanes stays narrow wherever it starts: its index is proven by other means
        if reversed_walk(func, c):
            return None
        return shift_index(func, c.buffer, c.offset_value % c.width)

    @staticmethod
    def realign(c: Cause, arguments: dict) -> dict:
        return aligned_arguments(c.offset_value, c.width, arguments)


def _backwards(c: Cause) -> bool:
    """A walk whose address steps down as the lane steps up (`X[N - 1 - i]`): misaligned at every
    offset, since a vector's lanes ascend."""
    return c.stride is not None and c.stride < 0
