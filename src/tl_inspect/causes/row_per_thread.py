from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase
from tl_inspect.model import Cause
from tl_inspect.wording import plural


class RowPerThread(CauseKind):
    """each thread walks a row of its own, neighbouring threads a row apart"""

    name, chain_step, key = "row-per-thread", "per-thread", ("loop_line",)
    # no rewrite of one access spreads a row over a block's threads (that needs a reduction or a scan the
    # kernel does not have): the launch and the index algebra are the evidence
    proved_by = (
        "the launch and the index algebra: each load of a warp touches a cache line per thread, one after "
        "the other, priced by the cost table's walk terms against the rows spread over the blocks' threads"
    )
    evidence, restructures = "static", True
    # `Cause.elements` is a float; a row holds a whole count
    words = {"n_elements": lambda c: plural(int(c.elements), "element")}

    because = Phrase(
        "each thread walks its own row of {buffer}, {n_elements} one after the other, so every load of a warp "
        "touches a cache line per thread"
    )
    fix = Phrase(
        "spread each row over a block's threads: T.copy the row (or a tile of rows) into a fragment and reduce it "
        "with T.reduce_* (T.cumsum for a running sum), or walk it in a T.Parallel loop, with a block per row or per "
        "few rows"
    )
    chain_answer = Phrase("each thread walks a row of {n_elements} of {buffer} of its own")

    @staticmethod
    def launch_facts(c: Cause, access, ledger) -> str:
        lines = min(ledger.threads_working, 32, max(1, access.request_bytes // max(1, access.bits // 8)))
        return (
            f"{ledger.threads_working} of {ledger.threads_launched} threads work in each of "
            f"{plural(ledger.blocks, 'block')}, each walking {plural(int(c.elements), 'element')} of a row of "
            f"{c.buffer}, neighbouring threads {access.lane_stride_bytes:,} B apart ({lines} cache lines a warp "
            f"instruction)"
        )
