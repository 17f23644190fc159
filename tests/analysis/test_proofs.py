"""Proofs for every cause: a length the user wrote is changed where they wrote it, by calling the
kernel's factory again with an aligned argument (the PrimFunc is rewritten only where no call is
known), and an index no rewrite fixes is proven by reading the lane-contiguous index instead; on the
bundled kernels' stored artefacts, their proofs' variants as tilelang built them."""

from __future__ import annotations

import os

import pytest
from conftest import FIXTURES, ROOT, kernel_named

from tl_inspect.lint.checking import check_kernel
from tl_inspect.rules import registered_rules

LENGTHS = os.path.join(FIXTURES, "kernels", "vec_factory_lengths.py")
PATTERNS = os.path.join(FIXTURES, "kernels", "vec_index_patterns.py")
WALKS = os.path.join(FIXTURES, "kernels", "vec_thread_walks.py")
GROW = os.path.join(FIXTURES, "kernels", "vec_grow_tile.py")
BAD_ADD = os.path.join(ROOT, "src", "tl_inspect", "rules", "scalarized_load", "bad_add.py")
CHUNK_SUMS = os.path.join(
    os.path.dirname(FIXTURES), "src", "tl_inspect", "rules", "tilelang_warning", "bad_chunk_sums.py"
)


def _findings(stored, path, kernel):
    artifact = kernel_named(stored([path])[path], kernel)
    assert artifact.status == "ok", artifact.error
    with open(path) as f:
        return check_kernel(artifact, f.read(), registered_rules())


@pytest.mark.parametrize(
    "kernel,change,bits",
    [
        # the bound tilelang checks is N // 4: padding the shapes alone leaves it at 262143
        ("add_4_mod_8", "add called with N=1048576 instead of 1048572 (a multiple of 8)", 128),
        # a TL_INSPECT_CASES entry, built under --arch although the factory asks tilelang for the target
        (
            "gate_up_product[N=1048575]",
            "gate_up_product called with N=1048576 instead of 1048575 (a multiple of 8)",
            128,
        ),
        # a @tilelang.jit factory called at module level; its fp32 arithmetic caps the vector at 4 elements
        ("rows_of_4001", "scale_guarded_rows called with N=4004 instead of 4001 (a multiple of 4)", 64),
    ],
)
def test_a_length_is_proven_through_the_factory_that_built_the_kernel(stored, kernel, change, bits):
    (finding,) = _findings(stored, LENGTHS, kernel)
    assert finding.proof.change == change
    assert (finding.proof.bits_before, finding.proof.bits_after) == (16, bits)
    assert finding.cost.estimate >= 1.10


@pytest.mark.parametrize(
    "kernel,line,written",
    [
        ("shuffled", 14, "`X[bx * 8 + i, c]`"),
        ("rolled", 24, "`X[bx * 8 + i, d]`"),
        ("reversed_walk", 34, "`X[bx * 1024 + i]`"),
        ("window_from_base", 56, "`X[bx * 1024 + i]`"),
    ],
)
def test_an_index_pattern_is_proven_by_the_lane_contiguous_index(stored, kernel, line, written):
    (finding,) = _findings(stored, PATTERNS, kernel)
    assert finding.slug == "scalarized-load" and finding.line == line
    assert finding.proof.change.startswith(f"{written} accessed at line {line} instead")
    assert "a kernel that moves other elements" in finding.proof.change
    assert (finding.proof.bits_before, finding.proof.bits_after) == (16, 128)


# estimates: 2.06x an access, or the block floor (0.6 ns a block) where a block moves less than 2580 B:
# fp16 add on 128-thread blocks measured 3.43x against the 1024-element tile (3.36x estimated)
@pytest.mark.parametrize(
    "path, kernel, change, estimate",
    [
        # the factory's `block` carries the tile: every constant derived from it follows
        (
            BAD_ADD,
            "add_one_per_thread",
            "add called with block=1024 instead of 128 (a tile of 1024 elements for the "
            "same 128 threads over a grid 8x smaller, so each thread moves 8 contiguous "
            "elements)",
            3.36,
        ),
        # `threads` equals the tile too, but calling with threads=1024 launches more threads: the PrimFunc grows
        (
            GROW,
            "relu_threads_and_block",
            "a tile of 1024 elements for the same 128 threads over a grid 8x smaller, so "
            "each thread moves 8 contiguous elements",
            5.04,
        ),
        # 1001 blocks: the factory would drop the last 1001 % 8 blocks' elements; the PrimFunc rounds the grid up
        (
            GROW,
            "relu_odd_grid",
            "a tile of 1024 elements for the same 128 threads over a grid of 126 blocks instead of "
            "1001, the last one cut off by the bounds check, so each thread moves 8 contiguous "
            "elements",
            5.04,
        ),
        # explicit thread indexing on 256-thread blocks: 2.02-2.07x measured against 8 per thread
        (
            WALKS,
            "add_explicit_index",
            "`tx` read as `tx * 8 + v` in a T.vectorized(8) loop over `v` and the block "
            "index as `bx * 8` over a grid 8x smaller, so each thread moves 8 contiguous "
            "elements",
            2.06,
        ),
    ],
)
def test_one_element_per_thread_is_proven_by_a_larger_tile_over_a_smaller_grid(stored, path, kernel, change, estimate):
    findings = _findings(stored, path, kernel)
    assert {f.proof.change for f in findings} == {change}
    assert all(
        "uint4" in f.proof.cuda_after and (f.proof.bits_before, f.proof.bits_after) == (16, 128) for f in findings
    )
    assert all(f.cost.estimate == pytest.approx(estimate, abs=0.01) for f in findings)


def test_threads_that_share_memory_are_not_given_a_larger_tile(stored):
    access = next(a for a in kernel_named(stored([GROW])[GROW], "reversed_through_shared").accesses if a.buffer == "X")
    assert (access.verdict, access.cause.kind, access.proof) == ("unproven", "few-per-thread", None)


@pytest.mark.parametrize(
    "path,kernel,change,vector",
    [
        # tilelang keeps a loop that accumulates serial, T.vectorized or not: its loads are staged instead
        (
            WALKS,
            "row_sum_range",
            "the loads of `j` staged 8 at a time through a T.vectorized copy into a local",
            "uint4",
        ),
        # 250 columns: 31 vectors and a serial tail of 2
        (
            WALKS,
            "row_sum_prefix",
            "the loads of `j` staged 8 at a time through a T.vectorized copy into a local",
            "uint4",
        ),
        (
            CHUNK_SUMS,
            "chunk_sums",
            "the loads of `k` staged 4 at a time through a T.vectorized copy into a local",
            "float4",
        ),
        (
            WALKS,
            "row_sum_one_thread",
            "the loads of `j` staged 4 at a time through a T.vectorized copy into a local, still on one thread",
            "float4",
        ),
    ],
)
def test_a_walk_that_accumulates_is_proven_by_staging_its_loads(stored, path, kernel, change, vector):
    (finding,) = [f for f in _findings(stored, path, kernel) if f.slug == "scalarized-load"]
    # where spreading the rows over the block's threads gains more than the staged loads, the finding names
    # that fix (priced by the launch alone) and the staged loads stay the access's proof
    artifact = kernel_named(stored([path])[path], kernel)
    (proof,) = {a.proof for a in artifact.accesses if a.line == finding.line and a.proof is not None}
    assert proof.change == change
    assert proof.bits_after == 128 and f"*({vector}*)" in proof.cuda_after
    assert finding.proof in (None, proof)
    assert "T.reduce_*" in finding.fix
