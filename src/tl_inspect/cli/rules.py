"""`tl-inspect rules` lists the rules, `tl-inspect rule CODE-OR-SLUG` explains one."""

from __future__ import annotations

from tl_inspect.cli.usage import EXIT_CLEAN, UsageError
from tl_inspect.lint.checking import all_rules
from tl_inspect.rules.catalog import rules_table


def list_rules(argv: list[str]) -> int:
    if argv in (["--format", "markdown"], ["--format=markdown"]):
        print(rules_table(all_rules()), end="")
        return EXIT_CLEAN
    if argv:
        raise UsageError("usage: tl-inspect rules [--format markdown]")
    for rule in all_rules():
        opt_in = "" if rule.default else " (off by default)"
        print(f"{rule.code}  {rule.slug:28} {rule.severity:8} {rule.summary()}{opt_in}")
    return EXIT_CLEAN


def explain_rule(argv: list[str]) -> int:
    if len(argv) != 1:
        raise UsageError("usage: tl-inspect rule CODE-OR-SLUG")
    rule = next((r for r in all_rules() if argv[0] in (r.code, r.slug)), None)
    if rule is None:
        raise UsageError(f"unknown rule {argv[0]!r}; `tl-inspect rules` lists them")
    # rich's Markdown loads markdown-it and pygments: only this command renders Markdown to the terminal
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(
        Markdown(
            f"# {rule.code} {rule.slug} ({rule.severity})\n\n{rule.summary()}\n\n"
            f"{rule.documentation()}\n\n**Fix:** {rule.fix}"
        )
    )
    return EXIT_CLEAN
