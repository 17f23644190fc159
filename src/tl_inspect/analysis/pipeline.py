"""The one place a kernel's verdicts are made, in order: judged from its artefact, proven by rebuilding
the kernel without each cause (when the caller can rebuild it), then accounted for in the ledger."""

from __future__ import annotations

from dataclasses import replace

from tl_inspect.analysis import estimate, ledger, proofs, verdicts, workload
from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.model import KernelArtifact


def analyse(artifact: KernelArtifact, table: CostTable, rebuild=None) -> KernelArtifact:
    """`artifact` with its judged (and, given `rebuild`, proven) accesses and its ledger, priced with
    `table`. `rebuild` is the inspector's re-lowering of the kernel without some causes (see `proofs.prove`)."""
    load = workload.of(artifact)
    accesses = verdicts.judge(artifact, table, load)
    if rebuild is not None:
        accesses = proofs.prove(accesses, artifact.source, rebuild, table, load)
    artifact = replace(artifact, accesses=accesses)
    account = ledger.account(artifact, load)
    moved = account.requested_bytes if account is not None else None
    accesses = estimate.price_fixes(verdicts.priced_at_size(accesses, moved, table, load), account, load, table)
    return replace(
        artifact,
        ledger=account,
        accesses=accesses,
        estimate=estimate.of(accesses, account, load, table, ledger.uncounted(artifact, load)),
    )
