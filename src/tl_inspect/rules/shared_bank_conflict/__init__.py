"""TLV011 shared-bank-conflict: one warp's shared-memory request split into many passes because its lanes
hit the same bank."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.inspector.lowering.banks import CONFLICT_DEGREE
from tl_inspect.rules.base import Rule, RuleContext, Violation
from tl_inspect.wording import byte_count


@dataclass(frozen=True)
class BankConflict(Violation):
    """A shared-memory access whose warp request takes `degree` passes where its width needs one."""

    kind: str
    buffer: str
    degree: int
    banks: tuple  # each lane's bank
    colliding: tuple  # the lanes of the most loaded bank
    lane_stride: int  # bytes between lanes 0 and 1
    row: int | None  # the buffer's row length in elements, when it has rows
    dtype: str

    def message(self) -> str:
        lanes = _lanes_text(self.colliding)
        bank = self.banks[self.colliding[0]] if self.colliding else 0
        stride = f", neighbouring lanes {byte_count(self.lane_stride)} apart" if self.lane_stride else ""
        return (
            f"The `{self.buffer}` {self.kind} in shared memory is a {self.degree}-way bank conflict: {lanes} of "
            f"one warp land in bank {bank}{stride}, so the request takes {self.degree} passes where one would do"
        )

    def fix_title(self) -> str:
        row = f" (`{self.row + 1}` elements instead of `{self.row}`)" if self.row else ""
        return (
            f"pad each row of `{self.buffer}` by one element{row}, so that each row starts one bank further, "
            f"or XOR-swizzle its column index with its row index on both the write and the read"
        )


def _lanes_text(lanes: tuple) -> str:
    if not lanes:
        return "its lanes"
    if lanes == tuple(range(lanes[0], lanes[-1] + 1)):
        return f"lanes {lanes[0]}-{lanes[-1]}"
    return "lanes " + ", ".join(str(lane) for lane in lanes[:8]) + (", ..." if len(lanes) > 8 else "")


class SharedBankConflict(Rule):
    """A shared-memory load or store whose lanes hit one bank, so one warp's request takes many passes.

    ## What it does
    Evaluates the address of every shared-memory load and store of the device code over the 32 lanes of
    a warp, the way the hardware serves it. Shared memory has 32 banks of 4 bytes, and lanes that touch
    different words of one bank are served one after another. Any swizzle a layout applies is part of
    the address. The rule reports a request that takes 4 or more times the passes its width needs.
    It names the lanes that collide, and the HTML page draws the warp's banks.

    Each finding is proven: the kernel is lowered again with the buffer's rows one element longer, and
    the same access then takes fewer passes. Copies tilelang emits itself are not read: `ldmatrix`,
    `cp.async`, TMA and `wgmma` operands use layouts tilelang swizzles.

    ## Why is this slow?
    A transpose through a `[32, 32]` float tile read by column compiles to
    `tile[(threadIdx.x & 31) * 32 + ...]`. Each lane is a row (128 bytes) from its neighbour, so all 32
    lanes are in bank 0, and the read takes 32 passes instead of one.

    Measured on an H200, for an fp32 transpose of 4096 x 4096 in 32 x 32 tiles with 256 threads:

    | form | time | bandwidth |
    |---|---|---|
    | `[32, 32]` read by column | 0.0871 ms | 1542 GB/s (2.27x slower) |
    | `[32, 33]` | 0.0384 ms | 3492 GB/s |
    | XOR swizzle | 0.0384 ms | 3492 GB/s |

    At 8192 x 8192 the conflicted form was 2.22x slower. Nsight Compute counted 16.35 M shared-load bank
    conflicts against 18.9 k for `[32, 33]`. Staging the transpose with `T.copy` and a shared-to-shared
    `T.Parallel` carries the same 32-way conflict (2.28x).

    ## Example
    ```python
    tile = T.alloc_shared((32, 32), T.float32)
    for i, j in T.Parallel(32, 32):
        tile[i, j] = A[by * 32 + i, bx * 32 + j]
    for i, j in T.Parallel(32, 32):
        At[bx * 32 + i, by * 32 + j] = tile[j, i]
    ```

    ## Use instead
    ```python
    tile = T.alloc_shared((32, 33), T.float32)  # each row one bank further
    ```

    ## References
    - tl-inspect H200 measurements (docs/gpu-impact.md, "Shared-memory bank conflicts"): the table above.
    - The TileLang book's layout chapter: 32 banks of 4 bytes; `addr(t) = t * 32` puts all 32 lanes on
      bank 0, and padding a row to 33 or an XOR swizzle removes the conflict.
    - CUDA C++ Programming Guide, "Shared Memory" (compute capability 5.x and later: 32 banks, successive
      32-bit words in successive banks).
    """

    code = "TLV011"
    slug = "shared-bank-conflict"
    severity = "warning"
    flags = "a shared-memory access whose lanes hit one bank (4-way or worse), proven by padding the row"
    measured = "fp32 transpose via [32, 32]: 2.27x vs [32, 33]"
    fix = "pad each row of the shared tile by one element, or XOR-swizzle its column with its row"

    def check(self, ctx: RuleContext) -> None:
        reported = set()
        for access in ctx.kernel.shared_accesses:
            proven = access.proof_degree is not None and access.proof_degree < access.degree
            if access.degree < CONFLICT_DEGREE or not proven or access.line is None:
                continue
            key = (access.line, access.buffer, access.kind)
            if key in reported:
                continue
            reported.add(key)
            info = ctx.facts.buffer(access.buffer)
            row = (
                info.shape[-1]
                if info is not None and len(info.shape) >= 2 and isinstance(info.shape[-1], int)
                else None
            )
            ctx.report(
                access.line,
                BankConflict(
                    access.kind,
                    access.buffer,
                    round(access.degree),
                    access.banks,
                    access.colliding,
                    access.lane_stride_bytes,
                    row,
                    access.dtype,
                ),
                cuda_lines=access.cuda_lines or None,
                evidence=[
                    f"proof: rebuilt with {access.proof_change}: {access.wavefronts} passes -> "
                    f"{access.proof_wavefronts}",
                    f"banks of lanes 0-{len(access.banks) - 1}: " + " ".join(str(b) for b in access.banks),
                ],
            )
