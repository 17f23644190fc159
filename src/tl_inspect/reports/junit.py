"""`--format junit`: JUnit XML for CI test-report views (GitLab `reports: junit:`, Jenkins, Azure).

One test suite per inspected file and one test case per kernel: a kernel with findings fails (one
`<failure>` listing them), a kernel or file that could not be inspected is an `<error>`, and a factory
left without a case is `<skipped>` with the TL_INSPECT_CASES line to add, so a report view counts it
instead of showing a green file."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TextIO

from tl_inspect.model import RunResult
from tl_inspect.reports.common import cases_line, file_groups
from tl_inspect.reports.json_report import MODULE_ENTRY
from tl_inspect.reports.phrases import headline
from tl_inspect.reports.registry import reporter
from tl_inspect.wording import plural

# XML 1.0 cannot carry these even escaped; a compiler message may contain them
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value) -> str:
    return _NOT_XML.sub("\ufffd", str(value))


def _case(suite: ET.Element, path: str, name: str, line: int | None) -> ET.Element:
    attributes = {"classname": _text(path), "name": _text(name), "file": _text(path)}
    if line:
        attributes["line"] = str(line)
    return ET.SubElement(suite, "testcase", attributes)


def as_junit(run: RunResult) -> ET.Element:
    root = ET.Element("testsuites", {"name": "tl-inspect"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for file, reports in file_groups(run):
        suite = ET.SubElement(root, "testsuite", {"name": _text(file.path)})
        counts = dict.fromkeys(totals, 0)
        if file.error:
            case = _case(suite, file.path, MODULE_ENTRY, file.error_line)
            ET.SubElement(case, "error", {"message": "could not import the file"}).text = _text(file.error)
            counts["errors"] += 1
        for report in reports:
            k = report.kernel
            case = _case(suite, file.path, k.name, k.line)
            if k.status != "ok":
                ET.SubElement(case, "error", {"message": "could not be compiled"}).text = _text(k.error or "")
                counts["errors"] += 1
            elif report.findings:
                codes = sorted({f.rule for f in report.findings})
                ET.SubElement(
                    case,
                    "failure",
                    {
                        "message": _text(
                            f"{plural(len(report.findings), 'finding')}: "
                            + ", ".join(f"{f.rule} {f.slug}" for f in report.findings)
                        ),
                        "type": ",".join(codes),
                    },
                ).text = _text(
                    "\n".join(
                        f"{f.file}:{f.line}:{f.col}: {f.rule} [{f.slug}] {headline(f)}\nfix: {f.fix}"
                        for f in report.findings
                    )
                )
                counts["failures"] += 1
        for factory, params in file.needs_cases:
            case = _case(suite, file.path, factory, None)
            ET.SubElement(
                case,
                "skipped",
                {
                    "message": _text(
                        f"no call of this factory could be inferred; add {cases_line(((factory, params),))}"
                    )
                },
            )
            counts["skipped"] += 1
        counts["tests"] = len(suite)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    return root


@reporter("junit")
def write_junit(run: RunResult, out: TextIO) -> None:
    tree = as_junit(run)
    ET.indent(tree)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(tree, encoding="unicode"))
    out.write("\n")
