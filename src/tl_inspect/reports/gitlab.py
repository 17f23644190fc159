"""`--format gitlab`: GitLab Code Quality, a JSON array of issues (`artifacts: reports: codequality:`).

Each finding is one issue with GitLab's required fields: `description`, `check_name`, `fingerprint`,
`severity` and `location.path` / `location.lines.begin`, the path relative to the repository. The
fingerprint is the baseline's (statement text, not line number), so GitLab's merge-request widget
tracks a finding across edits above it. Files or kernels that could not be inspected, and factories
left without a case, are issues too: the widget is the only place a merge request shows them."""

from __future__ import annotations

import hashlib
import json
from typing import TextIO

from tl_inspect.files.sources import SourceFiles
from tl_inspect.lint.baseline import Fingerprints
from tl_inspect.model import RunResult
from tl_inspect.reports.common import file_groups, one_line, relative_path, repository_root, run_summary
from tl_inspect.reports.phrases import headline
from tl_inspect.reports.registry import reporter

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}
NOT_INSPECTED = "tl-inspect/not-inspected"
NO_CASE = "tl-inspect/factory-without-case"


def _issue(
    check: str, description: str, severity: str, path: str, line: int, end_line: int | None, fingerprint: str
) -> dict:
    return {
        "type": "issue",
        "check_name": check,
        "description": description,
        "severity": severity,
        "categories": ["Performance"] if check.startswith("TLV") else ["Bug Risk"],
        "fingerprint": fingerprint,
        "location": {"path": path, "lines": {"begin": max(line, 1), "end": max(end_line or line, line, 1)}},
    }


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def as_code_quality(run: RunResult, root: str | None = None) -> list[dict]:
    root = root or repository_root()

    def path(p: str) -> str:
        return relative_path(p, root) or p

    groups = file_groups(run)
    digests = iter(
        Fingerprints(root, SourceFiles()).numbered([f for _, reports in groups for r in reports for f in r.findings])
    )
    issues = []
    for file, reports in groups:
        if file.error:
            issues.append(
                _issue(
                    NOT_INSPECTED,
                    f"could not import the file: {one_line(file.error)}",
                    "critical",
                    path(file.path),
                    file.error_line or 1,
                    None,
                    _digest(NOT_INSPECTED, path(file.path)),
                )
            )
        for report in reports:
            k = report.kernel
            if k.status != "ok":
                issues.append(
                    _issue(
                        NOT_INSPECTED,
                        f"kernel {k.name} could not be compiled: {one_line(k.error or 'unknown error')}",
                        "critical",
                        path(k.file),
                        k.error_line or k.line or 1,
                        None,
                        _digest(NOT_INSPECTED, path(k.file), k.name),
                    )
                )
            for f in report.findings:
                issues.append(
                    _issue(
                        f.rule,
                        f"{f.rule} [{f.slug}] {f.kernel or k.name}: {one_line(headline(f))}",
                        SEVERITY.get(f.severity, "minor"),
                        path(f.file),
                        f.line,
                        f.end_line,
                        _digest(next(digests)),
                    )
                )
    for file, line in run_summary(run).needing_cases:
        issues.append(
            _issue(
                NO_CASE,
                f"no call of its factories could be inferred, so they were not inspected; add {line}",
                "minor",
                path(file),
                1,
                None,
                _digest(NO_CASE, path(file)),
            )
        )
    return issues


@reporter("gitlab")
def write_gitlab(run: RunResult, out: TextIO) -> None:
    json.dump(as_code_quality(run), out, indent=2)
    out.write("\n")
