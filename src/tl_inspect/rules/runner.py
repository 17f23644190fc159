"""Run the rules over one kernel. Rules never see each other's findings: each cause is owned by one
rule (tl_inspect.analysis.verdicts.CAUSE_OWNERS), so a selection only filters."""

from __future__ import annotations

from tl_inspect.model import Finding, KernelArtifact
from tl_inspect.rules.base import Rule, RuleContext


def check_kernel(kernel: KernelArtifact, source_text: str, rules: list[type[Rule]]) -> list[Finding]:
    if kernel.status != "ok":
        return []
    findings: list[Finding] = []
    for rule_class in rules:
        rule = rule_class()
        ctx = RuleContext(rule, kernel, source_text)
        rule.check(ctx)
        findings.extend(ctx.findings)
    unique = {(f.rule, f.line, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: (f.line, f.rule))
