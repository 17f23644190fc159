"""Rules over inspected files: every selected rule on every kernel, then each source file's
suppressions. The command line and the Python API both check this way."""

from __future__ import annotations

import dataclasses
import os

from tl_inspect.config import Settings
from tl_inspect.model import FileResult, KernelReport
from tl_inspect.sources import SourceFiles
from tl_inspect.suppressions import suppress


def all_rules() -> list:
    """Every rule a selector may name."""
    from tl_inspect.rules import registered_rules

    return registered_rules()


def check_files(jobs: list, files: list[FileResult], settings: Settings, rules: list,
                texts: SourceFiles) -> tuple[list[KernelReport], dict]:
    """Run the selected rules on every kernel, then each source file's suppressions over its findings.

    Returns the reports, and for each source file (real path) whether every kernel it defines was
    inspected without error: only then is a suppression without a finding known to be unused."""
    from tl_inspect.rules import check_kernel
    from tl_inspect.rules.runner import RuleFailure

    reports = []
    complete: dict[str, bool] = {}
    for job, file in zip(jobs, files):
        checked_reports = []
        for kernel in file.kernels:
            try:
                findings = tuple(check_kernel(kernel, texts.text(kernel.file), settings.rules_for(kernel.file)))
            except RuleFailure as exc:
                kernel, findings = dataclasses.replace(kernel, status="error", error=str(exc)), ()
            checked_reports.append(KernelReport(kernel, findings))
        whole = (job.only is None and file.error is None and not file.notes
                 and all(r.kernel.status == "ok" for r in checked_reports))
        for report in checked_reports:
            real = os.path.realpath(report.kernel.file)
            complete[real] = complete.get(real, True) and whole
        reports.extend(checked_reports)
    by_file: dict[str, list[KernelReport]] = {}
    for report in reports:
        by_file.setdefault(os.path.realpath(report.kernel.file), []).append(report)
    replaced = {}
    for real, group in by_file.items():
        path = group[0].kernel.file
        after = suppress(group, texts.text(path), settings.rules_for(path), rules, complete[real])
        replaced.update(zip(map(id, group), after))
    return [replaced[id(r)] for r in reports], complete
