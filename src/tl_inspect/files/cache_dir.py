"""The folder tl-inspect keeps what outlives a run in: cached results and fitted cost tables."""

from __future__ import annotations

import os


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative path is ignored, never written below the current folder
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.abspath(os.environ.get("TL_INSPECT_CACHE_DIR") or os.path.join(base, "tl-inspect"))
