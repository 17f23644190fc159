"""Plain-text renderings of access verdicts and findings: the one line a failing pytest assertion gives
each cause or finding, and the evidence lines (the Python line, the CUDA lines) and proof lines
`tl-inspect explain` prints. Both only render fields the inspector and the rules filled in."""

from __future__ import annotations

from tl_inspect.causes import as_written, kind_of
from tl_inspect.files.sources import SourceFiles
from tl_inspect.model import Access, Finding, KernelArtifact, Proof
from tl_inspect.reports.difference import differing_pair
from tl_inspect.reports.phrases import headline
from tl_inspect.wording import accesses_text

MAX_CUDA_LINES = 3


def kernel_title(kernel: KernelArtifact) -> str:
    """ "kernel add[N=4095] (kernels.py:6)": the case's name, so a parametrized test says which one failed."""
    where = f"{kernel.file}:{kernel.line}" if kernel.line else kernel.file
    return f"kernel {kernel.name} ({where})"


def cause_line(kernel: KernelArtifact, accesses: list[Access], findings, sources: SourceFiles) -> str:
    """One line for the accesses one change would widen: where, how wide, why, and the fix of the
    finding a rule made of them (else the cause's own)."""
    access = min(accesses, key=lambda a: a.kind != "store")
    width = f"{access.bits}-bit" + (f", up to {access.max_bits}-bit" if access.max_bits else "")
    fix = None
    if access.cause is not None:
        cause = as_written(access.cause, lambda line: sources.line(kernel.file, line))
        why, fix = kind_of(cause).because(cause), kind_of(cause).fix(cause)
    else:
        why = f"no known cause ({access.reason})" if access.reason else "no known cause"
    finding = next((f for f in findings if f.line == access.line and access.line is not None), None)
    fix = finding.fix if finding is not None else fix
    where = f"line {access.line}" if access.line else "no Python line"
    return f"  {where}: {accesses_text(accesses)}, {width} ({access.verdict}): {why}" + (f"; fix: {fix}" if fix else "")


def finding_line(finding: Finding) -> str:
    """A finding on one line, its cost and fix included."""
    return f"  line {finding.line}: {finding.rule} [{finding.slug}] {headline(finding)} Fix: {finding.fix}"


def evidence_lines(kernel: KernelArtifact, line: int | None, cuda_lines, sources: SourceFiles) -> list[str]:
    """`at FILE:LINE`, the Python line, and the first CUDA lines it produced."""
    out = [f"  at      {kernel.file}:{line}" if line else f"  at      {kernel.file} (no Python line)"]
    text = sources.line(kernel.file, line) if line else None
    if text is not None:
        out.append(f"  python  {line:>4} | {text.strip()}")
    cuda = kernel.source.splitlines()
    shown = [n for n in cuda_lines if 0 < n <= len(cuda)][:MAX_CUDA_LINES]
    out += [f"  cuda    {n:>4} | {cuda[n - 1].strip()}" for n in shown]
    if len(cuda_lines) > len(shown):
        out.append(f"          ... {len(cuda_lines) - len(shown)} more CUDA lines")
    return out


def cuda_change_lines(proof: Proof) -> list[str]:
    """The access's CUDA line before and after the change, cut to where they differ."""
    before, after = differing_pair(proof.cuda_before, proof.cuda_after)
    return [f"          before: {before}", f"          after:  {after}"]
