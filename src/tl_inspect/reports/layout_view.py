"""The HTML page's view of a kernel's layouts: each layout's maps, and the thread that owns each
element drawn as coloured cells."""

from __future__ import annotations

from dataclasses import dataclass

from tl_inspect.model import Layout

GRID_WRAP = 64  # a long 1-D fragment is drawn as rows of this many elements
GRID_MAX_WIDTH = 512
GRID_MAX_HEIGHT = 384
GOLDEN_ANGLE = 137.508  # successive threads get far-apart hues


@dataclass(frozen=True)
class GridView:
    width: int
    height: int
    rows: int
    cols: int
    paths: tuple  # (thread, colour, svg path data): one path per thread keeps a 64x64 grid small
    caption: str


@dataclass(frozen=True)
class LayoutView:
    kind: str
    name: str
    scope: str
    line: int | None
    layout_type: str
    input_shape: str
    output_shape: str
    thread: str
    index: str
    replicate: int
    thread_size: int
    grid: GridView | None


def _shape(shape) -> str:
    return " × ".join(str(n) for n in shape) if shape else "scalar"


def layout_view(layout: Layout) -> LayoutView:
    return LayoutView(
        kind=layout.kind, name=layout.name, scope=layout.scope, line=layout.line,
        layout_type=layout.layout_type, input_shape=_shape(layout.input_shape),
        output_shape=_shape(layout.output_shape), thread=layout.thread, index=", ".join(layout.index),
        replicate=layout.replicate, thread_size=layout.thread_size, grid=thread_grid_view(layout),
    )


def thread_colour(thread: int) -> str:
    return f"hsl({round(thread * GOLDEN_ANGLE) % 360}, 65%, 62%)"


def thread_grid_view(layout: Layout) -> GridView | None:
    """The thread that owns each element, as coloured cells; a long 1-D fragment wraps into rows."""
    grid = [list(row) for row in layout.thread_grid or () if row]
    if not grid:
        return None
    caption = f"{_shape(layout.input_shape)} elements, coloured by owning thread"
    if len(grid) == 1 and len(grid[0]) > GRID_WRAP:
        flat = grid[0]
        grid = [flat[i:i + GRID_WRAP] for i in range(0, len(flat), GRID_WRAP)]
        caption += f"; 1-D, drawn {GRID_WRAP} elements per row"
    cols = max(len(row) for row in grid)
    cell = max(3, min(16, GRID_MAX_WIDTH // cols, GRID_MAX_HEIGHT // len(grid)))
    cells: dict[int, list[str]] = {}
    for y, row in enumerate(grid):
        for x, thread in enumerate(row):
            cells.setdefault(int(thread), []).append(f"M{x * cell} {y * cell}h{cell}v{cell}h-{cell}z")
    paths = tuple((thread, thread_colour(thread), "".join(parts)) for thread, parts in sorted(cells.items()))
    return GridView(width=cols * cell, height=len(grid) * cell, rows=len(grid), cols=cols,
                    paths=paths, caption=caption)
