"""The kernel model: every fact about one kernel that a rule or a verdict reads, each derived once.

Built from the frontend snapshot (what the user wrote), the device snapshot (the launch) and the CUDA
source. Facts are computed on first use: a rule that reads only `threads` never walks the units.
`checking.check_kernel` builds one model per kernel and hands it to every rule as `ctx.facts`; the
worker builds its own for `verdicts.judge`.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

from tl_inspect.analysis import initialization
from tl_inspect.analysis.statements import Store, tile_op_of
from tl_inspect.analysis.units import UnitBuilder, int_or_none
from tl_inspect.model import STAGE_DEVICE, STAGE_FRONTEND, STAGE_VECTORIZE, KernelArtifact
from tl_inspect.tir import nodes as ir

# the frontend function of a kernel without one (it failed before the frontend snapshot): no
# statements and no buffers, so every fact of it is empty
NO_FRONTEND = ir.IRFunc(name="", buffers={}, body=())
SHARED_SCOPES = ("shared", "shared.dyn")
# `T.alloc_fragment` and `T.alloc_local` hand out uninitialised registers; `T.alloc_var` starts at its
# initialiser or zero (docs/tilelang-facts.md, I)
UNINITIALISED_SCOPES = ("local.fragment", "local")
REGISTER_SCOPES = ("local", "local.fragment", "local.var")
_GEMM_MARKERS = ("gemm", "mma")


@dataclass(frozen=True)
class Thread:
    """One thread index of the block: its tag, the user's variable for it, the threads along it."""

    tag: str  # "threadIdx.x"
    var: str
    extent: int


@dataclass(frozen=True)
class Buffer:
    """A buffer of the kernel as the user allocated it, with its CUDA declaration when it has one."""

    name: str
    scope: str
    dtype: str
    shape: tuple
    declared_line: int | None
    cuda_declaration: tuple | None  # (CUDA line, its text: "float acc[128];")

    @property
    def is_shared(self) -> bool:
        return self.scope in SHARED_SCOPES

    @property
    def is_register(self) -> bool:
        """A fragment, local or `T.alloc_var`: registers of each thread."""
        return self.scope in REGISTER_SCOPES


