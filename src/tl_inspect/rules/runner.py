"""Run the rules over one kernel and keep one finding per root cause per statement."""

from __future__ import annotations

from tl_inspect.model import Finding, KernelArtifact
from tl_inspect.rules.base import Rule, RuleContext


class RuleFailure(Exception):
    """A rule raised on one kernel: that kernel becomes an error, the run goes on."""


def check_kernel(kernel: KernelArtifact, source_text: str, rules: list[type[Rule]]) -> list[Finding]:
    if kernel.status != "ok":
        return []
    findings: list[Finding] = []
    for rule_class in rules:
        rule = rule_class()
        ctx = RuleContext(rule, kernel, source_text)
        try:
            rule.check(ctx)
        except Exception as exc:  # noqa: BLE001 - a defect in one rule must not sink the other kernels
            cause = (str(exc).strip().splitlines() or ["no message"])[0][:200]
            raise RuleFailure(f"internal error in rule {rule.code} {rule.slug}: {type(exc).__name__}: {cause}") from exc
        findings.extend(ctx.findings)
    causes = {(f.slug, f.line) for f in findings}
    by_slug = {r.slug: r for r in rules}
    kept = [
        f for f in findings
        if not any((cause, f.line) in causes for cause in by_slug[f.slug].yields_to)
    ]
    unique = {(f.rule, f.line, f.message): f for f in kept}
    return sorted(unique.values(), key=lambda f: (f.line, f.rule))
