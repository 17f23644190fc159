"""Proofs that rewrite or build kernels in the test itself with the real tilelang: a PrimFunc padded where
no factory call is known, interleaved spans, a grown tile, and the factory call read from a module (the
bundled kernels' proofs are tested from their stored artefacts, tests/analysis/test_proofs.py)."""

from __future__ import annotations

import dataclasses
import os
import types

from conftest import FIXTURES, kernel_named

from tl_inspect.causes import kind_of, root
from tl_inspect.inspector.discovery.factory_calls import module_level_call
from tl_inspect.inspector.rewrites.contiguous import contiguous_index, reads_fewer_elements
from tl_inspect.lint.checking import check_kernel
from tl_inspect.rules import registered_rules

PATTERNS = os.path.join(FIXTURES, "kernels", "vec_index_patterns.py")
WALKS = os.path.join(FIXTURES, "kernels", "vec_thread_walks.py")
GROW = os.path.join(FIXTURES, "kernels", "vec_grow_tile.py")


def _findings(results_of, path, kernel):
    artifact = kernel_named(results_of([path])[path], kernel)
    assert artifact.status == "ok", artifact.error
    with open(path) as f:
        return check_kernel(artifact, f.read(), registered_rules())


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
        "add_odd = add(LENGTH)\n"
    )  # a name, not a literal: the call is not evaluated
    (finding,) = _findings(inspected, str(path), "add_odd")
    assert finding.proof.change == "the length 1048577 padded to 1048584 (a multiple of 8)"
    assert finding.proof.bits_after == 128


def test_interleaved_pairs_are_proven_by_reading_both_halves_contiguously_and_fixed_by_splitting(stored):
    findings = _findings(stored, PATTERNS, "swiglu_pairs")
    assert [f.line for f in findings] == [44, 45, 46]
    # gate from the row's first half, up from its second: as many bytes as the kernel, so `--measure` times it
    assert all(
        f.proof.change.startswith(
            "`GU[by, bx * 1024 + c]` and `GU[by, bx * 1024 + c + 4096]` accessed at lines 44 and 45 instead"
        )
        for f in findings
    )
    assert all("as many bytes move" in f.proof.change and not reads_fewer_elements(f.proof.change) for f in findings)
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
        "three = triples(4096, 4096)\n"
    )
    stores, three = _findings(inspected, str(path), "stores"), _findings(inspected, str(path), "three")
    assert {f.proof.change.split(" accessed")[0] for f in stores} == {"`Y[bx, c]` and `Y[bx, c + 4096]`"}
    assert {f.proof.change.split(" accessed")[0] for f in three} == {
        "`X[bx, c]` and `X[bx, c + 4096]` and `X[bx, c + 8192]`"
    }
    assert all(
        "as many bytes move" in f.proof.change and (f.proof.bits_before, f.proof.bits_after) == (16, 128)
        for f in stores + three
    )


def test_interleaved_pairs_whose_halves_would_lose_16_byte_alignment_read_the_same_elements(stored, tmp_path):
    (access,) = [a for a in kernel_named(stored([PATTERNS])[PATTERNS], "swiglu_pairs").accesses if a.line == 44]
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
        "    return main\n"
    )
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
        "twice = add(16)\n"
    )
    module = types.ModuleType("calls")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), vars(module))  # noqa: S102 - the test's own file
    factory, arguments = module_level_call(module, "shifted")
    assert factory is module.add and arguments == {"N": (1 << 20) - 4, "block": 256}
    assert [module_level_call(module, name) for name in ("named", "called", "twice", "LENGTH")] == [None] * 4


def test_the_grown_kernel_launches_fewer_blocks_and_moves_whole_vectors():
    import tilelang
    from tvm.target import Target

    from tl_inspect.inspector.discovery.loading import import_user_file
    from tl_inspect.inspector.rewrites.grow_tile import grow_parallel, vectorize_threads

    def line_of(path, text):
        with open(path) as f:
            return next(n for n, line in enumerate(f, 1) if text in line)

    odd, _ = import_user_file(GROW)
    walks, _ = import_user_file(WALKS)
    target = {"kind": "cuda", "arch": "sm_90"}
    explicit_line = line_of(WALKS, "C[idx] = A[idx] + B[idx]")
    for grown, blocks in (
        (grow_parallel(odd.relu_odd_grid, line_of(GROW, "for i in T.Parallel(block)"), 8), 126),
        (vectorize_threads(walks.add_explicit_index, explicit_line, "tx", 8), 512),
    ):
        assert (grown.blocks, grown.threads) == (blocks, 128 if blocks == 126 else 256)
        with Target(target):
            source = tilelang.lower(grown.func, target=target).kernel_source
        assert "*(uint4*)(" in source and f"blockIdx.x) * {grown.elements}" in source
