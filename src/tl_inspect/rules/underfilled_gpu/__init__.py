"""TLV012 underfilled-gpu: a launch with fewer thread blocks than the GPU has SMs, where a grid that fills
the GPU would be estimated 1.10x faster or more."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.analysis.cost import COSTLY
from tl_inspect.analysis.estimate import STATIC
from tl_inspect.model import Cause, Cost, Gain
from tl_inspect.rules.base import Rule, RuleContext, Violation


@dataclass(frozen=True)
class IdleSms(Violation):
    """A grid of `blocks` blocks on a GPU of `sms` SMs, and the launch's estimated time as it is and with
    its work over a block per SM."""

    blocks: int
    threads: int
    sms: int
    gpu: str
    time_us: float
    filled_us: float

    def message(self) -> str:
        working = round(100 * self.blocks / self.sms)
        return (f"The launch runs {self.blocks} block{'s' if self.blocks != 1 else ''} of {self.threads} threads on "
                f"the {self.sms} SMs of an {self.gpu}: {self.sms - self.blocks} SMs have nothing to do ({working} % "
                f"of the GPU works), so the launch takes about {self.time_us:.3g} us where a grid of {self.sms} "
                f"blocks would take {self.filled_us:.3g} us")

    def fix_title(self) -> str:
        return (f"launch at least {self.sms} blocks: split the reduction across blocks (split-K, with the partial "
                f"results combined after), give each block fewer rows or a smaller tile, or spread the "
                f"{self.threads} threads' work over more blocks")


class UnderfilledGpu(Rule):
    """A launch whose thread blocks are fewer than the GPU's SMs, where filling them would make it faster.

    ## What it does
    Flags a launch whose grid has fewer blocks than the arch's GPU has streaming multiprocessors: 132 on
    the H200 of sm_90, 108 on the A100 of sm_80, 142 on the L40S of sm_89, and 148 on the B200 of
    sm_100. The grid must be known before run time.

    One block runs on one SM, so the SMs without a block idle for the whole launch. The rule prices that
    in time with the launch's estimate (`kernels[].estimate`): the same work spread over a block per SM
    keeps more bytes in flight and more cores busy. It reports when that would make the launch 1.10x
    faster or more, so it stays quiet on a launch that fills the GPU, on one too small for its own time
    to hide (the launch itself holds it), on one whose threads each walk a row (the walk holds it:
    `scalarized-load` reports that), and on 128 blocks of a split-K GEMV over 132 SMs (0.97x against
    256 blocks, measured). The finding is on the line of the `T.Kernel`.

    ## Why is this slow?
    A block's threads can only use their own SM's load units, L1 and share of the memory system. Take
    tilelang's own `naive_gemv` tutorial kernel at N = 1024, K = 8192: `T.ceildiv(N, 128)` blocks of 128
    threads is 8 blocks. On an H200 it:
    - kept 8 of the 132 SMs busy: Nsight Compute counted SM active cycles at 6.0 % of elapsed;
    - used 0.27 % of DRAM throughput;
    - ran at 13 GB/s, against 2511 GB/s for 256 blocks of 4 rows each: 192x slower.

    Part of that gap is how each thread walks its row (`scalarized-load` reports it). At N = 131072,
    with 1024 blocks, the same kernel lost 19.4x instead.

    ## Example
    ```python
    with T.Kernel(T.ceildiv(1024, 128), threads=128) as bn:  # 8 blocks for 132 SMs
        ...
    ```

    ## Use instead
    ```python
    with T.Kernel(1024 // 4, threads=128) as bn:  # 256 blocks of 4 rows
        ...
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md, "An idle GPU"): the figures above.
    - NVIDIA datasheets for the SM counts (docs/verdicts.md, "The ledger").
    - Nsight Compute's launch-statistics rule, which says the same after a GPU run.
    """

    code = "TLV012"
    slug = "underfilled-gpu"
    severity = "warning"
    flags = ("a launch with fewer thread blocks than the GPU has SMs, where the same work over a block per SM is "
             "estimated 1.10x faster or more")
    measured = "naive GEMV, 8 blocks on 132 SMs: 192x vs 256 blocks"
    fix = "launch at least as many blocks as the GPU has SMs (split-K, smaller tiles, more blocks)"
    reports_causes = ("idle-sms",)

    def check(self, ctx: RuleContext) -> None:
        ledger, estimate = ctx.kernel.ledger, ctx.kernel.estimate
        if ledger is None or estimate is None or estimate.filled_us is None or not estimate.time_us:
            return
        gain = Gain(estimate.time_us, estimate.filled_us, estimate.floor_us, STATIC,
                    Cause("idle-sms", threads=ledger.threads_launched),
                    f"{ledger.blocks} blocks of {ledger.threads_launched} threads on {ledger.sms} SMs: estimated "
                    f"{estimate.time_us:.4g} us, limited by {estimate.limited_by}; {estimate.filled_us:.4g} us with "
                    f"the same work over {ledger.sms} blocks")
        if gain.factor < COSTLY or estimate.gap is None:
            return
        ctx.report(ctx.facts.kernel_line or ctx.kernel.line or 1,
                   IdleSms(ledger.blocks, ledger.threads_launched, ledger.sms, ledger.peaks_of, estimate.time_us,
                           estimate.filled_us),
                   cost=Cost(estimate=round(gain.factor, 3), basis=gain.shows, table=ctx.kernel.cost_table), gain=gain)
