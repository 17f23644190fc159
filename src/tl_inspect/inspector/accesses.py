"""Global-memory loads and stores of the final device code, with their width and lines.

Element-wise accesses are buffer loads and stores; copies into shared memory may instead be asynchronous
copy instructions (`cp.async` on sm_80+, TMA bulk copies on sm_90), which move 4 to 16 bytes per thread
or a whole tile at once and are recorded with `via` set."""

from __future__ import annotations

import re

from tl_inspect import ir
from tl_inspect.model import Access


def global_accesses(device: ir.Snapshot, source: str, line_map: tuple, dtypes: dict, copy_lines: dict) -> tuple:
    """`dtypes`: buffer name -> dtype over every snapshot (the device code reaches some buffers only
    through pointers); `copy_lines`: global buffer -> the line of the one `T.copy` that moves it, for
    TMA copies, which lowering leaves without a line."""
    cuda_text = source.splitlines()
    found: list[Access] = []
    for func in device.funcs:
        for stmt, ancestors in ir.walk(func.body):
            if isinstance(stmt, ir.Eval):
                copy = _async_copy(func, stmt, ir.stmt_line(stmt, ancestors), cuda_text, line_map, dtypes,
                                   copy_lines)
                if copy:
                    found.append(copy)
                continue
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


def _async_copy(func: ir.IRFunc, stmt: ir.Eval, line, cuda_text, line_map, dtypes: dict,
                copy_lines: dict) -> Access | None:
    call = stmt.expr
    if call[0] != "call":
        return None
    if call[1] == "tl.ptx_cp_async" and len(call[2]) >= 3:
        # (shared pointer, global pointer, elements per thread)
        source, elements = _pointer(call[2][1]), ir.int_value(call[2][2])
        if source is None or elements is None or func.scope_of(source[0]) != "global":
            return None
        return Access(kind="load", buffer=source[0], dtype=dtypes.get(source[0], "float32"), lanes=elements,
                      line=line, cuda_lines=_lines_naming(source[0], line, cuda_text, line_map),
                      index=ir.render(source[1]), via="cp.async")
    if call[1] in ("tl.tma_load", "tl.tma_store") and call[2] and call[2][0][0] == "var":
        # (descriptor of the global tensor, [barrier,] shared pointer, coordinates...)
        tensor = call[2][0][1].removesuffix("_desc")
        tile = next((_pointer(a) for a in call[2][1:] if _pointer(a)), None)
        if tile is None or ir.int_value(tile[2]) is None:
            return None
        line = line or copy_lines.get(tensor)
        return Access(kind="load" if call[1] == "tl.tma_load" else "store", buffer=tensor,
                      dtype=dtypes.get(tile[0], "float32"), lanes=ir.int_value(tile[2]), line=line,
                      cuda_lines=tuple(n for n, text in enumerate(cuda_text, 1)
                                       if "tma_" in text and f"{tensor}_desc" in text), via="tma")
    return None


def _pointer(expr):
    """(buffer, offset, extent) of a `tvm_access_ptr(type, buffer, offset, extent, mode)` argument."""
    if expr[0] == "call" and expr[1] == "tirx.tvm_access_ptr" and len(expr[2]) >= 4 and expr[2][1][0] == "var":
        return expr[2][1][1], expr[2][2], expr[2][3]
    return None


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
