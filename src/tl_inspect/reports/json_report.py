"""`--format json` (the contract's schema 1) and `--format json-lines` (one finding per line)."""

from __future__ import annotations

import json
from typing import TextIO

from tl_inspect.gpu import cost_table
from tl_inspect.model import RunResult
from tl_inspect.reports.common import cases_line, file_groups, run_summary
from tl_inspect.reports.registry import reporter

SCHEMA_VERSION = 1
MODULE_ENTRY = "<module>"


def kernel_entries(run: RunResult) -> list[dict]:
    """Kernels in the contract's shape; a file that failed before defining any kernel appears as one
    `<module>` entry with status "error", so every failure is visible where consumers look."""
    entries = []
    for file, reports in file_groups(run):
        if file.error:
            entries.append(
                {
                    "name": MODULE_ENTRY,
                    "file": file.path,
                    "line": None,
                    "status": "error",
                    "error": file.error,
                    "error_line": file.error_line,
                    "findings": [],
                }
            )
        for report in reports:
            k = report.kernel
            entries.append(
                {
                    "name": k.name,
                    "file": k.file,
                    "line": k.line,
                    "status": k.status,
                    "error": k.error,
                    "error_line": k.error_line,
                    "findings": [f.as_dict() for f in report.findings],
                    "discovered_as": k.discovered_as,
                    "vector_accesses": k.access_summary(),
                    "accesses": [a.as_dict() for a in k.accesses],
                    "shared_accesses": [a.as_dict() for a in k.shared_accesses],
                    "ledger": k.ledger.as_dict() if k.ledger else None,
                    "estimate": k.estimate.as_dict() if k.estimate else None,
                    **(
                        {"measured": k.timing.as_dict(k.estimate)}
                        if k.timing
                        else {"unmeasured": k.untimed}
                        if k.untimed
                        else {}
                    ),
                    **({"ptxas": k.ptxas} if k.ptxas is not None else {}),
                }
            )
    return entries


def as_document(run: RunResult) -> dict:
    return {
        "tool": "tl-inspect",
        "version": run.version,
        "schema": SCHEMA_VERSION,
        "arch": run.arch,
        "cost_table": cost_table.of(run.cost_table).as_dict(),
        "kernels": kernel_entries(run),
        "files": [
            {
                "path": f.path,
                "error": f.error,
                "notes": list(f.notes),
                "cached": f.cached,
                "needs_cases": cases_line(f.needs_cases) if f.needs_cases else None,
            }
            for f in run.files
        ],
        "summary": run_summary(run).as_dict(),
    }


@reporter("json")
def write_json(run: RunResult, out: TextIO) -> None:
    json.dump(as_document(run), out, indent=2)
    out.write("\n")


@reporter("json-lines")
def write_json_lines(run: RunResult, out: TextIO) -> None:
    """One finding per line, and one `{"kind": "error", ...}` line per file or kernel not inspected."""
    for entry in kernel_entries(run):
        if entry["status"] != "ok":
            out.write(
                json.dumps(
                    {
                        "kind": "error",
                        "file": entry["file"],
                        "kernel": entry["name"],
                        "line": entry["error_line"] or entry["line"],
                        "error": entry["error"],
                    }
                )
                + "\n"
            )
    for finding in run.findings:
        out.write(json.dumps(finding.as_dict()) + "\n")
    out.write(json.dumps({"kind": "summary", **run_summary(run).as_dict()}) + "\n")
