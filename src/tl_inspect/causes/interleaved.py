from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase


class Interleaved(CauseKind):
    """an access interleaved with other accesses of the same buffer in the loop"""

    name, chain_step, loop_pattern = "interleaved", "index", True
    proved_by = (
        "each access read at the lane-contiguous index over the same loop variables, in its own span of the "
        "row (the proof; the fix splits the pairs)"
    )

    because = Phrase("{index} is interleaved with the loop's other {buffer} accesses")
    fix = Phrase(
        "store the interleaved parts of {buffer} as separate contiguous tensors (or halves), or load {buffer} "
        "contiguously and de-interleave it in registers or shared memory"
    )
    chain_answer = Phrase("`{index}` is interleaved with other accesses of {buffer} in the loop")
