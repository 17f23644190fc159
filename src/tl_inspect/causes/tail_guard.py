from __future__ import annotations

from tl_inspect.causes import Phrase
from tl_inspect.causes._length import LengthCause, padded_literal_fix
from tl_inspect.model import Cause


def _check(c: Cause) -> str:
    check = "tilelang's bounds check" if c.inserted else "the bounds check"
    return f"{check} `{c.predicate}`"


def _bound(c: Cause) -> str:
    if c.bound_value is not None:
        return f"{c.bound_value} is not a multiple of {c.width}"
    return f"{c.bound} is only known at run time"


class TailGuard(LengthCause):
    """a bounds check (tilelang's own from a buffer length, or the user's) on a bound that is not a
    multiple of the vector width, so it differs inside a vector group"""

    name, chain_step, key = "tail-guard", "predicate", ("bound", "width")
    proved_by = (
        "the kernel's factory called again with the length rounded up to the width (the PrimFunc's "
        "length padded where no factory call is known); `T.assume(N % w == 0)` for a run-time length"
    )
    length_noun = "the length"
    words = {"check": _check, "why": _bound}

    @staticmethod
    def length(c: Cause) -> tuple[int | None, str]:
        return c.bound_value, c.bound

    because = Phrase(
        "{check} varies inside {a_width} {width}-element vector group ({why}), so each element is checked and moved "
        "on its own"
    )
    fix = Phrase(
        "{assume}; otherwise pad it, or split the loop into an aligned body and a separate tail",
        constant="{pad}, or split the loop into an aligned body and a separate tail",
    )
    chain_answer = Phrase("{check} varies inside the {width}-element group ({why})")

    @classmethod
    def autofix(cls, c: Cause, source, finding):
        if c.bound_value is None:
            return super().autofix(c, source, finding)
        return padded_literal_fix(c.bound_value, c.width, source)
