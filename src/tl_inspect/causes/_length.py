"""What a bounds check and a row length share: a length off the vector width, proven by padding a
constant length or by `T.assume` for a run-time one."""

from __future__ import annotations


def length_change(what: str, value: int | None, name: str, width: int) -> str | None:
    from tl_inspect.causes import round_up

    if value is not None:
        return f"{what} {value} padded to {round_up(value, width)} (a multiple of {width})"
    if name.isidentifier():
        return f"T.assume({name} % {width} == 0)"
    return None


def length_rewrite(func, value: int | None, name: str, width: int):
    from tl_inspect.causes import round_up
    from tl_inspect.inspector.rewrites import assume_multiple, pad_constant

    if value is not None:
        return pad_constant(func, value, round_up(value, width))
    return assume_multiple(func, name, width)
