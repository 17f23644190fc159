from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase
from tl_inspect.causes._length import aligned_arguments
from tl_inspect.model import Cause
from tl_inspect.wording import plural


def _shift(c: Cause) -> str:
    """How far past the vector boundary a constant offset starts."""
    return plural(c.offset_value % c.width, "element")


class MisalignedOffset(CauseKind):
    """an offset off the vector boundary (`A[i + 1]`), or a walk backwards (`X[N - 1 - i]`)"""

    name, chain_step, key = "misaligned-offset", "index", ("buffer", "offset")
    proved_by = (
        "the offset moved to a multiple of the width (through the factory's argument where one carries "
        "it); a run-time base or a reversed walk: the lane-contiguous index read instead"
    )

    words = {"shift": _shift}

    @staticmethod
    def form(c: Cause) -> str:
        # a walk whose address steps down as the lane steps up (`X[N - 1 - i]`) is misaligned at every
        # offset, since a vector's lanes ascend
        if c.stride is not None and c.stride < 0:
            return "backwards"
        return "constant" if c.offset_value is not None else ""

    because = Phrase(
        "{index} starts at the run-time offset {offset}, which the compiler cannot prove to be a multiple of {width}",
        constant=(
            "{index} starts {shift} past {a_width} {width}-element boundary, so no {width}-element group is aligned"
        ),
        backwards=(
            "{index} walks {buffer} backwards: neighbouring lanes read descending addresses, and a vector moves "
            "ascending ones"
        ),
    )
    fix = Phrase(
        "keep vector accesses 16-byte aligned: copy an aligned window with T.copy into shared memory and shift it "
        "there",
        backwards=(
            "read {buffer}'s window forwards (T.copy it into shared memory or a fragment, which moves whole "
            "vectors) and reverse the order there"
        ),
    )
    chain_answer = Phrase(
        "`{index}`: the offset `{offset}` is not a multiple of {width}",
        backwards="`{index}`: the address falls as `{lane_var}` rises",
    )

    @staticmethod
    def change(c: Cause) -> str | None:
        if not c.buffer or c.offset_value is None:
            return None
        return f"the offset of {c.buffer} moved by {_shift(c)} to a multiple of {c.width}"

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
