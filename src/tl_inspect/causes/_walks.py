"""Wording shared by the causes of a thread walking its own row (`serial-loop`, `lone-thread`)."""

from __future__ import annotations

import re


def written_name(var: str) -> str:
    """The variable as the user wrote it: tl-inspect names repeated variables `k_1`, `k_2`..."""
    return re.sub(r"_[0-9]+$", "", var)


def staged_change(var: str, width: int) -> str:
    """The staging rewrite's change (tl_inspect.inspector.rewrites.staging) in the user's terms."""
    return f"the loads of `{written_name(var)}` staged {width} at a time through a T.vectorized copy into a local"
