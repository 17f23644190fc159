"""Vectorization findings: one verdict per global access, a cost from the H200 measurements, a proof
by recompiling the kernel without the cause, and each cause owned by one rule whatever the selection;
on the bundled kernels' stored artefacts."""

from __future__ import annotations

import glob
import os

import pytest
from conftest import FIXTURES, kernel_named

from tl_inspect.lint.checking import check_kernel
from tl_inspect.model import VERDICTS
from tl_inspect.rules import find_rule, owner_of, registered_rules
from tl_inspect.tir.render import render

ELEMENTWISE = os.path.join(FIXTURES, "kernels", "vec_elementwise_1d.py")
ROWS = os.path.join(FIXTURES, "kernels", "vec_rows_2d.py")
ALL_SCALAR = os.path.join(FIXTURES, "kernels", "vec_all_scalar.py")
NARROW_BUT_FAST = os.path.join(FIXTURES, "kernels", "vec_narrow_but_fast.py")
FIXTURE_FILES = sorted(glob.glob(os.path.join(FIXTURES, "kernels", "*.py")))
RULES = registered_rules()


def _findings(stored, path, kernel, rules=RULES):
    artifact = kernel_named(stored([path])[path], kernel)
    with open(path) as f:
        return artifact, check_kernel(artifact, f.read(), rules)


def test_ragged_length_is_reported_under_its_cause_with_cost_and_proof(stored):
    artifact, findings = _findings(stored, ELEMENTWISE, "axpy_ragged")
    (finding,) = findings
    assert finding.slug == "lane-dependent-predicate"
    assert "< 100003" in finding.message and "100003 is not a multiple of 8" in finding.message
    assert "100003 -> 100008" in finding.fix
    assert finding.cost.estimate == pytest.approx(2.61) and "16 B apart" in finding.cost.basis
    proof = finding.proof
    # `axpy_ragged = axpy(100003)`: the book's method, through the factory the kernel came from
    assert proof.change == "axpy called with N=100008 instead of 100003 (a multiple of 8)"
    assert proof.bits_after > proof.bits_before == 16
    assert proof.stride_before == 16 and proof.cuda_before and proof.cuda_after
    # the proof is stated once, in `proof`, and the cost once, in `cost`: not again in the message or evidence
    assert finding.evidence == () and "Estimated" not in finding.message
    assert finding.name and dict(finding.args)
    data = finding.as_dict()
    assert set(data["proof"]) == {
        "change",
        "cuda_before",
        "cuda_after",
        "bits_before",
        "bits_after",
        "stride_before",
        "stride_after",
    }
    assert set(data["cost"]) == {"estimate", "basis", "per_access", "launch_bytes", "estimate_at_size"}
    # 600 KB a launch: measured 1.06x on the H200, the launch's own 4 us taking most of its time
    assert data["cost"]["estimate_at_size"] < 1.2


def test_run_time_length_is_proven_by_an_assumption(stored):
    _, findings = _findings(stored, ELEMENTWISE, "gelu_any_length")
    (finding,) = findings
    assert finding.slug == "lane-dependent-predicate"
    assert "N is only known at run time" in finding.message and "tilelang's bounds check" in finding.message
    assert "T.assume(N % 8 == 0)" in finding.fix
    assert finding.proof.change == "T.assume(N % 8 == 0)"
    assert "uint4" in finding.proof.cuda_after and finding.proof.bits_after == 128


def test_misaligned_rows_are_proven_by_padding_the_row(stored):
    _, findings = _findings(stored, ROWS, "bias_add_4095")
    (finding,) = findings
    assert finding.slug == "scalarized-load" and finding.rule == "TLV001"
    assert (finding.expected_bits, finding.emitted_bits) == (128, 16)
    assert "rows of Y hold 4095 elements, not a multiple of 8" in finding.message and "4096" in finding.fix
    assert finding.proof.change == "bias_add_odd_rows called with N=4096 instead of 4095 (a multiple of 8)"


