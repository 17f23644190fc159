"""Proofs for every cause: a length the user wrote is changed where they wrote it, by calling the
kernel's factory again with an aligned argument (the PrimFunc is rewritten only where no call is
known), and an index no rewrite fixes is proven by reading the lane-contiguous index instead."""

from __future__ import annotations

import dataclasses
import os
import types

import pytest

from conftest import FIXTURES, kernel_named
from tl_inspect.causes import kind_of, root
from tl_inspect.lint.checking import check_kernel
from tl_inspect.inspector.discovery.factory_calls import module_level_call
from tl_inspect.inspector.rewrites.contiguous import contiguous_index, reads_fewer_elements
from tl_inspect.rules import registered_rules

LENGTHS = os.path.join(FIXTURES, "kernels", "vec_factory_lengths.py")
PATTERNS = os.path.join(FIXTURES, "kernels", "vec_index_patterns.py")
WALKS = os.path.join(FIXTURES, "kernels", "vec_thread_walks.py")
GROW = os.path.join(FIXTURES, "kernels", "vec_grow_tile.py")
BAD_ADD = os.path.normpath(os.path.join(os.path.dirname(__file__), os.pardir, "src", "tl_inspect", "rules",
                                        "scalarized_load", "bad_add.py"))
CHUNK_SUMS = os.path.join(os.path.dirname(FIXTURES), "src", "tl_inspect", "rules", "tilelang_warning",
                          "bad_chunk_sums.py")


def _findings(inspected, path, kernel):
    artifact = kernel_named(inspected([path])[path], kernel)
    assert artifact.status == "ok", artifact.error
    with open(path) as f:
        return check_kernel(artifact, f.read(), registered_rules())


@pytest.mark.parametrize("kernel,change,bits", [
    # the bound tilelang checks is N // 4: padding the shapes alone leaves it at 262143
    ("add_4_mod_8", "add called with N=1048576 instead of 1048572 (a multiple of 8)", 128),
    # a TL_INSPECT_CASES entry, built under --arch although the factory asks tilelang for the target
    ("gate_up_product[N=1048575]", "gate_up_product called with N=1048576 instead of 1048575 (a multiple of 8)",
     128),
    # a @tilelang.jit factory called at module level; its fp32 arithmetic caps the vector at 4 elements
    ("rows_of_4001", "scale_guarded_rows called with N=4004 instead of 4001 (a multiple of 4)", 64),
])
def test_a_length_is_proven_through_the_factory_that_built_the_kernel(inspected, kernel, change, bits):
    (finding,) = _findings(inspected, LENGTHS, kernel)
    assert finding.proof.change == change
    assert (finding.proof.bits_before, finding.proof.bits_after) == (16, bits)
    assert finding.cost.estimate >= 1.10


def test_without_a_known_factory_call_the_primfunc_is_padded(inspected, tmp_path):
    path = tmp_path / "lengths.py"
    path.write_text(
        "import tilelang.language as T\n\n\n"
        "def add(N, block=1024):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):\n"
        "        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:\n"
        "            for i in T.Parallel(block):\n"
        "                C[bx * block + i] = A[bx * block + i]\n\n"
        "    return main\n\n\n"
        "LENGTH = (1 << 20) + 1\n"
        "add_odd = add(LENGTH)\n")  # a name, not a literal: the call is not evaluated
    (finding,) = _findings(inspected, str(path), "add_odd")
    assert finding.proof.change == "the length 1048577 padded to 1048584 (a multiple of 8)"
    assert finding.proof.bits_after == 128


@pytest.mark.parametrize("kernel,line,written", [
    ("shuffled", 14, "`X[bx * 8 + i, c]`"),
    ("rolled", 24, "`X[bx * 8 + i, d]`"),
    ("reversed_walk", 34, "`X[bx * 1024 + i]`"),
    ("window_from_base", 56, "`X[bx * 1024 + i]`"),
])
def test_an_index_pattern_is_proven_by_the_lane_contiguous_index(inspected, kernel, line, written):
    (finding,) = _findings(inspected, PATTERNS, kernel)
    assert finding.slug == "scalarized-load" and finding.line == line
    assert finding.proof.change.startswith(f"{written} accessed at line {line} instead")
    assert "a kernel that moves other elements" in finding.proof.change
    assert (finding.proof.bits_before, finding.proof.bits_after) == (16, 128)


def test_interleaved_pairs_are_proven_by_reading_both_halves_contiguously_and_fixed_by_splitting(inspected):
    findings = _findings(inspected, PATTERNS, "swiglu_pairs")
    assert [f.line for f in findings] == [44, 45, 46]
    # gate from the row's first half, up from its second: as many bytes as the kernel, so `--measure` times it
    assert all(f.proof.change.startswith("`GU[by, bx * 1024 + c]` and `GU[by, bx * 1024 + c + 4096]` accessed at "
                                         "lines 44 and 45 instead") for f in findings)
    assert all("as many bytes move" in f.proof.change and not reads_fewer_elements(f.proof.change)
               for f in findings)
    assert all((f.proof.bits_before, f.proof.bits_after) == (16, 128) for f in findings)
    assert all("separate contiguous tensors" in f.fix for f in findings)


