"""Explain tilelang's "no available layout found": the one-line InternalError that `tl.LayoutInference`
raises, without a location, when it cannot spread a fragment or a `T.Parallel` loop over the block's
threads (rms_norm over rows of N=4095 with 256 threads).

The frontend PrimFunc says which `T.Parallel` nests and fragments have a size the thread count does not
divide; the nearest size that does is then proven by lowering the kernel again with that constant
padded (as proofs do), so the shape we suggest is one that compiles.

Runs inside the worker only (it needs tilelang).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tilelang import tvm  # noqa: F401  (tilelang first: it puts its TVM on the path)
from tilelang.ir import get_buffer_span
from tvm import tirx

from tl_inspect.inspector.rewrites.primfunc import line_of, pad_constant

# shapes lowered again to find one that compiles: each costs a lowering
MAX_TRIES = 3


@dataclass(frozen=True)
class Misfit:
    what: str  # "T.Parallel(1, 4095)" or "fragment x[1, 4095]"
    line: int | None
    size: int  # iterations or elements


@dataclass(frozen=True)
class Explanation:
    summary: str  # one line, for the kernel's error
    detail: str  # several lines, for the full terminal output and the HTML error box
    line: int | None  # the T.Parallel nest that does not fit


def explain_no_layout(func, case: dict, lowers) -> Explanation | None:
    """`lowers(func) -> bool` lowers a variant; None when the kernel has no nest or fragment that misfits."""
    threads = _threads(func)
    if not threads:
        return None
    loops = [
        (extents, line, body)
        for extents, line, body in _parallel_nests(func)
        if math.prod(extents) % threads and math.prod(extents) > threads
    ]
    if not loops:
        return None
    extents, line, body = loops[0]
    fragments = _fragments(func)
    misfits = [Misfit(f"T.Parallel({', '.join(map(str, e))})", ln, math.prod(e)) for e, ln, _ in loops]
    misfits += [
        Misfit(f"fragment {name}[{', '.join(map(str, shape))}]", ln, math.prod(shape))
        for name, (shape, ln) in fragments.items()
        if math.prod(shape) % threads and math.prod(shape) > threads
    ]
    used = [name for name in _buffers_in(body) if name in fragments and math.prod(fragments[name][0]) % threads]
    # the innermost extent is the row length users choose; the outer ones are tile sizes
    extent = extents[-1]
    step = threads // math.gcd(threads, math.prod(extents[:-1]))
    down, up = extent // step * step, -(-extent // step) * step
    tried, fits = [], None
    for candidate in sorted({c for c in (up, down, up + step) if c > 0}, key=lambda c: (abs(c - extent), -c)):
        if len(tried) == MAX_TRIES:
            break
        tried.append(candidate)
        if lowers(pad_constant(func, extent, candidate)):
            fits = candidate
            break
    # the argument that set the size, when exactly one case argument has its value
    names = [name for name, value in case.items() if isinstance(value, int) and value == extent]
    shown = names[0] if len(names) == 1 else str(extent)

    def change(value: int) -> str:
        return f"{shown}={value}" if len(names) == 1 else f"{extent} -> {value}"

    subject = (
        f"fragment{'s' if len(used) > 1 else ''} "
        + ", ".join(f"{n}[{', '.join(map(str, fragments[n][0]))}]" for n in used)
        if used
        else f"T.Parallel({', '.join(map(str, extents))})"
    )
    where = f"T.Parallel at line {line}" if line else "a T.Parallel loop"
    verdict = (
        f"{change(fits)} compiles" if fits else f"no nearby shape compiled either (tried {', '.join(map(str, tried))})"
    )
    summary = f"no layout for {subject} over {threads} threads ({where}); {verdict}"
    size = math.prod(extents)
    lines = [
        (
            f"tl.LayoutInference found no layout for {size} iterations over {threads} threads: "
            f"{size} = {size // threads} x {threads} + {size % threads}, so the threads cannot share them evenly."
        ),
        f"Sizes that {threads} threads do not divide:",
        *(f"  line {m.line or '?'}: {m.what}  ({m.size})" for m in misfits),
    ]
    if fits:
        lines.append(f"Proof: rebuilt with {extent} -> {fits} (a multiple of {step}), the kernel compiles.")
        lines.append(
            f"Fix: make {shown} a multiple of {step} ({extent} -> {fits}) and mask the padding "
            f"(a bounds check in the loop or a padded buffer)."
        )
    else:
        lines.append(
            f"Rebuilt with {', '.join(map(str, tried))} in place of {extent}, it still found no layout: "
            f"another size decides it."
        )
    return Explanation(summary, "\n".join(lines), line)


def _threads(func) -> int:
    found = []

    def visit(node):
        if isinstance(node, tirx.SBlock) and "tl.launch_threads" in node.annotations:
            found.append(math.prod(int(t) for t in node.annotations["tl.launch_threads"]))

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return found[0] if found else 0


def _parallel_nests(func) -> list:
    """(constant extents, line, innermost body) of each outermost `T.Parallel` nest, in program order."""
    nests = []

    def walk(stmt):
        if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
            extents, inner = [], stmt
            while isinstance(inner, tirx.For) and inner.kind == tirx.ForKind.PARALLEL:
                if not isinstance(inner.extent, tirx.IntImm):
                    return
                extents.append(int(inner.extent.value))
                inner = inner.body
            nests.append((tuple(extents), line_of(stmt), inner))
            return
        for child in _children(stmt):
            walk(child)

    walk(func.body)
    return nests


def _children(stmt) -> list:
    if isinstance(stmt, tirx.SeqStmt):
        return list(stmt.seq)
    if isinstance(stmt, tirx.SBlockRealize):
        return [stmt.block]
    return [
        inner
        for inner in (getattr(stmt, "body", None), getattr(stmt, "then_case", None), getattr(stmt, "else_case", None))
        if isinstance(inner, tirx.Stmt)
    ]


def _fragments(func) -> dict:
    """name -> (shape, line) of each fragment with a constant shape."""
    found = {}

    def visit(node):
        if isinstance(node, tirx.SBlock):
            for buf in node.alloc_buffers:
                if buf.scope() == "local.fragment" and all(isinstance(d, tirx.IntImm) for d in buf.shape):
                    span = get_buffer_span(buf)
                    found[buf.name] = (tuple(int(d) for d in buf.shape), int(span.line) if span else None)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return found


def _buffers_in(stmt) -> list:
    """Buffers a statement stores to, then those it loads, each once."""
    stored, loaded = [], []

    def visit(node):
        if isinstance(node, tirx.BufferStore):
            stored.append(node.buffer.name)
        elif isinstance(node, tirx.BufferLoad):
            loaded.append(node.buffer.name)

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return list(dict.fromkeys(stored + loaded))
