from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase
from tl_inspect.causes._walks import staged_change, written_name
from tl_inspect.model import SAFE, Cause


class SerialLoop(CauseKind):
    """a per-thread `T.serial` loop over contiguous elements"""

    name, chain_step, key = "serial-loop", "per-thread", ("lane_var",)
    proved_by = (
        "the loop written as `T.vectorized`; a loop that accumulates (`s += X[r, j]`) with its loads "
        "staged a vector at a time through a `T.vectorized` copy into a local"
    )
    same_function = True

    @staticmethod
    def form(c: Cause) -> str:
        return "accumulates" if c.accumulates else ""

    because = Phrase(
        "`{lane_var}` is a {loop} loop over contiguous elements, which is never vectorized",
        accumulates=(
            "`{lane_var}` is a {loop} loop that accumulates over contiguous elements, which tilelang keeps serial: "
            "one load per element"
        ),
    )
    fix = Phrase(
        "write the per-thread loop as T.vectorized({width})",
        accumulates=(
            "copy {width} elements at a time into a T.alloc_local with T.vectorized before accumulating them "
            "(chunk sums: 3.22x), or better spread the rows over the block's threads: T.copy them into a fragment "
            "and reduce them with T.reduce_* (bf16 rows of 64-512: 8.1x against a row per thread)"
        ),
    )
    chain_answer = Phrase("each thread walks its elements one at a time in a T.serial loop ({lane_var})")

    @staticmethod
    def change(c: Cause) -> str | None:
        if not c.lane_var:
            return None
        if c.accumulates:
            return staged_change(c.lane_var, c.width)
        return f"`{written_name(c.lane_var)}` written as T.vectorized"

    @staticmethod
    def rewrite(func, c: Cause):
        from tl_inspect.inspector.rewrites.primfunc import vectorize_loop
        from tl_inspect.inspector.rewrites.staging import stage_loads

        if c.accumulates:
            return stage_loads(func, c.lane_var, c.loop_line, c.width)
        return vectorize_loop(func, c.lane_var, c.loop_line)

    @staticmethod
    def autofix(c: Cause, source, finding):
        """`for v in T.serial(n)` written `for v in T.vectorized(n)`: the loop the proof vectorized."""
        import libcst as cst

        from tl_inspect.files.cst import call_name
        from tl_inspect.fixes import fix_from

        if c.accumulates or not c.lane_var:
            return None
        name = written_name(c.lane_var)
        for loop in source.enclosing(cst.For, finding.line):
            call = loop.iter
            if isinstance(loop.target, cst.Name) and loop.target.value == name:
                if not (
                    isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call_name(call) == "serial"
                ):
                    return None
                vectorized = call.with_changes(func=call.func.with_changes(attr=cst.Name("vectorized")))
                return fix_from(SAFE, source.text, source.replaced(call, vectorized))
        return None
