"""This process's fd 1 and fd 2 output, sliced per phase: what the user's file printed while it was
imported, tilelang's warnings and the layout text of one kernel's lowering."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from contextlib import contextmanager

# what one phase may keep of its fd 1 or fd 2 output: it ends up in reports, pages and the cache
CAPTURE_LIMIT_BYTES = 1 << 20


class Capture:
    """Slices of this process's fd 1/fd 2 output, per phase (fds are redirected to files)."""

    def __init__(self, out_path: str, err_path: str):
        self.paths = (out_path, err_path)
        self.marks = [0, 0]

    def mark(self, streams: tuple = (1, 2)) -> None:
        flush_streams()
        for stream in streams:
            self.marks[stream - 1] = os.path.getsize(self.paths[stream - 1])

    def since_mark(self) -> tuple[str, str]:
        flush_streams()
        texts = []
        for path, start in zip(self.paths, self.marks):
            with open(path, "rb") as f:
                f.seek(start)
                data = f.read(CAPTURE_LIMIT_BYTES)
                dropped = os.fstat(f.fileno()).st_size - start - len(data)
            text = data.decode("utf-8", errors="replace")
            texts.append(text + (f"\n[tl-inspect: {dropped} more bytes of output not kept]" if dropped > 0 else ""))
        return texts[0], texts[1]


def flush_streams() -> None:
    """Flush `sys.stdout` and `sys.stderr`, whatever the user's code made of them (None, closed, its own
    object)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - what it could not write is lost with the stream the user broke
            pass


def restore_streams(out_path: str, err_path: str) -> None:
    """Send fds 1 and 2 to their capture files again and give Python working `sys.stdout` / `sys.stderr`,
    for a worker whose user code closed or replaced them: what prints later is still captured."""
    for fd, path, name in ((1, out_path, "stdout"), (2, err_path, "stderr")):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        if opened != fd:
            os.dup2(opened, fd)
            os.close(opened)
        stream = getattr(sys, name)
        if stream is None or getattr(stream, "closed", True):
            setattr(sys, name, open(fd, "w", buffering=1, errors="backslashreplace", closefd=False))


@contextmanager
def captured_output():
    """This process's fd 1 and fd 2 sent to files while a kernel compiles in the caller's own process
    (the Python API), as a worker's always are: the layout text and tilelang's warnings become part of
    the kernel's record, not noise on the caller's terminal."""
    folder = tempfile.mkdtemp(prefix="tl-inspect-")
    paths = (os.path.join(folder, "stdout.txt"), os.path.join(folder, "stderr.txt"))
    flush_streams()
    saved = (os.dup(1), os.dup(2))
    try:
        for fd, path in zip((1, 2), paths):
            opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        yield Capture(*paths)
    finally:
        flush_streams()
        for fd, old in zip((1, 2), saved):
            os.dup2(old, fd)
            os.close(old)
        shutil.rmtree(folder, ignore_errors=True)
