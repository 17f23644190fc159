"""Rules: one folder per rule (see `tl_inspect.rules.base`); importing this package registers them all."""

from __future__ import annotations

import importlib
import pkgutil

from tl_inspect.rules.base import REGISTRY, Rule, RuleContext, RuleExample

for _module in pkgutil.iter_modules(__path__):
    if _module.ispkg:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Rule", "RuleContext", "RuleExample", "find_rule", "owner_of", "registered_rules"]


def registered_rules() -> list[type[Rule]]:
    return sorted(REGISTRY.values(), key=lambda r: r.code)


def find_rule(code_or_slug: str) -> type[Rule] | None:
    for rule in registered_rules():
        if code_or_slug in (rule.code, rule.slug):
            return rule
    return None


def owner_of(kind: str) -> type[Rule] | None:
    """The rule that declares it reports cause `kind`: the one place a cause meets a rule."""
    return next((rule for rule in registered_rules() if kind in rule.reports_causes), None)
