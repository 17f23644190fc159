"""`--format github`: GitHub Actions workflow commands, one annotation per line.

`::error file=F,line=L,endLine=E,col=C,title=T::message`, the title `CODE slug in KERNEL` so that the
cases of one factory annotating one line are told apart; the encoding is the runner's own (actions/
toolkit `command.ts`): `%`, CR and LF in the message, and also `:` and `,` in property values."""

from __future__ import annotations

from typing import TextIO

from tl_inspect.inspector.processes.errors import printable
from tl_inspect.model import RunResult
from tl_inspect.reports.common import file_groups, relative_path, repository_root, run_summary
from tl_inspect.reports.phrases import headline
from tl_inspect.reports.registry import reporter

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(command: str, message: str, **properties) -> str:
    # control and bidi characters in names and messages are written as escapes: a CI log is a terminal too
    props = ",".join(
        f"{key}={escape_property(printable(str(value)))}" for key, value in properties.items() if value is not None
    )
    shown = "\n".join(printable(line) for line in message.split("\n"))  # its own line breaks are kept
    return f"::{command} {props}::{escape_data(shown)}"


@reporter("github")
def write_github(run: RunResult, out: TextIO) -> None:
    root = repository_root()

    def path(p: str) -> str:
        # annotations attach to repository paths; a file outside the checkout keeps its absolute path
        return relative_path(p, root) or p

    for file, reports in file_groups(run):
        if file.error:
            out.write(
                annotation(
                    "error",
                    file.error,
                    file=path(file.path),
                    line=file.error_line or 1,
                    title="tl-inspect: could not import the file",
                )
                + "\n"
            )
        for report in reports:
            k = report.kernel
            if k.status != "ok":
                out.write(
                    annotation(
                        "error",
                        k.error or "unknown error",
                        file=path(k.file),
                        line=k.error_line or k.line or 1,
                        title=f"tl-inspect: kernel {k.name} could not be compiled",
                    )
                    + "\n"
                )
            for f in report.findings:
                out.write(
                    annotation(
                        COMMAND.get(f.severity, "warning"),
                        f"{headline(f)}\nfix: {f.fix}",
                        file=path(f.file),
                        line=f.line,
                        endLine=f.end_line or f.line,
                        col=f.col,
                        title=f"{f.rule} {f.slug} in {f.kernel}",
                    )
                    + "\n"
                )
    summary = run_summary(run)
    for file, line in summary.needing_cases:
        out.write(
            annotation(
                "notice",
                f"no call of its factories could be inferred; add {line}",
                file=path(file),
                line=1,
                title="tl-inspect: factories without a case",
            )
            + "\n"
        )
    out.write(annotation("notice", f"Files: {summary.phrase()}", title="tl-inspect summary") + "\n")
