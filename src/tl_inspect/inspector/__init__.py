"""The inspector: turn user files into compiled kernel artefacts (source, TIR, CUDA, layouts, errors)."""

from tl_inspect.inspector.pool import DEFAULT_TIMEOUT_SECONDS, inspect_jobs
from tl_inspect.inspector.targets import Target, TargetError, parse_targets
from tl_inspect.inspector.job import Job

__all__ = ["DEFAULT_TIMEOUT_SECONDS", "Job", "Target", "TargetError", "inspect_jobs", "parse_targets"]
