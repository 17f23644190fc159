"""Assertions for kernel test suites: which access lost its width and why, instead of a search for
`uint4` in `get_kernel_source()` that silently stops matching.

    from tl_inspect.testing import assert_vectorized

    def test_add_is_vectorized():
        assert_vectorized(add.get_tir(N=4096), buffers=["A", "B", "C"])

Each assertion takes anything `tl_inspect.inspect` takes (a path, a PrimFunc, a compiled kernel), or a
`Report` or `Kernel` it returned; its failure message is the verdict or the finding itself.
"""

from __future__ import annotations

from tl_inspect.api import Kernel, Report, inspect
from tl_inspect.reports.verdict_text import access_text, finding_text
from tl_inspect.sources import SourceFiles

__all__ = ["assert_no_findings", "assert_vectorized"]


def assert_vectorized(kernel, min_bits: int = 128, buffers=None, *, arch: str = "sm_90") -> None:
    """Fail when a global access of `buffers` (a name or names; all when None) moves fewer than
    `min_bits` bits per instruction, unless it cannot be wider (verdict `inherent`: a broadcast, a
    gather, an atomic...)."""
    kernels = _compiled(kernel, arch=arch)
    names = [buffers] if isinstance(buffers, str) else buffers
    if names is not None:
        present = {a.buffer for k in kernels for a in k.accesses}
        missing = [name for name in names if name not in present]
        if missing:
            raise AssertionError(f"no global access of {', '.join(missing)} in "
                                 f"{', '.join(k.name for k in kernels)} (buffers accessed: "
                                 f"{', '.join(sorted(present)) or 'none'})")
    sources = SourceFiles()
    failures = [access_text(k.artifact, a, k.findings, sources)
                for k in kernels for a in k.narrow_accesses(min_bits, names)]
    if failures:
        raise AssertionError(f"{len(failures)} global access{'es' * (len(failures) > 1)} narrower than "
                             f"{min_bits} bits:\n" + "\n\n".join(failures))


def assert_no_findings(kernel, select=None, *, arch: str = "sm_90") -> None:
    """Fail when the rules `select` names (codes, prefixes or slugs; default: those on by default)
    report anything on the kernel."""
    kernels = _compiled(kernel, arch=arch, select=select)
    sources = SourceFiles()
    failures = [finding_text(k.artifact, f, sources) for k in kernels for f in k.findings]
    if failures:
        raise AssertionError(f"{len(failures)} finding{'s' * (len(failures) > 1)}:\n" + "\n\n".join(failures))


def _compiled(kernel, *, arch: str, select=None) -> list[Kernel]:
    """The kernels to check, each compiled without error (a kernel that failed to compile fails the
    assertion with its error)."""
    if select is not None and isinstance(kernel, (Kernel, Report)):
        raise TypeError("select applies when the assertion inspects the kernel: pass it to tl_inspect.inspect")
    if isinstance(kernel, Kernel):
        kernels = [kernel]
    elif isinstance(kernel, Report):
        kernels = list(kernel.kernels)
    else:
        kernels = list(inspect(kernel, arch=arch, select=select).kernels)
    errors = [f"{k.name}: {k.error}" for k in kernels if not k.ok]
    if errors or not kernels:
        raise AssertionError("could not inspect the kernel: " + ("; ".join(errors) or "no kernel found"))
    return kernels
