"""The inspector: turn user files into compiled kernel artefacts (source, TIR, CUDA, layouts, errors).

Five stations, a folder each: `discovery` (the kernels of a user file and the calls that bind them),
`processes` (the zygote, the workers, their limits and the result cache), `lowering` (one kernel
compiled and read), `rewrites` (kernels rebuilt without one cause, for the proofs) and `measurement`
(`--measure` on this machine's GPU)."""

import importlib

# each name is loaded on first use: the command line starts the zygote before any of them is needed
_HOMES = {
    "DEFAULT_TIMEOUT_SECONDS": "processes.pool",
    "inspect_jobs": "processes.pool",
    "Target": "discovery.targets",
    "TargetError": "discovery.targets",
    "parse_targets": "discovery.targets",
    "Job": "processes.job",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'tl_inspect.inspector' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tl_inspect.inspector.{_HOMES[name]}"), name)
