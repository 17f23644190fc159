"""Run the rules over one kernel and keep one finding per root cause per statement."""

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
    causes = {(f.slug, f.line) for f in findings}
    by_slug = {r.slug: r for r in rules}
    kept = [
        f for f in findings
        if not any((cause, f.line) in causes for cause in by_slug[f.slug].yields_to)
    ]
    unique = {(f.rule, f.line, f.message): f for f in kept}
    return sorted(unique.values(), key=lambda f: (f.line, f.rule))
