"""The stored analysis inputs of every rule example and fixture kernel: tests/compile records them from
real compiles, tests/analysis runs the analysis and the rules on them without tilelang."""

from __future__ import annotations

import dataclasses
import glob
import os

from tl_inspect.analysis.pipeline import analyse
from tl_inspect.analysis.recording import loads, replaying
from tl_inspect.gpu import cost_table
from tl_inspect.model import FileResult, KernelArtifact
from tl_inspect.rules import registered_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARTEFACTS = os.path.join(ROOT, "tests", "artefacts")
# what stands for ROOT in a stored file
REPOSITORY = "<repository>/"
UPDATE_ARTEFACTS = os.environ.get("TL_INSPECT_UPDATE_ARTEFACTS") == "1"

RULES = registered_rules()
EXAMPLES = [example for rule in RULES for example in rule.examples()]
FIXTURE_FILES = sorted(glob.glob(os.path.join(ROOT, "fixtures", "kernels", "*.py")))
SOURCES = [example.path for example in EXAMPLES] + FIXTURE_FILES


def artefact_path(source: str) -> str:
    """tests/artefacts/<the source's path in the repository, .jsonl for .py>: one kernel a line, in file order."""
    return os.path.join(ARTEFACTS, os.path.splitext(os.path.relpath(source, ROOT))[0] + ".jsonl")


def stored_text(records: list) -> str:
    """The stored form of a file's kernels from the lines the worker recorded, with the repository's own
    path (in the kernel's file, in tilelang's warnings) left out, so the files do not depend on where it is
    checked out."""
    return "".join(records).replace(ROOT + os.sep, REPOSITORY)


def analysed(artifact: KernelArtifact, rebuild) -> KernelArtifact:
    """What the worker makes of an artefact (tl_inspect.inspector.lowering.compile), priced with the
    shipped cost table."""
    table = cost_table.shipped()
    return dataclasses.replace(analyse(artifact, table, rebuild), cost_table=table)


def stored_result(source: str) -> FileResult:
    """`source` as the inspector reports it, its kernels analysed from their stored artefacts."""
    path = artefact_path(source)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no stored artefacts {os.path.relpath(path, ROOT)}: `TL_INSPECT_UPDATE_ARTEFACTS=1 "
            f"python -m pytest tests/compile/test_artefacts.py` records them"
        )
    with open(path, encoding="utf-8") as f:
        lines = f.read().replace(REPOSITORY, ROOT + os.sep).splitlines()
    kernels = [analysed(artifact, replaying(variants, proven)) for artifact, variants, proven in map(loads, lines)]
    return FileResult(path=source, kernels=tuple(kernels))
