"""Rules over the verdicts: a `VerdictRule` declares the cause kinds it reports (`reports_causes`) and
reports each proven, costly access of those kinds, phrased by its cause kind."""

from __future__ import annotations

import dataclasses

from tl_inspect.analysis.cost import COSTLY
from tl_inspect.analysis.estimate import NEAR_FLOOR_BYTES, NEAR_FLOOR_GAP, STATIC, fix_key
from tl_inspect.causes import as_written, kind_of, root
from tl_inspect.model import Access, Cause, Cost, Verdict
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.wording import accesses_text, byte_count, join


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
        cause = tuple(
            (name, kind_of(value).__name__ if name == "origin" else value)
            for name, value in fields
            if value != getattr(Cause, name, None) and value is not None
        )
        return (("emitted", self.emitted),) + cause


class VerdictRule(Rule):
    """A rule that reports the kernel's costly accesses whose cause is one of its kinds: one finding per
    line, for the cause instance there whose fix gains the launch most, with its cost, its gain against
    the launch's floor and its evidence (a rebuilt kernel, or the launch and its index algebra). A fix that
    restructures the whole launch (a row spread over a block's threads) is one finding, at the first line
    of the accesses it fixes."""

    def check(self, ctx: RuleContext) -> None:
        for line, accesses in sorted(self._owned(ctx).items()):
            worst = max(accesses, key=lambda a: (a.gain.factor if a.gain else 1.0, a.kernel_cost or 1.0, a.cost or 1.0))
            cause = reported_cause(worst)
            alike = [a for a in accesses if fix_key(reported_cause(a)) == fix_key(cause)]
            cuda = sorted({n for a in alike for n in a.cuda_lines})
            lines = sorted({a.line for a in alike})
            emitted = emitted_text(alike) + (f" (lines {join([str(n) for n in lines])})" if len(lines) > 1 else "")
            ctx.report(
                line,
                CostlyAccess(emitted, as_written(cause, ctx.line_text)),
                end_line=max(lines) if len(lines) > 1 else None,
                cuda_lines=cuda or None,
                expected_bits=worst.max_bits,
                emitted_bits=worst.bits,
                cost=self._cost(ctx, worst, alike),
                proof=worst.proof if _rebuilt(worst) else None,
                gain=worst.gain,
            )

    @staticmethod
    def _cost(ctx: RuleContext, worst: Access, alike: list) -> Cost:
        table, moved = ctx.kernel.cost_table, ctx.kernel.ledger.requested_bytes if ctx.kernel.ledger else None
        if not _rebuilt(worst):
            return Cost(
                estimate=round(worst.gain.factor, 3),
                basis=worst.gain.shows,
                per_access=worst.cost,
                launch_bytes=moved,
                table=table,
            )
        return Cost(
            estimate=worst.kernel_cost,
            basis=cost_basis(worst, alike),
            per_access=worst.cost,
            launch_bytes=moved,
            at_size=worst.kernel_cost_at_size,
            at_size_limit=worst.at_size_limit,
            measured=worst.measured,
            unmeasured=worst.unmeasured,
            table=table,
        )

    def _owned(self, ctx: RuleContext) -> dict:
        """Python line -> the costly accesses there whose reported cause this rule owns: proven by a rebuilt
        kernel and costing the kernel COSTLY or more, or priced by the launch and its index algebra to
        gain the launch COSTLY or more, unless the launch is big and estimated near its floor already."""
        near_floor = _near_floor(ctx.kernel)
        by_line: dict = {}
        first_line: dict = {}
        for access in ctx.kernel.accesses:
            if access.line is None or reported_cause(access) is None:
                continue
            cause = root(reported_cause(access))
            if cause.kind not in self.reports_causes:
                continue
            if _rebuilt(access):
                if access.verdict != Verdict.COSTLY or (access.kernel_cost or 1.0) < COSTLY:
                    continue
                line = access.line
            else:
                if access.gain.factor < COSTLY or near_floor:
                    continue
                # one restructuring of the launch fixes every access it spreads: one finding, at the first
                line = (
                    first_line.setdefault(fix_key(cause), access.line) if kind_of(cause).restructures else access.line
                )
            by_line.setdefault(line, []).append(access)
        return by_line


def reported_cause(access: Access) -> Cause | None:
    """The cause a finding on the access names: its static cause where that fix gains more than the proven
    one's, else the cause its verdict carries."""
    return access.gain.cause if access.gain is not None and access.gain.evidence == STATIC else access.cause


def _rebuilt(access: Access) -> bool:
    return access.gain is None or access.gain.evidence != STATIC


def _near_floor(kernel) -> bool:
    """A launch that moves NEAR_FLOOR_BYTES or more, estimated within NEAR_FLOOR_GAP of its floor."""
    ledger, estimate = kernel.ledger, kernel.estimate
    return (
        ledger is not None
        and (ledger.unique_bytes or 0) >= NEAR_FLOOR_BYTES
        and estimate is not None
        and estimate.gap is not None
        and estimate.gap < NEAR_FLOOR_GAP
    )


def cost_basis(access: Access, alike: list) -> str:
    share = round(100 * sum(a.share for a in alike))
    these = "this access moves" if len(alike) == 1 else "these accesses move"
    return f"{access.cost_basis}; {these} {share}% of the kernel's global bytes"


def emitted_text(accesses) -> str:
    """ "The C store and the A and B loads are 16-bit scalar accesses with neighbouring threads 16 B
    apart": the accesses, their width and their coalescing as emitted."""
    access = accesses[0]
    many = len(accesses) > 1
    kind = "scalar" if access.lanes == 1 else "vector"
    what = f"{access.bits}-bit {kind} access{'es' if many else ''}"
    if access.lane_stride_bytes is not None:
        what += f" with neighbouring threads {byte_count(access.lane_stride_bytes)} apart"
    return f"{accesses_text(accesses)} {'are' if many else 'is a'} {what}"
