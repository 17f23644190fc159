from __future__ import annotations

from tl_inspect.causes import CauseKind, kind_of
from tl_inspect.model import Cause
from tl_inspect.wording import plural


class FragmentLayout(CauseKind):
    """a fragment whose layout another loop fixed"""

    name, chain_step = "fragment-layout", "per-thread"
    proved_by = "that loop's own cause removed"
    follows_origin = True

    @staticmethod
    def because(c: Cause) -> str:
        held = (
            f"holds runs of {plural(c.elements, 'element')} per thread"
            if c.elements
            else "gets a thread-strided layout"
        )
        origin = kind_of(c.origin).because(c.origin) if c.origin else "its layout was fixed there"
        return f"fragment {c.buffer} {held}, a layout fixed by the {c.loop} at line {c.loop_line}, where {origin}"

    @staticmethod
    def fix(c: Cause) -> str | None:
        return kind_of(c.origin).fix(c.origin) if c.origin else None

    @staticmethod
    def chain_answer(c: Cause) -> str:
        there = f"fragment {c.buffer}'s layout was fixed by {c.loop} at line {c.loop_line}"
        return there if c.origin is None else f"{there}, where {kind_of(c.origin).chain_answer(c.origin)}"

    @staticmethod
    def variant(func, c: Cause):
        return kind_of(c.origin).variant(func, c.origin) if c.origin else None
