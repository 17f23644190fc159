"""Shared helpers of the three tiers: tests/analysis runs the analysis and the rules on stored artefacts
(`stored`) and imports no compiler; tests/compile compiles with the real inspector and tilelang, and checks
those artefacts against it; tests/e2e drives the command line, the API, the server, pre-commit and the
browser. They share one result cache a session, except the tests about the cache (`private_cache`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from stored_artefacts import stored_result

from tl_inspect.inspector import DEFAULT_TIMEOUT_SECONDS, Job, inspect_jobs
from tl_inspect.model import FileResult

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
ANALYSIS_TIER = os.path.join(ROOT, "tests", "analysis")
COMPILERS = ("tilelang", "tvm")


def inspect_files(paths: list[str], timeout: float = DEFAULT_TIMEOUT_SECONDS, **job_options) -> dict[str, FileResult]:
    """Inspect files in one pooled run; results keyed by the path as given."""
    results = inspect_jobs([Job(path=p, **job_options) for p in paths], timeout=timeout)
    return {r.path: r for r in results}


def run_cli(*args, cwd=ROOT, env=None, timeout=300) -> subprocess.CompletedProcess:
    """`tl-inspect ARGS...` in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "tl_inspect", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
    )


def kernel_named(result: FileResult, name: str):
    for kernel in result.kernels:
        if kernel.name == name:
            return kernel
    raise AssertionError(f"no kernel {name!r} in {result.path}: {[k.name for k in result.kernels]}")


@pytest.fixture(scope="session")
def inspected():
    """inspected(paths) -> {path: FileResult}, compiling each path once per test session."""
    cache: dict[str, FileResult] = {}

    def get(paths: list[str], **job_options) -> dict[str, FileResult]:
        key = lambda p: (p, tuple(sorted(job_options.items())))  # noqa: E731
        missing = [p for p in paths if key(p) not in cache]
        if missing:
            for path, result in inspect_files(missing, **job_options).items():
                cache[key(path)] = result
        return {p: cache[key(p)] for p in paths}

    return get


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory):
    """One result cache for the whole session, which subprocesses inherit: a file the command line, the API
    or the server inspects is compiled once, and nothing lands in the user's own cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TL_INSPECT_CACHE_DIR", str(tmp_path_factory.mktemp("tl-inspect-cache")))
        yield


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """An empty result cache of the test's own, tmp_path/"cache", for a test about the cache."""
    monkeypatch.setenv("TL_INSPECT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="session")
def stored():
    """stored(paths) -> {path: FileResult} of rule examples and fixture kernels, as `inspected` gives them,
    analysed from their stored artefacts without compiling."""
    cache: dict[str, FileResult] = {}

    def get(paths: list[str]) -> dict[str, FileResult]:
        for path in paths:
            if path not in cache:
                cache[path] = stored_result(path)
        return {p: cache[p] for p in paths}

    return get


def _compilers_loaded() -> list[str]:
    return [name for name in COMPILERS if name in sys.modules]


def _in_analysis_tier(path) -> bool:
    return os.path.commonpath([str(path), ANALYSIS_TIER]) == ANALYSIS_TIER


def pytest_cmdline_main(config):
    """A run of the analysis tier alone leaves out the tl-inspect pytest plugin, which imports tilelang at
    start-up to set its target: the tier needs no compiler, and is held to importing none."""
    paths = [os.path.join(config.invocation_params.dir, arg.split("::")[0]) for arg in config.args]
    if (
        paths
        and all(_in_analysis_tier(os.path.abspath(path)) for path in paths)
        and config.pluginmanager.has_plugin("tl_inspect")
    ):
        config.pluginmanager.unregister(name="tl_inspect")


def pytest_collection_finish(session):
    """The analysis tier runs on stored artefacts: collecting it alone must not have imported a compiler."""
    if session.items and all(_in_analysis_tier(item.path) for item in session.items) and _compilers_loaded():
        raise pytest.UsageError(f"tests/analysis imported {', '.join(_compilers_loaded())} while collecting")


@pytest.fixture(autouse=True)
def analysis_tier_imports_no_compiler(request):
    """Neither may a test of the analysis tier import one (where an earlier tier has not already)."""
    loaded = _compilers_loaded()
    yield
    if _in_analysis_tier(request.path) and not loaded:
        assert not _compilers_loaded(), f"{request.node.nodeid} imported {', '.join(_compilers_loaded())}"


def import_api_kernels(module: str):
    """tests/api/<module>.py, imported in the test process: the caller of the API has imported tilelang
    and built its kernels itself."""
    import importlib

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        return importlib.import_module(f"api.{module}")
    finally:
        sys.path.remove(os.path.join(ROOT, "tests"))