def test_one_element_per_thread_is_proven_by_growing_the_tile(stored):
    # the factory's only argument is N: the PrimFunc's T.Parallel(256) grows for the same 256 threads
    _, findings = _findings(stored, ELEMENTWISE, "scale_naive")
    (finding,) = findings
    assert "T.Parallel(256) over 256 threads gives each thread 1 element" in finding.message
    assert finding.proof.change == (
        "a tile of 1024 elements for the same 256 threads over a grid 4x smaller, so "
        "each thread moves 4 contiguous elements"
    )
    assert "float4" in finding.proof.cuda_after and "blockIdx.x) * 1024" in finding.proof.cuda_after
    assert finding.proof.bits_after == 128 and finding.cost.estimate == pytest.approx(1.27)


@pytest.mark.parametrize(
    "kernel,cause,inserted",
    [
        ("add_odd", "tail-guard", True),
        ("scale_odd", "tail-guard", True),
        ("kv_transposed", "transposed", False),
        ("copy_thread_strided", "annotated-layout", False),
    ],
)
def test_kernels_whose_every_access_is_scalar_get_a_proven_finding(stored, kernel, cause, inserted):
    artifact, findings = _findings(stored, ALL_SCALAR, kernel)
    assert findings, f"{kernel}: every access is scalar, yet no finding"
    costly = [a for a in artifact.accesses if a.verdict == "costly"]
    assert costly and all(a.cause.kind == cause and a.proof for a in costly)
    assert all(a.cause.inserted == inserted for a in costly)
    assert all(f.proof and f.cost.estimate >= 1.10 for f in findings)


def test_a_transposed_store_names_its_stride_and_is_proven_coalesced_by_swapping_the_loops(stored):
    artifact, (finding,) = _findings(stored, ALL_SCALAR, "kv_transposed")
    store = next(a for a in artifact.accesses if a.kind == "store")
    assert store.lane_stride_bytes == 32768 and store.sectors == 32
    assert "Cache[h, d, pos + bt * block_t + t]" in finding.message  # as written, not `bx`/`by`
    assert "32 KiB apart" in finding.message and "T.copy" in finding.fix
    assert finding.proof.stride_after == 2 and "swapped" in finding.proof.change
    # 6.11x measured against the proof's kernel, 6.59x against the transposed shared tile
    assert finding.cost.estimate == pytest.approx(6.57, abs=0.1)


def test_narrow_accesses_that_measured_fast_are_cheap_and_silent(stored):
    result = stored([NARROW_BUT_FAST])[NARROW_BUT_FAST]
    with open(NARROW_BUT_FAST) as f:
        text = f.read()
    # one 64-bit load per thread staged before a barrier measured 1.16x: the one that is reported
    staged = "stage_1024_over_256_threads"
    (finding,) = check_kernel(next(k for k in result.kernels if k.name == staged), text, RULES)
    assert finding.slug == "scalarized-load" and finding.cost.estimate == pytest.approx(1.16, abs=0.01)
    for artifact in (k for k in result.kernels if k.name != staged):
        assert check_kernel(artifact, text, RULES) == [], artifact.name
        narrow = [a for a in artifact.accesses if a.bits < 128 and a.share > 0.01]
        assert narrow and all(a.verdict in ("cheap", "full") for a in narrow), artifact.name


def test_no_access_in_the_fixtures_or_rule_examples_is_unexplained(stored):
    paths = list(FIXTURE_FILES) + [example.path for rule in RULES for example in rule.examples()]
    for path, result in stored(paths).items():
        for artifact in result.kernels:
            for access in artifact.accesses:
                assert access.verdict in VERDICTS and access.verdict != "unexplained", (
                    f"{os.path.basename(path)}::{artifact.name}: {access}"
                )
                # a reason says why an access cannot be wider (inherent), or why a narrow one costs little
                assert (access.verdict == "inherent") == bool(access.reason) or access.reason in ("cast-cap", "compute")