def test_interleaved_stores_and_triples_are_proven_in_spans_of_their_rows(inspected, tmp_path):
    path = tmp_path / "spans.py"
    path.write_text(
        "import tilelang.language as T\n\n\n"
        "def split_store(M, N):\n"
        "    @T.prim_func\n"
        "    def main(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M, 2 * N), T.float16)):\n"
        "        with T.Kernel(M, threads=128) as by:\n"
        "            for c in T.Parallel(N):\n"
        "                Y[by, 2 * c] = X[by, c]\n"
        "                Y[by, 2 * c + 1] = X[by, c] * T.float16(2)\n\n"
        "    return main\n\n\n"
        "def triples(M, N):\n"
        "    @T.prim_func\n"
        "    def main(X: T.Tensor((M, 3 * N), T.float16), Y: T.Tensor((M, N), T.float16)):\n"
        "        with T.Kernel(M, threads=128) as by:\n"
        "            for c in T.Parallel(N):\n"
        "                Y[by, c] = X[by, 3 * c] + X[by, 3 * c + 1] + X[by, 3 * c + 2]\n\n"
        "    return main\n\n\n"
        "stores = split_store(4096, 4096)\n"
        "three = triples(4096, 4096)\n")
    stores, three = _findings(inspected, str(path), "stores"), _findings(inspected, str(path), "three")
    assert {f.proof.change.split(" accessed")[0] for f in stores} == {"`Y[bx, c]` and `Y[bx, c + 4096]`"}
    assert {f.proof.change.split(" accessed")[0] for f in three} == {
        "`X[bx, c]` and `X[bx, c + 4096]` and `X[bx, c + 8192]`"}
    assert all("as many bytes move" in f.proof.change and (f.proof.bits_before, f.proof.bits_after) == (16, 128)
               for f in stores + three)


def test_interleaved_pairs_whose_halves_would_lose_16_byte_alignment_read_the_same_elements(inspected, tmp_path):
    (access,) = [a for a in kernel_named(inspected([PATTERNS])[PATTERNS], "swiglu_pairs").accesses if a.line == 44]
    path = tmp_path / "pairs.py"
    path.write_text(
        "import tilelang.language as T\n\n\n"
        "def swiglu(M, N):\n"
        "    @T.prim_func\n"
        "    def main(GU: T.Tensor((M, 2 * N), T.float16), Y: T.Tensor((M, N), T.float16)):\n"
        "        with T.Kernel(M, threads=128) as by:\n"
        "            for c in T.Parallel(N):\n"
        "                gate = GU[by, 2 * c]\n"
        "                up = GU[by, 2 * c + 1]\n"
        "                Y[by, c] = gate * up\n\n"
        "    return main\n")
    module = types.ModuleType("pairs")
    exec(compile(path.read_text(), str(path), "exec"), vars(module))  # noqa: S102 - the test's own file
    cause = dataclasses.replace(root(access.cause), index_line=9, loop_line=8)
    # rows of 1020 fp16 (2040 B): the second half would start 8 bytes off a 16-byte boundary
    whole_loop = kind_of(cause).loop_pattern
    _, change = contiguous_index(module.swiglu(64, 1020), cause, whole_loop)
    assert change.startswith("`GU[bx, c]` accessed at lines 9 and 10 instead") and reads_fewer_elements(change)
    _, change = contiguous_index(module.swiglu(64, 1024), cause, whole_loop)
    assert "`GU[bx, c + 1024]`" in change and not reads_fewer_elements(change)


def test_a_module_level_call_is_read_with_literal_arguments_only(tmp_path):
    path = tmp_path / "calls.py"
    path.write_text(
        "def add(N, block=1024):\n    return N\n\n\n"
        "LENGTH = 7\n"
        "shifted = add((1 << 20) - 4, block=256)\n"
        "named = add(LENGTH)\n"
        "called = add(len('abc'))\n"
        "twice = add(8)\n"
        "twice = add(16)\n")
    module = types.ModuleType("calls")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), vars(module))  # noqa: S102 - the test's own file
    factory, arguments = module_level_call(module, "shifted")
    assert factory is module.add and arguments == {"N": (1 << 20) - 4, "block": 256}
    assert [module_level_call(module, name) for name in ("named", "called", "twice", "LENGTH")] == [None] * 4




