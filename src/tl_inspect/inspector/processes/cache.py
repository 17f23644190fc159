"""Reuse the inspection of a file whose code has not changed (`--no-cache` turns this off).

An entry is found by the job (the file's real path, however it was spelt, and the options) and the
versions of tilelang and of the tl-inspect code that made it; it is used only while every input the worker
recorded as it read it (`inputs`: the user's Python sources, other files opened, environment variables
read) is unchanged. Only clean results whose every input could be hashed are stored, so an error is always
reproduced by a fresh compile. Each entry starts with the SHA-256 of the rest: an entry garbled on disk is dropped and
recomputed, never a traceback. The folder is kept under `cache-max-mb` (default DEFAULT_MAX_MB): after a
run stores entries, the least recently used ones are removed until the rest fit.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import os
import pickle
import tempfile
from dataclasses import asdict, replace
from importlib import metadata

from tl_inspect.files.cache_dir import cache_dir
from tl_inspect.files.sources import read_bounded
from tl_inspect.inspector.processes import inputs
from tl_inspect.inspector.processes.job import Job
from tl_inspect.model import FileResult
from tl_inspect.tir.deepstack import call_on_deep_stack

MAX_ENTRY_BYTES = 256 << 20
DEFAULT_MAX_MB = 512  # entries are 70-250 KB: some thousands of files
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# what runs only on a result, never to make one: editing a rule or a reporter keeps the cache
_READERS_OF_RESULTS = ("rules", "reports")


@functools.cache
def _code_fingerprint() -> bytes:
    """tilelang's version and every tl-inspect module a worker's result may come from: the inspector,
    the analysis (verdicts, proofs and ledger are cached with the artefacts) and what they import."""
    digest = hashlib.sha256(metadata.version("tilelang").encode())
    for path in sorted(glob.glob(os.path.join(_PACKAGE_DIR, "**", "*.py"), recursive=True)):
        name = os.path.relpath(path, _PACKAGE_DIR)
        if name.split(os.sep)[0] not in _READERS_OF_RESULTS:
            with open(path, "rb") as f:
                digest.update(name.encode() + b"\0" + f.read())
    return digest.digest()


def _entry_path(job: Job) -> str:
    # `x.py`, `./x.py`, `$PWD/x.py` and a symlink to it are one file: one entry
    digest = hashlib.sha256(_code_fingerprint())
    digest.update(repr(sorted(asdict(replace(job, path=os.path.realpath(job.path))).items())).encode())
    return os.path.join(cache_dir(), digest.hexdigest() + ".pickle")


def _checksum(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def load(job: Job) -> FileResult | None:
    """The entry of `job` while its inputs are unchanged; an entry that does not check out (garbled, cut
    short, from another version) is removed, so the next run recomputes and stores it."""
    path = _entry_path(job)
    try:
        stored = read_bounded(path, MAX_ENTRY_BYTES)
    except OSError:
        return None
    digest, data = stored[:32], stored[32:]
    try:
        if _checksum(data) != digest:
            raise ValueError("checksum")
        result = pickle.loads(data)
        if not isinstance(result, FileResult):
            raise ValueError("not a result")
    except Exception:  # noqa: BLE001 - whatever is wrong with the entry, it is recomputed
        with contextlib.suppress(OSError):
            os.remove(path)
        return None
    if not inputs.unchanged(result.dependencies):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # its last use, which eviction goes by (access times are often not kept)
    return _spelt_as(replace(result, cached=True), job.path)


def _spelt_as(result: FileResult, path: str) -> FileResult:
    """The result with the file's path as this run gave it, not as the run that stored it did."""
    kernels = tuple(replace(k, file=path) if k.file == result.path else k for k in result.kernels)
    return replace(result, path=path, kernels=kernels)


def store(job: Job, result: FileResult) -> None:
    if (
        result.error
        or any(k.status != "ok" for k in result.kernels)
        or not result.dependencies
        or any(digest is None for _, _, digest in result.dependencies)
    ):
        return
    folder = cache_dir()
    temporary = None
    try:
        os.makedirs(folder, exist_ok=True)
        # write then rename, so a concurrent run never reads half a file
        # pickling recurses once per level of the kernels' expressions
        data = call_on_deep_stack(pickle.dumps, result, pickle.HIGHEST_PROTOCOL)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False, suffix=".tmp") as f:
            temporary = f.name
            f.write(_checksum(data) + data)
        os.replace(temporary, os.path.join(folder, os.path.basename(_entry_path(job))))
    except OSError:
        # a full or read-only cache folder: no entry, and no partial file either
        if temporary:
            with contextlib.suppress(OSError):
                os.remove(temporary)


def evict(max_bytes: int) -> None:
    """Remove the least recently used entries until the rest take at most `max_bytes`."""
    entries = []
    for path in glob.glob(os.path.join(cache_dir(), "*.pickle")):
        with contextlib.suppress(OSError):  # removed by a concurrent run
            stat = os.stat(path)
            entries.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= max_bytes:
            break
        with contextlib.suppress(OSError):
            os.remove(path)
        total -= size


def clean() -> tuple[int, int]:
    """Remove every cached result (and any half-written one), keeping what else the folder holds (the
    cost tables `tl-inspect calibrate` fitted); the number of files removed and their bytes."""
    removed = size = 0
    for path in glob.glob(os.path.join(cache_dir(), "*.pickle")) + glob.glob(os.path.join(cache_dir(), "*.tmp")):
        try:
            length = os.path.getsize(path)
            os.remove(path)
        except OSError:
            continue  # removed by a concurrent run
        removed, size = removed + 1, size + length
    return removed, size
