"""Rules over inspected files: every selected rule on every kernel, then each source file's
suppressions, as the one lint run (`lint.driver`) checks for every face. Rules never see each other's
findings: each cause is reported by the one rule that declares it, so a selection only filters."""

from __future__ import annotations

import dataclasses
import os

from tl_inspect.analysis.kernel import KernelModel
from tl_inspect.files.sources import SourceFiles
from tl_inspect.lint.settings import Settings
from tl_inspect.lint.suppressions import suppress
from tl_inspect.model import FileResult, Finding, KernelArtifact, KernelReport
from tl_inspect.rules import Rule, RuleContext, registered_rules


class RuleFailure(Exception):
    """A rule raised on one kernel: that kernel becomes an error, the run goes on."""


def all_rules() -> list:
    """Every rule a selector may name."""
    return registered_rules()


def check_kernel(kernel: KernelArtifact, source_text: str, rules: list[type[Rule]]) -> list[Finding]:
    """The findings of `rules` on one kernel, which share one kernel model."""
    if kernel.status != "ok":
        return []
    findings: list[Finding] = []
    facts = KernelModel(kernel)
    for rule_class in rules:
        rule = rule_class()
        ctx = RuleContext(rule, kernel, source_text, facts)
        try:
            rule.check(ctx)
        except Exception as exc:  # noqa: BLE001 - a defect in one rule must not sink the other kernels
            cause = (str(exc).strip().splitlines() or ["no message"])[0][:200]
            raise RuleFailure(f"internal error in rule {rule.code} {rule.slug}: {type(exc).__name__}: {cause}") from exc
        findings.extend(ctx.findings)
    unique = {(f.rule, f.line, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: (f.line, f.rule))


def check_files(
    jobs: list, files: list[FileResult], settings: Settings, rules: list, texts: SourceFiles
) -> tuple[list[KernelReport], dict]:
    """Run the selected rules on every kernel, then each source file's suppressions over its findings.

    Returns the reports, and for each source file (real path) whether every kernel it defines was
    inspected without error: only then is a suppression without a finding known to be unused."""
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
        whole = (
            job.only is None
            and file.error is None
            and not file.notes
            and all(r.kernel.status == "ok" for r in checked_reports)
        )
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
