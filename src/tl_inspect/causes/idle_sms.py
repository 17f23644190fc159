from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase


class IdleSms(CauseKind):
    """a grid of fewer blocks than the GPU has SMs, so some SMs have nothing to do"""

    name, chain_step, key = "idle-sms", "per-thread", ("threads",)
    # the launch's own estimate with the same work over one block per SM is the evidence
    proved_by = "the launch's estimate with the same work over one block per SM"
    evidence = "static"

    because = Phrase("the grid has fewer blocks than the GPU has SMs")
    chain_answer = Phrase("fewer blocks than SMs")