class KernelModel:
    """The facts of one kernel; each is computed on first use and then kept."""

    def __init__(self, kernel: KernelArtifact):
        self.kernel = kernel

    @functools.cached_property
    def func(self) -> ir.IRFunc:
        """The frontend PrimFunc (what the user wrote), or `NO_FRONTEND`, which has no statements."""
        snapshot = self.kernel.snapshot(STAGE_FRONTEND)
        return (snapshot.func() if snapshot else None) or NO_FRONTEND

    @functools.cached_property
    def _bindings(self) -> dict:
        """One walk of the frontend function for the names it binds and the layouts fixed in it."""
        found: dict[str, Any] = {
            "threads": {},
            "tags": {},
            "blocks": set(),
            "lets": {},
            "annotated": set(),
            "bound": set(),
        }
        for stmt, _ in ir.walk(self.func.body):
            if isinstance(stmt, ir.Let):
                value = stmt.value
                if value[0] == "call" and value[1] == "tl.launch_thread_idx":
                    found["threads"][stmt.var] = 1
                    found["tags"][stmt.var] = "threadIdx." + "xyz"[ir.int_value(value[2][0]) or 0]
                else:
                    found["lets"][stmt.var] = value
            elif isinstance(stmt, ir.For) and stmt.kind == "thread_binding" and stmt.thread.startswith("threadIdx"):
                # `T.thread_binding(0, 128, thread="threadIdx.x")` inside the kernel: a thread index too
                found["threads"][stmt.var] = int_or_none(stmt.extent) or 1
                found["tags"][stmt.var] = stmt.thread
            elif isinstance(stmt, ir.For) and stmt.kind == "thread_binding":
                found["blocks"].add(stmt.var)
            elif isinstance(stmt, ir.For) and stmt.kind != "parallel" and int_or_none(stmt.extent) == 1:
                # a single iteration (`T.serial(TILE_K)` with TILE_K = 1): its variable is the constant
                # start, not a run-time offset that could break alignment
                found["lets"][stmt.var] = stmt.min
            elif isinstance(stmt, ir.Block):
                found["annotated"] |= set(stmt.annotated_layouts)
            elif isinstance(stmt, ir.Eval) and stmt.expr[0] == "call":
                regions = ir.regions(stmt.expr)
                if any(m in stmt.expr[1] for m in _GEMM_MARKERS):
                    fixed = [region.buffer for region in regions]
                elif ir.tile_op(stmt.expr) == "reduce":
                    fixed = [region.buffer for region in regions[1:2]]
                else:
                    fixed = []
                found["bound"] |= {b for b in fixed if self.func.scope_of(b).startswith("local")}
        return found

    @functools.cached_property
    def thread_vars(self) -> dict:
        """Every user variable bound to a thread index -> the threads along it, in program order."""
        variables = dict(self._bindings["threads"])
        extents = _thread_extents(self.kernel)
        for name in variables:
            variables[name] = extents.get(name, variables[name])
        if not any(v > 1 for v in variables.values()):
            sizes = [lay.thread_size for lay in self.kernel.layouts if lay.thread_size]
            if sizes and variables:
                variables[next(iter(variables))] = max(sizes)
        return variables

    @property
    def thread_tags(self) -> dict:
        """Thread variable -> its tag ("threadIdx.x")."""
        return self._bindings["tags"]

    @functools.cached_property
    def threads(self) -> dict:
        """Tag -> `Thread` for every thread index the block has (its first variable when re-bound)."""
        found: dict = {}
        for var, extent in self.thread_vars.items():
            tag = self.thread_tags[var]
            found.setdefault(tag, Thread(tag, var, self.launch.get(tag) or extent))
        return found

    @functools.cached_property
    def launch(self) -> dict:
        """Tag -> launch extent of the device kernel (an int, or None for a run-time extent)."""
        device = self.kernel.snapshot(STAGE_DEVICE)
        return {
            tag: ir.int_value(extent)
            for func in (device.funcs if device else ())
            for tag, extent in func.launch.items()
        }

    @functools.cached_property
    def thread_count(self) -> int:
        """Threads per block, as launched (a `T.thread_binding` inside `T.Kernel` re-binds the same index)."""
        launched = [n for tag, n in self.launch.items() if tag.startswith("threadIdx")]
        if launched and all(launched):
            return math.prod(launched)
        return math.prod(self.thread_vars.values()) or 1

    @functools.cached_property
    def kernel_line(self) -> int | None:
        """The `with T.Kernel(...)` line: tilelang gives its block-index loops, the outermost of every
        statement, that line."""
        return next(
            (
                loop.line
                for statement in (*self.stores, *self.tile_ops)
                for loop in statement.loops
                if loop.kind == "thread_binding" and loop.line
            ),
            None,
        )

    @property
    def block_vars(self) -> set:
        """User variables bound to a block index."""
        return self._bindings["blocks"]

    def env(self) -> dict:
        """Every thread and block variable at 0: the first block's first thread."""
        return {**{v: 0 for v in self.block_vars}, **{v: 0 for v in self.thread_vars}}

    def resolve(self, expr, depth: int = 0):
        """`expr` with the names bound by `x = ...` replaced by their values, so that it reads as written."""
        if depth > 8 or not isinstance(expr, tuple) or not expr:
            return expr
        lets = self._bindings["lets"]
        if expr[0] == "var" and expr[1] in lets:
            return self.resolve(lets[expr[1]], depth + 1)
        if expr[0] in ("int", "float", "other", "var"):
            return expr
        return tuple(
            self.resolve(item, depth + 1)
            if isinstance(item, tuple) and item and isinstance(item[0], str)
            else tuple(self.resolve(i, depth + 1) for i in item)
            if isinstance(item, tuple)
            else item
            for item in expr
        )

    @functools.cached_property
    def loops(self) -> tuple:
        """Every `ir.For` of the frontend function (thread bindings too), in program order."""
        return tuple(stmt for stmt, _ in ir.walk(self.func.body) if isinstance(stmt, ir.For))

    @functools.cached_property
    def stores(self) -> tuple:
        """Every `Store` of the frontend function, in program order."""
        return tuple(
            Store(
                stmt,
                tuple(self.resolve(i) for i in stmt.indices),
                self.resolve(stmt.value),
                _loops(ancestors),
                tuple(self.resolve(a.cond) for a in ancestors if isinstance(a, ir.If)),
                ir.stmt_line(stmt, ancestors),
            )
            for stmt, ancestors in ir.walk(self.func.body)
            if isinstance(stmt, ir.Store)
        )

    @functools.cached_property
    def tile_ops(self) -> tuple:
        """Every tile operator call, typed (`Copy`, `Reduce`, `Gemm`, `AtomicAdd`, else `TileOp`), in program order."""
        return tuple(
            tile_op_of(stmt.expr, _loops(ancestors), ir.stmt_line(stmt, ancestors))
            for stmt, ancestors in ir.walk(self.func.body)
            if isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr)
        )

    def buffer(self, name: str) -> Buffer | None:
        """The buffer the frontend function knows by this name, None for another name."""
        info = self.func.buffers.get(name)
        if info is None:
            return None
        return Buffer(name, info.scope, info.dtype, info.shape, info.line, self.cuda_declaration(name))

    def cuda_declaration(self, name: str) -> tuple | None:
        """(CUDA line, text) of the first register array declared with this name (`float acc[128];`)."""
        return self._cuda_declarations.get(name)

    @functools.cached_property
    def _cuda_declarations(self) -> dict:
        found: dict = {}
        for number, line in enumerate(self.kernel.source.splitlines(), 1):
            match = _CUDA_ARRAY.match(line)
            if match:
                found.setdefault(match.group(1), (number, line.strip()))
        return found

    @functools.cached_property
    def buffer_accesses(self) -> tuple:
        """Every `initialization.BufferAccess` of the frontend function, in program order (the def-use walk)."""
        return initialization.buffer_accesses(self.func, self.tile_ops)

    @functools.cached_property
    def first_accesses(self) -> dict:
        """Buffer -> its first `BufferAccess`, for every fragment, local and shared buffer the kernel
        allocates; a read that may not run (in a select, or under `if k > 0:`) does not count."""
        allocated = {
            stmt.buffer
            for stmt, _ in ir.walk(self.func.body)
            if isinstance(stmt, ir.Alloc) and self.func.scope_of(stmt.buffer) in UNINITIALISED_SCOPES + SHARED_SCOPES
        }
        found: dict = {}
        for access in self.buffer_accesses:
            if access.buffer not in allocated or access.buffer in found or access.access == initialization.GUARDED_READ:
                continue
            if access.access == initialization.READ and access.loop_guarded:
                continue
            found[access.buffer] = access
        return found

    @functools.cached_property
    def uninitialised_reads(self) -> dict:
        """Buffer -> its first access, for the buffers whose first access reads garbage for certain: an
        accumulation, or a read of registers. Shared memory can be filled by other threads or the copy
        engine in ways the frontend IR does not show, so only a read-modify-write of it is certain."""
        return {
            buffer: first
            for buffer, first in self.first_accesses.items()
            if first.access == initialization.ACCUMULATE
            or (first.access == initialization.READ and self.func.scope_of(buffer) not in SHARED_SCOPES)
        }

    @property
    def bound_fragments(self) -> set:
        """Fragments whose layout a tile op fixes (MMA operands, reduction outputs): what each thread holds
        of them is not the access pattern's choice."""
        return self._bindings["bound"]

    @property
    def annotated_layouts(self) -> set:
        """Buffers whose layout the user fixed (`T.annotate_layout`)."""
        return self._bindings["annotated"]

    @functools.cached_property
    def fragment_runs(self) -> dict:
        """Fragment -> the contiguous elements each thread holds of it, where the layout says."""
        return {lay.name: lay.run for lay in self.kernel.layouts if lay.kind == "buffer" and lay.run}

    @functools.cached_property
    def units(self) -> tuple:
        """The `Unit`s the compiler vectorizes together, in program order."""
        return UnitBuilder(self.func, self.resolve, self.thread_vars, self.env()).build()


_CUDA_ARRAY = re.compile(r"^\s*\w+ (\w+)\[\d+\];\s*$")


def _loops(ancestors) -> tuple:
    return tuple(a for a in ancestors if isinstance(a, ir.For))


def _thread_extents(kernel: KernelArtifact) -> dict:
    """Thread variable -> its extent in the lowered function: what the compiler launched along it."""
    for stage in (STAGE_VECTORIZE, STAGE_DEVICE):
        snapshot = kernel.snapshot(stage)
        if snapshot is None:
            continue
        found = {}
        for func in snapshot.funcs:
            for stmt, _ in ir.walk(func.body):
                if isinstance(stmt, ir.Attr) and stmt.key == "thread_extent" and ir.int_value(stmt.value):
                    found[stmt.node] = ir.int_value(stmt.value)
        if found:
            return found
    return {}
