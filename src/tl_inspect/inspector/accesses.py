"""Global-memory loads and stores of the final device code, with their width and lines."""

from __future__ import annotations

import re

from tl_inspect import ir
from tl_inspect.model import Access


def global_accesses(device: ir.Snapshot, source: str, line_map: tuple) -> tuple:
    cuda_text = source.splitlines()
    found: list[Access] = []
    for func in device.funcs:
        for stmt, ancestors in ir.walk(func.body):
            # loads also sit in `x = A[i]` bindings and in `if` conditions, not only in stored values
            if isinstance(stmt, ir.Store):
                read = stmt.value
            elif isinstance(stmt, ir.Let):
                read = stmt.value
            elif isinstance(stmt, ir.If):
                read = stmt.cond
            else:
                continue
            line = ir.stmt_line(stmt, ancestors)
            if isinstance(stmt, ir.Store) and func.scope_of(stmt.buffer) == "global":
                found.append(_access("store", stmt.buffer, stmt.dtype, stmt.indices, line, cuda_text, line_map))
            for load in ir.loads_of(read):
                if func.scope_of(load[1]) == "global":
                    found.append(_access("load", load[1], load[3], load[2], line, cuda_text, line_map))
    return tuple(found)


def _access(kind, buffer, dtype, indices, line, cuda_text, line_map) -> Access:
    lanes = ir.dtype_lanes(dtype)
    return Access(
        kind=kind, buffer=buffer, dtype=ir.element_dtype(dtype), lanes=lanes, line=line,
        cuda_lines=_lines_naming(buffer, line, cuda_text, line_map),
        index=", ".join(ir.render(i) for i in indices),
    )


def _lines_naming(buffer: str, line, cuda_text, line_map) -> tuple:
    """CUDA lines produced by the Python line, narrowed to those that mention the buffer."""
    if line is None:
        return ()
    produced = [i + 1 for i, py in enumerate(line_map) if py == line]
    word = re.compile(rf"\b{re.escape(buffer)}\b")
    naming = [n for n in produced if word.search(cuda_text[n - 1])]
    return tuple(naming or produced)
