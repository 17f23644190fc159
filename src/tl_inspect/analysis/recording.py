"""A kernel's analysis inputs as JSON: its artefact before the analysis and the variants its proofs rebuilt.

tests/compile records them from real compiles (`Job.record_analysis`) and tests/analysis runs the analysis
and the rules on them without tilelang, as LLVM tests a pass on stored IR. Values are written by class and
field name, not by module path, so moving a class between modules keeps the stored files readable.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from typing import Any

from tl_inspect import model
from tl_inspect.tir import nodes

_CLASSES = {
    cls.__name__: cls
    for module in (model, nodes)
    for cls in vars(module).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls)
}

# what only the reporters and `--dump` read: left out, as the analysis and the rules never look at it
_UNREAD_BY_ANALYSIS: dict[str, Any] = {"source_with_directives": "", "layout_text": "", "compile_ms": 0.0}
_UNREAD_STAGES = (model.STAGE_LAYOUT,)


@contextlib.contextmanager
def recorded(folder: str, artifact: model.KernelArtifact, rebuild):
    """`rebuild`, recording every variant the analysis asks it for; on leaving, the artefact and those
    variants are written to a file of `folder`. An empty `folder` records nothing."""
    if not folder:
        yield rebuild
        return
    variants: list = []

    def recording(causes: tuple):
        built = rebuild(causes)
        variants.append((causes, built))
        return built

    yield recording if rebuild is not None else None
    identity = repr((artifact.name, artifact.case)).encode()
    with open(os.path.join(folder, hashlib.sha256(identity).hexdigest()[:16] + ".json"), "w", encoding="utf-8") as f:
        f.write(dumps(artifact, tuple(variants), proven=rebuild is not None))


def dumps(artifact: model.KernelArtifact, variants: tuple, proven: bool) -> str:
    """One line of JSON: `artifact` bare, the variants its proofs rebuilt as ((cause, ...), what `rebuild`
    returned) pairs, and whether it was proven at all (`--no-proofs` passes no `rebuild`)."""
    record = {"artifact": bare(artifact), "proven": proven, "variants": variants}
    return json.dumps(_encode(record), separators=(",", ":"), sort_keys=True) + "\n"


def loads(text: str) -> tuple:
    """(artefact, variants, proven) of a line `dumps` wrote."""
    record = _decode(json.loads(text))
    return record["artifact"], record["variants"], record["proven"]


def bare(artifact: model.KernelArtifact) -> model.KernelArtifact:
    """`artifact` without what the analysis and the rules never read: the TVMScript text, the snapshot after
    layout inference, the thread grids the HTML report draws, the timings."""
    snapshots = {
        stage: dataclasses.replace(
            snapshot, funcs=tuple(dataclasses.replace(func, script="") for func in snapshot.funcs)
        )
        for stage, snapshot in artifact.snapshots.items()
        if stage not in _UNREAD_STAGES
    }
    layouts = tuple(dataclasses.replace(layout, thread_grid=None) for layout in artifact.layouts)
    return dataclasses.replace(artifact, snapshots=snapshots, layouts=layouts, **_UNREAD_BY_ANALYSIS)


def replaying(variants: tuple, proven: bool):
    """The `rebuild` that answers with the stored variants, or None for a kernel that was not proven."""
    if not proven:
        return None
    built = dict(variants)

    def rebuild(causes: tuple):
        if causes not in built:
            raise LookupError(
                f"no stored variant without {causes}: the analysis asks for another proof than "
                "when the artefact was recorded (TL_INSPECT_UPDATE_ARTEFACTS=1 records it again)"
            )
        return built[causes]

    return rebuild


def _encode(value):
    """`value` as JSON data: a dataclass as its class name and the fields that differ from their defaults
    (a field added later reads as its default), a tuple as a list, a dict as its pairs (its keys need not be
    text)."""
    if dataclasses.is_dataclass(value):
        fields = {
            f.name: _encode(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not _is_default(f, getattr(value, f.name))
        }
        return {"$": type(value).__name__, **fields}
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {"$dict": [[_encode(key), _encode(item)] for key, item in value.items()]}
    if isinstance(value, str):
        return str(value)  # TVM's own `str` subclass is written as text
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"cannot store {type(value).__name__}: {value!r}")


def _decode(data):
    if isinstance(data, list):
        return tuple(_decode(item) for item in data)
    if isinstance(data, dict):
        if "$" in data:
            return _CLASSES[data["$"]](**{name: _decode(item) for name, item in data.items() if name != "$"})
        return {_decode(key): _decode(item) for key, item in data["$dict"]}
    return data


def _is_default(field: dataclasses.Field, value) -> bool:
    if field.default is not dataclasses.MISSING:
        return type(value) is type(field.default) and value == field.default
    if field.default_factory is not dataclasses.MISSING:
        return value == field.default_factory()
    return False
