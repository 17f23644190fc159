"""One verdict per global access of a kernel.

    full         as wide as the access pattern allows, and cheap
    cheap        narrower than possible, but measured to cost under 1.10x (vector width alone)
    costly       costs 1.10x or more, and recompiling the kernel without its cause made it wider or
                 coalesced (the proof)
    unproven     costs 1.10x or more, has a cause, but no rebuilt kernel showed the access improve
    inherent     cannot be wider whatever the kernel does (a broadcast, a gather, one value per block,
                 an atomic, a footprint without contiguous runs)
    unexplained  costs 1.10x or more and nothing explains it (the test suite keeps fixtures free of it)

`judge` runs first (tl_inspect.analysis.pipeline); `prove` (tl_inspect.analysis.proofs) then turns
`unproven` into `costly` where a rebuilt kernel shows the access improve. Rules only filter the
verdicts by the causes they declare (`reports_causes`).
"""

from __future__ import annotations

import dataclasses
import re

from tl_inspect.analysis import ledger
from tl_inspect.analysis.cost import (
    COSTLY,
    L1_BOUND_LOADS,
    Measured,
    access_cost,
    kernel_slowdown,
    kernel_slowdown_at,
    lone_walk_cost,
    walks,
)
from tl_inspect.analysis.detection import Plans
from tl_inspect.analysis.footprints import MAX_VECTOR_BITS
from tl_inspect.analysis.kernel import KernelModel
from tl_inspect.analysis.workload import Workload
from tl_inspect.causes import instance_key, kind_of, root
from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.model import Access, Cause, KernelArtifact, Verdict
from tl_inspect.tir import nodes as ir


