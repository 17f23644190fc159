"""Every rule example and fixture kernel compiled with the real tilelang, once per session in one pool:
the analysis inputs the worker records must be the ones stored in tests/artefacts, which tests/analysis
runs on (`TL_INSPECT_UPDATE_ARTEFACTS=1` rewrites them), and the analysis of the stored inputs must give
what the worker itself gave."""

from __future__ import annotations

import dataclasses
import glob
import os

import pytest
from stored_artefacts import ROOT, SOURCES, UPDATE_ARTEFACTS, artefact_path, stored_result, stored_text

from tl_inspect.analysis.recording import bare, loads
from tl_inspect.inspector import Job, inspect_jobs


@pytest.fixture(scope="module")
def compiled(request, tmp_path_factory):
    """{source: (its FileResult, the lines its worker recorded, in kernel order)} for the sources of the
    tests selected (`-k` records a new rule's examples alone), compiled in one pool."""
    # every test of this module is one source's
    selected = {item.callspec.params["source"] for item in request.session.items if item.path == request.path}
    sources = [source for source in SOURCES if source in selected]
    folders = [str(tmp_path_factory.mktemp("recorded")) for _ in sources]
    results = inspect_jobs([Job(path=source, record_analysis=folder) for source, folder in zip(sources, folders)])
    compiled = {}
    for source, folder, result in zip(sources, folders, results):
        by_kernel = {}
        for path in glob.glob(os.path.join(folder, "*.json")):
            with open(path, encoding="utf-8") as f:
                record = f.read()
            artifact = loads(record)[0]
            by_kernel[(artifact.name, artifact.case)] = record
        compiled[source] = (
            result,
            [by_kernel[key] for key in ((k.name, k.case) for k in result.kernels) if key in by_kernel],
        )
    return compiled


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: os.path.relpath(p, ROOT))
def test_the_stored_artefacts_are_what_tilelang_compiles_today(source, compiled):
    result, records = compiled[source]
    # the analysis tier sees only the kernels that compiled: every one of these files must compile whole
    assert result.error is None, f"{result.path}: {result.error}"
    assert result.kernels, f"{result.path}: no kernel found"
    assert all(k.status == "ok" for k in result.kernels), [(k.name, k.error) for k in result.kernels if k.error]
    text = stored_text(records)
    path = artefact_path(source)
    if UPDATE_ARTEFACTS:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    if not os.path.exists(path):
        pytest.fail(f"no stored artefacts {os.path.relpath(path, ROOT)}; TL_INSPECT_UPDATE_ARTEFACTS=1 records them")
    with open(path, encoding="utf-8") as f:
        stored = f.read()
    if text != stored:
        pytest.fail(
            f"{os.path.relpath(path, ROOT)} differs from the compile (TL_INSPECT_UPDATE_ARTEFACTS=1 "
            f"rewrites it): {'; '.join(_differences(stored, text))}"
        )


def _differences(stored: str, compiled: str) -> list[str]:
    """What differs, kernel by kernel: the artefact's fields, and the variants its proofs rebuilt."""
    before, after = stored.splitlines(), compiled.splitlines()
    if len(before) != len(after):
        return [f"{len(before)} kernels stored, {len(after)} compiled"]
    out = []
    for old, new in zip(before, after):
        (old_artifact, old_variants, _), (new_artifact, new_variants, _) = loads(old), loads(new)
        fields = [
            f.name
            for f in dataclasses.fields(old_artifact)
            if getattr(old_artifact, f.name) != getattr(new_artifact, f.name)
        ]
        fields += ["the proofs' variants"] if old_variants != new_variants else []
        if fields or old != new:
            out.append(f"{new_artifact.name}: {', '.join(fields) or 'the text'}")
    return out


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: os.path.relpath(p, ROOT))
def test_the_analysis_of_the_stored_artefacts_is_the_workers_own(source, compiled):
    result = compiled[source][0]
    replayed = stored_result(source)
    assert [bare(k) for k in replayed.kernels] == [bare(k) for k in result.kernels]
