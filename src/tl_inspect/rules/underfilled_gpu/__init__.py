"""TLV012 underfilled-gpu: a launch with fewer thread blocks than the GPU has SMs, where a grid that fills
the GPU would be estimated 1.10x faster or more."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.analysis.cost import COSTLY
from tl_inspect.analysis.estimate import STATIC
from tl_inspect.causes import kind_of
from tl_inspect.gpu import cost_table
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
        return (
            f"The launch runs {self.blocks} block{'s' if self.blocks != 1 else ''} of {self.threads} threads on "
            f"the {self.sms} SMs of an {self.gpu}: {self.sms - self.blocks} SMs have nothing to do ({working} % "
            f"of the GPU works), so the launch takes about {self.time_us:.3g} us where a grid of {self.sms} "
            f"blocks would take {self.filled_us:.3g} us"
        )

    def fix_title(self) -> str:
        return (
            f"launch at least {self.sms} blocks: split the reduction across blocks (split-K, with the partial "
            f"results combined after), give each block fewer rows or a smaller tile, or spread the "
            f"{self.threads} threads' work over more blocks"
        )


# a launch estimated under this many times the launch's own time is launch-bound whatever its grid: its idle
# SMs cost it microseconds (a 1024^3 GEMM in 128 x 128 tiles, 64 blocks: 16.9 us on the H200)
LAUNCH_BOUND = 4


def _worth_a_launch(kernel, estimate) -> bool:
    """Whether the launch is long enough for its idle SMs to matter, and filling them saves at least the
    launch's own time."""
    launch_us = cost_table.of(kernel.cost_table)["launch_ns"] / 1e3
    return estimate.time_us >= LAUNCH_BOUND * launch_us and estimate.time_us - estimate.filled_us >= launch_us


class UnderfilledGpu(Rule):
    """A launch whose thread blocks are fewer than the GPU's SMs, where filling them would make it faster.

    ## What it does
    Flags a launch whose grid has fewer blocks than the arch's GPU has streaming multiprocessors: 132 on
    the H200 of sm_90, 108 on the A100 of sm_80, 142 on the L40S of sm_89, and 148 on the B200 of
    sm_100. The grid must be known before run time.

    One block runs on one SM, so the SMs without a block idle for the whole launch. The rule prices that
    in time with the launch's estimate (`kernels[].estimate`): the same work spread over a block per SM
    (split-K, smaller tiles) keeps more bytes in flight, more cores busy and each thread's walk shorter.
    It reports when that would make the launch 1.10x faster or more and save at least a launch's own
    time (3.85 us on the H200), so it stays quiet on a launch that fills the GPU, on one estimated under
    four launches' time (launch-bound whatever its grid), on one whose rows spreading over the blocks'
    threads would gain more (`scalarized-load` reports that fix, which fills the GPU too), and on 128
    blocks of a split-K GEMV over 132 SMs (0.97x against 256 blocks, measured). The finding is on the
    line of the `T.Kernel`.

    ## Why is this slow?
    A block's threads can only use their own SM's tensor cores, load units, L1 and share of the memory
    system. A 256 x 256 fp16 GEMM over K = 8192 in 128 x 128 tiles is a 2 x 2 grid: 4 blocks, each walking
    all of K on its own SM while 128 SMs idle. On an H200 it took 56.9 us against a floor of 5.83 us
    (9.8x; `fixtures/kernels/floor_gemv_gemm.py`). tilelang's own `naive_gemv` tutorial at N = 1024,
    K = 8192 is 8 blocks too (13 GB/s), but what holds it is each thread walking its own row:
    `scalarized-load` reports that, and spreading the rows also fills the GPU.

    ## Example
    ```python
    with T.Kernel(N // 128, M // 128, threads=128) as (bx, by):  # 256 x 256: 4 blocks for 132 SMs
        for ko in T.Pipelined(K // 64, num_stages=3):
            ...
    ```

    ## Use instead
    ```python
    # split K over 32 blocks per tile: 2 x 2 x 32 = 128 blocks, each adding its part into C
    with T.Kernel(N // 128, M // 128, 32, threads=128) as (bx, by, bz):
        for ko in T.Pipelined(K // 32 // 64, num_stages=3):
            ...
        T.atomic_add(C[by * 128, bx * 128], acc)
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md, "An idle GPU" and "Kernels against their floor"):
      the figures above.
    - NVIDIA datasheets for the SM counts (docs/verdicts.md, "The ledger").
    - Nsight Compute's launch-statistics rule, which says the same after a GPU run.
    """

    code = "TLV012"
    slug = "underfilled-gpu"
    severity = "warning"
    flags = (
        "a launch with fewer thread blocks than the GPU has SMs, where the same work over a block per SM is "
        "estimated 1.10x faster or more"
    )
    measured = "GEMM 256 x 256 x 8192 on 4 blocks: 56.9 us against a floor of 5.83 us (9.8x)"
    fix = "launch at least as many blocks as the GPU has SMs (split-K, smaller tiles, more blocks)"
    reports_causes = ("idle-sms",)

    def check(self, ctx: RuleContext) -> None:
        ledger, estimate = ctx.kernel.ledger, ctx.kernel.estimate
        if ledger is None or estimate is None or estimate.filled_us is None or not estimate.time_us:
            return
        gain = Gain(
            estimate.time_us,
            estimate.filled_us,
            estimate.floor_us,
            STATIC,
            Cause("idle-sms", threads=ledger.threads_launched),
            f"{ledger.blocks} blocks of {ledger.threads_launched} threads on {ledger.sms} SMs: estimated "
            f"{estimate.time_us:.4g} us, limited by {estimate.limited_by}; {estimate.filled_us:.4g} us with "
            f"the same work over {ledger.sms} blocks",
        )
        if gain.factor < COSTLY or estimate.gap is None or not _worth_a_launch(ctx.kernel, estimate):
            return
        # spreading its rows over the blocks' threads fills the GPU too, and gains more: that finding says so
        if any(
            a.gain is not None
            and a.gain.evidence == STATIC
            and kind_of(a.gain.cause).restructures
            and a.gain.factor >= gain.factor
            for a in ctx.kernel.accesses
        ):
            return
        ctx.report(
            ctx.facts.kernel_line or ctx.kernel.line or 1,
            IdleSms(
                ledger.blocks,
                ledger.threads_launched,
                ledger.sms,
                ledger.peaks_of,
                estimate.time_us,
                estimate.filled_us,
            ),
            cost=Cost(estimate=round(gain.factor, 3), basis=gain.shows, table=ctx.kernel.cost_table),
            gain=gain,
        )
