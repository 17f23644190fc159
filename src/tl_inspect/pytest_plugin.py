"""The pytest plugin (entry point `pytest11`): a `--tl-inspect-arch` option and the `tl_inspect_report`
fixture, which inspects a kernel for that arch and keeps each file's report for the whole session.

Without a GPU of that arch, the arch is also tilelang's default target in the test process and kernels
compiled there skip nvcc, as a worker of the command line sets them: a kernel module that compiles at
import (`k = add(4095)`) imports under pytest as it does under `tl-inspect`."""

from __future__ import annotations

import os

import pytest

from tl_inspect.api import Report, inspect
from tl_inspect.gpu.arch import DEFAULT_ARCH
from tl_inspect.lint.settings import ConfigError, check_arch


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--tl-inspect-arch",
        default=DEFAULT_ARCH,
        help=f"CUDA arch tl-inspect compiles kernels for (default {DEFAULT_ARCH}); no GPU is needed",
    )


def pytest_configure(config) -> None:
    from tl_inspect.inspector.lowering import hooks

    try:
        arch = check_arch(config.getoption("--tl-inspect-arch"))
    except ConfigError as exc:
        raise pytest.UsageError(f"--tl-inspect-arch: {exc}") from None
    hooks.use_arch(arch)


@pytest.fixture(scope="session")
def tl_inspect_report(request):
    """tl_inspect_report(obj, **options) -> Report, as `tl_inspect.inspect(obj, arch=--tl-inspect-arch)`.

    A path is inspected once per session and option set (a worker compiles the whole file); a kernel
    object is compiled on each call, since the same object may be rebuilt between tests."""
    arch = request.config.getoption("--tl-inspect-arch")
    reports: dict = {}

    def report(obj, **options) -> Report:
        options.setdefault("arch", arch)
        if not isinstance(obj, (str, os.PathLike)):
            return inspect(obj, **options)
        key = (os.path.abspath(os.fspath(obj)), repr(sorted(options.items())))
        if key not in reports:
            reports[key] = inspect(obj, **options)
        return reports[key]

    return report
