"""Run the rules over one kernel. Rules never see each other's findings: each cause is owned by one
rule (the one whose `reports_causes` names it), so a selection only filters."""

from __future__ import annotations

from tl_inspect.analysis.kernel import KernelModel
from tl_inspect.model import Finding, KernelArtifact
from tl_inspect.rules.base import Rule, RuleContext


class RuleFailure(Exception):
    """A rule raised on one kernel: that kernel becomes an error, the run goes on."""


def check_kernel(kernel: KernelArtifact, source_text: str, rules: list[type[Rule]]) -> list[Finding]:
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
