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
    from tl_inspect.inspector.rewrites.primfunc import assume_multiple, pad_constant

    if value is not None:
        return pad_constant(func, value, round_up(value, width))
    return assume_multiple(func, name, width)


# a derived constant is the length times or over a small power of two (a bound N // 4 of 8-element groups,
# the 2 * N of gate/up halves)
DERIVED_RATIOS = (1, 2, 4, 8, 16)


def aligned_arguments(value: int | None, width: int, arguments: dict) -> dict:
    """The integer arguments that carry `value` (equal to it, or a small power-of-two multiple or
    fraction of it), each rounded up to a multiple of `width`."""
    from tl_inspect.causes import round_up

    if value is None:
        return {}
    return {
        name: round_up(given, width)
        for name, given in arguments.items()
        if type(given) is int
        and given > width
        and given % width
        and any(given == value * ratio or value == given * ratio for ratio in DERIVED_RATIOS)
    }


def assume_fix(name: str, width: int, source, finding):
    """`T.assume(name % width == 0)` at the top of the `T.Kernel` body holding the finding: the promise
    the proof made for a run-time length, which only the user can make (unsafe)."""
    from tl_inspect.fixes import fix_from
    from tl_inspect.model import UNSAFE

    if finding.proof is None or not finding.proof.change.startswith("T.assume(") or not name.isidentifier():
        return None
    block = source.kernel_block(finding.line)
    if block is None:
        return None
    language = source.code(block.items[0].item.func.value)
    return fix_from(UNSAFE, source.text, source.inserted_first(block, f"{language}.assume({name} % {width} == 0)"))


def padded_literal_fix(value: int | None, width: int, source):
    """The one integer literal of the file that writes the length `value`, rounded up to a multiple of
    `width`: the padded tensor the proof compiled (unsafe: the kernel then computes over padded tensors,
    which the caller must allocate and fill). None when the file writes the value as no literal, or as
    several, where no edit names the one the kernel got."""
    import libcst as cst

    from tl_inspect.causes import round_up
    from tl_inspect.fixes import fix_from
    from tl_inspect.model import UNSAFE

    if value is None:
        return None
    literals = [n for n in source.nodes(cst.Integer) if n.evaluated_value == value]
    if len(literals) != 1:
        return None
    (literal,) = literals
    return fix_from(UNSAFE, source.text, source.replaced(literal, cst.Integer(str(round_up(value, width)))))
