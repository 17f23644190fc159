"""The HTML page's view of a kernel's layouts: each layout's maps, and the thread that owns each
element drawn as coloured cells.

Up to 127 owning threads, each thread gets its own hue. From 128 on, neighbouring hues can no longer be
told apart, so a fragment is drawn twice instead: a map of the whole fragment by warp (a hue per warp,
dark to light from lane 0 to lane 31, with a legend), and its top-left corner enlarged, each thread's
run of elements numbered with the thread and coloured by its lane."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from tl_inspect.model import Layout

GRID_WRAP = 64  # a long 1-D fragment is drawn as rows of this many elements
GRID_MAX_WIDTH = 512
GRID_MAX_HEIGHT = 384
GOLDEN_ANGLE = 137.508  # successive threads (lanes, warps) get far-apart hues
WARP = 32
SUMMARY_THREADS = 128  # from this many owning threads on, the fragment is drawn by warp
ZOOM_ROWS, ZOOM_COLS = 16, 32  # the enlarged corner of a fragment drawn by warp
LABEL_MIN_CELL = 12  # px: a thread's number is written into cells at least this large


@dataclass(frozen=True)
class Swatch:
    background: str  # a CSS colour or gradient
    label: str


@dataclass(frozen=True)
class GridView:
    width: int
    height: int
    rows: int
    cols: int
    paths: tuple  # (title or "", colour, svg path data): one path per thread keeps a 64x64 grid small
    caption: str
    legend: tuple = ()  # Swatch
    labels: tuple = ()  # (x, y, text): thread numbers, at the centre of each run of a thread
    font_size: int = 0


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
    corner: GridView | None = None  # the enlarged top-left corner, beside a fragment drawn by warp


def _shape(shape) -> str:
    return " × ".join(str(n) for n in shape) if shape else "scalar"


def layout_view(layout: Layout) -> LayoutView:
    grid, corner = thread_grid_views(layout)
    return LayoutView(
        kind=layout.kind,
        name=layout.name,
        scope=layout.scope,
        line=layout.line,
        layout_type=layout.layout_type,
        input_shape=_shape(layout.input_shape),
        output_shape=_shape(layout.output_shape),
        thread=layout.thread,
        index=", ".join(layout.index),
        replicate=layout.replicate,
        thread_size=layout.thread_size,
        grid=grid,
        corner=corner,
    )


def _hue(n: int) -> int:
    return round(n * GOLDEN_ANGLE) % 360


def thread_colour(thread: int) -> str:
    return f"hsl({_hue(thread)}, 65%, 62%)"


def warp_colour(thread: int) -> str:
    """The thread's warp's hue, darkest at lane 0 and lightest at lane 31, so the map also shows
    which way the lanes walk."""
    return f"hsl({_hue(thread // WARP)}, 60%, {30 + 1.5 * (thread % WARP):.1f}%)"


def _element(shape: tuple, y: int, x: int, wrap: int | None) -> str:
    """The element at cell (y, x) in the fragment's own indices; `wrap`: the row length a fragment of
    one row was re-drawn at (None: drawn as it is)."""
    if wrap is None:
        return f"[{y}, {x}]" if len(shape) == 2 else f"[{x}]"
    return f"[{y * wrap + x}]" if len(shape) == 1 else f"[0, {y * wrap + x}]"


def _draw(grid: list, colour, title, caption: str, *, legend: tuple = (), numbered: bool = False) -> GridView:
    """One path per thread, coloured `colour(thread)` and titled `title(thread, y, x)` at its first
    cell (no title where `title` is None); `numbered` writes each run's thread into it where the cells
    are large enough."""
    cols = max(len(row) for row in grid)
    cell = max(3, min(16, GRID_MAX_WIDTH // cols, GRID_MAX_HEIGHT // len(grid)))
    cells: dict[int, list[str]] = {}
    first: dict[int, tuple] = {}
    labels = []
    for y, row in enumerate(grid):
        x = 0
        # a thread's run of neighbouring elements in a row is one rectangle: most fragments give each
        # thread runs of 2 to 8, and the page shrinks by as much
        for thread, run in itertools.groupby(int(t) for t in row):
            width = len(list(run)) * cell
            cells.setdefault(thread, []).append(f"M{x} {y * cell}h{width}v{cell}h-{width}z")
            first.setdefault(thread, (y, x // cell))
            if numbered and cell >= LABEL_MIN_CELL:
                labels.append((x + width // 2, y * cell + cell // 2, str(thread)))
            x += width
    paths = tuple(
        (title(thread, *first[thread]) if title else "", colour(thread), "".join(parts))
        for thread, parts in sorted(cells.items())
    )
    return GridView(
        width=cols * cell,
        height=len(grid) * cell,
        rows=len(grid),
        cols=cols,
        paths=paths,
        caption=caption,
        legend=legend,
        labels=tuple(labels),
        font_size=min(10, cell - 4),
    )


def thread_grid_views(layout: Layout) -> tuple[GridView | None, GridView | None]:
    """The fragment's picture, and for one of 128 threads or more, its top-left corner enlarged."""
    grid = [list(row) for row in layout.thread_grid or () if row]
    if not grid:
        return None, None
    shape = layout.input_shape
    flat = grid[0] if len(grid) == 1 else None
    wrap = None
    caption = f"{_shape(shape)} elements"
    if flat and len(flat) > GRID_WRAP:
        wrap = GRID_WRAP
        grid = [flat[i : i + GRID_WRAP] for i in range(0, len(flat), GRID_WRAP)]
        caption += f" (1-D, drawn {GRID_WRAP} per row)"
    threads = sorted({int(t) for row in grid for t in row})
    if len(threads) < SUMMARY_THREADS:
        return _draw(grid, thread_colour, lambda t, y, x: f"thread {t}", f"{caption}, coloured by owning thread"), None

    warps = sorted({t // WARP for t in threads})
    legend = tuple(
        Swatch(f"hsl({_hue(w)}, 60%, 50%)", f"warp {w}: threads {w * WARP}–{w * WARP + WARP - 1}") for w in warps
    ) + (Swatch("linear-gradient(90deg, hsl(0, 0%, 30%), hsl(0, 0%, 76%))", "lane 0 → lane 31 within each warp"),)
    warp_map = _draw(
        grid,
        warp_colour,
        lambda t, y, x: f"thread {t} (warp {t // WARP}, lane {t % WARP}), first element {_element(shape, y, x, wrap)}",
        f"{caption} of {len(threads)} threads, coloured by warp",
        legend=legend,
    )
    # the corner, where each thread's run is wide enough to carry its number: a 1-D fragment is
    # re-wrapped ZOOM_COLS per row, so its first threads sit one under the other
    corner = (
        [flat[i : i + ZOOM_COLS] for i in range(0, min(len(flat), ZOOM_ROWS * ZOOM_COLS), ZOOM_COLS)]
        if flat
        else [row[:ZOOM_COLS] for row in grid[:ZOOM_ROWS]]
    )
    corner_part = (
        f"the first {sum(len(row) for row in corner)} elements, {ZOOM_COLS} per row,"
        if flat
        else f"the top-left {_shape((len(corner), len(corner[0])))} elements"
    )
    # untitled: the numbers are written in, and the map's titles give each thread's warp and lane
    zoomed = _draw(
        corner,
        lambda t: thread_colour(t % WARP),
        None,
        f"{corner_part} enlarged, each run of a thread numbered with it and coloured by its lane "
        f"(the same colour in every warp)",
        numbered=True,
    )
    return warp_map, zoomed
