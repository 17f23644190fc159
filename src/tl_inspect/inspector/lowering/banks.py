"""Shared-memory loads and stores of the final device code, and how many passes one warp's request takes.

Shared memory has 32 banks of 4 bytes; a request whose lanes touch different words of one bank is split
into as many passes (wavefronts) as the most words any bank holds, while lanes reading the same word share
it. The address is the device code's own index (any swizzle a layout applies is in it), evaluated over the
first warp with every loop and block variable at 0, as for global accesses (`device_func.DeviceFunc`). A
request wider than 4 bytes a lane is served a phase of lanes at a time (16 lanes for 8 bytes, 8 for 16),
so its fewest passes are its phases; the conflict degree is its passes over that.
"""

from __future__ import annotations

import numpy as np

from tl_inspect.inspector.lowering.accesses import LinesNaming
from tl_inspect.inspector.lowering.device_func import WARP_SIZE, DeviceFunc
from tl_inspect.model import SharedAccess
from tl_inspect.tir import nodes as ir
from tl_inspect.tir.evaluate import evaluate
from tl_inspect.tir.render import render

BANKS = 32
WORD_BYTES = 4
# the degree from which a conflict is proven and reported: the smallest measured on the H200 cost 2.2x at
# 32 ways (docs/gpu-impact.md); under 4 the passes hide behind the global traffic of a memory-bound kernel
CONFLICT_DEGREE = 4
PHASE_BYTES = 128  # what one pass of a wide request serves: 32 banks of 4 bytes


def shared_accesses(device: ir.Snapshot, source: str, line_map: tuple) -> tuple:
    lines_naming = LinesNaming(source.splitlines(), line_map)
    found = []
    for func in device.funcs:
        dev = DeviceFunc(func)
        if not dev.warp:
            continue
        for stmt, ancestors in ir.walk(func.body):
            if not isinstance(stmt, (ir.Store, ir.Let)):
                continue
            line = ir.stmt_line(stmt, ancestors)
            refs = [("load", load[1], load[2], load[3]) for load in ir.loads_of(stmt.value)]
            if isinstance(stmt, ir.Store):
                refs.append(("store", stmt.buffer, stmt.indices, stmt.dtype))
            for kind, buffer, indices, dtype in refs:
                if not func.scope_of(buffer).startswith("shared"):
                    continue
                access = _request(dev, kind, buffer, indices, dtype, line, lines_naming)
                if access is not None:
                    found.append(access)
    return tuple(found)


def _request(dev: DeviceFunc, kind: str, buffer: str, indices, dtype: str, line, lines_naming):
    flat = dev.address(buffer, indices)
    if flat is None:
        return None
    element = ir.element_dtype(dtype)
    lane_bytes = max(1, ir.dtype_lanes(dtype) * ir.dtype_bits(element) // 8)
    env = {**{v: 0 for v in dev.block_vars}, **dev.warp}
    lanes = len(next(iter(dev.warp.values())))
    try:
        starts = np.broadcast_to(evaluate(flat, env, default=0), (lanes,)) * ir.dtype_bits(element) // 8
    except (KeyError, ValueError, ZeroDivisionError, FloatingPointError):
        return None
    passes, phases, worst = wavefronts([int(s) for s in starts], lane_bytes)
    return SharedAccess(
        kind=kind,
        buffer=buffer,
        dtype=element,
        bits=lane_bytes * 8,
        line=line,
        cuda_lines=lines_naming(buffer, line),
        index=", ".join(render(i) for i in indices),
        lane_stride_bytes=abs(int(starts[1]) - int(starts[0])) if lanes > 1 else 0,
        wavefronts=passes,
        phases=phases,
        banks=tuple((s // WORD_BYTES) % BANKS for s in (int(x) for x in starts)),
        colliding=worst,
    )


def wavefronts(starts: list, lane_bytes: int) -> tuple:
    """(passes the request takes, the fewest its width needs, the lanes of its most loaded bank) for lanes
    starting at byte offsets `starts`, each moving `lane_bytes`."""
    per_phase = max(1, min(WARP_SIZE, PHASE_BYTES // lane_bytes))
    passes, phases, worst = 0, 0, ()
    for first in range(0, len(starts), per_phase):
        words_by_bank: dict = {}
        lanes_by_bank: dict = {}
        for lane in range(first, min(first + per_phase, len(starts))):
            begin = starts[lane]
            for word in range(begin // WORD_BYTES, (begin + lane_bytes - 1) // WORD_BYTES + 1):
                words_by_bank.setdefault(word % BANKS, set()).add(word)
                lanes_by_bank.setdefault(word % BANKS, set()).add(lane)
        bank = max(words_by_bank, key=lambda b: len(words_by_bank[b]))
        passes += len(words_by_bank[bank])
        phases += 1
        if len(words_by_bank[bank]) > 1 and len(lanes_by_bank[bank]) > len(worst):
            worst = tuple(sorted(lanes_by_bank[bank]))
    return passes, phases, worst
