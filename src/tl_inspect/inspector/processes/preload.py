"""Imported once by the forkserver so every forked worker starts with tilelang already loaded."""

import tilelang  # noqa: F401  (must come before tvm)
import tvm  # noqa: F401

from tl_inspect.inspector.lowering import accesses
from tl_inspect.inspector.lowering import convert
from tl_inspect.inspector.lowering import hooks
from tl_inspect.inspector.lowering import linemap
from tl_inspect.inspector.lowering import compile as lowering
from tl_inspect.inspector.rewrites import primfunc as rewrites
from tl_inspect.inspector.processes import worker  # noqa: F401
