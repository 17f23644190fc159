"""`--format full`: findings and a per-kernel summary for a person at a terminal (rich)."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.markup import escape

from tl_inspect.model import RunResult
from tl_inspect.reports import reporter

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


@reporter("full")
def write_full(run: RunResult, out: TextIO) -> None:
    console = Console(file=out, highlight=False, soft_wrap=True)
    for file in run.files:
        if file.error:
            console.print(f"[bold red]error[/] {escape(file.path)}: {escape(file.error)}")
        for note in file.notes:
            console.print(f"[dim]note[/] {escape(file.path)}: {escape(note)}")
    for report in run.reports:
        k = report.kernel
        where = f"{k.file}:{k.line}" if k.line else k.file
        if k.status != "ok":
            console.print(f"[bold red]error[/] {escape(where)} kernel {escape(k.name)}: {escape(k.error or '')}")
            continue
        s = k.access_summary()
        console.print(f"[bold]{escape(k.name)}[/] {escape(where)}  global accesses: "
                      f"[green]{s['128-bit']} 128-bit[/], [yellow]{s['narrow']} narrower[/], "
                      f"[red]{s['scalar']} scalar[/]")
        for f in report.findings:
            style = _SEVERITY_STYLE.get(f.severity, "")
            console.print(f"  {escape(f.file)}:{f.line}: [{style}]{f.rule}[/] [{escape(f.slug)}] "
                          f"{escape(f.message)}")
            console.print(f"    fix: {escape(f.fix)}")
    total = len(run.findings)
    console.print(f"{len(run.reports)} kernel(s), {total} finding(s)")
