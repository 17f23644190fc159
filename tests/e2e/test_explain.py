"""`tl-inspect explain`: the decision chain of each narrow access, with real kernels compiled by the workers."""

from __future__ import annotations

import os
import re

import pytest
from conftest import ROOT

from tl_inspect.cli import main
from tl_inspect.rules.lane_dependent_predicate import LaneDependentPredicate


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


# the rule's first BAD example: an fp16 add over N = 2047
ADD_2047_CHAIN = """\
add_2047  add_2047.py:6
  against its floor
    estimate          estimated 4.41 us against a floor of 3.85 us on an H200: 1.14x, limited by the launch itself (it moves too little for its own time to hide)
    floor             3.85 us: one launch and 12.0 KiB at 4.3 TB/s
    time by resource  in flight 0.559 us, launch 3.85 us (the busiest one's time, plus the launch's own)
    largest cause     lane-dependent-predicate (line 9): 4.41 us -> 4.41 us once fixed (1.00x, 2.61x for a launch large enough to hide the launch's own time), shown by the kernel rebuilt without the cause
  ledger
    blocks                2
    threads that work     128 of 128 per block
    elements per thread   up to 8 through one access
    read per launch       8.0 KiB (4.0 KiB per block)
    written per launch    4.0 KiB (2.0 KiB per block)
    unique per launch     12.0 KiB (each tensor once)
    arithmetic            2,048 FLOP per launch (1,024 float operations per block, a transcendental counted as 16)
    arithmetic intensity  0.17 FLOP per unique byte
    bound on sm_90        memory-bound at 0.17 FLOP/B: the ridge is 14 FLOP/B (H200 SXM datasheet peaks)

  The C store and the A and B loads, line 9: 16-bit, up to 128-bit (costly)
    python     9 | C[bx * block + i] = A[bx * block + i] + B[bx * block + i]  # expect: lane-dependent-predicate
    cuda      21 | C[(((((int)blockIdx.x) * 1024) + (((int)threadIdx.x) * 8)) + i_s)] = (A[(((((int)blockIdx.x) * 1024) + (((int)threadIdx.x) * 8)) + i_s)] + B[(((((int)blockIdx.x) * 1024) + (((int)threadIdx.x) * 8)) + i_s)]);
    1. Is the index contiguous in the lane variable?        yes  `C[bx * block + i]`: neighbouring threads 16 B apart, each thread walks 16 contiguous bytes
    2. Is the bounds check uniform inside the vector group? NO   tilelang's bounds check `bx * 1024 + tx * 8 + i_s < 2047` varies inside the 8-element group (2047 is not a multiple of 8)
    stopped at step 2.
    cost    7.83x per access on an H200; 2.61x for the whole kernel; its fix takes this launch from 4.41 us to 4.41 us (1.00x) (stores with lanes 16 B apart, each thread's elements contiguous: 7.83x for the store's bytes (fp16 add with a tail guard))
    proof   rebuilt with add called with N=2048 instead of 2047 (a multiple of 8): 16 -> 128 bits, neighbouring threads 16 B -> 16 B apart
            before: C[(((((int)blockIdx.x) * 1024) + (((int)threadIdx.x) * 8)) + i_s)] = (A[(((((int)blockIdx.x) * 1024) + (((int)threadIdx.x) * 8)) + i_s)] + B…
            after:  *(uint4*)(C + ((((int)blockIdx.x) * 1024) + (((int)threadIdx.x) * 8))) = __1;
    fix     pad the length to a multiple of 8 (2047 -> 2048), or split the loop into an aligned body and a separate tail

"""


def test_explain_stops_at_the_predicate_and_shows_uint4_return(tmp_path, monkeypatch, capsys):
    bad_add = next(e for e in LaneDependentPredicate.examples() if e.name == "bad_add")
    (tmp_path / "add_2047.py").write_text(bad_add.text)
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "add_2047.py"]) == 0
    assert capsys.readouterr().out == ADD_2047_CHAIN


MISSING_CLEAR = "src/tl_inspect/rules/missing_clear/bad_row_sum_tiles.py"


def test_explain_shows_a_finding_outside_the_chain_with_its_fix_and_reads_the_cache(monkeypatch, capsys, private_cache):
    assert main(["explain", MISSING_CLEAR]) == 0
    first = capsys.readouterr().out
    finding = first[first.index("  TLV004 [missing-clear] line 13: ") :]
    assert "    python    13 | T.reduce_sum(x, s, dim=1, clear=False)" in finding
    assert "    evidence CUDA: float s[1];" in finding
    assert "    why     Fragments and locals are registers:" in finding
    assert "    fix     Initialise `s` before the first `T.reduce_sum(..., clear=False)`" in finding

    from tl_inspect.inspector.processes import pool

    def lowering():
        raise AssertionError("explain compiled a file whose result is cached")

    # the second explain of the unchanged file is the cache's: no worker process is even started
    monkeypatch.setattr(pool, "take_zygote", lowering)
    assert main(["explain", MISSING_CLEAR]) == 0
    assert capsys.readouterr().out == first


