"""Sentences every renderer shares: a finding's message is the problem only, and the formats that show
one line per finding add its cost here, in one wording."""

from __future__ import annotations

from tl_inspect.model import Cost, Finding


def cost_sentence(cost: Cost) -> str:
    """"Estimated 2.62x slower for the whole kernel on an H200 (fp16 loads ..., 2.62x per access).\""""
    measured = cost.basis.split(":")[0]
    per_access = f", {cost.per_access:.2f}x per access" if cost.per_access is not None else ""
    return f"Estimated {cost.estimate:.2f}x slower for the whole kernel on an H200 ({measured}{per_access})."


def headline(finding: Finding) -> str:
    """The message with the cost, for formats that show a finding as one sentence."""
    return f"{finding.message} {cost_sentence(finding.cost)}" if finding.cost is not None else finding.message
