"""What the two vectorization rules share: picking the verdicts a rule owns and turning them into
findings with their cost and proof. Each rule renders its own messages from the cause's fields."""

from __future__ import annotations

import dataclasses
from typing import Callable

from tl_inspect.analysis.cost import COSTLY
from tl_inspect.analysis.verdicts import owner
from tl_inspect.model import Access, Cause, Cost
from tl_inspect.rules.base import RuleContext


def owned(ctx: RuleContext) -> dict:
    """Python line -> this rule's proven, costly accesses there: a filter over the kernel's verdicts."""
    by_line: dict = {}
    for access in ctx.kernel.accesses:
        if (access.verdict == "costly" and owner(access.cause) == ctx.rule.slug and access.line is not None
                and (access.kernel_cost or 1.0) >= COSTLY):
            by_line.setdefault(access.line, []).append(access)
    return by_line


def report(ctx: RuleContext, message: Callable[[Cause, list], str], fix: Callable[[Cause], str]) -> None:
    """One finding per line: the message and fix of the costliest cause there, its cost and its proof."""
    for line, accesses in sorted(owned(ctx).items()):
        worst = max(accesses, key=lambda a: (a.kernel_cost or 1.0, a.cost or 1.0))
        cause = as_written(ctx, worst.cause)
        alike = [a for a in accesses if a.group == worst.group]
        cuda = sorted({n for a in alike for n in a.cuda_lines})
        ctx.report(
            line, message(cause, alike), fix=fix(cause), cuda_lines=cuda or None,
            expected_bits=worst.max_bits, emitted_bits=worst.bits,
            cost=Cost(estimate=worst.kernel_cost, basis=cost_basis(worst, alike), per_access=worst.cost),
            proof=worst.proof,
        )


def as_written(ctx: RuleContext, cause: Cause) -> Cause:
    """The cause with the index it names as the user's statement writes it."""
    if cause.origin is not None:
        cause = dataclasses.replace(cause, origin=as_written(ctx, cause.origin))
    if cause.index and cause.buffer and cause.index_line:
        return dataclasses.replace(cause, index=written(ctx, cause.index_line, cause.buffer, cause.index))
    return cause


def cost_basis(access: Access, alike: list) -> str:
    share = round(100 * sum(a.share for a in alike))
    these = "this access moves" if len(alike) == 1 else "these accesses move"
    return f"{access.cost_basis}; {these} {share}% of the kernel's global bytes"


def written(ctx: RuleContext, line: int, buffer: str, fallback: str) -> str:
    """`buffer[...]` exactly as the user's statement writes it (the compiler renames block indices),
    else the compiler's rendering."""
    return written_in(ctx.line_text(line), buffer, fallback)


def written_in(text: str, buffer: str, fallback: str) -> str:
    """`buffer[...]` as the line `text` writes it, else `fallback`."""
    start = text.find(f"{buffer}[")
    if start < 0 or (start and (text[start - 1].isalnum() or text[start - 1] == "_")):
        return fallback
    depth = 0
    for end in range(start + len(buffer), len(text)):
        depth += {"[": 1, "]": -1}.get(text[end], 0)
        if depth == 0:
            return text[start:end + 1]
    return fallback


def accesses_text(accesses) -> str:
    """"The C store and the A and B loads", naming each buffer once per direction."""
    parts = []
    for kind in ("store", "load"):
        names = list(dict.fromkeys(a.buffer for a in accesses if a.kind == kind))
        if names:
            parts.append(f"the {join(names)} {kind}{'s' * (len(names) > 1)}")
    text = " and ".join(parts)
    return text[0].upper() + text[1:]


def emitted_text(accesses) -> str:
    """"The C store and the A and B loads are 16-bit scalar accesses with neighbouring threads 16 B
    apart": the accesses, their width and their coalescing as emitted."""
    access = accesses[0]
    many = len(accesses) > 1
    kind = "scalar" if access.lanes == 1 else "vector"
    what = f"{access.bits}-bit {kind} access{'es' if many else ''}"
    stride = access.lane_stride_bytes
    if stride is not None:
        what += f" with neighbouring threads {bytes_text(stride)} apart"
    return f"{accesses_text(accesses)} {'are' if many else 'is a'} {what}"


def bytes_text(count: int) -> str:
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count} B"


def join(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def article(number: int) -> str:
    """"an" before numbers read with a leading vowel sound (8, 11, 18, 80...), else "a"."""
    return "an" if str(number).startswith("8") or number in (11, 18) else "a"


def plural(count, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"
