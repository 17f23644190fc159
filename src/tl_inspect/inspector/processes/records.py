"""The records a worker writes into its result file, read back without trusting them: the user's code runs
in the worker and may write into that file too."""

from __future__ import annotations

import pickle
from typing import Iterable

from tl_inspect.model import KernelArtifact

# the plain types a worker's records are made of, besides tl-inspect's own classes
_PLAIN_TYPES = {
    "str",
    "int",
    "float",
    "bool",
    "complex",
    "tuple",
    "list",
    "dict",
    "set",
    "frozenset",
    "bytes",
    "bytearray",
    "NoneType",
    "slice",
    "range",
}
# each record's kind and the type of its payload
_RECORDS = {
    "import": dict,
    "notes": list,
    "needs_cases": dict,
    "plan": list,
    "start": str,
    "kernel": KernelArtifact,
    "fatal": str,
    "error": str,
    "done": dict,
}
FOREIGN = ("foreign", None)  # what ends the records when the file holds data the worker did not write


class _ResultUnpickler(pickle.Unpickler):
    """Builds only tl-inspect's own classes and plain types. The user's code runs in the process that writes
    the result file and may write into it: unpickling it must never call anything (`os.kill`, `exec`)."""

    def find_class(self, module: str, name: str):
        if module == "builtins" and name in _PLAIN_TYPES or module.split(".")[0] == "tl_inspect":
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a worker's result")


def records(path: str) -> Iterable[tuple]:
    """Every complete record the worker wrote; a record cut short by a crash ends the stream, and data
    that is no record ends it with `FOREIGN`."""
    try:
        with open(path, "rb") as f:
            while True:
                try:
                    record = _ResultUnpickler(f).load()
                except EOFError:
                    return
                except Exception as exc:  # noqa: BLE001 - whatever the bytes, the parent goes on
                    truncated = isinstance(exc, pickle.UnpicklingError) and "truncated" in str(exc)
                    if not truncated:
                        yield FOREIGN
                    return
                if not (
                    isinstance(record, tuple)
                    and len(record) == 2
                    and record[0] in _RECORDS
                    and isinstance(record[1], _RECORDS[record[0]])
                    and _well_formed(*record)
                ):
                    yield FOREIGN
                    return
                yield record
    except FileNotFoundError:
        return


def _well_formed(kind: str, payload) -> bool:
    if kind == "import":
        return {"error", "error_line", "warnings"} <= set(payload)
    if kind == "done":
        return isinstance(payload.get("dependencies"), tuple)
    if kind == "kernel":
        return isinstance(payload.name, str)
    return True
