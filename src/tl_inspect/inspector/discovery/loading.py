"""Import a user file as tl-inspect runs it: under a module name of its own (inside a package, its dotted
name), never as `__main__`, from a text held in memory when a fix is being verified; and what an import
that fails leaves behind: the names bound before the failing line, and the error in one line."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import linecache
import os
import re
import sys

from tl_inspect.inspector.processes.errors import describe_error, printable


class _TextLoader(importlib.machinery.SourceFileLoader):
    """Loads the user's file from a text held in memory, under the file's own path: imports beside it,
    `__file__` and every line number read as they would from the file itself."""

    def __init__(self, name: str, path: str, text: str):
        super().__init__(name, path)
        self.text = text

    def get_code(self, fullname):
        return compile(self.text, self.path, "exec", dont_inherit=True)


def import_user_file(user_file: str, text: str | None = None):
    """Execute the user's file (or `text` in its place) as a module named so that its `__main__` block
    does not run."""
    directory = os.path.dirname(user_file)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    package = _package_of(user_file)
    stem = os.path.splitext(os.path.basename(user_file))[0]
    # inside a package, the module's own dotted name, so that `from .x import y` works; never `__main__`
    name = f"{package}.{stem}" if package else "tl_inspect_user_" + re.sub(r"\W", "_", stem)
    module = None  # until the package, if any, is imported
    loader = None
    if text is not None:
        loader = _TextLoader(name, user_file, text)
        # tilelang's parser and `inspect` read kernels' source through linecache: an entry without an
        # mtime is never checked against the file on disk
        linecache.cache[user_file] = (len(text), None, text.splitlines(keepends=True), user_file)
    try:
        if package:
            importlib.import_module(package)
        spec = importlib.util.spec_from_file_location(name, user_file, loader=loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        if exc.filename and os.path.abspath(exc.filename) != user_file:
            # in a module the file imports: the names bound before its import line are kept
            helper = os.path.relpath(exc.filename) if exc.filename.startswith(os.getcwd() + os.sep) else exc.filename
            _, line = describe_error(exc, user_file, "")
            return module, (
                printable(f"SyntaxError in {helper}, line {exc.lineno}: {exc.msg} (while importing the module)"),
                line,
            )
        return None, (printable(f"SyntaxError: {exc.msg} (while importing the module)"), exc.lineno)
    except MemoryError as exc:
        # the module's names hold what it allocated: drop them all, or nothing more can be done
        if module is not None:
            vars(module).clear()
        return None, describe_error(exc, user_file, "while importing the module")
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        # names bound before the failure stay in the module: inspect them and report the error
        return module, describe_error(exc, user_file, "while importing the module")
    return module, (None, None)


def _package_of(user_file: str) -> str:
    """The dotted package a file belongs to (its folders up to the first without `__init__.py`), with that
    first folder put on `sys.path`; "" for a file outside a package."""
    parts: list[str] = []
    folder = os.path.dirname(user_file)
    while os.path.isfile(os.path.join(folder, "__init__.py")) and os.path.basename(folder).isidentifier():
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    if parts and folder not in sys.path:
        sys.path.insert(0, folder)
    return ".".join(parts)