def judge(kernel: KernelArtifact, table: CostTable, workload: Workload = Workload()) -> tuple:
    """The kernel's accesses (one per distinct access of the device code) with their verdicts, priced
    with `table`; `workload` is the kernel's arithmetic, which runs beside its accesses."""
    facts = KernelModel(kernel)
    refs = _frontend_refs(facts)
    accesses = []
    for a in _distinct(kernel.accesses):
        if a.line is None:
            a = _placed(kernel, facts, a)
        match = refs.get((a.line, a.buffer, a.kind))
        # the frontend footprint counts what the block really moves: a `T.Parallel(8)` tail run by 8 of 128
        # threads moves 8 elements, not 128
        if match is not None and not a.via:
            a = dataclasses.replace(a, block_bytes=match[1].block_bits // 8)
        # nor more than the tensor holds: a 1024-element tile over a tensor of 127 moves 127
        a = dataclasses.replace(
            a, block_bytes=min(a.block_bytes, ledger.tensor_bytes(facts.func, a.buffer) or a.block_bytes)
        )
        accesses.append((a, match))
    total = sum(a.block_bytes for a, _ in accesses) or 1
    lone = ledger.working_threads(kernel) == 1
    plans = Plans(facts)
    judged = [
        _judge_one(facts, plans, match, dataclasses.replace(a, share=a.block_bytes / total), lone, table)
        for a, match in accesses
    ]
    return regroup(judged, table, workload)


def regroup(accesses, table: CostTable, workload: Workload = Workload()) -> tuple:
    """Number the cause instances (accesses that one change would fix share a group) and give each
    access its instance's kernel-level slowdown. A cause that would cost the kernel COSTLY or more but
    for its arithmetic, which takes longer than its memory traffic, is `cheap` for that reason."""
    keys: dict = {}
    for a in accesses:
        if a.cause is not None and a.verdict in Verdict.PROVABLE:
            keys.setdefault(instance_key(a.cause), []).append(a)
    # one slowdown per cause instance, and whether the arithmetic alone keeps it under COSTLY
    priced = {}
    for key, members in keys.items():
        scale = _block_scale(members[0].cause)
        cost = round(kernel_slowdown(accesses, members, table, scale, workload), 3)
        priced[key] = cost, cost < COSTLY <= kernel_slowdown(accesses, members, table, scale)
    out = []
    for a in accesses:
        if a.cause is not None and a.verdict in Verdict.PROVABLE:
            key = instance_key(a.cause)
            cost, hidden = priced[key]
            a = dataclasses.replace(a, group=list(keys).index(key), kernel_cost=cost)
            if a.verdict == Verdict.UNPROVEN and hidden:
                a = dataclasses.replace(a, verdict=Verdict.CHEAP, group=None, reason="compute")
        out.append(a)
    return tuple(out)


def priced_at_size(accesses, launch_bytes: int | None, table: CostTable, workload: Workload = Workload()) -> tuple:
    """Each cause instance's kernel-level slowdown again, for a launch of `launch_bytes` (the ledger's):
    the launch's own time and a lone thread's walk count there, as they do on the GPU."""
    if not launch_bytes:
        return tuple(accesses)
    groups: dict = {}
    for a in accesses:
        if a.group is not None and a.kernel_cost is not None:
            groups.setdefault(a.group, []).append(a)
    priced = {
        group: kernel_slowdown_at(launch_bytes, accesses, members, table, _block_scale(members[0].cause), workload)
        for group, members in groups.items()
    }
    return tuple(
        dataclasses.replace(a, kernel_cost_at_size=round(priced[a.group][0], 3), at_size_limit=priced[a.group][1])
        if a.group in priced
        else a
        for a in accesses
    )


def _block_scale(cause: Cause) -> float:
    """How much more each block moves once the cause is gone: a thread given a whole vector instead of
    a few elements moves a tile that many times larger, as the proof's kernel does (fewer threads over
    the same grid stay on the block floor, measured 1.00x)."""
    return kind_of(root(cause)).block_scale(root(cause))


def improved(proof) -> bool:
    """Whether the rebuilt kernel moved the access wider, or with neighbouring threads closer."""
    return proof.bits_after > proof.bits_before or (
        proof.stride_after is not None and proof.stride_before is not None and proof.stride_after < proof.stride_before
    )


def with_proof(access: Access, cause: Cause, proof, cost_after: float) -> Access:
    """The access once a rebuilt kernel without `cause` showed it improve: costly, owned by the cause
    that proved out, and as wide as the rebuilt kernel emitted it."""
    return dataclasses.replace(
        access,
        verdict=Verdict.COSTLY,
        cause=cause,
        proof=proof,
        cost_after=cost_after,
        max_bits=max(access.max_bits or 0, proof.bits_after),
    )


def _judge_one(facts, plans: Plans, match, access: Access, lone: bool, table: CostTable) -> Access:
    if access.atomic:
        return dataclasses.replace(access, verdict=Verdict.INHERENT, reason="atomic", max_bits=access.bits)
    if lone and access.lane_stride_bytes == 0 and access.elements_per_thread >= L1_BOUND_LOADS:
        return _lone_walk(facts, access, table)
    measured = access_cost(access, table, match is not None and match[0].staged, match is not None and _held(match[0]))
    if measured is None:
        reason = "broadcast" if access.lane_stride_bytes == 0 else "gather"
        return dataclasses.replace(access, verdict=Verdict.INHERENT, reason=reason, max_bits=access.bits)
    access = dataclasses.replace(_priced(access, measured), walked=bool(_walk_var(facts, access)))
    if access.via:
        # an asynchronous copy moves a whole tile (TMA) or its own 4-16 bytes: the copy engine's width
        return dataclasses.replace(access, verdict=Verdict.FULL, max_bits=access.bits)
    if match is None:
        if access.bits >= MAX_VECTOR_BITS:
            return dataclasses.replace(access, verdict=Verdict.FULL, max_bits=access.bits)
        verdict = Verdict.CHEAP if measured.factor < COSTLY else Verdict.UNEXPLAINED
        return dataclasses.replace(access, verdict=verdict, max_bits=MAX_VECTOR_BITS)
    unit, ref = match
    plan = plans[unit]
    access = dataclasses.replace(access, tile_op="copy" if unit.kind == "copy" else "")
    reason = plan.inherent(ref)
    if reason is not None:
        return dataclasses.replace(access, verdict=Verdict.INHERENT, reason=reason, max_bits=access.bits)
    lanes = plan.max_lanes(ref)
    max_bits = max(access.bits, lanes * ref.bits)
    access = dataclasses.replace(access, max_bits=max_bits)
    if measured.factor < COSTLY and access.bits >= max_bits:
        return dataclasses.replace(access, verdict=Verdict.FULL)
    if measured.factor < COSTLY and plan.cast_capped(ref) and access.bits >= plan.cap * ref.bits:
        return dataclasses.replace(access, verdict=Verdict.CHEAP, reason="cast-cap")
    # a costly access as wide as its footprint allows is held back by how lanes walk memory: judge it
    # against a full vector
    width = lanes if lanes > 1 else MAX_VECTOR_BITS // ref.bits
    causes = plan.causes(ref, access, width)
    if walks(access):
        # a thread walking a row of its own: whatever narrows each load, the walk is what the launch waits on
        causes = [
            Cause(
                "row-per-thread",
                width=width,
                buffer=access.buffer,
                loop_line=access.line,
                threads=facts.thread_count,
                elements=access.elements_per_thread,
            ),
            *causes,
        ]
    if measured.factor < COSTLY:
        return dataclasses.replace(access, verdict=Verdict.CHEAP, cause=causes[0] if causes else None)
    if not causes:
        return dataclasses.replace(access, verdict=Verdict.UNEXPLAINED)
    return dataclasses.replace(access, verdict=Verdict.UNPROVEN, cause=causes[0], causes=tuple(causes))


def _held(unit) -> bool:
    """Whether the unit's loads land in registers that outlive it (a fragment filled to be reduced),
    rather than going straight back to memory."""
    return bool(unit.local_stores) and not any(r.is_global and r.kind == "store" for r in unit.refs)


def _priced(access: Access, measured: Measured) -> Access:
    return dataclasses.replace(
        access, cost=measured.factor, cost_basis=measured.basis, cost_bound=measured.bound, cost_term=measured.term
    )


def _walk_var(facts, access: Access) -> str:
    """The variable of the serial loop the access's statement sits in, innermost, or "": the statement on
    the access's line, or one a few lines up whose value spans down to it (a sum wrapped over lines)."""
    for store in facts.stores:
        # a walk a vector at a time (`T.serial` over `T.vectorized`) is walked by its serial loop
        walking = [loop for loop in store.loops if loop.kind in WALKS]
        if not (walking and store.line is not None and access.line):
            continue
        if store.line == access.line or (
            store.line < access.line <= store.line + STATEMENT_LINES
            and any(sub[:2] == ("load", access.buffer) for sub in ir.subexprs(store.value))
        ):
            return walking[-1].var
    return ""


# the most lines one statement of a kernel spans in practice (a wrapped expression)
STATEMENT_LINES = 4


def _lone_walk(facts, access: Access, table: CostTable) -> Access:
    """One working thread per block walks many elements: every lane of the block but one idles. The
    cause is the block's layout of work, whatever the access's width."""
    walk = _walk_var(facts, access)
    cause = Cause(
        "lone-thread",
        width=MAX_VECTOR_BITS // (access.bits or 32),
        buffer=access.buffer,
        loop_line=access.line,
        lane_var=walk,
        threads=facts.thread_count,
        elements=access.elements_per_thread,
    )
    return dataclasses.replace(
        _priced(access, lone_walk_cost(access.bits, access.dtype, table)),
        verdict=Verdict.UNPROVEN,
        cause=cause,
        walked=True,
        causes=(cause,),
        max_bits=MAX_VECTOR_BITS,
    )


# the loops a lone thread walks its row in: the ones `T.serial`, `range` and `T.unroll` write
WALKS = ("serial", "unrolled")


def _placed(kernel: KernelArtifact, facts, access: Access) -> Access:
    """An access whose statement lowering rebuilt without a line (a bounds check around a store at a
    run-time offset, `let` values merged into one load) takes the line of the first statement of the
    user's that makes it."""
    lines = {
        ref.line
        for unit in facts.units
        for ref in unit.refs
        if ref.is_global and (ref.buffer, ref.kind) == (access.buffer, access.kind) and ref.line
    }
    if not lines:
        return access
    word = re.compile(rf"\b{re.escape(access.buffer)}\[")
    cuda = tuple(
        n
        for n, text in enumerate(kernel.source.splitlines(), 1)
        if word.search(text) and kernel.line_map[n - 1] is None
    )
    return dataclasses.replace(access, line=min(lines), cuda_lines=access.cuda_lines or cuda)


def _frontend_refs(facts) -> dict:
    """(line, buffer, kind) -> (unit, global reference), under the reference's own line and under its
    unit's line: statements that lowering rebuilds (a cast split into copy loops) carry the loop header's."""
    found: dict = {}
    for unit in facts.units:
        for ref in unit.refs:
            if not ref.is_global:
                continue
            for line in (ref.line, unit.line):
                found.setdefault((line, ref.buffer, ref.kind), (unit, ref))
    return found


def _distinct(accesses) -> list:
    """One access per statement, buffer, direction and width: lowering may emit the same access in
    several copies of a loop (unswitched branches), which are one access of the user's program."""
    merged: dict = {}
    for a in accesses:
        key = (a.line, a.buffer, a.kind, a.lanes, a.via, a.lane_stride_bytes, a.atomic)
        if key in merged:
            old = merged[key]
            merged[key] = dataclasses.replace(
                old,
                cuda_lines=tuple(sorted(set(old.cuda_lines) | set(a.cuda_lines))),
                elements_per_thread=max(old.elements_per_thread, a.elements_per_thread),
                block_bytes=max(old.block_bytes, a.block_bytes),
            )
        else:
            merged[key] = a
    return list(merged.values())
