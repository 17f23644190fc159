"""A proof's CUDA line before and after its change, cut to the part where they differ.

Generated lines run to 300 characters and often share a long head (`C[(((((int)blockIdx.x) * 1024) + ...`):
cut at their end, the before and after lines look alike. Here both keep a little context before the first
character that differs and after the last, and what they share beyond that becomes `…`."""

from __future__ import annotations

import os

ELLIPSIS = "…"
CONTEXT = 16  # shared characters kept on each side of the change, so the change reads in its expression
WIDTH = 140  # the longest line shown; the changed span itself is cut there too


def differing_pair(before: str, after: str, width: int = WIDTH) -> tuple[str, str]:
    """`before` and `after` (stripped) as they are when both fit in `width`, else each cut to its
    changed span with CONTEXT shared characters either side and `…` for the rest."""
    before, after = before.strip(), after.strip()
    if len(before) <= width and len(after) <= width:
        return before, after
    head = len(os.path.commonprefix([before, after]))
    tail = len(os.path.commonprefix([before[head:][::-1], after[head:][::-1]]))
    start = _token_start(before, max(0, head - CONTEXT))
    return _window(before, start, len(before) - tail, width), _window(after, start, len(after) - tail, width)


def _token_start(line: str, index: int) -> int:
    """`index` moved back to the start of the name it falls in (`blockIdx.x` is one), never cutting it."""
    while index > 0 and _in_name(line[index - 1]) and _in_name(line[index]):
        index -= 1
    return index


def _in_name(char: str) -> bool:
    return char.isalnum() or char in "_."


def _window(line: str, start: int, changed_end: int, width: int) -> str:
    end = min(len(line), max(changed_end, start) + CONTEXT)
    if end - start > width:
        end = start + width
    return (ELLIPSIS if start else "") + line[start:end] + (ELLIPSIS if end < len(line) else "")
