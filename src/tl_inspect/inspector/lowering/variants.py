"""A kernel rebuilt without one or more causes: each cause's own rewrite (`tl_inspect.causes`), applied to
the frontend PrimFunc in turn. Runs inside the worker only (it needs tilelang)."""

from __future__ import annotations

from tl_inspect.causes import kind_of
from tl_inspect.inspector.rewrites.contiguous import contiguous_index
from tl_inspect.model import Cause


def variant_without(func, causes: tuple):
    """The kernel with every one of `causes` removed, and the changes joined in the user's terms."""
    changes = []
    for cause in causes:
        built = variant(func, cause)
        if built is None:
            return None
        func, change = built
        changes.append(change)
    return func, " and ".join(changes)


def variant(func, cause: Cause):
    """(rebuilt PrimFunc, the change in the user's terms), or None when no rewrite removes this cause.
    An index no rewrite of its own fixes (a permutation, a reversed walk, interleaved pairs, a run-time
    offset) is proven by reading the lane-contiguous index instead."""
    kind = kind_of(cause)
    built = kind.variant(func, cause)
    if built is None and kind.chain_step == "index":
        return contiguous_index(func, cause, whole_loop=kind.loop_pattern)
    return built
