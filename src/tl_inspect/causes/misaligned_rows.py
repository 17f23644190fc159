from __future__ import annotations

from tl_inspect.causes import Phrase
from tl_inspect.causes._length import LengthCause
from tl_inspect.model import Cause


class MisalignedRows(LengthCause):
    """rows whose length is not a multiple of the vector width"""

    name, chain_step, key = "misaligned-rows", "index", ("row",)
    proved_by = (
        "the factory called again with the row length rounded up (the PrimFunc's row length padded "
        "where no factory call is known); `T.assume` for a run-time row length"
    )
    length_noun = "the row length"

    @staticmethod
    def length(c: Cause) -> tuple[int | None, str]:
        return c.row_value, c.row

    because = Phrase(
        "rows of {buffer} have the run-time length {row}, which the compiler cannot prove to be a multiple of {width}",
        constant=(
            "rows of {buffer} hold {row} elements, not a multiple of {width}, so most rows start off {a_width} "
            "{width}-element boundary"
        ),
    )
    fix = Phrase(
        "{assume}; otherwise pad the rows",
        constant="{pad} and slice the padding off outside the kernel",
    )
    chain_answer = Phrase("`{index}`: rows of {row} elements are not a multiple of {width}")
