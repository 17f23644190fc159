"""Map each line of the generated CUDA to the user's Python line, from tilelang's `#line` directives.

With `tl.emit_line_directives` tilelang writes `#line N "file"` before every statement that carries a
span; lines without a directive belong to the last one. Two kinds of directive do not name the user's
statement, and are re-attributed:
  * a directive into tilelang's own files (code expanded from a tilelang macro during lowering, such as
    `T.gemm`): the nearest enclosing user statement, found by indentation;
  * a directive at the kernel's `def` line (allocations and set-up hoisted to the top of the kernel): a
    local array declaration goes to its buffer's declaration line, everything else to no line.
"""

from __future__ import annotations

import re
from typing import Callable

_DIRECTIVE = re.compile(r'^\s*#line\s+(\d+)\s+"(.*)"\s*$')
_ARRAY_DECL = re.compile(r"^\s*[\w:<>, ]+?\s+(\w+)\[\d+\];")
_BRACES_ONLY = re.compile(r"^\s*[{}]*\s*$")


def strip_directives(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not _DIRECTIVE.match(line))


def build_line_map(
    text: str,
    is_user_file: Callable[[str], bool],
    def_line: int | None,
    buffer_lines: dict[str, int],
) -> tuple[str, tuple]:
    """Return the text without directives and, per remaining line, its Python line or None."""
    kept: list[str] = []
    mapping: list = []
    mode, current = "none", None
    # (indentation, Python line) of the first code line after each user directive
    enclosing: list[tuple[int, int]] = []
    first_after_directive = False
    for raw in text.splitlines(keepends=True):
        match = _DIRECTIVE.match(raw)
        if match:
            py_line, filename = int(match.group(1)), match.group(2)
            if not is_user_file(filename):
                mode = "internal"
            elif py_line == def_line:
                mode = "def"
            else:
                mode, current = "user", py_line
            first_after_directive = True
            continue
        indent = len(raw) - len(raw.lstrip())
        if mode == "user":
            line = current
            if first_after_directive:
                while enclosing and enclosing[-1][0] >= indent:
                    enclosing.pop()
                enclosing.append((indent, current))
        elif mode == "def":
            decl = _ARRAY_DECL.match(raw)
            line = buffer_lines.get(decl.group(1)) if decl else None
        elif mode == "internal":
            outer = [py for ind, py in enclosing if ind < indent]
            line = outer[-1] if outer else None
        else:
            line = None
        first_after_directive = False
        kept.append(raw)
        mapping.append(None if _BRACES_ONLY.match(raw) else line)
    return "".join(kept), tuple(mapping)
