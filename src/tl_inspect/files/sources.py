"""The user's Python files, read once per run, for rules, suppressions, baselines and reporters; and the one
way the parent process reads a file a user names or a scan finds (`read_bounded`)."""

from __future__ import annotations

import errno
import io
import linecache
import os
import re
import stat
import tokenize

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# a file read by the parent (a scanned or reported source, a baseline, a configuration) may be no larger
MAX_FILE_BYTES = 64 << 20


def read_bounded(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at `path`. Anything else raises OSError: a device or a FIFO (`x.py`
    linked to /dev/zero never ends, a FIFO blocks until a writer comes) and a file over `limit` bytes."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)
    if info.st_size > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB", path)
    # non-blocking: a file swapped for a FIFO after the check must not block the open
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB", path)
    return data


def decode_source(data: bytes) -> str:
    """A Python file's text in the encoding Python reads it with: a coding cookie or a byte-order mark,
    else UTF-8; bytes that do not decode are shown as U+FFFD."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown or contradictory cookie: Python would not import the file either
        encoding = "utf-8-sig"
    return data.decode(encoding, errors="replace")


class SourceFiles:
    """Text and lines of files by path; a file that cannot be read has no lines and empty text."""

    def __init__(self, texts: dict[str, str] | None = None):
        # `texts`: files held in memory (a fix being verified), read in place of what is on disk
        self._texts: dict[str, str | None] = dict(texts or {})

    def _read(self, path: str) -> str | None:
        if path not in self._texts:
            try:
                self._texts[path] = decode_source(read_bounded(path))
            except OSError:
                # IPython keeps a notebook cell's text in linecache under a file name that is never written
                lines = linecache.getlines(path)
                self._texts[path] = "".join(lines) if lines else None
        return self._texts[path]

    def text(self, path: str) -> str:
        return self._read(path) or ""

    __call__ = text

    def lines(self, path: str) -> list[str] | None:
        """Numbered as Python numbers them: a form feed or U+2028 inside a line does not end it."""
        text = self._read(path)
        return None if text is None else _LINE_BREAK.split(text.removesuffix("\n").removesuffix("\r"))

    def line(self, path: str, number: int) -> str | None:
        lines = self.lines(path)
        if lines is None or not 0 < number <= len(lines):
            return None
        return lines[number - 1]
