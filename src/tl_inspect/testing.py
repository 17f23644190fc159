"""Assertions for kernel test suites: which access lost its width and why, instead of a search for
`uint4` in `get_kernel_source()` that silently stops matching.

    from tl_inspect.testing import assert_vectorized

    def test_add_is_vectorized():
        assert_vectorized(add.get_tir(N=4096), buffers=["A", "B", "C"])

Each assertion takes anything `tl_inspect.inspect` takes (a path, a PrimFunc, a compiled kernel), or a
`Report` or `Kernel` it returned; its failure message names the kernel or case and gives one line per
cause or finding.
"""

from __future__ import annotations

from tl_inspect.api import Kernel, Report, inspect
from tl_inspect.files.sources import SourceFiles
from tl_inspect.gpu.arch import DEFAULT_ARCH
from tl_inspect.reports.explain import by_change
from tl_inspect.reports.verdict_text import cause_line, finding_line, kernel_title
from tl_inspect.wording import plural

__all__ = ["assert_no_findings", "assert_vectorized"]


def assert_vectorized(kernel, min_bits: int = 128, buffers=None, *, arch: str = DEFAULT_ARCH, **factory_args) -> None:
    """Fail when a global access of `buffers` (a name or names; all when None) moves fewer than
    `min_bits` bits per instruction, unless it cannot be wider (verdict `inherent`: a broadcast, a
    gather, an atomic...). `factory_args` call a factory (`assert_vectorized(add, N=4095)`), whose case
    the message then names (`add[N=4095]`); it gives one line per cause."""
    __tracebackhide__ = True  # pytest shows the test's own line, not this library's frames
    kernels = _compiled(kernel, arch=arch, factory_args=factory_args)
    names = [buffers] if isinstance(buffers, str) else buffers
    if names is not None:
        present = {a.buffer for k in kernels for a in k.accesses}
        missing = [name for name in names if name not in present]
        if missing:
            raise AssertionError(
                f"no global access of {', '.join(missing)} in "
                f"{', '.join(k.name for k in kernels)} (buffers accessed: "
                f"{', '.join(sorted(present)) or 'none'})"
            )
    sources = SourceFiles()
    failures = []
    for k in kernels:
        narrow = k.narrow_accesses(min_bits, names)
        if narrow:
            causes = by_change(narrow)
            failures.append(
                "\n".join(
                    [
                        f"{plural(len(narrow), 'global access')} narrower than {min_bits} bits in "
                        f"{kernel_title(k.artifact)}, "
                        f"{plural(len(causes), 'cause')}:"
                    ]
                    + [cause_line(k.artifact, members, k.findings, sources) for members in causes]
                )
            )
    if failures:
        raise AssertionError("\n".join(failures + [_explain_hint(kernels)]))


def assert_no_findings(kernel, select=None, *, arch: str = DEFAULT_ARCH, **factory_args) -> None:
    """Fail when the rules `select` names (codes, prefixes or slugs; default: those on by default)
    report anything on the kernel (a factory is called with `factory_args`). The message names each
    kernel or case and gives one line per finding."""
    __tracebackhide__ = True
    kernels = _compiled(kernel, arch=arch, select=select, factory_args=factory_args)
    failures = [
        "\n".join(
            [f"{plural(len(k.findings), 'finding')} in {kernel_title(k.artifact)}:"]
            + [finding_line(f) for f in k.findings]
        )
        for k in kernels
        if k.findings
    ]
    if failures:
        raise AssertionError("\n".join(failures + [_explain_hint(kernels)]))


def _explain_hint(kernels: list[Kernel]) -> str:
    files = " ".join(dict.fromkeys(k.file for k in kernels))
    return f"`tl-inspect explain {files}` shows each one's evidence, cost and proof"


def _compiled(kernel, *, arch: str, select=None, factory_args: dict) -> list[Kernel]:
    """The kernels to check, each compiled without error (a kernel that failed to compile fails the
    assertion with its error)."""
    __tracebackhide__ = True
    if (select is not None or factory_args) and isinstance(kernel, (Kernel, Report)):
        raise TypeError(
            "select and factory arguments apply when the assertion inspects the kernel: pass them to tl_inspect.inspect"
        )
    if isinstance(kernel, Kernel):
        kernels = [kernel]
    elif isinstance(kernel, Report):
        kernels = list(kernel.kernels)
    else:
        kernels = list(inspect(kernel, arch=arch, select=select, **factory_args).kernels)
    errors = [f"{k.name}: {k.error}" for k in kernels if not k.ok]
    if errors or not kernels:
        raise AssertionError("could not inspect the kernel: " + ("; ".join(errors) or "no kernel found"))
    return kernels
