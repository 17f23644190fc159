"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning.

One run: the rule table in `tool.driver.rules`, one result per finding with a repository-relative
location, and files or kernels that could not be inspected (errors) or whose factories had no case
(warnings) as tool execution notifications: they are not findings of a rule, and code scanning shows
them as the tool's own problems."""

from __future__ import annotations

import json
import pathlib
import urllib.parse
from typing import TextIO

from tl_inspect.files.sources import SourceFiles
from tl_inspect.gpu import cost_table
from tl_inspect.lint.baseline import Fingerprints
from tl_inspect.model import RunResult
from tl_inspect.reports.common import (
    file_groups,
    relative_path,
    repository_root,
    rule_table,
    run_summary,
)
from tl_inspect.reports.phrases import headline
from tl_inspect.reports.registry import reporter

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT = "tlInspectFinding/v1"


def _artifact_location(path: str, root: str) -> dict:
    relative = relative_path(path, root)
    if relative is not None:
        return {"uri": urllib.parse.quote(relative), "uriBaseId": SOURCE_ROOT}
    return {"uri": pathlib.Path(path).resolve().as_uri()}


def _rule_entry(rule) -> dict:
    # the first paragraph of prose: the docs open with a "What it does" heading, which says nothing alone
    body = "\n".join(line for line in rule.documentation.splitlines() if not line.lstrip().startswith("#"))
    paragraphs = [p for p in body.split("\n\n") if p.strip()]
    description = " ".join(paragraphs[0].split()) if paragraphs else rule.summary
    help_text = "\n\n".join(part for part in (rule.summary, rule.documentation, f"Fix: {rule.fix}") if part)
    return {
        "id": rule.code,
        "name": rule.slug,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": description},
        "help": {"text": help_text, "markdown": help_text},
        "defaultConfiguration": {"level": LEVEL.get(rule.severity, "warning")},
        "properties": {"tags": ["tilelang", "performance"]},
    }


def as_sarif(run: RunResult, root: str | None = None) -> dict:
    root = root or repository_root()
    rules = rule_table(run)
    rule_index = {rule.code: index for index, rule in enumerate(rules)}
    sources = SourceFiles()
    # the baseline's fingerprint (statement text, not line number), numbered when one statement has the
    # same finding several times
    groups = file_groups(run)
    digests = iter(Fingerprints(root, sources).numbered([f for _, rs in groups for r in rs for f in r.findings]))
    results = []
    notifications = []
    for file, reports in groups:
        if file.error:
            notifications.append(_notification(file.error, file.path, file.error_line or 1, root))
        for report in reports:
            k = report.kernel
            if k.status != "ok":
                notifications.append(
                    _notification(
                        f"kernel {k.name} could not be compiled: {k.error}", k.file, k.error_line or k.line or 1, root
                    )
                )
            for f in report.findings:
                results.append(_result(f, k, rule_index, next(digests), root))
    summary = run_summary(run)
    # a factory left without a case was never compiled: code scanning must say so, not show a clean file
    notifications += [
        _notification(f"no call of its factories could be inferred; add {line}", path, 1, root, level="warning")
        for path, line in summary.needing_cases
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tl-inspect",
                        "version": run.version,
                        "semanticVersion": run.version,
                        "rules": [_rule_entry(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SOURCE_ROOT: {"uri": pathlib.Path(root).resolve().as_uri() + "/"}},
                "invocations": [
                    {
                        "executionSuccessful": not (run.has_errors or summary.nothing_inspected()),
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": results,
                "columnKind": "unicodeCodePoints",
                "properties": {
                    "arch": run.arch,
                    "cost_table": cost_table.of(run.cost_table).as_dict(),
                    "summary": summary.as_dict(),
                },
            }
        ],
    }


def _result(f, k, rule_index: dict, digest: str, root: str) -> dict:
    """One finding as a SARIF result."""
    location = _artifact_location(f.file, root)
    return {
        "ruleId": f.rule,
        "ruleIndex": rule_index[f.rule],
        "level": LEVEL.get(f.severity, "warning"),
        "message": {"text": f"{headline(f)}\nFix: {f.fix}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": _region(f.line, f.end_line, f.col),
                },
                "logicalLocations": [{"name": f.kernel or k.name, "kind": "function"}],
            }
        ],
        "partialFingerprints": {FINGERPRINT: digest},
        **({"fixes": [_sarif_fix(f, location)]} if f.autofix and f.autofix.verified else {}),
        "properties": {
            "slug": f.slug,
            "name": f.name,
            "args": dict(f.args),
            "fix": f.fix,
            "kernel": f.kernel or k.name,
            "cudaLines": list(f.cuda_lines),
            **({"measured": f.cost.measured.as_dict()} if f.cost and f.cost.measured else {}),
        },
    }


def _sarif_fix(f, location: dict) -> dict:
    """The verified fix as SARIF's `fix`: whole lines replaced, each region from column 1 of its first line
    to column 1 of the line after it."""
    return {
        "description": {"text": f"{f.fix} ({f.autofix.applicability})"},
        "artifactChanges": [
            {
                "artifactLocation": location,
                "replacements": [
                    {
                        "deletedRegion": {"startLine": e.line, "startColumn": 1, "endLine": e.end_line, "endColumn": 1},
                        "insertedContent": {"text": e.content},
                    }
                    for e in f.autofix.edits
                ],
            }
        ],
    }


def _region(line: int, end_line: int | None, col: int) -> dict:
    # SARIF counts from 1; a finding built from bad data must still give a valid document
    start = max(line, 1)
    return {"startLine": start, "startColumn": max(col, 1), "endLine": max(end_line or start, start)}


def _notification(message: str, path: str, line: int, root: str, level: str = "error") -> dict:
    return {
        "level": level,
        "message": {"text": message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact_location(path, root),
                    "region": {"startLine": max(line, 1)},
                }
            }
        ],
    }


@reporter("sarif")
def write_sarif(run: RunResult, out: TextIO) -> None:
    json.dump(as_sarif(run), out, indent=2)
    out.write("\n")
