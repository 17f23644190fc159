"""Shared helpers: every test that needs compiled kernels goes through the real inspector."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tl_inspect.inspector import DEFAULT_TIMEOUT_SECONDS, Job, inspect_jobs
from tl_inspect.model import FileResult

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")


def inspect_files(paths: list[str], timeout: float = DEFAULT_TIMEOUT_SECONDS, **job_options) -> dict[str, FileResult]:
    """Inspect files in one pooled run; results keyed by the path as given."""
    results = inspect_jobs([Job(path=p, **job_options) for p in paths], timeout=timeout)
    return {r.path: r for r in results}


def run_cli(*args, cwd=ROOT, env=None, timeout=300) -> subprocess.CompletedProcess:
    """`tl-inspect ARGS...` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "tl_inspect", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


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


def import_api_kernels(module: str):
    """tests/api/<module>.py, imported in the test process: the caller of the API has imported tilelang
    and built its kernels itself."""
    import importlib

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        return importlib.import_module(f"api.{module}")
    finally:
        sys.path.remove(os.path.join(ROOT, "tests"))
