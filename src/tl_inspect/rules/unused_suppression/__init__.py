"""TLV900 unused-suppression: a suppression comment that suppresses nothing."""

from __future__ import annotations

from tl_inspect.rules.base import Rule, RuleContext


class UnusedSuppression(Rule):
    """A `# tl-inspect: ignore[...]` comment that suppresses nothing.

    ## What it does
    Flags a suppression comment, or one name in it, that matched no finding in the last run, and a
    suppression that names no rule or a rule that does not exist.

    ## Why is this wrong?
    A suppression outlives the defect it was written for: once the kernel is fixed (or the rule stops
    firing on it) the comment stays and silently hides the next real defect on that line. A misspelt
    name suppresses nothing at all while looking as if it did.

    ## Example
    ```python
    for i in T.Parallel(1024):
        # tl-inspect: ignore[lane-dependent-predicate]   (N is now a multiple of 1024)
        C[bx * 1024 + i] = A[bx * 1024 + i] + B[bx * 1024 + i]
    ```

    ## Use instead
    Delete the comment, or the names in it that no longer fire.

    A suppression is judged only when every kernel of its file was inspected without error and every
    rule it names was selected; an unknown name is always reported.

    ## References
    - ruff's `unused-noqa` (RUF100), the same check for `# noqa` comments.
    """

    code = "TLV900"
    slug = "unused-suppression"
    severity = "warning"
    flags = "a `# tl-inspect: ignore[...]` comment that suppresses nothing"
    fix = "delete the unused suppression"

    def check(self, ctx: RuleContext) -> None:
        """Nothing per kernel: whether a suppression is used is known only after every rule has run on
        every kernel of its file, so `tl_inspect.lint.suppressions.suppress` reports these findings."""
