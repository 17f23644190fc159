"""`tl-inspect explain`: why an access lost its width, as the TileLang book's decision chain.

Each narrower-than-possible access walks the chain (is the index contiguous in the lane? is the bounds
check uniform inside the vector group? does a cast cap the lanes? does the store index advance? does
each thread get a vector's worth of elements?) with this access's answer at each step, stops at the
step its cause fails, then shows the proof: the access's CUDA before and after the one change.
Everything here is read off the access's verdict, cause and proof; the chain decides nothing.
"""

from __future__ import annotations

from tl_inspect.ir import dtype_bits
from tl_inspect.model import Access, Cause, KernelArtifact
from tl_inspect.reports.common import ledger_rows
from tl_inspect.reports.verdict_text import evidence_lines, proof_lines
from tl_inspect.rules.lane_dependent_predicate import bound_reason
from tl_inspect.rules.vector_findings import accesses_text, article, plural, written_in
from tl_inspect.sources import SourceFiles

# the chain's questions, in the book's order
STEPS = (
    ("index", "Is the index contiguous in the lane variable?"),
    ("predicate", "Is the bounds check uniform inside the vector group?"),
    ("cast", "Does a precision cast cap the lanes?"),
    ("store", "Does the store index advance with the lane?"),
    ("per-thread", "Does each thread move a whole vector, coalesced?"),
)
QUESTION_WIDTH = max(len(question) for _, question in STEPS)
# the step each cause fails (the closed list of tl_inspect.analysis.causes.CAUSES)
FAILED_STEP = {
    "transposed": "index", "non-affine": "index", "misaligned-offset": "index", "misaligned-rows": "index",
    "interleaved": "index", "tail-guard": "predicate", "invariant-store": "store",
    "few-per-thread": "per-thread", "serial-loop": "per-thread", "annotated-layout": "per-thread",
    "fragment-layout": "per-thread",
}
# verdicts of accesses narrower or costlier than their pattern allows
EXPLAINED = ("costly", "unproven", "unexplained", "cheap")


def explain_kernel(kernel: KernelArtifact, sources: SourceFiles | None = None) -> str:
    """The chain for every access of `kernel` that is narrower or costlier than it could be."""
    sources = sources or SourceFiles()
    where = f"{kernel.file}:{kernel.line}" if kernel.line else kernel.file
    if kernel.status != "ok":
        return f"{kernel.name}  {where}\n  could not be compiled: {kernel.error}"
    groups = _groups(kernel.accesses)
    head = f"{kernel.name}  {where}" + _ledger_text(kernel)
    if not groups:
        return f"{head}\n  every global access is as wide as its pattern allows, or cannot be wider"
    return "\n\n".join([head] + [_explain_group(kernel, members, sources) for members in groups])


def _ledger_text(kernel: KernelArtifact) -> str:
    """The kernel's ledger under its name: what a launch moves, and who moves it."""
    if kernel.ledger is None:
        return ""
    rows = ledger_rows(kernel.ledger, kernel.arch)
    width = max(len(label) for label, _ in rows)
    return "\n  ledger\n" + "\n".join(f"    {label:<{width}}  {value}" for label, value in rows)


def narrow_accesses(accesses) -> list[Access]:
    """The accesses the chain explains: narrower or costlier than their pattern allows."""
    return [a for a in accesses if a.verdict in EXPLAINED and (a.verdict != "cheap" or a.cause is not None)]


def _groups(accesses) -> list[list[Access]]:
    """Accesses one change would fix, together (the C store and the A and B loads of one statement)."""
    groups: dict = {}
    for a in narrow_accesses(accesses):
        key = (a.line, a.group) if a.group is not None else (a.line, a.verdict, a.cause, a.reason)
        groups.setdefault(key, []).append(a)
    return list(groups.values())


