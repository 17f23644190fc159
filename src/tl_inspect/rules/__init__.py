"""Rules: one folder per rule (see `tl_inspect.rules.base`); importing this package registers them all."""

from __future__ import annotations

import importlib
import pkgutil

from tl_inspect.rules.base import Rule, RuleContext, RuleExample, find_rule, registered_rules

for _module in pkgutil.iter_modules(__path__):
    if _module.ispkg:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Rule", "RuleContext", "RuleExample", "find_rule", "registered_rules"]
