from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase
from tl_inspect.model import Cause

# the `loop` of a transposed cause whose lanes are ordered by the thread dimensions themselves
THREAD_ORDER = "threadIdx"


class Transposed(CauseKind):
    """neighbouring lanes a stride apart (a transposed or strided view, or threadIdx.x bound to rows)"""

    name, chain_step = "transposed", "index"
    proved_by = (
        "the `T.Parallel` loop order swapped, or threadIdx.x and threadIdx.y swapped (the proof; for a "
        "store the fix is a transposed shared tile and `T.copy`)"
    )
    same_function = True

    @staticmethod
    def form(c: Cause) -> str:
        return "threads" if c.loop == THREAD_ORDER else ""

    because = Phrase(
        "{index} has stride {stride} along `{lane_var}`, the variable neighbouring threads step through (a "
        "transposed walk)"
    )
    fix = Phrase(
        "stage the tile through shared memory: write it there transposed, then move it to global memory with T.copy "
        "(the only transposed form measured at full speed)",
        threads=(
            "bind threadIdx.x to the index that walks {buffer} contiguously: swap the two thread dimensions "
            "(threads=(y, x) and the T.get_thread_binding(0)/(1) calls)"
        ),
    )
    chain_answer = Phrase("`{index}`: neighbouring lanes ({lane_var}) are {stride} elements apart")

    @staticmethod
    def change(c: Cause) -> str | None:
        if c.loop == THREAD_ORDER:
            return "threadIdx.x and threadIdx.y swapped (threads and their bindings)"
        if c.loop.startswith("T.Parallel") and c.loop_line:
            return f"the loop order of the {c.loop} at line {c.loop_line} swapped"
        return None

    @staticmethod
    def rewrite(func, c: Cause):
        from tl_inspect.inspector.rewrites.primfunc import swap_parallel_nest, swap_thread_dimensions

        if c.loop == THREAD_ORDER:
            return swap_thread_dimensions(func)
        return swap_parallel_nest(func, c.loop_line)
