"""Documentation generated from the rule classes: the README's rules table."""

from __future__ import annotations


def rules_table(rules) -> str:
    """The Markdown table the README carries under "Rules", one row per rule, in code order."""
    rows = ["| code | slug | severity | flags | measured cost |", "|---|---|---|---|---|"]
    for rule in rules:
        flags = rule.flags if rule.default else f"{rule.flags} (off by default: `--extend-select {rule.slug}`)"
        cells = (rule.code, f"`{rule.slug}`", rule.severity, flags, rule.measured)
        rows.append("|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|")
    return "\n".join(rows) + "\n"