def test_every_selection_only_filters_the_findings(stored):
    """Deselecting a rule hides exactly its findings: no cause moves to another rule. Each rule alone and
    each rule left out (every subset of 17 rules would be 131072 checks a kernel)."""
    results = stored(FIXTURE_FILES)
    selections = [[rule] for rule in RULES] + [[other for other in RULES if other is not rule] for rule in RULES]
    for path in FIXTURE_FILES:
        with open(path) as f:
            text = f.read()
        for artifact in results[path].kernels:
            everything = check_kernel(artifact, text, RULES)
            for subset in selections:
                chosen = {r.code for r in subset}
                assert check_kernel(artifact, text, subset) == [f for f in everything if f.rule in chosen], (
                    artifact.name,
                    chosen,
                )


def test_indices_render_as_written():
    bx, i, n = ("var", "bx"), ("var", "i"), ("var", "N")
    index = ("add", ("add", ("mul", bx, ("int", 1024)), i), ("int", 1))
    assert render(index) == "bx * 1024 + i + 1"
    assert render(("lt", index, n)) == "bx * 1024 + i + 1 < N"
    assert render(("mul", bx, ("floordiv", i, ("int", 2)))) == "bx * (i // 2)"
    assert render(("sub", n, ("add", i, ("int", 1)))) == "N - (i + 1)"
    assert render(("cast", "int64", ("add", i, n))) == "i + N"


def test_every_cause_kind_has_exactly_one_owner():
    from tl_inspect.causes import KINDS

    for kind in KINDS:
        owners = [rule.slug for rule in RULES if kind in rule.reports_causes]
        assert len(owners) == 1, (kind, owners)
    declared = {kind for rule in RULES for kind in rule.reports_causes}
    assert declared == set(KINDS), declared - set(KINDS)
    assert owner_of("tail-guard") is find_rule("lane-dependent-predicate")


def test_every_form_of_every_cause_phrase_renders_on_the_causes_found(stored):
    """Each cause kind's phrases render, in every form, on the causes the fixtures and rule examples have: a
    name neither a Cause field nor a word fails the import already, a word that cannot be made of a real
    cause fails here."""
    from stored_artefacts import SOURCES

    from tl_inspect.causes import KINDS, Phrase, root
    from tl_inspect.model import Cause

    # underfilled-gpu makes its idle-sms cause of the launch, not of an access
    causes = [Cause("idle-sms", threads=128)]
    for result in stored(SOURCES).values():
        for access in (a for artifact in result.kernels for a in artifact.accesses):
            for cause in (access.cause, *access.causes):
                while cause is not None:
                    causes.append(cause)
                    cause = cause.origin
    rendered: dict[str, set] = {name: set() for name in KINDS}
    for cause in causes:
        kind = KINDS[cause.kind]
        for phrase in ("because", "fix", "chain_answer", "change"):
            # invariant-store's owner phrases it (and a fragment layout it fixed) on its own terms
            if hasattr(KINDS[root(cause).kind], phrase):
                assert getattr(kind, phrase)(cause) != "", (cause.kind, phrase)
        rendered[cause.kind].add(kind.form(cause))
    for name, kind in KINDS.items():
        forms = {form for phrase in vars(kind).values() if isinstance(phrase, Phrase) for form in phrase.templates}
        assert forms <= rendered[name], (name, forms - rendered[name])


def test_a_phrase_naming_neither_a_cause_field_nor_a_word_fails_where_it_is_declared():
    from tl_inspect.causes import CauseKind, Phrase

    with pytest.raises(NameError, match="bufer"):

        class Misspelt(CauseKind):  # no name: a family's base, so no kind is registered
            because = Phrase("{index} of {bufer}")


def test_verdicts_doc_causes_table_is_generated():
    from tl_inspect.rules.catalog import causes_table

    with open(os.path.join(os.path.dirname(FIXTURES), "docs", "verdicts.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("| cause | what it is |")
    assert text[start : text.index("\n\n", start) + 1] == causes_table(), (
        "docs/verdicts.md's causes table differs: replace it with `python -m tl_inspect.rules.catalog`"
    )


def test_docs_list_every_cause_and_inherent_reason():
    from tl_inspect.analysis.footprints import INHERENT_REASONS
    from tl_inspect.causes import KINDS

    with open(os.path.join(os.path.dirname(FIXTURES), "docs", "verdicts.md")) as f:
        text = f.read()
    for name in list(KINDS) + list(INHERENT_REASONS):
        assert f"`{name}`" in text, name
