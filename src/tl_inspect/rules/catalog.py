"""Documentation generated from the declarations: the README's rules table (`tl-inspect rules --format
markdown`) and docs/verdicts.md's causes table (`python -m tl_inspect.rules.catalog`)."""

from __future__ import annotations


def rules_table(rules) -> str:
    """The Markdown table the README carries under "Rules", one row per rule, in code order."""
    rows = ["| code | slug | severity | flags | measured cost |", "|---|---|---|---|---|"]
    for rule in rules:
        flags = rule.flags if rule.default else f"{rule.flags} (off by default: `--extend-select {rule.slug}`)"
        cells = (rule.code, f"`{rule.slug}`", rule.severity, flags, rule.measured)
        rows.append("|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|")
    return "\n".join(rows) + "\n"


def causes_table() -> str:
    """docs/verdicts.md's table of causes, one row per cause kind, with the rule that reports it."""
    from tl_inspect.causes import KINDS
    from tl_inspect.rules import owner_of

    rows = [
        "| cause | what it is | evidence (the one change rebuilt and lowered again, or the launch and its "
        "index algebra) | owner |",
        "|---|---|---|---|",
    ]
    for kind in KINDS.values():
        owner = "the owner of that cause" if kind.follows_origin else owner_of(kind.name).slug
        rows.append(f"| `{kind.name}` | {kind.summary()} | {kind.proved_by} | {owner} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(causes_table(), end="")
