"""What a bounds check and a row length share: a length off the vector width, proven by padding a
constant length or by `T.assume` for a run-time one."""

from __future__ import annotations

from typing import ClassVar, cast

from tl_inspect.causes import CauseKind, kind_of, round_up
from tl_inspect.model import Cause


def _pad(c: Cause) -> str:
    """The fix of a constant length: the length rounded up to whole vectors."""
    kind = cast("type[LengthCause]", kind_of(c))
    value, name = kind.length(c)
    return f"pad {kind.length_noun} to a multiple of {c.width} ({name} -> {round_up(value, c.width)})"


def _assume(c: Cause) -> str:
    """The fix of a run-time length: the promise that makes it whole vectors, which only the user can make."""
    name = cast("type[LengthCause]", kind_of(c)).length(c)[1]
    return f"if {name} is always a multiple of {c.width}, say so with T.assume({name} % {c.width} == 0)"


class LengthCause(CauseKind):
    """A kind whose cause is a length off the vector width: its phrases take the form "constant" where the
    length is one, and its proof pads that constant or assumes the run-time length a multiple."""

    length_noun: ClassVar[str]  # the length in the proof's change: "the row length"
    words = {"pad": _pad, "assume": _assume}

    @staticmethod
    def length(c: Cause) -> tuple[int | None, str]:
        """The length at fault: its value when constant, and as written."""
        raise NotImplementedError

    @classmethod
    def form(cls, c: Cause) -> str:
        return "constant" if cls.length(c)[0] is not None else ""

    @classmethod
    def change(cls, c: Cause) -> str | None:
        value, name = cls.length(c)
        if value is not None:
            return f"{cls.length_noun} {value} padded to {round_up(value, c.width)} (a multiple of {c.width})"
        if name.isidentifier():
            return f"T.assume({name} % {c.width} == 0)"
        return None

    @classmethod
    def rewrite(cls, func, c: Cause):
        from tl_inspect.inspector.rewrites.primfunc import assume_multiple, pad_constant

        value, name = cls.length(c)
        if value is not None:
            return pad_constant(func, value, round_up(value, c.width))
        return assume_multiple(func, name, c.width)

    @classmethod
    def realign(cls, c: Cause, arguments: dict) -> dict:
        return aligned_arguments(cls.length(c)[0], c.width, arguments)

    @classmethod
    def autofix(cls, c: Cause, source, finding):
        """A run-time length's `T.assume`, the promise the proof made; a constant length's padding is the
        kind's own to make, where one edit makes it."""
        value, name = cls.length(c)
        return assume_fix(name, c.width, source, finding) if value is None else None


# a derived constant is the length times or over a small power of two (a bound N // 4 of 8-element groups,
# the 2 * N of gate/up halves)
DERIVED_RATIOS = (1, 2, 4, 8, 16)


def aligned_arguments(value: int | None, width: int, arguments: dict) -> dict:
    """The integer arguments that carry `value` (equal to it, or a small power-of-two multiple or
    fraction of it), each rounded up to a multiple of `width`."""
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

    from tl_inspect.fixes import fix_from
    from tl_inspect.model import UNSAFE

    if value is None:
        return None
    literals = [n for n in source.nodes(cst.Integer) if n.evaluated_value == value]
    if len(literals) != 1:
        return None
    (literal,) = literals
    return fix_from(UNSAFE, source.text, source.replaced(literal, cst.Integer(str(round_up(value, width)))))
