"""Baselines: accept the findings a codebase has today, fail only on new ones.

A finding's fingerprint hashes its rule slug, its file (relative to the baseline file), its kernel
and the normalized text of its statement (tokens without comments or layout). Line numbers are left
out, so edits elsewhere in the file (a line added above, a reformat) keep a finding baselined, while
a new defect, or the same defect in another statement or kernel, is new. Identical statements with
the same finding in one kernel share a fingerprint; the baseline keeps their count, and only
occurrences beyond it are new.

The file is JSON, sorted and without timestamps, so that it diffs well in review.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Callable

from tl_inspect.files.pysource import scan
from tl_inspect.files.sources import read_bounded
from tl_inspect.model import Finding

FORMAT_VERSION = 1


class BaselineError(ValueError):
    """An unreadable baseline file: printed as one line, exit status 2."""


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    rule: str
    slug: str
    file: str  # relative to the baseline file's directory, with "/"
    kernel: str
    statement: str  # normalized statement text
    count: int = 1


@dataclass(frozen=True)
class Match:
    new: list  # findings not in the baseline
    known: int  # findings the baseline accounts for
    stale: list  # entries (count = occurrences missing) that no longer occur


class Fingerprints:
    """Fingerprints of findings with file paths relative to `root`: the folder holding the baseline
    file for baselines, the repository for SARIF, so code scanning and baselines agree."""

    def __init__(self, root: str, read_text: Callable[[str], str]):
        self.root = os.path.abspath(root)
        self.read_text = read_text

    @classmethod
    def for_baseline(cls, baseline_path: str, read_text: Callable[[str], str]) -> "Fingerprints":
        return cls(os.path.dirname(os.path.abspath(baseline_path)), read_text)

    def relative(self, path: str) -> str:
        return os.path.relpath(os.path.realpath(path), os.path.realpath(self.root)).replace(os.sep, "/")

    def entry(self, finding: Finding) -> Entry:
        statement = scan(self.read_text(finding.file)).statement_at(finding.line)
        text = statement.normalized if statement else ""
        file = self.relative(finding.file)
        digest = hashlib.sha256("\0".join((finding.slug, file, finding.kernel, text)).encode()).hexdigest()
        return Entry(digest[:20], finding.rule, finding.slug, file, finding.kernel, text)

    def numbered(self, findings: list[Finding]) -> list[str]:
        """Each finding's fingerprint with its occurrence number (`key:2` for the second identical one), a
        key that stays unique and stable for code scanning and GitLab."""
        seen: dict[str, int] = {}
        keys = []
        for finding in findings:
            key = self.entry(finding).fingerprint
            seen[key] = seen.get(key, 0) + 1
            keys.append(f"{key}:{seen[key]}")
        return keys


def build(findings: list[Finding], fingerprints: Fingerprints) -> list[Entry]:
    counts: dict[Entry, int] = {}
    for finding in findings:
        entry = fingerprints.entry(finding)
        counts[entry] = counts.get(entry, 0) + 1
    entries = [Entry(**{**vars(e), "count": n}) for e, n in counts.items()]
    return sorted(entries, key=lambda e: (e.file, e.kernel, e.slug, e.statement))


def write(path: str, entries: list[Entry]) -> None:
    document = {"tool": "tl-inspect", "baseline": FORMAT_VERSION, "findings": [vars(e) for e in entries]}
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=2)
            f.write("\n")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write the baseline: {exc.strerror}") from None


def load(path: str) -> list[Entry]:
    try:
        document = json.loads(read_bounded(path).decode("utf-8"))
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}: not a tl-inspect baseline: invalid JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path}: not a tl-inspect baseline: not UTF-8 text (byte {exc.start})") from None
    if not isinstance(document, dict) or document.get("tool") != "tl-inspect" or "findings" not in document:
        raise BaselineError(f"{path}: not a tl-inspect baseline (write one with --write-baseline)")
    if document.get("baseline") != FORMAT_VERSION:
        raise BaselineError(
            f"{path}: baseline format {document.get('baseline')!r} is not supported "
            f"(this tl-inspect reads {FORMAT_VERSION}); write it again with --write-baseline"
        )
    try:
        entries = [Entry(**item) for item in document["findings"]]
    except TypeError as exc:
        raise BaselineError(f"{path}: malformed baseline entry ({exc})") from None
    for number, entry in enumerate(entries, 1):
        fields = vars(entry)
        wrong = [
            name
            for name, value in fields.items()
            if not (
                isinstance(value, int) and not isinstance(value, bool) and value > 0
                if name == "count"
                else isinstance(value, str)
            )
        ]
        if wrong:
            raise BaselineError(f"{path}: malformed baseline entry {number}: {wrong[0]} = {fields[wrong[0]]!r}")
    return entries


def match(
    findings: list[Finding], entries: list[Entry], fingerprints: Fingerprints, judged: Callable[[Entry], bool]
) -> Match:
    """Split findings into new and baselined; `judged(entry)`: the run inspected the entry's kernel
    completely, so an entry without a finding there no longer occurs."""
    remaining = {e.fingerprint: e.count for e in entries}
    new = []
    for finding in findings:
        fingerprint = fingerprints.entry(finding).fingerprint
        if remaining.get(fingerprint, 0) > 0:
            remaining[fingerprint] -= 1
        else:
            new.append(finding)
    stale = [
        Entry(**{**vars(e), "count": remaining[e.fingerprint]})
        for e in entries
        if remaining[e.fingerprint] > 0 and judged(e)
    ]
    return Match(new=new, known=len(findings) - len(new), stale=stale)
