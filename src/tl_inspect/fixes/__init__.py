"""Verified fixes: a rule declares the source edit that removes its finding (`Violation.autofix`, built
with libcst by `tl_inspect.files.cst`), and `tl_inspect.fixes.verify` offers it only after inspecting
a copy of the file with the edit made. This module is the text side: edits between two texts, several
fixes applied together, the unified diff. It imports neither libcst nor tilelang."""

from __future__ import annotations

import difflib
import os

from tl_inspect.model import Edit, Fix


def edits_between(before: str, after: str) -> tuple:
    """The line edits that turn `before` into `after`."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return tuple(
        Edit(i1 + 1, i2 + 1, "".join(new[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def fix_from(applicability: str, before: str, after: str | None) -> Fix | None:
    """The fix that turns `before` into `after`; None when there is no change to make."""
    if after is None or after == before:
        return None
    return Fix(applicability, edits_between(before, after))


def _overlap(a: Edit, b: Edit) -> bool:
    return a.line < b.end_line and b.line < a.end_line


def compatible(fixes: list) -> list:
    """The fixes, in order, less any whose edits overlap those of one kept before it (a later round gets
    them, as ruff's fix loop does)."""
    kept, taken = [], []
    for fix in fixes:
        if not any(_overlap(e, t) for e in fix.edits for t in taken):
            kept.append(fix)
            taken.extend(fix.edits)
    return kept


def apply_fixes(text: str, fixes: list) -> str:
    """`text` with every fix's edits made; the fixes must be `compatible`."""
    lines = text.splitlines(keepends=True)
    edits = {(e.line, e.end_line, e.content): e for fix in fixes for e in fix.edits}
    for edit in sorted(edits.values(), key=lambda e: (e.line, e.end_line), reverse=True):
        if edit.end_line > len(lines) and lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"  # an edit of the last line, which had no newline: each edit's lines end in one
        lines[edit.line - 1 : edit.end_line - 1] = edit.content.splitlines(keepends=True)
    return "".join(lines)


def line_map(before: str, after: str) -> dict:
    """Line of `before` -> its line in `after`: unchanged lines, and the lines of a block replaced by as
    many lines, one for one."""
    old, new = before.splitlines(), after.splitlines()
    mapped = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            mapped.update({i1 + k + 1: j1 + k + 1 for k in range(i2 - i1)})
    return mapped


def unified_diff(path: str, before: str, after: str, context: int = 3) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{os.path.normpath(path)}",
            tofile=f"b/{os.path.normpath(path)}",
            n=context,
        )
    )


def fix_diff(fix: Fix, path: str, text: str) -> str:
    """One fix as the diff lines a reader needs under its finding: the hunks, one line of context."""
    diff = unified_diff(path, text, apply_fixes(text, [fix]), context=1)
    return "".join(diff.splitlines(keepends=True)[2:])


def fix_note(fix: Fix) -> str:
    """ "safe fix, verified" / "unsafe fix, verified: apply it with --fix --unsafe-fixes" / "fix not offered: ..."."""
    if not fix.verified:
        return f"fix not offered: {fix.refused}"
    if fix.applicability == "unsafe":
        return (
            "unsafe fix, verified (it may change the launch or the tensors a caller passes, or rest on a promise "
            "only you can make): apply it with --fix --unsafe-fixes"
        )
    return "safe fix, verified: apply it with --fix"
