"""Rules over the verdicts: a `VerdictRule` declares the cause kinds it reports (`reports_causes`) and
reports each proven, costly access of those kinds, phrased by its cause kind."""

from __future__ import annotations

import dataclasses

from tl_inspect.analysis.cost import COSTLY
from tl_inspect.causes import as_written, kind_of, root
from tl_inspect.model import Access, Cause, Cost, Verdict
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.wording import accesses_text, byte_count


@dataclasses.dataclass(frozen=True)
class CostlyAccess(Violation):
    """Accesses one cause instance slows down: what the device code emitted, and the cause. The remark
    is named after the cause's kind (`MisalignedRows`)."""

    emitted: str  # "The C store and the A and B loads are 16-bit scalar accesses with ..."
    cause: Cause

    @property
    def name(self) -> str:
        return kind_of(self.cause).__name__

    def message(self) -> str:
        return f"{self.emitted}: {kind_of(self.cause).because(self.cause)}."

    def fix_title(self) -> str | None:
        return kind_of(self.cause).fix(self.cause)

    def autofix(self, source, finding):
        """The proof's change, where the proof showed it removes the cause, as an edit of the user's file."""
        cause = root(self.cause)
        return kind_of(cause).autofix(cause, source, finding) if finding.proof is not None else None

    def args(self) -> tuple:
        """The emitted accesses, then the cause's fields that apply to it (a fragment's origin by kind)."""
        fields = [(f.name, getattr(self.cause, f.name)) for f in dataclasses.fields(self.cause)]
        cause = tuple((name, kind_of(value).__name__ if name == "origin" else value) for name, value in fields
                      if value != getattr(Cause, name, None) and value is not None)
        return (("emitted", self.emitted),) + cause


class VerdictRule(Rule):
    """A rule that reports the kernel's proven, costly accesses whose cause is one of its kinds: one
    finding per line, for the costliest cause instance there, with its cost and proof."""

    def check(self, ctx: RuleContext) -> None:
        for line, accesses in sorted(self._owned(ctx).items()):
            worst = max(accesses, key=lambda a: (a.kernel_cost or 1.0, a.cost or 1.0))
            alike = [a for a in accesses if a.group == worst.group]
            cuda = sorted({n for a in alike for n in a.cuda_lines})
            ctx.report(
                line, CostlyAccess(emitted_text(alike), as_written(worst.cause, ctx.line_text)),
                cuda_lines=cuda or None, expected_bits=worst.max_bits, emitted_bits=worst.bits,
                cost=Cost(estimate=worst.kernel_cost, basis=cost_basis(worst, alike), per_access=worst.cost,
                          launch_bytes=ctx.kernel.ledger.requested_bytes if ctx.kernel.ledger else None,
                          at_size=worst.kernel_cost_at_size, at_size_limit=worst.at_size_limit,
                          measured=worst.measured,
                          unmeasured=worst.unmeasured, table=ctx.kernel.cost_table),
                proof=worst.proof,
            )

    def _owned(self, ctx: RuleContext) -> dict:
        """Python line -> the proven, costly accesses there whose cause this rule reports."""
        by_line: dict = {}
        for access in ctx.kernel.accesses:
            if (access.verdict == Verdict.COSTLY and root(access.cause).kind in self.reports_causes
                    and access.line is not None and (access.kernel_cost or 1.0) >= COSTLY):
                by_line.setdefault(access.line, []).append(access)
        return by_line


def cost_basis(access: Access, alike: list) -> str:
    share = round(100 * sum(a.share for a in alike))
    these = "this access moves" if len(alike) == 1 else "these accesses move"
    return f"{access.cost_basis}; {these} {share}% of the kernel's global bytes"


def emitted_text(accesses) -> str:
    """"The C store and the A and B loads are 16-bit scalar accesses with neighbouring threads 16 B
    apart": the accesses, their width and their coalescing as emitted."""
    access = accesses[0]
    many = len(accesses) > 1
    kind = "scalar" if access.lanes == 1 else "vector"
    what = f"{access.bits}-bit {kind} access{'es' if many else ''}"
    if access.lane_stride_bytes is not None:
        what += f" with neighbouring threads {byte_count(access.lane_stride_bytes)} apart"
    return f"{accesses_text(accesses)} {'are' if many else 'is a'} {what}"
