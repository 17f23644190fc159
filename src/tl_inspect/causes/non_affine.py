from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase


class NonAffine(CauseKind):
    """an index that is not affine in the lane variable"""

    name, chain_step = "non-affine", "index"
    proved_by = (
        "the access read at the lane-contiguous index over the same loop variables (the proof; the fix permutes "
        "an aligned load)"
    )

    because = Phrase("{index} is not affine in `{lane_var}`")
    fix = Phrase(
        "load {buffer} contiguously (T.copy the aligned tile into shared memory or a fragment) and permute it "
        "there, or in registers"
    )
    chain_answer = Phrase("`{index}` is not affine in the lane variable {lane_var}")
