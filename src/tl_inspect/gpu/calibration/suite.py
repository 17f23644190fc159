"""The calibration suite: for each term of the cost model, kernels it prices by that term next to the
same work with the term's cause removed (tl_inspect.gpu.calibration.fit turns their timings into terms).

These are the H200 calibration's kernels (docs/gpu-impact.md, "Calibration of the cost model"), sized to
move 0.25-2 GB a launch so that neither the launch nor the L2 counts, except the launch's own case: a tail
guard small enough that the launch hides part of its loss. The whole launch's terms (the bytes in flight,
the streaming and L2 speeds, a walk's stores) are calibrated on benchmarks/floor_cases.py's kernels,
rewritten here, each moving 0.1-1 GB.
"""

from dataclasses import dataclass

from tl_inspect.gpu.calibration.access_kernels import (
    FP16,
    FP32,
    add_explicit_index,
    add_npt,
    add_rows,
    iterated_tile,
    kv_append,
    rope,
    row_guarded_reduce,
    row_lone_thread,
    row_lone_thread_vector,
    row_thread_zero,
    row_tile,
    row_walk,
    row_walk_vector,
    scale_threads,
    stage_1024,
    swiglu_halves,
    swiglu_pairs,
    transpose_direct,
    transpose_in_shared,
)
from tl_inspect.gpu.calibration.launch_kernels import (
    N26,
    chunk_sums,
    copy_grid,
    copy_one_per_thread,
    reread_rows,
    row_layer_norm,
)

RATIO, TIME = "ratio", "time"


@dataclass(frozen=True)
class Case:
    term: str  # the cost table's term the case calibrates
    label: str
    bad: object  # a PrimFunc priced by the term; None where only `good` is timed
    good: object  # the same work without the cause
    # what fits the term: RATIO, the two forms' time per byte; TIME, the good form's time
    fit: str = RATIO


N1 = 1 << 28
ODD = N1 + 1
ROWS = 1 << 21


def cases() -> list:
    return _per_thread_cases() + _row_and_layout_cases() + _launch_cases() + _held_load_cases() + _whole_launch_cases()


def _per_thread_cases() -> list:
    """How much each thread moves, and how its lanes lie: the terms of one access."""
    return [
        Case(
            "block_floor_bytes",
            "Y = 3X fp32, 64 threads x 1 per block (2^22 blocks) vs 256 x 4",
            scale_threads(N1, 64, 1),
            scale_threads(N1, 256, 4),
        ),
        Case(
            "two_bytes_per_thread",
            "fp16 add, idx = bx * 256 + tx vs 8 per thread",
            add_explicit_index(N1),
            add_npt(N1, 128, 8),
        ),
        Case(
            "four_bytes_per_thread",
            "fp16 add, 256 threads x 2 per thread vs 128 x 8",
            add_npt(N1, 256, 2),
            add_npt(N1, 128, 8),
        ),
        Case(
            "narrow_coalesced",
            "fp16 add over rows of 1023 vs 1024",
            add_rows(131072, 1023, dtype=FP16),
            add_rows(131072, 1024, dtype=FP16),
        ),
        Case(
            "spread_store_8",
            "fp16 add N = 2^28 + 1, 4 per thread vs N = 2^28 + 8",
            add_npt(ODD, 128, 4),
            add_npt(N1 + 8, 128, 4),
        ),
        Case(
            "spread_store_16",
            "fp16 add N = 2^28 + 1, 8 per thread vs N = 2^28 + 8",
            add_npt(ODD, 128, 8),
            add_npt(N1 + 8, 128, 8),
        ),
        Case(
            "spread_store_16",
            "fp16 add N = 2^28 + 1, 16 per thread vs N = 2^28 + 16",
            add_npt(ODD, 128, 16),
            add_npt(N1 + 16, 128, 16),
        ),
        Case(
            "l1_bytes_per_wavefront",
            "bf16 rows of 256, a row per thread vs T.copy + T.reduce_sum",
            row_walk(ROWS, 256),
            row_tile(ROWS, 256, 8),
        ),
        Case(
            "l1_bytes_per_wavefront",
            "bf16 rows of 32, a row per thread vs T.copy + T.reduce_sum",
            row_walk(ROWS * 8, 32),
            row_tile(ROWS * 8, 32, 32),
        ),
        Case(
            "l1_bytes_per_wavefront",
            "fp32 chunk sums, 4 chunks of 8 per thread: loads into the sum vs staged",
            chunk_sums(1 << 28, staged=False),
            chunk_sums(1 << 28, staged=True),
        ),
    ]


