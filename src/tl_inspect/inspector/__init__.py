"""The inspector: turn user files into compiled kernel artefacts (source, TIR, CUDA, layouts, errors)."""

import importlib

# each name is loaded on first use: the command line starts the zygote before any of them is needed
_HOMES = {"DEFAULT_TIMEOUT_SECONDS": "pool", "inspect_jobs": "pool", "Target": "targets", "TargetError": "targets",
          "parse_targets": "targets", "Job": "job"}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'tl_inspect.inspector' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tl_inspect.inspector.{_HOMES[name]}"), name)
