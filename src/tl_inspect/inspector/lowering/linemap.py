"""Map each line of the generated CUDA to the user's Python line, from tilelang's `#line` directives.

With `tl.emit_line_directives` tilelang writes `#line N "file"` before every statement that carries a
span; the lines after a directive belong to its statement until the next directive or until the
statement's block closes. Two kinds of directive do not name the user's statement, and are
re-attributed:
  * a directive into tilelang's own files: code expanded from a tile operator during lowering. GEMM
    expansions (tilelang's `*gemm*`/`*mma*` generators) go to the user's `T.gemm` calls, the n-th
    expansion to the n-th call; other expansions to the nearest enclosing user statement;
  * a directive at the kernel's `def` line (allocations hoisted to the top of the kernel): a local
    array declaration goes to its buffer's declaration line, everything else to no line.
"""

from __future__ import annotations

import os
import re
from typing import Callable

_DIRECTIVE = re.compile(r'^\s*#line\s+(\d+)\s+"(.*)"\s*$')
_ARRAY_DECL = re.compile(r"^\s*[\w:<>, ]+?\s+(\w+)\[\d+\];")
_BRACES_ONLY = re.compile(r"^\s*[{}]*\s*$")
_GEMM_GENERATOR = re.compile(r"gemm|mma", re.I)


def build_line_map(
    text: str,
    is_user_file: Callable[[str], bool],
    def_line: int | None,
    buffer_lines: dict[str, int],
    gemm_lines: list[int] = (),
) -> tuple[str, tuple]:
    """Return the text without directives and, per remaining line, its Python line or None."""
    kept: list[str] = []
    mapping: list = []
    mode, current = "none", None
    # (indentation, Python line) of user statements whose block is still open
    enclosing: list[tuple[int, int]] = []
    statement_indent: int | None = None
    opens_block = False
    gemm_runs = -1  # index into gemm_lines of the current GEMM expansion
    in_gemm_run = False
    for raw in text.splitlines(keepends=True):
        match = _DIRECTIVE.match(raw)
        if match:
            py_line, filename = int(match.group(1)), match.group(2)
            internal = not is_user_file(filename)
            gemm = internal and bool(_GEMM_GENERATOR.search(os.path.basename(filename)))
            if gemm and not in_gemm_run:
                gemm_runs += 1
            in_gemm_run = gemm
            if internal:
                mode = "gemm" if gemm and gemm_lines else "internal"
            elif py_line == def_line:
                mode = "def"
            else:
                mode, current = "user", py_line
            statement_indent = None
            continue
        indent = len(raw) - len(raw.lstrip())
        code = raw.strip()
        # `} else {` continues the statement; only a bare `}` closes a block
        closes = code.startswith("}") and not code.endswith("{")
        if mode == "user" and statement_indent is None and not code.startswith("#pragma"):
            statement_indent, opens_block = indent, code.endswith("{")
            while enclosing and enclosing[-1][0] >= indent:
                enclosing.pop()
            enclosing.append((indent, current))
        if closes:
            while enclosing and enclosing[-1][0] >= indent:
                enclosing.pop()
        if mode == "user":
            line = current
        elif mode == "def":
            decl = _ARRAY_DECL.match(raw)
            line = buffer_lines.get(decl.group(1)) if decl else None
        elif mode == "gemm":
            line = gemm_lines[min(gemm_runs, len(gemm_lines) - 1)]
        elif mode == "internal":
            outer = [py for ind, py in enclosing if ind < indent]
            line = outer[-1] if outer else None
        else:
            line = None
        if (
            mode == "user"
            and closes
            and statement_indent is not None
            and (indent < statement_indent or (indent == statement_indent and opens_block))
        ):
            mode = "none"  # the statement is over; what follows has no directive of its own
        kept.append(raw)
        mapping.append(None if _BRACES_ONLY.match(raw) else line)
    return "".join(kept), _attribute_loop_headers(kept, mapping)


def _attribute_loop_headers(lines: list[str], mapping: list) -> tuple:
    """A loop made by a pass (the serial `i_s` loop of a scalarized vector) has no directive of its own;
    it belongs to the statement its body comes from."""
    out = list(mapping)
    for index in range(len(lines) - 2, -1, -1):
        header = lines[index]
        if out[index] is None and header.rstrip().endswith("{") and header.lstrip().startswith(("for ", "if ")):
            body = lines[index + 1]
            if out[index + 1] is not None and len(body) - len(body.lstrip()) > len(header) - len(header.lstrip()):
                out[index] = out[index + 1]
    return tuple(out)
