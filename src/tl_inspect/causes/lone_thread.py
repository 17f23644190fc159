from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase
from tl_inspect.causes._walks import staged_change
from tl_inspect.model import Cause
from tl_inspect.wording import plural


class LoneThread(CauseKind):
    """one thread of each block walks the block's elements alone (`threads=1`, or `if tx == 0`)"""

    name, chain_step, key = "lone-thread", "per-thread", ("loop_line",)
    # spreading the walk over the threads would need a reduction the kernel does not have: the proof
    # only widens the lone thread's loads, which shows them narrow, not the cost of the idle threads
    proved_by = (
        "the launch and the index algebra: one working thread per block walking its elements, priced by "
        "the cost table's lone-walk terms against the walk spread over the block's threads; and the lone "
        "thread's loads staged a vector at a time through a `T.vectorized` copy into a local (still one "
        "thread)"
    )
    same_function = True
    evidence, restructures = "static", True

    because = Phrase(
        "one thread of each block walks {n_elements} of {buffer} alone, one at a time, while the rest of the block "
        "has nothing to do"
    )
    fix = Phrase(
        "spread the walk over the block's threads: T.copy the row into a fragment and reduce it with T.reduce_*, "
        "or walk it in a T.Parallel loop (fp32 rows of 16384 measured 8.77x faster over 128 threads)"
    )
    chain_answer = Phrase("one thread of {threads} walks {n_elements} of {buffer}")

    @staticmethod
    def change(c: Cause) -> str | None:
        return f"{staged_change(c.lane_var, c.width)}, still on one thread" if c.lane_var else None

    @staticmethod
    def launch_facts(c: Cause, access, ledger) -> str:
        return (
            f"{ledger.threads_working} of {ledger.threads_launched} threads work in each of "
            f"{plural(ledger.blocks, 'block')}, walking {plural(c.elements, 'element')} of {c.buffer} one after "
            f"the other"
        )

    @staticmethod
    def rewrite(func, c: Cause):
        from tl_inspect.inspector.rewrites.staging import stage_loads

        return stage_loads(func, c.lane_var, c.loop_line, c.width)
