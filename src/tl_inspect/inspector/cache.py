"""Reuse the inspection of a file whose code has not changed (`--no-cache` turns this off).

The key covers everything the result depends on: the file and the other Python files of its folder
(which it may import), the job's options, and the versions of tilelang and of tl-inspect's inspector
code. Only clean results are stored, so an error is always reproduced by a fresh compile.
"""

from __future__ import annotations

import glob
import hashlib
import os
import pickle
import tempfile
from dataclasses import asdict, replace
from importlib import metadata

from tl_inspect.inspector.worker import Job
from tl_inspect.model import FileResult

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("TL_INSPECT_CACHE_DIR") or os.path.join(base, "tl-inspect")


def _code_fingerprint() -> bytes:
    digest = hashlib.sha256(metadata.version("tilelang").encode())
    for path in sorted(glob.glob(os.path.join(_PACKAGE_DIR, "inspector", "*.py"))
                       + [os.path.join(_PACKAGE_DIR, name) for name in ("ir.py", "model.py")]):
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.digest()


def key(job: Job) -> str | None:
    path = os.path.abspath(job.path)
    digest = hashlib.sha256(_code_fingerprint())
    digest.update(repr(sorted(asdict(job).items())).encode())
    digest.update(path.encode())
    try:
        for source in [path] + sorted(glob.glob(os.path.join(os.path.dirname(path), "*.py"))):
            with open(source, "rb") as f:
                digest.update(source.encode() + b"\0" + f.read())
    except OSError:
        return None
    return digest.hexdigest()


def load(job: Job) -> FileResult | None:
    name = key(job)
    if name is None:
        return None
    try:
        with open(os.path.join(cache_dir(), name + ".pickle"), "rb") as f:
            return replace(pickle.load(f), cached=True)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None


def store(job: Job, result: FileResult) -> None:
    if result.error or any(k.status != "ok" for k in result.kernels):
        return
    name = key(job)
    if name is None:
        return
    folder = cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
        # write then rename, so a concurrent run never reads half a file
        with tempfile.NamedTemporaryFile(dir=folder, delete=False, suffix=".tmp") as f:
            pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(f.name, os.path.join(folder, name + ".pickle"))
    except OSError:
        pass
