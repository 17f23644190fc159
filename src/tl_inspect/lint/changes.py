"""What changed since a git revision: files, and lines within them (`--diff-against`, `--new-only`).

Changes are taken from the merge base of REV and HEAD to the working tree, as diff-cover does: on a
branch, `--diff-against origin/main` means "what this branch changed", not the reverse of what main
gained since, and uncommitted and untracked files count as changed.
"""

from __future__ import annotations

import codecs
import os
import re
import subprocess
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
# explicit so that a user's diff.noprefix, diff.external or color settings cannot change the output
_DIFF = ("diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "--src-prefix=a/", "--dst-prefix=b/")


class ChangesError(ValueError):
    """git could not answer: printed as one line, exit status 2."""


@dataclass(frozen=True)
class Changes:
    rev: str
    base: str  # the merge-base commit
    lines: dict  # real path -> frozenset of changed lines, None for a file that is new as a whole

    def touches(self, path: str) -> bool:
        return os.path.realpath(path) in self.lines

    def changed(self, path: str, first: int, last: int) -> bool:
        """Whether any of lines first..last of `path` was added or changed."""
        real = os.path.realpath(path)
        if real not in self.lines:
            return False
        changed = self.lines[real]
        return changed is None or any(line in changed for line in range(first, last + 1))


def changes_since(rev: str, cwd: str = ".") -> Changes:
    top = _git(cwd, "rev-parse", "--show-toplevel", failure="--diff-against needs a git repository ({cause})").strip()
    _git(
        top,
        "rev-parse",
        "--verify",
        "--quiet",
        f"{rev}^{{commit}}",
        failure=f"--diff-against: unknown revision {rev!r}",
    )
    base = _git(
        top, "merge-base", rev, "HEAD", failure=f"--diff-against: {rev!r} has no common history with HEAD"
    ).strip()
    lines = hunk_lines(_git(top, *_DIFF, "--diff-filter=d", "-U0", base, "--", failure="git diff failed: {cause}"))
    changed: dict = {os.path.realpath(os.path.join(top, path)): frozenset(found) for path, found in lines.items()}
    untracked = _git(top, "ls-files", "--others", "--exclude-standard", "-z", failure="git ls-files failed: {cause}")
    for path in filter(None, untracked.split("\0")):
        changed[os.path.realpath(os.path.join(top, path))] = None
    return Changes(rev=rev, base=base, lines=changed)


def hunk_lines(diff: str) -> dict[str, set[int]]:
    """New-side path -> added or changed line numbers, from `git diff -U0` output."""
    found: dict[str, set[int]] = {}
    current = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = _unquote(line[4:])
            current = current[2:] if current.startswith("b/") else None
            if current is not None:
                found.setdefault(current, set())
        elif current is not None and (hunk := _HUNK.match(line)):
            start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
            found[current].update(range(start, start + count))
    return found


def _unquote(path: str) -> str:
    """git writes a path with unusual characters as a C-style quoted string."""
    if path.startswith('"') and path.endswith('"'):
        return codecs.escape_decode(path[1:-1].encode("utf-8"))[0].decode("utf-8", errors="replace")
    return path


def _git(cwd: str, *args: str, failure: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as exc:
        raise ChangesError(failure.replace("{cause}", f"cannot run git: {exc.strerror}")) from None
    if done.returncode != 0:
        cause = (done.stderr.strip().splitlines() or [f"git exited with {done.returncode}"])[-1]
        raise ChangesError(failure.replace("{cause}", cause))
    return done.stdout
