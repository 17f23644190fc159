"""tl-inspect: the inspection and vectorization linter for TileLang GPU kernels."""

from tl_inspect._version import __version__

__all__ = ["Kernel", "Report", "__version__", "inspect"]


def __getattr__(name: str):
    # the API is loaded on first use: the command line and every worker start without it (and its imports)
    if name in ("Kernel", "Report", "inspect"):
        from tl_inspect import api

        return getattr(api, name)
    raise AttributeError(f"module 'tl_inspect' has no attribute {name!r}")
