"""What a user file's results depend on, recorded by the worker as it is read, checked by the result cache.

Three kinds of input, each `(kind, name, digest)`:
- "source": a Python file the import system read (the user's file and the modules it imports), hashed
  from the very bytes that were compiled, so a file saved during the run is never cached as the old one;
- "file": any other file opened for reading (a JSON table, a NumPy array), hashed when it is opened;
- "env": an environment variable read (`os.environ[...]`, `os.getenv`), hashed from its value.
Installed packages, tl-inspect itself, the worker's own folder and /proc, /sys, /dev are not inputs.
A digest of None means "cannot tell" (not a regular file, too big to hash): the result is not cached.
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
from importlib.machinery import SourceFileLoader

from tl_inspect.sources import read_bounded

# files larger than this are not hashed: a result that depends on one is not cached
MAX_HASHED_BYTES = 64 << 20
# set by tl-inspect for every worker (hermetic tilelang cache, target, temporary folder), not by the user
_OWN_VARIABLES = ("TILELANG_", "TMPDIR", "PYTHONDONTWRITEBYTECODE")
_SYSTEM_DIRS = ("/proc/", "/sys/", "/dev/")


def file_digest(path: str) -> str | None:
    try:
        return hashlib.sha256(read_bounded(path, MAX_HASHED_BYTES)).hexdigest()
    except OSError:
        return None


def env_digest(name: str) -> str:
    return _value_digest(os.environ.get(name))


def _value_digest(value: str | None) -> str:
    return "unset" if value is None else hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()


def unchanged(inputs: tuple) -> bool:
    """Every recorded input still has the digest it had; False when any could not be told."""
    for kind, name, digest in inputs:
        now = env_digest(name) if kind == "env" else file_digest(name)
        if digest is None or now != digest:
            return False
    return bool(inputs)


class Recorder:
    """Installed once in a worker, before the user's file is imported (the hooks cannot be removed;
    each worker inspects one file and exits)."""

    def __init__(self, own_folder: str):
        package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        installed = {os.path.realpath(sysconfig.get_paths()[key])
                     for key in ("stdlib", "platstdlib", "purelib", "platlib")}
        self._own_folder = os.path.realpath(own_folder)
        self._ignored = tuple(p + os.sep for p in (*installed, package, self._own_folder)) + _SYSTEM_DIRS
        self._inputs: dict = {}
        self._hashing = False

    def install(self) -> None:
        recorder, original = self, SourceFileLoader.get_data

        def get_data(loader, path):
            data = original(loader, path)
            if path.endswith(".py"):
                recorder._add("source", path, lambda: hashlib.sha256(data).hexdigest())
            return data

        SourceFileLoader.get_data = get_data
        # an empty bytecode folder: every module imported from here on is compiled from the source read
        sys.pycache_prefix = os.path.join(self._own_folder, "pycache")
        sys.addaudithook(self._audit)
        os.environ.__class__ = _recording_environ(self)

    def inputs(self) -> tuple:
        return tuple(sorted(self._inputs.values(), key=lambda item: (item[0], item[1])))

    def _add(self, kind: str, path: str, digest) -> None:
        """Record `digest()` for the file at `path` unless it is not the user's or is recorded already."""
        real = os.path.realpath(path)
        if not real.startswith(self._ignored) and (kind, real) not in self._inputs:
            self._inputs[(kind, real)] = (kind, real, digest())

    def _audit(self, event: str, args: tuple) -> None:
        if event != "open" or not isinstance(args[0], (str, bytes)):
            return
        path, mode, flags = os.fsdecode(args[0]), args[1], args[2]
        reads = (not any(c in mode for c in "wax+")) if isinstance(mode, str) else (flags & os.O_ACCMODE) == os.O_RDONLY
        if reads and not path.endswith(".py") and not self._hashing:
            self._hashing = True  # hashing opens the file too
            try:
                self._add("file", path, lambda: file_digest(path))
            finally:
                self._hashing = False

    def read_variable(self, name, value: str | None) -> None:
        if isinstance(name, str) and not name.startswith(_OWN_VARIABLES):
            self._inputs.setdefault(("env", name), ("env", name, _value_digest(value)))


def _recording_environ(recorder: Recorder) -> type:
    class RecordingEnviron(type(os.environ)):
        def __getitem__(self, key):
            try:
                value = super().__getitem__(key)
            except KeyError:
                recorder.read_variable(key, None)
                raise
            recorder.read_variable(key, value)
            return value

    return RecordingEnviron
