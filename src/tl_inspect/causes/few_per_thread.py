from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase
from tl_inspect.model import Cause
from tl_inspect.wording import plural

# a tile operator's tile is its region and buffers, which no loop extent carries: its proof launches fewer
# threads over the same tile (a T.copy of 1024 elements staged by 256 threads: 1.16x against 128)
TILE_OPERATOR = "T.copy"


class FewPerThread(CauseKind):
    """one or two elements per thread"""

    name, chain_step = "few-per-thread", "per-thread"
    proved_by = (
        "the tile grown for the same threads and the grid shrunk as much, so each thread moves a full "
        "vector: through the factory's tile argument where one carries it, else the `T.Parallel` "
        "extent (or, with explicit thread indexing, a `T.vectorized` loop over each thread's elements); "
        "fewer threads for a `T.copy`; where no rebuild shows it, the launch's blocks and the bytes its "
        "threads keep in flight"
    )
    same_function = True

    @classmethod
    def instance(cls, c: Cause) -> tuple:
        # loops over the same threads and width share one fix (the launch); explicit thread indexing
        # (no loop) is fixed statement by statement
        return c.threads, c.width, c.loop_line if not c.loop else None

    # the tile that gives each of the loop's threads a whole vector
    words = {"tile": lambda c: c.threads * c.width}

    @staticmethod
    def form(c: Cause) -> str:
        # no loop: explicit thread indexing hands each thread its element through the lane variable
        return "indexed" if not c.loop else ""

    because = Phrase(
        "{loop} over {threads} threads gives each thread {n_elements}, too few for {width}-element vectors",
        indexed=(
            "consecutive elements go to consecutive threads through `{lane_var}`, so each thread moves one element "
            "at a time"
        ),
    )
    fix = Phrase(
        "give each thread {width} contiguous elements: a tile of {tile} elements for {threads} threads, or fewer "
        "threads",
        indexed=(
            "give each thread {width} contiguous elements: index with {lane_var} * {width} + k in a "
            "T.vectorized({width}) loop"
        ),
    )
    chain_answer = Phrase("{n_elements} per thread over {threads} threads, less than {a_width} {width}-element vector")

    @classmethod
    def has_static_evidence(cls, c: Cause) -> bool:
        """One or two elements per thread: the launch's blocks and the bytes its threads keep in flight price
        it, whatever else holds the access back (a bounds check on a length no padding makes whole)."""
        return 0 < c.elements <= 2 and c.loop != TILE_OPERATOR

    @staticmethod
    def launch_facts(c: Cause, access, ledger) -> str:
        return (
            f"{plural(c.elements, 'element')} of {access.bits // 8} B per thread over {ledger.blocks:,} blocks of "
            f"{ledger.threads_launched} threads"
        )

    @staticmethod
    def block_scale(c: Cause) -> float:
        return 1.0 if c.loop == TILE_OPERATOR else growth(c) or 1.0

    @staticmethod
    def variant(func, c: Cause):
        from tl_inspect.inspector.rewrites.grow_tile import grow_parallel, vectorize_threads
        from tl_inspect.inspector.rewrites.primfunc import launch_threads

        k = growth(c)
        if k is None:
            return None
        if c.loop == TILE_OPERATOR:
            threads = int(c.threads // k)
            if threads * k != c.threads:
                return None
            return launch_threads(func, threads), (
                f"threads={threads} instead of {c.threads}, so each thread moves {c.width} contiguous elements"
            )
        if c.loop:
            grown = grow_parallel(func, c.loop_line, k)
            return grown and (grown.func, tile_change(grown))
        grown = vectorize_threads(func, c.loop_line, c.lane_var, k)
        return grown and (
            grown.func,
            f"`{c.lane_var}` read as `{c.lane_var} * {grown.factor} + v` in a "
            f"T.vectorized({grown.factor}) loop over `v` and the block index as "
            f"`bx * {grown.factor}` over {grown.grid()}, so each thread moves "
            f"{grown.factor} contiguous elements",
        )

    @staticmethod
    def autofix(c: Cause, source, finding):
        """The literal the proof changed, in the user's file: the tile (the innermost `T.Parallel` extent)
        grown for the same threads, or for a `T.copy` the `threads=` of its `T.Kernel` made fewer. Unsafe:
        it changes the launch shape, so the occupancy, and what a caller passing that argument gets. None
        where the tile and the threads are one literal (growing it launches more threads, not what the
        proof compiled) or no single literal writes the value."""
        import libcst as cst

        from tl_inspect.files.cst import call_name
        from tl_inspect.fixes import fix_from
        from tl_inspect.model import UNSAFE

        k = growth(c)
        block = source.kernel_block(c.loop_line) if c.loop and c.loop_line else None
        if k is None or block is None:
            return None
        given = next((a.value for a in block.items[0].item.args if a.keyword and a.keyword.value == "threads"), None)
        threads = source.integer_literal(given, finding.kernel) if given is not None else None
        if c.loop == TILE_OPERATOR:
            if threads is None or threads.evaluated_value != c.threads or c.threads % k:
                return None
            return fix_from(UNSAFE, source.text, source.replaced(threads, cst.Integer(str(c.threads // k))))
        loop = next(
            (
                n.iter
                for n in source.nodes(cst.For, c.loop_line)
                if isinstance(n.iter, cst.Call) and call_name(n.iter) == "Parallel" and n.iter.args
            ),
            None,
        )
        tile = source.integer_literal(loop.args[-1].value, finding.kernel) if loop is not None else None
        if tile is None or tile is threads:
            return None
        return fix_from(UNSAFE, source.text, source.replaced(tile, cst.Integer(str(tile.evaluated_value * k))))

    @staticmethod
    def realign(c: Cause, arguments: dict) -> dict:
        """The argument that sets each thread's share, made k times larger: the innermost `T.Parallel` extent
        when it is that share (`T.Parallel(threads, npt)` with npt=1: the one argument of that value), else
        the tile (an argument equal to the loop's elements)."""
        k, tile = growth(c), c.elements * c.threads
        if k is None or c.loop in ("", TILE_OPERATOR):
            return {}
        integers = {name: given for name, given in arguments.items() if type(given) is int}
        share = [name for name, given in integers.items() if given == c.elements]
        if _innermost_extent(c.loop) == c.elements and len(share) == 1:
            return {share[0]: integers[share[0]] * k}
        return next(({name: given * k} for name, given in integers.items() if given == tile), {})

    @staticmethod
    def recalled(c: Cause, before, after) -> str | None:
        from tl_inspect.inspector.rewrites.grow_tile import regrown

        grown = regrown(before, after, c.loop_line, growth(c))
        return tile_change(grown) if grown else None


def _innermost_extent(loop: str) -> int | None:
    """The last extent of a loop as written, "T.Parallel(256, 1)" -> 1; None where it is not a literal."""
    extents = loop.partition("(")[2].rstrip(")").split(",")
    last = extents[-1].strip() if extents else ""
    return int(last) if last.isdigit() else None


def growth(c: Cause) -> int | None:
    """How many times the tile must grow for each thread to move a whole vector, if a whole number."""
    if not c.elements or c.width <= c.elements:
        return None
    k = c.width / c.elements
    return int(k) if k == int(k) else None


def tile_change(grown) -> str:
    return (
        f"a tile of {grown.elements} elements for the same {grown.threads} threads over {grown.grid()}, so each "
        f"thread moves {grown.elements // grown.threads} contiguous elements"
    )