# estimates: 2.06x an access, or the block floor (0.6 ns a block) where a block moves less than 2580 B:
# fp16 add on 128-thread blocks measured 3.43x against the 1024-element tile (3.36x estimated)
@pytest.mark.parametrize("path, kernel, change, estimate", [
    # the factory's `block` carries the tile: every constant derived from it follows
    (BAD_ADD, "add_one_per_thread", "add called with block=1024 instead of 128 (a tile of 1024 elements for the "
                                    "same 128 threads over a grid 8x smaller, so each thread moves 8 contiguous "
                                    "elements)", 3.36),
    # `threads` equals the tile too, but calling with threads=1024 launches more threads: the PrimFunc grows
    (GROW, "relu_threads_and_block", "a tile of 1024 elements for the same 128 threads over a grid 8x smaller, so "
                                     "each thread moves 8 contiguous elements", 5.04),
    # 1001 blocks: the factory would drop the last 1001 % 8 blocks' elements; the PrimFunc rounds the grid up
    (GROW, "relu_odd_grid", "a tile of 1024 elements for the same 128 threads over a grid of 126 blocks instead of "
                            "1001, the last one cut off by the bounds check, so each thread moves 8 contiguous "
                            "elements", 5.04),
    # explicit thread indexing on 256-thread blocks: 2.02-2.07x measured against 8 per thread
    (WALKS, "add_explicit_index", "`tx` read as `tx * 8 + v` in a T.vectorized(8) loop over `v` and the block "
                                  "index as `bx * 8` over a grid 8x smaller, so each thread moves 8 contiguous "
                                  "elements", 2.06),
])
def test_one_element_per_thread_is_proven_by_a_larger_tile_over_a_smaller_grid(inspected, path, kernel, change,
                                                                              estimate):
    findings = _findings(inspected, path, kernel)
    assert {f.proof.change for f in findings} == {change}
    assert all("uint4" in f.proof.cuda_after and (f.proof.bits_before, f.proof.bits_after) == (16, 128)
               for f in findings)
    assert all(f.cost.estimate == pytest.approx(estimate, abs=0.01) for f in findings)


def test_threads_that_share_memory_are_not_given_a_larger_tile(inspected):
    access = next(a for a in kernel_named(inspected([GROW])[GROW], "reversed_through_shared").accesses
                  if a.buffer == "X")
    assert (access.verdict, access.cause.kind, access.proof) == ("unproven", "few-per-thread", None)


def test_the_grown_kernel_launches_fewer_blocks_and_moves_whole_vectors():
    import tilelang
    from tvm.target import Target

    from tl_inspect.inspector.rewrites.grow_tile import grow_parallel, vectorize_threads
    from tl_inspect.inspector.discovery.loading import import_user_file

    def line_of(path, text):
        with open(path) as f:
            return next(n for n, line in enumerate(f, 1) if text in line)

    odd, _ = import_user_file(GROW)
    walks, _ = import_user_file(WALKS)
    target = {"kind": "cuda", "arch": "sm_90"}
    explicit_line = line_of(WALKS, "C[idx] = A[idx] + B[idx]")
    for grown, blocks in ((grow_parallel(odd.relu_odd_grid, line_of(GROW, "for i in T.Parallel(block)"), 8), 126),
                          (vectorize_threads(walks.add_explicit_index, explicit_line, "tx", 8), 512)):
        assert (grown.blocks, grown.threads) == (blocks, 128 if blocks == 126 else 256)
        with Target(target):
            source = tilelang.lower(grown.func, target=target).kernel_source
        assert "*(uint4*)(" in source and f"blockIdx.x) * {grown.elements}" in source


@pytest.mark.parametrize("path,kernel,change,vector", [
    # tilelang keeps a loop that accumulates serial, T.vectorized or not: its loads are staged instead
    (WALKS, "row_sum_range", "the loads of `j` staged 8 at a time through a T.vectorized copy into a local", "uint4"),
    # 250 columns: 31 vectors and a serial tail of 2
    (WALKS, "row_sum_prefix", "the loads of `j` staged 8 at a time through a T.vectorized copy into a local",
     "uint4"),
    (CHUNK_SUMS, "chunk_sums", "the loads of `k` staged 4 at a time through a T.vectorized copy into a local",
     "float4"),
    (WALKS, "row_sum_one_thread",
     "the loads of `j` staged 4 at a time through a T.vectorized copy into a local, still on one thread", "float4"),
])
def test_a_walk_that_accumulates_is_proven_by_staging_its_loads(inspected, path, kernel, change, vector):
    (finding,) = [f for f in _findings(inspected, path, kernel) if f.slug == "scalarized-load"]
    # where spreading the rows over the block's threads gains more than the staged loads, the finding names
    # that fix (priced by the launch alone) and the staged loads stay the access's proof
    artifact = kernel_named(inspected([path])[path], kernel)
    (proof,) = {a.proof for a in artifact.accesses if a.line == finding.line and a.proof is not None}
    assert proof.change == change
    assert proof.bits_after == 128 and f"*({vector}*)" in proof.cuda_after
    assert finding.proof in (None, proof)
    assert "T.reduce_*" in finding.fix
