from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause
from tl_inspect.wording import article, plural


class FewPerThread(CauseKind):
    """one or two elements per thread"""

    name, chain_step = "few-per-thread", "per-thread"
    proved_by = "fewer threads launched, so each moves a full vector"

    @classmethod
    def instance(cls, c: Cause) -> tuple:
        # loops over the same threads and width share one fix (the launch); explicit thread indexing
        # (no loop) is fixed statement by statement
        return c.threads, c.width, c.loop_line if not c.loop else None

    @staticmethod
    def because(c: Cause) -> str:
        if not c.loop:
            return (f"consecutive elements go to consecutive threads through `{c.lane_var}`, so each thread moves "
                    f"one element at a time")
        return (f"{c.loop} over {c.threads} threads gives each thread {plural(c.elements, 'element')}, too few for "
                f"{c.width}-element vectors")

    @staticmethod
    def fix(c: Cause) -> str:
        if not c.loop:
            return (f"give each thread {c.width} contiguous elements: index with {c.lane_var} * {c.width} + k in a "
                    f"T.vectorized({c.width}) loop")
        return (f"give each thread {c.width} contiguous elements: a tile of {c.threads * c.width} elements for "
                f"{c.threads} threads, or fewer threads")

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return (f"{plural(c.elements, 'element')} per thread over {c.threads} threads, less than "
                f"{article(c.width)} {c.width}-element vector")

    @staticmethod
    def change(c: Cause) -> str | None:
        threads = _threads(c)
        if threads is None:
            return None
        return f"threads={threads} instead of {c.threads}, so each thread moves {c.width} contiguous elements"

    @staticmethod
    def rewrite(func, c: Cause):
        from tl_inspect.inspector.rewrites import launch_threads

        return launch_threads(func, _threads(c))


def _threads(c: Cause) -> int | None:
    """The thread count that gives each thread a whole vector of the loop's elements, if there is one."""
    if not c.loop or not c.elements:
        return None
    total = c.elements * c.threads
    threads = int(total // c.width)
    return threads if threads >= 1 and threads * c.width == total else None
