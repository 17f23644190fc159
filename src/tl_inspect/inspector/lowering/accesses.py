"""Global-memory loads and stores of the final device code: their width, lines, and how neighbouring
threads and one thread's loops walk memory.

Element-wise accesses are buffer loads and stores; copies into shared memory may instead be asynchronous
copy instructions (`cp.async` on sm_80+, TMA bulk copies on sm_90), which move 4 to 16 bytes per thread
or a whole tile at once and are recorded with `via` set; atomics are recorded with `atomic` set.

The lane stride is read off the index expression evaluated over the real thread grid: thread x = 0 and
x = 1 with every loop and block variable at 0; the sectors are those the first warp's 32 lanes touch
in one instruction (threadIdx.x fastest, then y and z). Elements per thread multiply the lanes of one
instruction by the trip counts of the loops around it."""

from __future__ import annotations

import re

from tl_inspect.inspector.lowering.device_func import DeviceFunc
from tl_inspect.model import Access
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.indexing import RUNTIME_VALUE, bound_of, select_conds
from tl_inspect.tir.render import render


def global_accesses(device: ir.Snapshot, source: str, line_map: tuple, dtypes: dict, copy_lines: dict) -> tuple:
    """`dtypes`: buffer name -> dtype over every snapshot (the device code reaches some buffers only
    through pointers); `copy_lines`: global buffer -> the line of the one `T.copy` that moves it, for
    TMA copies, which lowering leaves without a line."""
    cuda_text = source.splitlines()
    lines_naming = LinesNaming(cuda_text, line_map)
    found: list[Access] = []
    for func in device.funcs:
        dev = DeviceFunc(func)
        for stmt, ancestors in ir.walk(func.body):
            line = ir.stmt_line(stmt, ancestors)
            trips = _trips(ancestors)
            loops = tuple(
                (a.var, ir.int_value(a.extent))
                for a in ancestors
                if isinstance(a, ir.For) and a.kind != "thread_binding"
            )
            if isinstance(stmt, ir.Eval):
                access = _call_access(dev, stmt, line, lines_naming, dtypes, copy_lines, cuda_text, trips)
                if access:
                    found.append(access)
                continue
            # loads also sit in `x = A[i]` bindings and in `if` conditions, not only in stored values
            if isinstance(stmt, (ir.Store, ir.Let)):
                read = stmt.value
            elif isinstance(stmt, ir.If):
                read = stmt.cond
            else:
                continue
            guards = [a.cond for a in ancestors if isinstance(a, ir.If)]
            if isinstance(stmt, ir.Store) and func.scope_of(stmt.buffer) == "global":
                found.append(
                    _access(
                        dev,
                        "store",
                        stmt.buffer,
                        stmt.dtype,
                        stmt.indices,
                        line,
                        lines_naming,
                        trips,
                        _lane_varying(dev, guards, ancestors),
                        loops,
                    )
                )
            selects = select_conds(read)
            for load in ir.loads_of(read):
                if func.scope_of(load[1]) == "global":
                    own = guards + [c for c in selects if _selects_load(read, c, load)]
                    found.append(
                        _access(
                            dev,
                            "load",
                            load[1],
                            load[3],
                            load[2],
                            line,
                            lines_naming,
                            trips,
                            _lane_varying(dev, own, ancestors),
                            loops,
                        )
                    )
    return tuple(found)


def _trips(ancestors) -> int:
    """Iterations of the loops around a statement, for one thread (a run-time trip count counts as
    RUNTIME_VALUE)."""
    count = 1
    for anc in ancestors:
        if isinstance(anc, ir.For) and anc.kind != "thread_binding":
            extent = ir.int_value(anc.extent)
            count *= extent if extent is not None else RUNTIME_VALUE
    return count


def _lane_varying(dev: DeviceFunc, conds, ancestors):
    """(condition, bound) of the innermost bounds check that can differ between the elements of one
    thread's loop or between neighbouring threads: the check an access sits under."""
    loop_vars = {a.var for a in ancestors if isinstance(a, ir.For) and a.kind != "thread_binding"}
    varying = loop_vars | ({dev.lane_var} if dev.lane_var else set())
    for cond in reversed(conds):
        found = bound_of(dev.resolve(cond), varying)
        if found is not None:
            return dev.resolve(cond), found[1]
    return None


