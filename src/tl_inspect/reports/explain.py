"""`tl-inspect explain`: why an access lost its width, as the TileLang book's decision chain.

Each narrower-than-possible access walks the chain (is the index contiguous in the lane? is the bounds
check uniform inside the vector group? does a cast cap the lanes? does the store index advance? does
each thread get a vector's worth of elements?) with this access's answer at each step, stops at the
step its cause fails, then shows the proof: the access's CUDA before and after the one change, and the
fix of the finding the owning rule made of it. Every other finding of the kernel (a missing clear, a
padded denominator, a bank conflict, an idle GPU...) follows with its evidence, why it matters and its
fix. Everything here is read off the verdicts, causes, proofs and findings; the chain decides nothing.

`explain_view` builds the chain once as plain data (`KernelExplain`); the terminal prints it with
`explain_text`, the HTML page renders it with a template.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from tl_inspect.causes import CHAIN, as_written, kind_of, root
from tl_inspect.files.sources import SourceFiles
from tl_inspect.fixes import fix_diff, fix_note
from tl_inspect.gpu import cost_table
from tl_inspect.model import Access, Finding, KernelArtifact, Proof, Verdict
from tl_inspect.reports.common import estimate_rows, ledger_rows, times, us
from tl_inspect.reports.phrases import EVIDENCE, access_cost_text, cost_sentence, proof_summary
from tl_inspect.reports.verdict_text import cuda_change_lines, evidence_lines
from tl_inspect.rules import find_rule, owner_of
from tl_inspect.tir.nodes import dtype_bits
from tl_inspect.wording import accesses_text, byte_count, written_in

QUESTION_WIDTH = max(len(question) for _, question in CHAIN)
# verdicts of accesses narrower or costlier than their pattern allows
EXPLAINED = (Verdict.COSTLY, Verdict.UNPROVEN, Verdict.UNEXPLAINED, Verdict.CHEAP)
UNPROVEN = "none: no kernel rebuilt without this cause moved the access wider or closer"
MAX_EVIDENCE_LINES = 4
WHY_WIDTH = 100  # the rule's reason, wrapped between words: it runs to several hundred characters


@dataclass(frozen=True)
class ChainStep:
    number: int
    question: str
    mark: str  # "yes", "no", "-", or the failing answer in capitals: "NO" ("YES" for a cast cap)
    answer: str
    failed: bool


@dataclass(frozen=True)
class ExplainGroup:
    """The accesses one change would fix, and the chain of the one whose proof is shown."""

    title: str  # "The C store and the A and B loads, line 9: 16-bit, up to 128-bit (costly)"
    evidence: tuple  # the Python line and the first CUDA lines, as `verdict_text.evidence_lines` gives them
    steps: tuple  # ChainStep, up to the one that failed
    outcome: str  # "stopped at step 2." or why no step failed
    line: int | None
    cost: str  # "" when the access has no cost
    proof: str  # "rebuilt with ...: 16 -> 128 bits, ...", why there is none, or ""
    cuda_change: Proof | None  # the access's CUDA line before and after the change
    fixes: tuple = ()  # FixText of the findings the owning rule made of these accesses


@dataclass(frozen=True)
class FixText:
    fix: str  # the finding's fix title
    autofix: tuple = ()  # its judged automatic fix: the note, then the diff lines when verified


@dataclass(frozen=True)
class FindingExplain:
    """A finding no chain explains: what it is, where, the generated lines that show it, why it matters."""

    title: str  # "TLV004 [missing-clear] line 13: The accumulator ..."
    evidence: tuple  # the Python line, the first CUDA lines, then the finding's own evidence
    why: str  # the rule's reason, wrapped
    cost: str
    proof: str
    cuda_change: Proof | None
    fix: FixText


@dataclass(frozen=True)
class KernelExplain:
    title: str  # "add_2047  add_2047.py:6"
    floor: tuple  # (label, value) rows: the kernel against its floor, and the fixes that gain it most
    ledger: tuple  # (label, value) rows
    groups: tuple
    note: str  # when there are no groups: a compile error, or every access is fine
    findings: tuple = ()  # FindingExplain of the findings no group explains


def explain_view(kernel: KernelArtifact, sources: SourceFiles | None = None, findings: tuple = ()) -> KernelExplain:
    """The chain for every access of `kernel` that is narrower or costlier than it could be, each with the
    fix of its finding among `findings` (the kernel's), then the findings no chain explains."""
    sources = sources or SourceFiles()
    where = f"{kernel.file}:{kernel.line}" if kernel.line else kernel.file
    title = f"{kernel.name}  {where}"
    if kernel.status != "ok":
        return KernelExplain(title, (), (), (), f"could not be compiled: {kernel.error}")
    ledger = tuple(ledger_rows(kernel.ledger, kernel.arch)) if kernel.ledger is not None else ()
    groups, explained = [], set()
    for members in by_change(narrow_accesses(kernel.accesses)):
        owned = _owned_findings(members, findings)
        explained.update(owned)
        groups.append(_group(kernel, members, sources, tuple(_fix_text(findings[i], sources) for i in owned)))
    rest = tuple(_finding(kernel, f, sources) for i, f in enumerate(findings) if i not in explained)
    note = "" if groups else "every global access is as wide as its pattern allows, or cannot be wider"
    return KernelExplain(title, floor_rows(kernel, findings), ledger, tuple(groups), note, rest)


def floor_rows(kernel: KernelArtifact, findings: tuple) -> tuple:
    """The kernel against its floor, then its findings' fixes, the one that gains the launch most first."""
    rows = estimate_rows(kernel, cost_table.of(kernel.cost_table).on_gpu)
    gains = sorted((f for f in findings if f.gain is not None), key=lambda f: -f.gain.factor)
    for n, f in enumerate(gains, 1):
        at_scale = (
            f", {times(f.cost.estimate)} for a launch large enough to hide the launch's own time"
            if f.cost is not None and abs(f.cost.estimate - f.gain.factor) > 0.05 * f.cost.estimate
            else ""
        )
        rows.append(
            (
                f"largest cause {n}" if len(gains) > 1 else "largest cause",
                f"{f.slug} (line {f.line}): {us(f.gain.time_us)} -> {us(f.gain.fixed_us)} once fixed "
                f"({times(f.gain.factor)}{at_scale}), shown by {EVIDENCE[f.evidence_kind]}",
            )
        )
    return tuple(rows)


def explain_kernel(kernel: KernelArtifact, sources: SourceFiles | None = None, findings=()) -> str:
    return explain_text(explain_view(kernel, sources, findings))


def explain_text(view: KernelExplain) -> str:
    """The chain as `tl-inspect explain` prints it."""
    head = view.title
    for name, rows in (("against its floor", view.floor), ("ledger", view.ledger)):
        if rows:
            width = max(len(label) for label, _ in rows)
            head = "\n".join([head, f"  {name}"] + [f"    {label:<{width}}  {value}" for label, value in rows])
    if view.note:
        head = f"{head}\n  {view.note}"
    return "\n\n".join(
        [head] + [_group_text(group) for group in view.groups] + [_finding_text(finding) for finding in view.findings]
    )


def _group_text(group: ExplainGroup) -> str:
    lines = [f"  {group.title}"] + ["  " + text for text in group.evidence]
    lines += [f"    {s.number}. {s.question:<{QUESTION_WIDTH}} {s.mark:<3}  {s.answer}" for s in group.steps]
    lines.append(f"    {group.outcome}")
    lines += _cost_and_proof_lines(group.cost, group.proof, group.cuda_change)
    for fix in group.fixes:
        lines += _fix_lines(fix)
    return "\n".join(lines)


def _finding_text(finding: FindingExplain) -> str:
    lines = [f"  {finding.title}"] + ["  " + text for text in finding.evidence]
    if finding.why:
        lines += textwrap.wrap(
            finding.why,
            WHY_WIDTH,
            initial_indent="    why     ",
            subsequent_indent=" " * 12,
            break_long_words=False,
            break_on_hyphens=False,
        )
    lines += _cost_and_proof_lines(finding.cost, finding.proof, finding.cuda_change)
    return "\n".join(lines + _fix_lines(finding.fix))


def _cost_and_proof_lines(cost: str, proof: str, cuda_change: Proof | None) -> list[str]:
    lines = [f"    cost    {cost}"] if cost else []
    if proof:
        lines.append(f"    proof   {proof}")
    if cuda_change is not None:
        lines += ["  " + text for text in cuda_change_lines(cuda_change)]
    return lines


def _fix_lines(fix: FixText) -> list[str]:
    return [f"    fix     {fix.fix}"] + [f"            {line}" for line in fix.autofix]


def _fix_text(finding: Finding, sources: SourceFiles) -> FixText:
    autofix = finding.autofix
    if autofix is None or not autofix.judged:
        return FixText(finding.fix)
    diff = fix_diff(autofix, finding.file, sources.text(finding.file)).splitlines() if autofix.verified else []
    return FixText(finding.fix, (fix_note(autofix), *diff))


def _owned_findings(members: list[Access], findings) -> list[int]:
    """The indices in `findings` of those the rule owning these accesses' cause made of them, on their line."""
    kinds = {root(a.cause).kind for a in members if a.cause is not None}
    owners = {owner.slug for owner in map(owner_of, kinds) if owner is not None}
    lines = {a.line for a in members}
    return [i for i, f in enumerate(findings) if f.slug in owners and f.line in lines]


def _finding(kernel: KernelArtifact, finding: Finding, sources: SourceFiles) -> FindingExplain:
    rule = find_rule(finding.rule)
    evidence = evidence_lines(kernel, finding.line, finding.cuda_lines, sources)[1:]
    evidence += [f"  evidence {line.strip()}" for line in finding.evidence[:MAX_EVIDENCE_LINES]]
    return FindingExplain(
        title=f"{finding.rule} [{finding.slug}] line {finding.line}: {finding.message}",
        evidence=tuple(evidence),
        why=rule.why() if rule is not None else "",
        cost=cost_sentence(finding.cost) if finding.cost else "",
        proof=proof_summary(finding.proof) if finding.proof else "",
        cuda_change=finding.proof,
        fix=_fix_text(finding, sources),
    )


def narrow_accesses(accesses) -> list[Access]:
    """The accesses the chain explains: narrower or costlier than their pattern allows."""
    return [a for a in accesses if a.verdict in EXPLAINED and (a.verdict != Verdict.CHEAP or a.cause is not None)]


def by_change(accesses) -> list[list[Access]]:
    """Accesses one change would fix, together (the C store and the A and B loads of one statement)."""
    groups: dict = {}
    for a in accesses:
        key = (a.line, a.group) if a.group is not None else (a.line, a.verdict, a.cause, a.reason)
        groups.setdefault(key, []).append(a)
    return list(groups.values())


def _group(kernel: KernelArtifact, members: list[Access], sources: SourceFiles, fixes: tuple) -> ExplainGroup:
    # the access whose proof is shown: one that has a proof, a store before a load
    access = min(members, key=lambda a: (a.proof is None, a.kind != "store"))
    title = (
        f"{accesses_text(members)}, line {access.line}: {access.bits}-bit"
        + (f", up to {access.max_bits}-bit" if access.max_bits else "")
        + f" ({access.verdict})"
    )
    line_text = (sources.line(kernel.file, access.line) if access.line else None) or ""
    failed = _failed_step(access)
    steps = []
    for number, (step, question) in enumerate(CHAIN, 1):
        answer = _failed_answer(access, sources, kernel) if step == failed else _passed_answer(step, access, line_text)
        steps.append(ChainStep(number, question, _mark(step, failed, access), answer, step == failed))
        if step == failed:
            break
    return ExplainGroup(
        title=title,
        evidence=tuple(evidence_lines(kernel, access.line, access.cuda_lines, sources)[1:]),
        steps=tuple(steps),
        outcome=f"stopped at step {len(steps)}." if failed else _unfailed(access),
        line=access.line,
        cost=access_cost_text(access, kernel.cost_table),
        proof=_proof(access),
        cuda_change=access.proof,
        fixes=fixes,
    )


def _proof(access: Access) -> str:
    if access.proof is not None:
        return proof_summary(access.proof)
    return UNPROVEN if access.verdict == Verdict.UNPROVEN else ""


def _failed_step(access: Access) -> str | None:
    if access.reason == "cast-cap":
        return "cast"
    # a layout fixed in another loop fails where that loop's own cause fails
    return kind_of(root(access.cause)).chain_step if access.cause is not None else None


def _unfailed(access: Access) -> str:
    if access.verdict == Verdict.CHEAP:
        return "no step failed: narrower by vector width alone, which costs under 1.10x"
    return "no step failed, and no known cause explains the cost (unexplained)"


def _mark(step: str, failed: str | None, access: Access) -> str:
    if step == failed:
        return "YES" if step == "cast" else "NO"  # a cast cap is the one question a "yes" fails
    if step == "store" and access.kind != "store":
        return "-"
    return "no" if step == "cast" else "yes"


def _passed_answer(step: str, access: Access, line_text: str) -> str:
    """This access's answer at a step its cause does not fail."""
    if step == "index":
        index = written_in(line_text, access.buffer, f"{access.buffer}[{access.index}]")
        return (
            f"`{index}`: neighbouring threads {byte_count(access.lane_stride_bytes)} apart, each thread walks "
            f"{access.thread_run_bytes} contiguous bytes"
        )
    if step == "predicate":
        return "no bounds check varies inside the group"
    if step == "cast":
        bits = access.max_bits or access.bits
        return f"{bits // dtype_bits(access.dtype)} x {access.dtype} ({bits} bits) allowed"
    if step == "store":
        return "not a store" if access.kind != "store" else "it advances with the lane"
    return (
        f"{access.elements_per_thread} elements per thread; a warp instruction moves "
        f"{access.request_bytes} B over {access.sectors} 32-byte sectors"
    )


def _failed_answer(access: Access, sources: SourceFiles, kernel: KernelArtifact) -> str:
    """This access's answer at the step its cause (or a cast cap) fails."""
    if access.reason == "cast-cap":
        return f"a precision conversion in the loop caps it at {access.bits} bits"
    cause = as_written(access.cause, lambda line: sources.line(kernel.file, line))
    return kind_of(cause).chain_answer(cause)
