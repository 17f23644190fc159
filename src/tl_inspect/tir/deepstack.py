"""Run code that recurses once per level of a TIR expression on a stack that deep expressions cannot exhaust.

A sum of n terms is an expression n levels deep. tilelang's compiler, its printers, tl-inspect's IR
conversion and the rules and renderers all recurse on that depth; on the 8 MB main-thread stack and
Python's default limit of 1000 frames, a 500-term sum already fails (a 10 000-term one segfaults the
compiler). The worker compiles and the parent checks rules with the same stack and limit, so an
expression the worker could convert is one the parent can analyse.
"""

from __future__ import annotations

import sys
import threading

STACK_BYTES = 1 << 30
RECURSION_LIMIT = 200_000


def call_on_deep_stack(function, *args):
    """`function(*args)` on a fresh thread with a 1 GiB stack and a 200 000-frame recursion limit.

    Returns its result or raises its exception. Threads started later get the default stack again
    (each 1 GiB stack counts against the worker's address-space limit)."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            outcome["error"] = exc

    previous_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(RECURSION_LIMIT)
    threading.stack_size(STACK_BYTES)
    try:
        # a daemon, so that Ctrl-C in the waiting main thread ends the process
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
    finally:
        threading.stack_size(0)
    try:
        thread.join()
    finally:
        sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
