from __future__ import annotations

from tl_inspect.causes import CauseKind, round_up
from tl_inspect.causes._length import aligned_arguments, assume_fix, length_change, length_rewrite
from tl_inspect.model import Cause
from tl_inspect.wording import article


class MisalignedRows(CauseKind):
    """rows whose length is not a multiple of the vector width"""

    name, chain_step, key = "misaligned-rows", "index", ("row",)
    proved_by = (
        "the factory called again with the row length rounded up (the PrimFunc's row length padded "
        "where no factory call is known); `T.assume` for a run-time row length"
    )

    @staticmethod
    def because(c: Cause) -> str:
        if c.row_value is not None:
            return (
                f"rows of {c.buffer} hold {c.row} elements, not a multiple of {c.width}, so most rows start "
                f"off {article(c.width)} {c.width}-element boundary"
            )
        return (
            f"rows of {c.buffer} have the run-time length {c.row}, which the compiler cannot prove to be a "
            f"multiple of {c.width}"
        )

    @staticmethod
    def fix(c: Cause) -> str:
        if c.row_value is not None:
            return (
                f"pad the row length to a multiple of {c.width} ({c.row} -> {round_up(c.row_value, c.width)}) "
                f"and slice the padding off outside the kernel"
            )
        return (
            f"if {c.row} is always a multiple of {c.width}, say so with T.assume({c.row} % {c.width} == 0); "
            f"otherwise pad the rows"
        )

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"`{c.index}`: rows of {c.row} elements are not a multiple of {c.width}"

    @staticmethod
    def change(c: Cause) -> str | None:
        return length_change("the row length", c.row_value, c.row, c.width)

    @staticmethod
    def rewrite(func, c: Cause):
        return length_rewrite(func, c.row_value, c.row, c.width)

    @staticmethod
    def autofix(c: Cause, source, finding):
        return assume_fix(c.row, c.width, source, finding) if c.row_value is None else None

    @staticmethod
    def realign(c: Cause, arguments: dict) -> dict:
        return aligned_arguments(c.row_value, c.width, arguments)
