"""Plain-text renderings of one access verdict and of one finding, with their evidence: the Python
line, the CUDA lines, the cause, the cost and the proof. The pytest assertions fail with these and
`tl-inspect explain` prints them; both only render fields the inspector and the rules filled in."""

from __future__ import annotations

from tl_inspect.analysis import cost_table
from tl_inspect.model import Access, Finding, KernelArtifact, Proof
from tl_inspect.reports.difference import differing_pair
from tl_inspect.reports.phrases import measured_clause, proof_summary
from tl_inspect.sources import SourceFiles

MAX_CUDA_LINES = 3


def access_name(access: Access) -> str:
    """"the C store", "the A load (cp.async)"."""
    via = f" ({access.via})" if access.via else ""
    return f"the {access.buffer} {access.kind}{via}"


def access_text(kernel: KernelArtifact, access: Access, findings=(), sources: SourceFiles | None = None) -> str:
    """What a failing vectorization assertion prints for one access: its width against the widest
    allowed, where it is in both languages, its verdict, cause, cost and proof, and the finding a rule
    made of it."""
    sources = sources or SourceFiles()
    width = f"{access.bits}-bit" + (f" (up to {access.max_bits}-bit possible)" if access.max_bits else "")
    lines = [f"{access_name(access)} in kernel {kernel.name} is {width}: verdict {access.verdict}"]
    lines += evidence_lines(kernel, access.line, access.cuda_lines, sources)
    if access.cause is not None:
        lines.append(f"  cause   {access.cause.kind}" + (f" ({access.reason})" if access.reason else ""))
    elif access.reason:
        lines.append(f"  reason  {access.reason}")
    if access.cost is not None:
        kernel_cost = f", {access.kernel_cost:.2f}x for the kernel" if access.kernel_cost else ""
        lines.append(f"  cost    {access.cost:.2f}x per access{kernel_cost} {cost_table.of(kernel.cost_table).on_gpu} "
                     f"({access.cost_basis})"
                     f"{measured_clause(access.measured, access.unmeasured)}")
    if access.proof is not None:
        lines += proof_lines(access.proof)
    for finding in findings:
        if finding.line == access.line and finding.kernel == kernel.name:
            lines.append(f"  finding {finding.rule} [{finding.slug}] {finding.message}")
            lines.append(f"  fix     {finding.fix}")
    return "\n".join(lines)


def finding_text(kernel: KernelArtifact, finding: Finding, sources: SourceFiles | None = None) -> str:
    """A finding as a failing `assert_no_findings` prints it."""
    sources = sources or SourceFiles()
    lines = [f"{finding.file}:{finding.line}: {finding.rule} [{finding.slug}] {finding.message}"]
    lines += evidence_lines(kernel, finding.line, finding.cuda_lines, sources)[1:]
    if finding.cost is not None:
        lines.append(f"  cost    {finding.cost.estimate:.2f}x for the kernel {cost_table.of(finding.cost.table).on_gpu} "
                     f"({finding.cost.basis})"
                     f"{measured_clause(finding.cost.measured, finding.cost.unmeasured)}")
    if finding.proof is not None:
        lines += proof_lines(finding.proof)
    lines.append(f"  fix     {finding.fix}")
    return "\n".join(lines)


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


def proof_lines(proof: Proof) -> list[str]:
    return [f"  proof   {proof_summary(proof)}", *cuda_change_lines(proof)]


def cuda_change_lines(proof: Proof) -> list[str]:
    """The access's CUDA line before and after the change, cut to where they differ."""
    before, after = differing_pair(proof.cuda_before, proof.cuda_after)
    return [f"          before: {before}", f"          after:  {after}"]
