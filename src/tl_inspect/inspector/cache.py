"""Reuse the inspection of a file whose code has not changed (`--no-cache` turns this off).

An entry is found by the job (the file and the options) and the versions of tilelang and of
tl-inspect's inspector and analysis code; it is used only while every input the worker recorded as it
read it (`inputs`: the user's Python sources, other files opened, environment variables read) is unchanged.
Only clean results whose every input could be hashed are stored, so an error is always reproduced by
a fresh compile.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import pickle
import tempfile
from dataclasses import asdict, replace
from importlib import metadata

from tl_inspect.deepstack import call_on_deep_stack
from tl_inspect.inspector import inputs
from tl_inspect.inspector.job import Job
from tl_inspect.model import FileResult

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("TL_INSPECT_CACHE_DIR") or os.path.join(base, "tl-inspect")


@functools.cache
def _code_fingerprint() -> bytes:
    digest = hashlib.sha256(metadata.version("tilelang").encode())
    # the worker also judges accesses and draws up the ledger (analysis/), and both are cached with it
    for path in sorted(glob.glob(os.path.join(_PACKAGE_DIR, "inspector", "*.py"))
                       + glob.glob(os.path.join(_PACKAGE_DIR, "analysis", "*.py"))
                       + [os.path.join(_PACKAGE_DIR, name) for name in ("indexing.py", "ir.py", "model.py")]):
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.digest()


def _entry_path(job: Job) -> str:
    digest = hashlib.sha256(_code_fingerprint())
    digest.update(repr(sorted(asdict(job).items())).encode())
    digest.update(os.path.abspath(job.path).encode())
    return os.path.join(cache_dir(), digest.hexdigest() + ".pickle")


def load(job: Job) -> FileResult | None:
    try:
        with open(_entry_path(job), "rb") as f:
            result = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return None
    return replace(result, cached=True) if inputs.unchanged(result.dependencies) else None


def store(job: Job, result: FileResult) -> None:
    if (result.error or any(k.status != "ok" for k in result.kernels) or not result.dependencies
            or any(digest is None for _, _, digest in result.dependencies)):
        return
    folder = cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
        # write then rename, so a concurrent run never reads half a file
        # pickling recurses once per level of the kernels' expressions
        data = call_on_deep_stack(pickle.dumps, result, pickle.HIGHEST_PROTOCOL)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False, suffix=".tmp") as f:
            f.write(data)
        os.replace(f.name, os.path.join(folder, os.path.basename(_entry_path(job))))
    except OSError:
        pass