def _explain_group(kernel: KernelArtifact, members: list[Access], sources: SourceFiles) -> str:
    # the access whose proof is shown: one that has a proof, a store before a load
    access = min(members, key=lambda a: (a.proof is None, a.kind != "store"))
    line_text = sources.line(kernel.file, access.line) if access.line else None
    lines = [f"  {accesses_text(members)}, line {access.line}: {access.bits}-bit"
             + (f", up to {access.max_bits}-bit" if access.max_bits else "") + f" ({access.verdict})"]
    lines += ["  " + text for text in evidence_lines(kernel, access.line, access.cuda_lines, sources)[1:]]
    failed = _failed_step(access)
    for number, (step, question) in enumerate(STEPS, 1):
        if step == failed:
            answer = _cause_answer(access, sources, kernel)
        else:
            answer = _passed_answer(step, access, line_text or "")
        lines.append(f"    {number}. {question:<{QUESTION_WIDTH}} {_mark(step, failed, access):<3}  {answer}")
        if step == failed:
            lines.append(f"    stopped at step {number}.")
            break
    else:
        lines.append(_unfailed(access))
    if access.cost is not None:
        kernel_cost = f"; {access.kernel_cost:.2f}x for the whole kernel" if access.kernel_cost else ""
        lines.append(f"    cost    {access.cost:.2f}x per access on an H200{kernel_cost} ({access.cost_basis})")
    if access.proof is not None:
        lines += ["  " + text for text in proof_lines(access.proof)]
    elif access.verdict == "unproven":
        lines.append("    proof   none: no kernel rebuilt without this cause moved the access wider or closer")
    return "\n".join(lines)


def _failed_step(access: Access) -> str | None:
    if access.reason == "cast-cap":
        return "cast"
    cause = access.cause
    # a layout fixed in another loop fails where that loop's own cause fails
    while cause is not None and cause.kind == "fragment-layout" and cause.origin is not None:
        cause = cause.origin
    return FAILED_STEP.get(cause.kind) if cause is not None else None


def _unfailed(access: Access) -> str:
    if access.verdict == "cheap":
        return "    no step failed: narrower by vector width alone, which costs under 1.10x"
    return "    no step failed, and no known cause explains the cost (unexplained)"


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
        stride = "?" if access.lane_stride_bytes is None else f"{access.lane_stride_bytes} B"
        return (f"`{index}`: neighbouring threads {stride} apart, each thread walks "
                f"{access.thread_run_bytes} contiguous bytes")
    if step == "predicate":
        return "no bounds check varies inside the group"
    if step == "cast":
        bits = access.max_bits or access.bits
        return f"{bits // dtype_bits(access.dtype)} x {access.dtype} ({bits} bits) allowed"
    if step == "store":
        return "not a store" if access.kind != "store" else "it advances with the lane"
    return (f"{access.elements_per_thread} elements per thread; a warp instruction moves "
            f"{access.request_bytes} B over {access.sectors} 32-byte sectors")


def _cause_answer(access: Access, sources: SourceFiles, kernel: KernelArtifact) -> str:
    """This access's answer at the step its cause (or a cast cap) fails."""
    if access.reason == "cast-cap":
        return f"a precision conversion in the loop caps it at {access.bits} bits"
    return _cause_text(access.cause, sources, kernel)


def _cause_text(cause: Cause, sources: SourceFiles, kernel: KernelArtifact) -> str:
    index = _cause_index(cause, sources, kernel)
    if cause.kind == "tail-guard":
        check = "tilelang's bounds check" if cause.inserted else "the bounds check"
        return f"{check} `{cause.predicate}` varies inside the {cause.width}-element group ({bound_reason(cause)})"
    if cause.kind == "fragment-layout":
        there = f"fragment {cause.buffer}'s layout was fixed by {cause.loop} at line {cause.loop_line}"
        return there if cause.origin is None else f"{there}, where {_cause_text(cause.origin, sources, kernel)}"
    return {
        "transposed": f"`{index}`: neighbouring lanes ({cause.lane_var}) are {cause.stride} elements apart",
        "non-affine": f"`{index}` is not affine in the lane variable {cause.lane_var}",
        "misaligned-offset": f"`{index}`: the offset `{cause.offset}` is not a multiple of {cause.width}",
        "misaligned-rows": f"`{index}`: rows of {cause.row} elements are not a multiple of {cause.width}",
        "interleaved": f"`{index}` is interleaved with other accesses of {cause.buffer} in the loop",
        "invariant-store": f"`{index}` stays put while {cause.lane_var} advances: every lane writes one element",
        "few-per-thread": f"{plural(_number(cause.elements), 'element')} per thread over {cause.threads} threads, "
                          f"less than {article(cause.width)} {cause.width}-element vector",
        "serial-loop": f"each thread walks its elements one at a time in a T.serial loop ({cause.lane_var})",
        "annotated-layout": f"T.annotate_layout fixes {cause.buffer}'s layout: no thread owns {cause.width} "
                            f"contiguous elements",
    }[cause.kind]


def _number(value: float):
    return int(value) if float(value).is_integer() else round(value, 2)


def _cause_index(cause: Cause, sources: SourceFiles, kernel: KernelArtifact) -> str:
    """The index the cause names, as the user's statement writes it."""
    text = sources.line(kernel.file, cause.index_line) if cause.index_line else None
    return written_in(text or "", cause.buffer, cause.index)
