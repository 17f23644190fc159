"""Suppression comments, and the `unused-suppression` findings for those that suppress nothing.

`# tl-inspect: ignore[CODE-or-slug, ...]` trailing a statement covers that statement (all its physical
lines); on a line of its own it covers the next statement. `# tl-inspect: ignore-file[...]` anywhere
covers the whole file. Names are matched like `--select`: codes, code prefixes or slugs.

Whether a suppression is used is only known once every rule has run on every kernel of the file, so
this is a pass over one file's findings after the rules: rules never see other rules' findings.
Its findings belong to the `unused-suppression` rule (`tl_inspect.rules.unused_suppression`), so that
selection, `tl-inspect rule` and the reporters treat them like any rule's.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from tl_inspect.files.pysource import scan
from tl_inspect.lint.selection import matches
from tl_inspect.model import Finding, KernelReport
from tl_inspect.rules.unused_suppression import UnusedSuppression

_DIRECTIVE = re.compile(r"tl-inspect:\s*(?P<kind>ignore-file|ignore)(?:\[(?P<names>[^\]]*)\])?")


@dataclass(frozen=True)
class Directive:
    line: int
    col: int
    names: tuple  # as written
    file_wide: bool
    covers: frozenset  # lines whose findings it suppresses (empty when file_wide)
    text: str  # the directive as written, for messages

    def applies_to(self, finding: Finding) -> bool:
        return self.file_wide or finding.line in self.covers


def parse_directives(text: str) -> list[Directive]:
    source = scan(text)
    directives = []
    for comment in source.comments:
        for match in _DIRECTIVE.finditer(comment.text):
            names = tuple(n.strip() for n in (match.group("names") or "").split(",") if n.strip())
            file_wide = match.group("kind") == "ignore-file"
            statement = comment.statement or source.statement_after(comment.line)
            covers = (
                frozenset() if file_wide or statement is None else frozenset(range(statement.start, statement.end + 1))
            )
            directives.append(Directive(comment.line, comment.col, names, file_wide, covers, match.group(0)))
    return directives


def suppress(reports: list[KernelReport], text: str, checked: list, all_rules: list, judge: bool) -> list[KernelReport]:
    """Drop the findings of one source file's kernels that its suppressions cover, and add an
    `unused-suppression` finding for each suppression (or name in one) that covered nothing.

    `checked`: the rules run on this file (including `UnusedSuppression` when it is selected).
    `judge`: every kernel the file defines was inspected without error, so a suppression that
    matched no finding is known to be unused."""
    directives = parse_directives(text)
    if not directives or not reports:
        return reports
    by_code = {rule.code: rule for rule in all_rules}
    used: set[tuple[Directive, str]] = set()

    def suppressed(finding: Finding, reported: Directive | None = None) -> bool:
        rule = by_code.get(finding.rule)
        # a directive never hides the report of its own uselessness (`ignore[ALL]` would)
        hits = [
            (d, name)
            for d in directives
            if d is not reported and d.applies_to(finding)
            for name in d.names
            if rule is not None and matches(rule, name)
        ]
        used.update(hits)
        return bool(hits)

    kept = [[f for f in report.findings if not suppressed(f)] for report in reports]
    if UnusedSuppression in checked:
        for directive in directives:
            message = _unused_message(directive, used, checked, all_rules, judge)
            if message:
                index = _owner(reports, directive.line)
                finding = _finding(reports[index], directive, message)
                if not suppressed(finding, directive):
                    kept[index].append(finding)
    return [
        dataclasses.replace(report, findings=tuple(sorted(findings, key=lambda f: (f.line, f.rule))))
        for report, findings in zip(reports, kept)
    ]


def _unused_message(directive: Directive, used: set, checked: list, all_rules: list, judge: bool) -> str:
    if not directive.names:
        return f"`{directive.text}` names no rule: write `ignore[CODE-or-slug, ...]`"
    unknown = [n for n in directive.names if not any(matches(rule, n) for rule in all_rules)]
    if unknown:
        return f"`{directive.text}` names no known rule: {', '.join(unknown)}"
    if not judge:
        return ""
    judged = [rule for rule in checked if rule is not UnusedSuppression]
    unused = [
        n
        for n in directive.names
        if (directive, n) not in used
        and n.upper() != UnusedSuppression.code
        and n != UnusedSuppression.slug
        and any(matches(rule, n) for rule in judged)
    ]
    if not unused:
        return ""
    where = "in this file" if directive.file_wide else "on this statement"
    return f"unused suppression: no finding for {', '.join(unused)} {where}"


def _owner(reports: list[KernelReport], line: int) -> int:
    """The kernel a suppression is reported under: the last one defined at or above its line."""
    above = [i for i, r in enumerate(reports) if r.kernel.line is not None and r.kernel.line <= line]
    return above[-1] if above else 0


def _finding(report: KernelReport, directive: Directive, message: str) -> Finding:
    rule = UnusedSuppression
    return Finding(
        rule=rule.code,
        slug=rule.slug,
        severity=rule.severity,
        message=message,
        fix=rule.fix,
        file=report.kernel.file,
        line=directive.line,
        kernel=report.kernel.name,
        col=directive.col,
    )