def _selects_load(expr, cond, load) -> bool:
    """Whether `load` is an operand chosen by the select on `cond` inside `expr`."""
    for sub in ir.subexprs(expr):
        if sub[0] == "select" and sub[1] == cond:
            return load in ir.loads_of(sub[2]) or load in ir.loads_of(sub[3])
        if sub[0] == "call" and sub[1] == "tirx.if_then_else" and len(sub[2]) == 3 and sub[2][0] == cond:
            return load in ir.loads_of(sub[2][1]) or load in ir.loads_of(sub[2][2])
    return False


def _call_access(
    dev: DeviceFunc, stmt: ir.Eval, line, lines_naming, dtypes: dict, copy_lines: dict, cuda_text, trips: int
) -> Access | None:
    call = stmt.expr
    if call[0] != "call":
        return None
    if call[1] == "tl.ptx_cp_async" and len(call[2]) >= 3:
        return _cp_async_access(dev, call, line, lines_naming, dtypes, copy_lines, cuda_text, trips)
    if call[1] in ("tl.tma_load", "tl.tma_store") and call[2] and _pointer(call[2][0]) is not None:
        return _bulk_tma_access(dev, call, line, lines_naming, dtypes, copy_lines, cuda_text, trips)
    if call[1] in ("tl.tma_load", "tl.tma_store") and call[2] and call[2][0][0] == "var":
        return _tensor_tma_access(dev, call, line, lines_naming, dtypes, copy_lines, cuda_text, trips)
    if "atomic" in call[1]:
        return _atomic_access(dev, call, line, lines_naming, dtypes, copy_lines, cuda_text, trips)
    return None


def _cp_async_access(
    dev: DeviceFunc, call, line, lines_naming, dtypes: dict, copy_lines: dict, cuda_text, trips: int
) -> Access | None:
    """An asynchronous copy into shared memory (`cp.async`): its global side."""
    # (shared pointer, global pointer, elements per thread)
    source, elements = _pointer(call[2][1]), ir.int_value(call[2][2])
    if source is None or elements is None or dev.func.scope_of(source[0]) != "global":
        return None
    dtype = dtypes.get(source[0], "float32")
    flat = dev.address(source[0], (source[1],))
    request, sectors = dev.sectors(flat, dtype, elements * ir.dtype_bits(dtype))
    return Access(
        kind="load",
        buffer=source[0],
        dtype=dtype,
        lanes=elements,
        line=line,
        request_bytes=request,
        sectors=sectors,
        cuda_lines=lines_naming(source[0], line),
        index=render(source[1]),
        via="cp.async",
        lane_stride_bytes=dev.lane_stride(flat, dtype),
        elements_per_thread=elements * trips,
        block_bytes=elements * trips * dev.threads * ir.dtype_bits(dtype) // 8,
    )


def _bulk_tma_access(
    dev: DeviceFunc, call, line, lines_naming, dtypes: dict, copy_lines: dict, cuda_text, trips: int
) -> Access | None:
    """A 1-D bulk TMA copy: (global pointer, shared pointer, bytes, ...), no tensor descriptor."""
    # the 1-D bulk form: (global pointer, shared pointer, bytes, ...) with no tensor descriptor
    target = _pointer(call[2][0])
    if dev.func.scope_of(target[0]) != "global" or ir.int_value(target[2]) is None:
        return None
    named = re.compile(rf"\b{re.escape(target[0])}\b")
    return _tma_access(
        dev,
        call,
        target[0],
        dtypes.get(target[0], "float32"),
        ir.int_value(target[2]),
        trips,
        line or copy_lines.get(target[0]),
        tuple(n for n, text in enumerate(cuda_text, 1) if "tma_" in text and named.search(text)),
    )


def _tensor_tma_access(
    dev: DeviceFunc, call, line, lines_naming, dtypes: dict, copy_lines: dict, cuda_text, trips: int
) -> Access | None:
    """A TMA copy through a tensor descriptor: (descriptor, [barrier,] shared pointer, coordinates...)."""
    # (descriptor of the global tensor, [barrier,] shared pointer, coordinates...)
    tensor = call[2][0][1].removesuffix("_desc")
    tile = next((_pointer(a) for a in call[2][1:] if _pointer(a)), None)
    if tile is None or ir.int_value(tile[2]) is None:
        return None
    return _tma_access(
        dev,
        call,
        tensor,
        dtypes.get(tile[0], "float32"),
        ir.int_value(tile[2]),
        trips,
        line or copy_lines.get(tensor),
        tuple(n for n, text in enumerate(cuda_text, 1) if "tma_" in text and f"{tensor}_desc" in text),
    )


