"""Rules: one module per rule; importing this package registers them all."""

from __future__ import annotations

import importlib
import pkgutil

from tl_inspect.rules.base import Example, Rule, RuleContext, find_rule, registered_rules
from tl_inspect.rules.runner import check_kernel

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("base", "runner", "vector_findings"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Example", "Rule", "RuleContext", "check_kernel", "find_rule", "registered_rules"]
