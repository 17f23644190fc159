"""Proofs by recompiling: rebuild a kernel with one cause removed and look at the access again.

The TileLang book's method ("change N to a divisible value; if uint4 appears, that was the cause"). The
inspector rewrites and lowers the variants (`rebuild`, built by tl_inspect.inspector.lowering.compile); here
the access is found again by its Python line, buffer and direction, and the proof holds when it became
wider or its lanes came closer together. Plain data only: no tilelang.
"""

from __future__ import annotations

from tl_inspect.analysis.cost import COSTLY, access_cost, lone_walk_cost
from tl_inspect.analysis.verdicts import improved, regroup, with_proof
from tl_inspect.analysis.workload import Workload
from tl_inspect.causes import instance_key, kind_of
from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.model import Cause, Proof, Verdict

# variants beyond this many per kernel are not built: proofs must stay a small part of a run
MAX_PROOFS_PER_KERNEL = 6
# causes of one access tried in turn when the first does not prove out (a tail guard may hide one
# element per thread)
MAX_CAUSES_TRIED = 3


def prove(accesses: tuple, source: str, rebuild, table: CostTable, workload: Workload = Workload()) -> tuple:
    """`accesses` (of the kernel whose CUDA is `source`, priced with `table`) with every `unproven` cause
    instance tried: its causes in order, until a rebuilt kernel shows the accesses improve.
    `rebuild(causes)` is None when no rewrite removes `causes`, else (the change in the user's terms,
    (CUDA source, accesses) of the kernel lowered without them, or None when it does not compile)."""
    cuda = source.splitlines()
    groups: dict = {}
    for a in accesses:
        # a cause that could not slow the kernel down by COSTLY is never reported: not worth a rebuild
        if a.verdict == Verdict.UNPROVEN and a.group is not None and (a.kernel_cost or 1.0) >= COSTLY:
            groups.setdefault(a.group, []).append(a)
    proven: dict = {}
    built_count = 0
    for members in groups.values():
        for tried in causes_tried(members[0].causes):
            if built_count >= MAX_PROOFS_PER_KERNEL:
                break
            built = rebuild(tried)
            if built is None:
                continue
            cause = tried[0]
            built_count += 1
            change, lowered = built
            if lowered is None:  # a variant that does not compile proves nothing
                continue
            after_source, after = lowered
            found = {
                id(a): (_own(a, cause), *result)
                for a in members
                if (result := _proof(a, cause, change, cuda, after_source.splitlines(), after, table)) is not None
            }
            if found:
                proven.update(found)
                break
    return regroup(tuple(with_proof(a, *proven[id(a)]) if id(a) in proven else a for a in accesses), table, workload)


def causes_tried(causes: tuple) -> list:
    """The cause sets a proof rebuilds the kernel without, in turn: each of the first causes alone, then
    the first two together, as two causes may each hold the access back (a tail guard over one element
    per thread): then only removing both shows it."""
    # a cause no rewrite removes (a row per thread) is priced by the launch and the index algebra instead
    tried = [c for c in causes if kind_of(c).evidence != "static" or kind_of(c).change(c) is not None]
    tried = tried[:MAX_CAUSES_TRIED]
    return [(cause,) for cause in tried] + ([tuple(tried[:2])] if len(tried) > 1 else [])


def _own(access, cause: Cause) -> Cause:
    """The member's own cause of the instance a proof removed: the buffer and index its message names
    are its own (the B load's rows, not the A load's)."""
    return next((c for c in access.causes if instance_key(c) == instance_key(cause)), cause)


def _proof(access, cause, change: str, cuda: list, after_cuda: list, after: tuple, table: CostTable):
    """The proof for one access if the rebuilt kernel moves it wider or with neighbouring threads
    closer together, else None."""
    # a statement lowering rebuilds (a cast split into copy loops) maps to its loop header instead
    lines = {access.line, cause.loop_line, access.cause.loop_line} - {None}
    same = [b for b in after if (b.buffer, b.kind) == (access.buffer, access.kind)]
    found = [b for b in same if b.line in lines] or [b for b in same if b.line is None]
    if not found:
        return None
    best = max(found, key=lambda b: (b.bits, -(b.lane_stride_bytes or 0)))
    proof = Proof(
        change=change,
        cuda_before=_line(cuda, access.cuda_lines, access.buffer),
        cuda_after=_line(after_cuda, best.cuda_lines, access.buffer),
        bits_before=access.bits,
        bits_after=best.bits,
        stride_before=access.lane_stride_bytes,
        stride_after=best.lane_stride_bytes,
    )
    if not improved(proof):
        return None
    # what the access still costs once the cause is gone (lanes may stay apart after a wider access;
    # a lone thread's staged walk is still one thread's)
    measured = lone_walk_cost(best.bits, best.dtype, table) if cause.kind == "lone-thread" else access_cost(best, table)
    return proof, measured.factor if measured is not None else 1.0


def _line(cuda: list, numbers: tuple, buffer: str) -> str:
    """The access's CUDA line: the first of its lines, else the first line indexing its buffer."""
    for n in numbers:
        if 0 < n <= len(cuda) and cuda[n - 1].strip():
            return cuda[n - 1].strip()
    return next((text.strip() for text in cuda if f"{buffer}[" in text or f"({buffer} +" in text), "")