def _tma_access(dev: DeviceFunc, call, buffer: str, dtype: str, lanes: int, trips: int, line, cuda_lines) -> Access:
    """A TMA copy of `lanes` elements a trip: the copy engine moves the block's whole tile, so each thread's
    share is the tile over the threads, and its lanes lie an element apart."""
    elements = lanes * trips
    return Access(
        kind="load" if call[1] == "tl.tma_load" else "store",
        buffer=buffer,
        dtype=dtype,
        lanes=lanes,
        line=line,
        cuda_lines=cuda_lines,
        via="tma",
        lane_stride_bytes=ir.dtype_bits(dtype) // 8,
        elements_per_thread=max(1, elements // dev.threads),
        block_bytes=elements * ir.dtype_bits(dtype) // 8,
    )


def _atomic_access(
    dev: DeviceFunc, call, line, lines_naming, dtypes: dict, copy_lines: dict, cuda_text, trips: int
) -> Access | None:
    """An atomic update of global memory, by its address or its pointer."""
    target = next(
        (a[2][0] for a in call[2] if a[0] == "call" and a[1] == "tirx.address_of" and a[2] and a[2][0][0] == "load"),
        None,
    )
    pointer = _pointer(call[2][0]) if call[2] else None
    if target is None and pointer is not None:
        lanes = 2 if "x2" in call[1] else 4 if "x4" in call[1] else 1
        target = (
            "load",
            pointer[0],
            (pointer[1],),
            f"{dtypes.get(pointer[0], 'float32')}x{lanes}" if lanes > 1 else dtypes.get(pointer[0], "float32"),
        )
    if target is None and call[2] and call[2][0][0] == "load":
        target = call[2][0]
    if target is None or dev.func.scope_of(target[1]) != "global":
        return None
    access = _access(dev, "store", target[1], target[3], target[2], line, lines_naming, trips, None, ())
    return Access(**{**access.__dict__, "atomic": True})


def _pointer(expr):
    """(buffer, offset, extent) of a `tvm_access_ptr(type, buffer, offset, extent, mode)` argument."""
    if expr[0] == "call" and expr[1] == "tirx.tvm_access_ptr" and len(expr[2]) >= 4 and expr[2][1][0] == "var":
        return expr[2][1][1], expr[2][2], expr[2][3]
    return None


def _access(
    dev: DeviceFunc, kind, buffer, dtype, indices, line, lines_naming, trips: int, guard, loops: tuple
) -> Access:
    lanes = ir.dtype_lanes(dtype)
    element = ir.element_dtype(dtype)
    elements = lanes * trips
    # the address is resolved once and evaluated three ways: across the warp, across two threads, and
    # over one thread's loops
    flat = dev.address(buffer, indices)
    request, sectors = dev.sectors(flat, element, lanes * ir.dtype_bits(element))
    stride = dev.lane_stride(flat, element)
    # an element every thread reads is fetched once per block, not once per thread
    readers = 1 if stride == 0 else dev.threads
    return Access(
        kind=kind,
        buffer=buffer,
        dtype=element,
        lanes=lanes,
        line=line,
        request_bytes=request,
        sectors=sectors,
        cuda_lines=lines_naming(buffer, line),
        index=", ".join(render(i) for i in indices),
        lane_stride_bytes=stride,
        elements_per_thread=elements,
        block_bytes=min(elements * readers, dev.size(buffer)) * ir.dtype_bits(element) // 8,
        guard=guard,
        thread_run_bytes=dev.thread_run(flat, element, lanes, loops),
    )


class LinesNaming:
    """CUDA lines produced by a Python line, narrowed to those that mention a buffer."""

    def __init__(self, cuda_text: list, line_map: tuple):
        self.cuda_text = cuda_text
        self.by_line: dict = {}
        for i, py in enumerate(line_map):
            self.by_line.setdefault(py, []).append(i + 1)
        self._cache: dict = {}

    def __call__(self, buffer: str, line) -> tuple:
        if line is None:
            return ()
        key = (buffer, line)
        if key not in self._cache:
            produced = self.by_line.get(line, [])
            word = re.compile(rf"\b{re.escape(buffer)}\b")
            naming = [n for n in produced if word.search(self.cuda_text[n - 1])]
            self._cache[key] = tuple(naming or produced)
        return self._cache[key]
