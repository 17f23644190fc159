"""Imported once by the forkserver so every forked worker starts with tilelang already loaded."""

import tilelang  # noqa: F401  (must come before tvm)
import tvm  # noqa: F401

from tl_inspect.inspector import accesses, convert, hooks, linemap, lowering, rewrites, worker  # noqa: F401
