"""A progress bar on stderr while files compile, when stderr is a terminal and there is more than one."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from tl_inspect.model import FileResult


@contextmanager
def progress_bar(jobs: list) -> Iterator[Callable[[FileResult], None] | None]:
    """Yields the `on_done` callback for `inspect_jobs`, or None when nothing is to be shown.

    The bar is transient: it is gone before the report is printed, so output read by people and
    output piped to tools are the same."""
    from rich.console import Console

    console = Console(stderr=True)
    if len(jobs) < 2 or not console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("inspecting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files"),
        TextColumn("{task.fields[kernels]} kernels"),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.fields[last]}"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("inspect", total=len(jobs), kernels=0, last="")
        kernels = 0

        def on_done(result: FileResult) -> None:
            nonlocal kernels
            kernels += len(result.kernels)
            bar.update(task, advance=1, kernels=kernels, last=result.path)

        yield on_done
