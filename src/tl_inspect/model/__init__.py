"""Values shared by the inspector, the rules and the reporters.

The inspector turns a user file into `FileResult`s holding `KernelArtifact`s; rules read artefacts and
return `Finding`s; reporters render both. All of it is plain frozen data that pickles across the worker
process boundary and never imports tilelang. Three modules: `access` (one access: its verdict, cause,
proof, cost and gain), `launch` (one launch: its ledger, estimate and timing) and `results` (artefacts,
findings, fixes and the run); every name is imported from here.
"""

from tl_inspect.model.access import (
    SEVERITIES,
    STAGE_DEVICE,
    STAGE_FRONTEND,
    STAGE_LAYOUT,
    STAGE_VECTORIZE,
    VERDICTS,
    Access,
    Cause,
    Cost,
    Gain,
    Layout,
    Measured,
    Proof,
    SharedAccess,
    Verdict,
)
from tl_inspect.model.launch import Estimate, KernelTiming, Ledger
from tl_inspect.model.results import (
    SAFE,
    UNSAFE,
    Edit,
    FileResult,
    Finding,
    Fix,
    KernelArtifact,
    KernelReport,
    RunResult,
)

__all__ = [
    "SAFE",
    "SEVERITIES",
    "STAGE_DEVICE",
    "STAGE_FRONTEND",
    "STAGE_LAYOUT",
    "STAGE_VECTORIZE",
    "UNSAFE",
    "VERDICTS",
    "Access",
    "Cause",
    "Cost",
    "Edit",
    "Estimate",
    "FileResult",
    "Finding",
    "Fix",
    "Gain",
    "KernelArtifact",
    "KernelReport",
    "KernelTiming",
    "Layout",
    "Ledger",
    "Measured",
    "Proof",
    "RunResult",
    "SharedAccess",
    "Verdict",
]
