from __future__ import annotations

from tl_inspect.causes import CauseKind, round_up
from tl_inspect.causes._length import aligned_arguments, assume_fix, length_change, length_rewrite, padded_literal_fix
from tl_inspect.model import Cause
from tl_inspect.wording import article

SPLIT = "or split the loop into an aligned body and a separate tail"


class TailGuard(CauseKind):
    """a bounds check (tilelang's own from a buffer length, or the user's) on a bound that is not a
    multiple of the vector width, so it differs inside a vector group"""

    name, chain_step, key = "tail-guard", "predicate", ("bound", "width")
    proved_by = (
        "the kernel's factory called again with the length rounded up to the width (the PrimFunc's "
        "length padded where no factory call is known); `T.assume(N % w == 0)` for a run-time length"
    )

    @staticmethod
    def because(c: Cause) -> str:
        return (
            f"{_check(c)} varies inside {article(c.width)} {c.width}-element vector group ({_bound(c)}), "
            f"so each element is checked and moved on its own"
        )

    @staticmethod
    def fix(c: Cause) -> str:
        if c.bound_value is not None:
            return (
                f"pad the length to a multiple of {c.width} ({c.bound_value} -> "
                f"{round_up(c.bound_value, c.width)}), {SPLIT}"
            )
        return (
            f"if {c.bound} is always a multiple of {c.width}, say so with T.assume({c.bound} % {c.width} == 0); "
            f"otherwise pad it, {SPLIT}"
        )

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"{_check(c)} varies inside the {c.width}-element group ({_bound(c)})"

    @staticmethod
    def change(c: Cause) -> str | None:
        return length_change("the length", c.bound_value, c.bound, c.width)

    @staticmethod
    def rewrite(func, c: Cause):
        return length_rewrite(func, c.bound_value, c.bound, c.width)

    @staticmethod
    def autofix(c: Cause, source, finding):
        if c.bound_value is None:
            return assume_fix(c.bound, c.width, source, finding)
        return padded_literal_fix(c.bound_value, c.width, source)

    @staticmethod
    def realign(c: Cause, arguments: dict) -> dict:
        return aligned_arguments(c.bound_value, c.width, arguments)


def _check(c: Cause) -> str:
    check = "tilelang's bounds check" if c.inserted else "the bounds check"
    return f"{check} `{c.predicate}`"


def _bound(c: Cause) -> str:
    if c.bound_value is not None:
        return f"{c.bound_value} is not a multiple of {c.width}"
    return f"{c.bound} is only known at run time"