def _row_and_layout_cases() -> list:
    """Rows walked by a thread, transposes, interleaved and staged loads: more terms of one access."""
    return [
        Case(
            "vector_row_walk",
            "bf16 rows of 256, a row per thread in 16-byte loads vs T.copy + T.reduce_sum",
            row_walk_vector(ROWS, 256),
            row_tile(ROWS, 256, 8),
        ),
        Case(
            "lone_thread_walk",
            "fp32 rows of 16384, one thread per block vs 128 threads, T.copy + T.reduce_sum",
            row_lone_thread(8192, 16384),
            row_tile(8192, 16384, 1, FP32),
        ),
        Case(
            "lone_thread_walk",
            "fp32 rows of 16384, thread 0 of 128 walks the row vs T.copy + T.reduce_sum",
            row_thread_zero(8192, 16384),
            row_tile(8192, 16384, 1, FP32),
        ),
        Case(
            "lone_thread_vector_walk",
            "fp32 rows of 16384, one thread per block in float4 loads vs 128 threads",
            row_lone_thread_vector(8192, 16384),
            row_tile(8192, 16384, 1, FP32),
        ),
        Case(
            "staged_half_vector",
            "fp16 copy through shared memory, 1024 per block: 256 threads vs 128",
            stage_1024(N1, 256),
            stage_1024(N1, 128),
        ),
        Case(
            "interleaved_loads",
            "SwiGLU over interleaved gate/up pairs vs contiguous halves, 32768 x 8192 fp16",
            swiglu_pairs(32768, 8192),
            swiglu_halves(32768, 8192),
        ),
        Case(
            "interleaved_loads",
            "GPT-J RoPE over interleaved pairs vs NeoX halves, 65536 x 32 x 128 bf16",
            rope(65536, 32, 128, interleaved=True),
            rope(65536, 32, 128, interleaved=False),
        ),
        Case(
            "transposed_store",
            "bf16 KV append into a [heads, D, S] cache, 65536 tokens x 8 heads x 128, vs tiled",
            kv_append(65536, 65536, 8, 128, tiled=False),
            kv_append(65536, 65536, 8, 128, tiled=True),
        ),
    ]


def _launch_cases() -> list:
    """What one launch costs besides its accesses: full speed, arithmetic, the launch, a thread's walk."""
    return [
        Case(
            "transposed_store",
            "fp32 transpose 8192^2 written by column vs through shared memory",
            transpose_direct(8192, 8192),
            transpose_in_shared(8192, 8192),
        ),
        Case("full_speed_bytes_per_ns", "fp16 add N = 2^28, 8 per thread", None, add_npt(N1, 128, 8), TIME),
        Case(
            "float_ops_per_ns",
            "fp16 N = 2^26 + 8, 8 per thread, 512 FMA rounds per element in registers",
            None,
            iterated_tile((1 << 26) + 8, 512),
            TIME,
        ),
        # a launch of 1.5 MB: 0.36 us of its bytes at full speed, the rest the launch's own
        Case("launch_ns", "fp16 add N = 2^18, 8 per thread (1.5 MB a launch)", None, add_npt(1 << 18, 128, 8), TIME),
        # 256 rows on 132 SMs: each thread's walk, not the memory, sets the time
        Case(
            "lone_thread_element_ns",
            "fp32 rows of 16384, 256 rows, one thread per block",
            None,
            row_lone_thread(256, 16384),
            TIME,
        ),
        Case("walk_load_ns", "bf16 rows of 256, 1024 rows, a row per thread", None, row_walk(1024, 256), TIME),
        Case(
            "walk_vector_load_ns",
            "bf16 rows of 256, 1024 rows, a row per thread in 16-byte loads",
            None,
            row_walk_vector(1024, 256),
            TIME,
        ),
    ]


def _held_load_cases() -> list:
    """A reduce's narrow loads held in registers, by how many each thread holds."""
    return [
        Case(
            "held_narrow_loads_spilled"
            if block_m * 4096 // threads >= 128
            else "held_narrow_loads"
            if block_m * 4096 // threads >= 32
            else "narrow_coalesced",
            f"bf16 rows of 4095 vs 4096 reduced, {block_m} row(s) per {threads} threads "
            f"({block_m * 4096 // threads} per thread)",
            row_guarded_reduce(1 << 17, 4095, block_m, threads),
            row_guarded_reduce(1 << 17, 4096, block_m, threads),
        )
        for block_m, threads in ((1, 512), (1, 256), (1, 128), (2, 128), (4, 128))
    ]


def _whole_launch_cases() -> list:
    """The whole launch's estimate (tl_inspect.analysis.estimate): its bytes in flight, its streaming and L2
    speeds, a walk's stores; fp32 copies of 2^26 elements (537 MB), reads of 1.07 GB."""
    in_flight = [
        Case(
            "bytes_in_flight",
            "fp32 copy N = 2^26, one element per thread in blocks of 256 vs 16-byte vectors over 1024 blocks",
            copy_one_per_thread(N26, 256),
            copy_grid(1024),
        )
    ] + [
        Case(
            "loop_loads_in_flight",
            f"fp32 copy N = 2^26 by 16-byte vectors, {blocks} blocks of 256 threads looping over tiles vs 1024 blocks",
            copy_grid(blocks),
            copy_grid(1024),
        )
        for blocks in (8, 32)
    ]
    return in_flight + [
        # 64 blocks of 128 threads, under one per SM: each thread's walk, not the memory, sets the time
        Case(
            "walk_store_ns",
            "fp16 LayerNorm, 8192 rows of 4096, a row per thread walked three times, the last storing",
            None,
            row_layer_norm(8192, 4096),
            TIME,
        ),
        Case(
            "streaming_read_bytes_per_ns",
            "fp32 read of 1.07 GB: 65536 blocks each summing a row of 4096 of its own",
            None,
            reread_rows(65536),
            TIME,
        ),
        Case(
            "streaming_write_bytes_per_ns",
            "fp32 copy N = 2^26 (537 MB) by 16-byte vectors over 1024 blocks",
            None,
            copy_grid(1024),
            TIME,
        ),
        Case(
            "l2_bytes_per_ns",
            "65536 blocks each summing one of 64 fp32 rows of 4096 (1.07 GB re-read from the L2)",
            None,
            reread_rows(64),
            TIME,
        ),
    ]
