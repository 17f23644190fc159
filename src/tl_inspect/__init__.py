"""tl-inspect: the inspection and vectorization linter for TileLang GPU kernels."""

__version__ = "0.1.0"

from tl_inspect.api import Kernel, Report, inspect  # noqa: E402 - the API reads __version__

__all__ = ["Kernel", "Report", "__version__", "inspect"]
