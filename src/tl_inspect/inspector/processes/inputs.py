"""What a user file's results depend on, recorded by the worker as it is read, checked by the result cache.

Kinds of input, each `(kind, name, digest)`:
- "source": a Python file the import system read (the user's file and the modules it imports), hashed
  from the very bytes that were compiled, so a file saved during the run is never cached as the old one;
- "file": any other file opened for reading (a JSON table, a NumPy array), hashed when it is opened;
- "env": an environment variable read (`os.environ[...]`, `os.getenv`), hashed from its value, and the
  variables that decide where imports look (`PYTHONPATH`, ...);
- "absent": a path that was looked up and not found: a module the import system searched a folder for
  (an optional import, or a module found in a later folder of `sys.path`), a file `os.stat` or
  `os.path.exists` missed; the result is stale once anything of that name appears there;
- "cwd": the folder tl-inspect ran in, when the file opened or looked up a relative path.
Installed packages, tl-inspect itself, the worker's own folder and /proc, /sys, /dev are not inputs.
A digest of None means "cannot tell" (not a regular file, too big to hash): the result is not cached.
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
from importlib.machinery import FileFinder, SourceFileLoader

from tl_inspect.files.sources import read_bounded

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


# the variables the interpreter reads at start-up to decide where imports look
_IMPORT_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH")
_ABSENT = "absent"
# their values when the zygote started, before tilelang's import rewrote some (PYTHONPATH): set by the zygote
import_environment: dict = {}


def remember_import_environment() -> None:
    import_environment.update({name: os.environ.get(name) for name in _IMPORT_VARIABLES})


def unchanged(inputs: tuple) -> bool:
    """Every recorded input still has the digest it had; False when any could not be told."""
    listings: dict = {}
    for kind, name, digest in inputs:
        if kind == "env":
            now = env_digest(name)
        elif kind == "absent":
            now = _ABSENT if _absent(name, listings) else "present"
        elif kind == "cwd":
            now = os.path.realpath(os.getcwd())
        else:
            now = file_digest(name)
        if digest is None or now != digest:
            return False
    return bool(inputs)


def _absent(path: str, listings: dict) -> bool:
    """Nothing named like `path` (`name`, `name.py`, `name.cpython-311-x86_64-linux-gnu.so`, `name/`) is in
    its folder; each folder is listed once per check."""
    folder, name = os.path.split(path)
    if folder not in listings:
        try:
            listings[folder] = {entry.split(".", 1)[0] for entry in os.listdir(folder)}
        except OSError:
            listings[folder] = set()
    return name.split(".", 1)[0] not in listings[folder]


class Recorder:
    """Installed once in a worker, before the user's file is imported (the hooks cannot be removed;
    each worker inspects one file and exits)."""

    def __init__(self, own_folder: str):
        package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        installed = {
            os.path.realpath(sysconfig.get_paths()[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib")
        }
        self._own_folder = os.path.realpath(own_folder)
        self._ignored = tuple(p + os.sep for p in (*installed, package, self._own_folder)) + _SYSTEM_DIRS
        self._inputs: dict = {}
        self._hashing = False
        self._home = os.path.realpath(os.getcwd())
        self._resolving = False

    def install(self) -> None:
        recorder, original = self, SourceFileLoader.get_data

        def get_data(loader, path):
            data = original(loader, path)
            if path.endswith(".py"):
                recorder._add("source", path, lambda: hashlib.sha256(data).hexdigest())
            return data

        SourceFileLoader.get_data = get_data
        finder_find_spec = FileFinder.find_spec

        def find_spec(finder, fullname, target=None):
            spec = finder_find_spec(finder, fullname, target)
            if spec is None:
                recorder.missed(os.path.join(finder.path, fullname.rpartition(".")[2]))
            return spec

        FileFinder.find_spec = find_spec
        for name in ("stat", "lstat"):
            setattr(os, name, self._recording_stat(getattr(os, name)))
        for name in _IMPORT_VARIABLES:
            self.read_variable(name, import_environment.get(name, os.environ.get(name)))
        # an empty bytecode folder: every module imported from here on is compiled from the source read
        sys.pycache_prefix = os.path.join(self._own_folder, "pycache")
        sys.addaudithook(self._audit)
        os.environ.__class__ = _recording_environ(self)

    def inputs(self) -> tuple:
        return tuple(sorted(self._inputs.values(), key=lambda item: (item[0], item[1])))

    def _recording_stat(self, stat):
        """`os.stat` (what `os.path.exists`, `isfile` and `pathlib` use) recording the paths it does not find."""

        def recording_stat(path, *args, **kwargs):
            try:
                return stat(path, *args, **kwargs)
            except FileNotFoundError:
                if isinstance(path, (str, bytes, os.PathLike)) and not kwargs.get("dir_fd"):
                    self.missed(os.fsdecode(path))
                raise

        return recording_stat

    def missed(self, path: str) -> None:
        """A path looked up and not found: the result holds while nothing of that name appears there."""
        if self._resolving:
            return  # `realpath` below stats the path's parts
        if not os.path.isabs(path):
            self._inputs[("cwd", "")] = ("cwd", "", self._home)
        self._resolving = True
        try:
            real = os.path.realpath(path)
        finally:
            self._resolving = False
        if not real.startswith((self._own_folder + os.sep, *_SYSTEM_DIRS)):
            self._inputs.setdefault(("absent", real), ("absent", real, _ABSENT))

    def _add(self, kind: str, path: str, digest) -> None:
        """Record `digest()` for the file at `path` unless it is not the user's or is recorded already."""
        if not os.path.isabs(path):
            self._inputs[("cwd", "")] = ("cwd", "", self._home)
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
