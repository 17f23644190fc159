"""Imported once by the forkserver so every forked worker starts with tilelang already loaded."""

import tilelang  # noqa: F401  (must come before tvm)
import tvm  # noqa: F401

import tl_inspect.inspector.lowering.accesses  # noqa: F401
import tl_inspect.inspector.lowering.compile  # noqa: F401
import tl_inspect.inspector.lowering.convert  # noqa: F401
import tl_inspect.inspector.lowering.hooks  # noqa: F401
import tl_inspect.inspector.lowering.layouts  # noqa: F401
import tl_inspect.inspector.lowering.linemap  # noqa: F401
import tl_inspect.inspector.lowering.variants  # noqa: F401
import tl_inspect.inspector.processes.worker  # noqa: F401
import tl_inspect.inspector.rewrites.primfunc  # noqa: F401
