"""tl-inspect: the inspection and vectorization linter for TileLang GPU kernels."""

__version__ = "0.1.0"