def test_explain_show_fixes_prints_the_verified_diff(capsys):
    assert main(["explain", "--show-fixes", MISSING_CLEAR]) == 0
    out = capsys.readouterr().out
    fix = out[out.index("    fix     Initialise `s`") :]
    assert fix.splitlines()[1:5] == [
        "            safe fix, verified: apply it with --fix",
        "            @@ -10,2 +10,3 @@",
        "                     s = T.alloc_fragment((BLOCK_M,), T.float32)",
        "            +        T.clear(s)",
    ]


def test_each_kind_of_cause_stops_at_its_own_step(capsys):
    assert (
        main(
            [
                "explain",
                "fixtures/kernels/rmw_row_sum.py",
                "fixtures/kernels/vec_transpose.py",
                "fixtures/kernels/vec_elementwise_1d.py::scale_naive",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    steps = {line.split()[0] for line in re.findall(r"^    (\d\. .*(?:NO|YES) .*)$", out, re.M)}
    # a store that does not advance, a transposed walk, one element per thread: steps 4, 1 and 5
    assert steps == {"1.", "4.", "5."}
    assert (
        "4. Does the store index advance with the lane?          NO   `O[bx * 16 + i]` stays put while j "
        "advances: every lane writes one element" in out
    )
    assert re.search(
        r"1\. Is the index contiguous in the lane variable\? +NO +`\w+\[.*\]`: neighbouring lanes "
        r"\(\w+\) are \d+ elements apart",
        out,
    )
    assert (
        "5. Does each thread move a whole vector, coalesced?     NO   1 element per thread over 256 threads, "
        "less than a 4-element vector" in out
    )
    # every chain stops at the step that failed: nothing is printed after it
    for chain in out.split("\n\n"):
        if "stopped at step" in chain:
            number = int(re.search(r"stopped at step (\d)", chain).group(1))
            assert max(int(n) for n in re.findall(r"^    (\d)\. ", chain, re.M)) == number


def test_a_kernel_without_narrow_accesses_and_a_bad_target(capsys):
    assert main(["explain", "fixtures/kernels/vec_elementwise_1d.py::add_aligned"]) == 0
    assert capsys.readouterr().out == (
        "add_aligned  fixtures/kernels/vec_elementwise_1d.py:8\n"
        "  against its floor\n"
        "    estimate          estimated 5.37 us against a floor of 5.31 us on an H200: "
        "1.01x, limited by the launch itself (it moves too little for its own time "
        "to hide)\n"
        "    floor             5.31 us: one launch and 6.0 MiB at 4.3 TB/s\n"
        "    time by resource  memory 1.52 us, in flight 1.52 us, blocks 0.614 us, "
        "compute 0.0163 us, launch 3.85 us (the busiest one's time, plus the launch's "
        "own)\n"
        "  ledger\n"
        "    blocks                1024\n"
        "    threads that work     128 of 128 per block\n"
        "    elements per thread   up to 8 through one access\n"
        "    read per launch       4.0 MiB (4.0 KiB per block)\n"
        "    written per launch    2.0 MiB (2.0 KiB per block)\n"
        "    unique per launch     6.0 MiB (each tensor once)\n"
        "    arithmetic            1,048,576 FLOP per launch (1,024 float operations per "
        "block, a transcendental counted as 16)\n"
        "    arithmetic intensity  0.17 FLOP per unique byte\n"
        "    bound on sm_90        memory-bound at 0.17 FLOP/B: the ridge is 14 FLOP/B (H200 "
        "SXM datasheet peaks)\n"
        "  every global access is as wide as its pattern allows, or cannot be wider\n\n"
    )
    assert main(["explain", "no/such.py"]) == 2
    assert "no/such.py: no such file or directory" in capsys.readouterr().err


def test_the_html_kernel_page_has_the_explain_panel(tmp_path):
    path = os.path.join(ROOT, "fixtures", "kernels", "vec_elementwise_1d.py") + "::axpy_ragged"
    assert main([path, "--html", str(tmp_path / "report"), "--format", "concise", "-o", str(tmp_path / "out")]) == 1
    page = next(p for p in (tmp_path / "report").iterdir() if "axpy_ragged" in p.name)
    text = page.read_text()
    assert (
        'class="explain"' in text
        and (
            '<li class="step failed"><span class="question">Is the bounds check uniform '
            'inside the vector group?</span> <span class="mark">NO</span>'
        )
        in text
    )
    assert "*(uint4*)" in text


def test_a_long_proof_line_is_cut_to_where_before_and_after_differ(capsys):
    # the transposed store's index: the same head for 60 characters, then the lane's term moves
    assert main(["explain", "fixtures/kernels/vec_transpose.py"]) == 0
    explained = capsys.readouterr().out
    assert main(["fixtures/kernels/vec_transpose.py", "--format", "full"]) == 1
    full = capsys.readouterr().out
    pairs = [
        (re.findall(r"^ +before: (.*)$", explained, re.M), re.findall(r"^ +after:  (.*)$", explained, re.M)),
        (re.findall(r"^ +\|   before (.*)$", full, re.M), re.findall(r"^ +\|   after  (.*)$", full, re.M)),
    ]
    for befores, afters in pairs:
        assert befores and len(befores) == len(afters)
        for before, after in zip(befores, afters):
            assert before.startswith("…") and after.startswith("…"), (before, after)
            # `…`, at least 16 shared characters of context (back to a name's start), then what differs
            assert 1 + 16 <= len(os.path.commonprefix([before, after])) <= 40, (before, after)
            assert len(before) <= 142 and len(after) <= 142
