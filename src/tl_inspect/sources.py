"""The user's Python files, read once per run, for rules, suppressions, baselines and reporters."""

from __future__ import annotations

import linecache


class SourceFiles:
    """Text and lines of files by path; a file that cannot be read has no lines and empty text."""

    def __init__(self, texts: dict[str, str] | None = None):
        # `texts`: files held in memory (a fix being verified), read in place of what is on disk
        self._texts: dict[str, str | None] = dict(texts or {})

    def _read(self, path: str) -> str | None:
        if path not in self._texts:
            try:
                with open(path, encoding="utf-8-sig", errors="replace") as f:
                    self._texts[path] = f.read()
            except OSError:
                # IPython keeps a notebook cell's text in linecache under a file name that is never written
                lines = linecache.getlines(path)
                self._texts[path] = "".join(lines) if lines else None
        return self._texts[path]

    def text(self, path: str) -> str:
        return self._read(path) or ""

    __call__ = text

    def lines(self, path: str) -> list[str] | None:
        text = self._read(path)
        return None if text is None else text.splitlines()

    def line(self, path: str, number: int) -> str | None:
        lines = self.lines(path)
        if lines is None or not 0 < number <= len(lines):
            return None
        return lines[number - 1]
