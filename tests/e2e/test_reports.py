"""Every output format over one run of real, inspected kernels: snapshots, SARIF schema validation,
the GitHub workflow commands line by line, HTML linking and escaping, and bad data."""

from __future__ import annotations

import dataclasses
import hashlib
import html
import io
import json
import os
import re
import subprocess
import sys
import time
from html.parser import HTMLParser

import jsonschema
import pytest
from report_data import (  # noqa: F401  (report_run is a fixture)
    BROKEN_FILE,
    HOSTILE_KERNEL,
    KERNELS_FILE,
    ROOT,
    RULES,
    assert_snapshot,
    report_run,
)

import tl_inspect
from tl_inspect.model import Cost, FileResult, Finding, KernelArtifact, KernelReport, Layout, RunResult
from tl_inspect.reports import formats, get_reporter
from tl_inspect.reports.github import escape_data, escape_property
from tl_inspect.reports.html import build_site, kernel_href, write_html
from tl_inspect.reports.html_text import highlighted_lines, inline_markdown
from tl_inspect.reports.phrases import headline

SARIF_SCHEMA = os.path.join(ROOT, "tests", "data", "sarif-schema-2.1.0.json")
SNAPSHOT_FILES = {
    "full": "full.txt",
    "concise": "concise.txt",
    "json": "report.json",
    "json-lines": "report.jsonl",
    "sarif": "report.sarif",
    "github": "github.txt",
    "gitlab": "gitlab.json",
    "junit": "junit.xml",
}


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    """Paths in the run are relative to ROOT, and SARIF/github paths are relative to the repository."""
    monkeypatch.chdir(ROOT)
    for name in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)


def render(run: RunResult, fmt: str, out=None) -> str:
    out = out or io.StringIO()
    get_reporter(fmt)(run, out)
    return out.getvalue()


def kernel(run: RunResult, name: str) -> KernelArtifact:
    return next(r.kernel for r in run.reports if r.kernel.name == name)


# ---------------------------------------------------------------- snapshots


def test_every_format_has_a_snapshot():
    assert set(formats()) == set(SNAPSHOT_FILES)


@pytest.mark.parametrize("fmt", sorted(SNAPSHOT_FILES))
def test_format_snapshot(report_run, fmt):
    assert_snapshot(SNAPSHOT_FILES[fmt], render(report_run, fmt))


def test_html_snapshot(report_run, tmp_path):
    write_html(report_run, str(tmp_path))
    add = kernel(report_run, "add_2047")
    with open(tmp_path / "index.html", encoding="utf-8") as f:
        assert_snapshot("html/index.html", f.read())
    with open(tmp_path / kernel_href(KERNELS_FILE, add), encoding="utf-8") as f:
        assert_snapshot("html/kernel-add_2047.html", f.read())
    with open(tmp_path / "rules" / "lane-dependent-predicate.html", encoding="utf-8") as f:
        assert_snapshot("html/rule-lane-dependent-predicate.html", f.read())


# ---------------------------------------------------------------- terminal


def test_full_shows_frame_cuda_and_fix(report_run):
    text = render(report_run, "full")
    add = kernel(report_run, "add_2047")
    cuda_21 = add.source.splitlines()[20].strip()
    block = text[text.index("error TLV001 [scalarized-load]") :]
    block = block[: block.index("\n\n")]
    assert "--> tests/data/report_kernels.py:15:17  kernel add_2047" in block
    assert "15 |                 C[bx * block + i] = A[bx * block + i] + B[bx * block + i]" in block
    assert "   |                 ^^^^^" in block  # caret under column 17
    assert any(row.startswith("21 |") and cuda_21[:60] in row for row in block.splitlines())
    assert block.endswith("= fix: Make N a multiple of 8 (2047 -> 2048)")
    assert "add_2047  tests/data/report_kernels.py:12  vector accesses: 0 128-bit / 0 narrower / 3 scalar" in text
    assert "CUDA: no generated line comes from this statement" in text
    assert "kernel broken could not be compiled: InternalError" in text
    assert text.rstrip().endswith(
        "Checked 5 kernels in 2 files: 4 findings (2 errors, 1 warning, 1 info); 2 could not be inspected\n"
        f"{FILES_SUMMARY}"
    )
    assert "\x1b[" not in text


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_full_uses_colour_only_on_a_terminal(report_run, monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    coloured = render(report_run, "full", _Terminal())
    assert "\x1b[1;31merror\x1b[0m" in coloured
    plain = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    # the same text, wrapped at the terminal's width
    assert plain.split() == render(report_run, "full").split()


def test_full_wraps_between_words_on_a_terminal_and_not_when_piped(report_run, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    wrapped = re.sub(r"\x1b\[[0-9;]*m", "", render(report_run, "full", _Terminal()))
    assert max(len(line) for line in wrapped.splitlines()) <= 100, max(wrapped.splitlines(), key=len)
    piped = render(report_run, "full")
    longest = max(piped.splitlines(), key=len)
    assert len(longest) > 100
    # the piped line's words, each whole, are the terminal's lines' words: rich broke it only at spaces
    assert " ".join(longest.split()) in " ".join(wrapped.split())


# ---------------------------------------------------------------- line formats

FILES_SUMMARY = "Files: 2 files with kernels, 0 with factories but no inferable call, 2 failed"


def test_concise_is_one_line_per_finding_or_failure(report_run):
    *lines, summary = render(report_run, "concise").splitlines()
    assert summary == FILES_SUMMARY
    pattern = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<rest>.+)$")
    assert all(pattern.match(line) for line in lines), lines
    assert (
        "tests/data/report_kernels.py:15:17: TLV001 [scalarized-load] add_2047: C, A and B are accessed 16 bits at "
        "a time where 128-bit accesses were possible Estimated 2.93x slower for the whole kernel on an H200 "
        "(lanes 16 B apart, 2.93x per access)." in lines
    )
    assert len(lines) == len(report_run.findings) + 2  # the broken kernel and the broken file


def test_json_lines_round_trip(report_run):
    records = [json.loads(line) for line in render(report_run, "json-lines").splitlines()]
    errors = [r for r in records if r.get("kind") == "error"]
    assert [(e["file"], e["kernel"]) for e in errors] == [(KERNELS_FILE, "broken"), (BROKEN_FILE, "<module>")]
    assert records[len(errors) : -1] == [f.as_dict() for f in report_run.findings]
    assert records[-1] == {
        "kind": "summary",
        "files_with_kernels": 2,
        "files_failed": 2,
        "files_needing_cases": [],
        "kernels": 5,
    }


def test_json_keeps_the_contract(report_run):
    doc = json.loads(render(report_run, "json"))
    assert (doc["tool"], doc["schema"], doc["arch"]) == ("tl-inspect", 1, "sm_90")
    names = [(k["file"], k["name"], k["status"]) for k in doc["kernels"]]
    assert names == [
        (KERNELS_FILE, "add_2047", "ok"),
        (KERNELS_FILE, "add_2048", "ok"),
        (KERNELS_FILE, HOSTILE_KERNEL, "ok"),
        (KERNELS_FILE, "broken", "error"),
        (BROKEN_FILE, "<module>", "error"),
        (BROKEN_FILE, "scale", "ok"),
    ]
    first = doc["kernels"][0]["findings"][1]
    assert {k: first[k] for k in ("rule", "slug", "severity", "line", "end_line", "cuda_lines")} == {
        "rule": "TLV001",
        "slug": "scalarized-load",
        "severity": "error",
        "line": 15,
        "end_line": 15,
        "cuda_lines": [19, 20, 21],
    }


def test_json_keeps_kernels_defined_in_an_imported_module(tmp_path, inspected, monkeypatch):
    """A kernel's file is the module defining it; it must still be listed under the inspected file."""
    (tmp_path / "helpers.py").write_text(open(os.path.join(ROOT, KERNELS_FILE)).read().split("\nadd_2047")[0])
    (tmp_path / "user.py").write_text("import tilelang\nfrom helpers import ew_add\n\nadd_64 = ew_add(64)\n")
    monkeypatch.chdir(tmp_path)
    result = inspected(["user.py"])["user.py"]
    assert [k.file for k in result.kernels] == ["helpers.py"]
    run = RunResult("0", "sm_90", (result,), tuple(KernelReport(k) for k in result.kernels))
    doc = json.loads(render(run, "json"))
    assert [(k["name"], k["file"]) for k in doc["kernels"]] == [("add_64", "helpers.py")]
    assert "add_64" in render(run, "full")


# ---------------------------------------------------------------- GitHub workflow commands


def _decode(text: str) -> str:
    return re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def test_github_line_by_line(report_run):
    lines = render(report_run, "github").splitlines()
    command = re.compile(r"^::(error|warning|notice) ((?:\w+=[^,:]*)(?:,\w+=[^,:]*)*)::([^\r\n]*)$")
    parsed = []
    for line in lines:
        match = command.fullmatch(line)
        assert match, line
        props = dict(item.split("=", 1) for item in match.group(2).split(","))
        parsed.append((match.group(1), {k: _decode(v) for k, v in props.items()}, _decode(match.group(3))))
    expected = []
    for f in report_run.findings:
        level = {"error": "error", "warning": "warning", "info": "notice"}[f.severity]
        props = {
            "file": f.file,
            "line": str(f.line),
            "endLine": str(f.end_line or f.line),
            "col": str(f.col),
            "title": f"{f.rule} {f.slug} in {f.kernel}",
        }
        expected.append((level, props, f"{headline(f)}\nfix: {f.fix}"))
    assert parsed[: len(expected)] == expected
    assert parsed[len(expected) :] == [
        (
            "error",
            {"file": KERNELS_FILE, "line": "37", "title": "tl-inspect: kernel broken could not be compiled"},
            kernel(report_run, "broken").error,
        ),
        (
            "error",
            {"file": BROKEN_FILE, "line": "14", "title": "tl-inspect: could not import the file"},
            report_run.files[1].error,
        ),
        ("notice", {"title": "tl-inspect summary"}, FILES_SUMMARY),
    ]


def test_github_encoding():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


# ---------------------------------------------------------------- SARIF


def test_sarif_validates_against_the_2_1_0_schema(report_run):
    with open(SARIF_SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    doc = json.loads(render(report_run, "sarif"))
    jsonschema.Draft7Validator(schema).validate(doc)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [(r["id"], r["name"], r["defaultConfiguration"]["level"]) for r in rules] == [
        ("TLV001", "scalarized-load", "error"),
        ("TLV002", "lane-dependent-predicate", "warning"),
        ("TLV003", "invariant-index-store", "error"),
    ]
    assert rules[0]["shortDescription"]["text"] == RULES[0].summary()
    assert rules[0]["fullDescription"]["text"] == (
        "Finds loads and stores that the CUDA code moves one element at a time."
    )
    assert "## Why is this slow?" in rules[0]["help"]["markdown"]
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("TLV002", "warning"),
        ("TLV001", "error"),
        ("TLV001", "note"),
        ("TLV003", "error"),
    ]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": KERNELS_FILE, "uriBaseId": "%SRCROOT%"}
    assert results[3]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 28,
        "startColumn": 13,
        "endLine": 29,
    }
    fingerprints = [r["partialFingerprints"]["tlInspectFinding/v1"] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)
    notifications = run["invocations"][0]["toolExecutionNotifications"]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notifications] == [
        KERNELS_FILE,
        BROKEN_FILE,
    ]


# ---------------------------------------------------------------- GitLab Code Quality and JUnit


def test_gitlab_code_quality_issues(report_run):
    issues = json.loads(render(report_run, "gitlab"))
    findings = [i for i in issues if i["check_name"].startswith("TLV")]
    assert [(i["check_name"], i["severity"]) for i in findings] == [
        ("TLV002", "minor"),
        ("TLV001", "major"),
        ("TLV001", "info"),
        ("TLV003", "major"),
    ]
    for issue in issues:  # the fields GitLab requires
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue)
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["lines"]["begin"] >= 1 and not os.path.isabs(issue["location"]["path"])
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert findings[3]["location"] == {"path": KERNELS_FILE, "lines": {"begin": 28, "end": 29}}
    assert findings[0]["description"].startswith("TLV002 [lane-dependent-predicate] add_2047: ")
    broken = [i for i in issues if i["check_name"] == "tl-inspect/not-inspected"]
    assert [(i["location"]["path"], i["severity"]) for i in broken] == [
        (KERNELS_FILE, "critical"),
        (BROKEN_FILE, "critical"),
    ]


def test_junit_has_a_case_per_kernel(report_run):
    import xml.etree.ElementTree as ET

    root = ET.fromstring(render(report_run, "junit"))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [KERNELS_FILE, BROKEN_FILE]
    cases = {c.get("name"): c for c in suites[0].findall("testcase")}
    failure = cases["add_2047"].find("failure")
    assert failure.get("type") == "TLV001,TLV002"
    assert failure.get("message").startswith("2 findings: TLV002 lane-dependent-predicate, TLV001")
    assert f"{KERNELS_FILE}:14:13: TLV002 [lane-dependent-predicate]" in failure.text and "\nfix: " in failure.text
    assert cases["broken"].find("error") is not None
    assert suites[1].find("testcase").get("name") == "<module>"
    assert root.get("tests") == str(sum(len(s) for s in suites))
    assert root.get("errors") == "2" and int(root.get("failures")) >= 1


def test_sarif_fingerprint_survives_lines_moving(report_run, tmp_path, monkeypatch):
    """The fingerprint hashes the statement's text, so lines inserted above it keep the alert's identity."""
    add = kernel(report_run, "add_2047")
    finding = report_run.findings[1]

    def fingerprint(line: int) -> str:
        run = RunResult("0", "sm_90", (), (KernelReport(add, (dataclasses.replace(finding, line=line),)),))
        return json.loads(render(run, "sarif"))["runs"][0]["results"][0]["partialFingerprints"]

    before = fingerprint(15)
    assert fingerprint(14) != before
    shifted = tmp_path / KERNELS_FILE
    shifted.parent.mkdir(parents=True)
    shifted.write_text("# two lines\n# above\n" + open(KERNELS_FILE).read())
    monkeypatch.chdir(tmp_path)
    assert fingerprint(17) == before


# ---------------------------------------------------------------- HTML


class _Rows(HTMLParser):
    """Rows of the source tables: id -> attributes."""

    def __init__(self):
        super().__init__()
        self.rows: dict[str, dict] = {}
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and attrs.get("id"):
            self.rows[attrs["id"]] = attrs
        for name in ("href", "src"):
            if attrs.get(name):
                self.links.append(attrs[name])


def _parse(path) -> _Rows:
    parser = _Rows()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    return parser


def test_html_links_python_and_cuda_both_ways(report_run, tmp_path):
    write_html(report_run, str(tmp_path))
    for report in report_run.reports:
        k = report.kernel
        rows = _parse(tmp_path / kernel_href(report.kernel.file, k)).rows
        for number in range(1, len(open(k.file).read().splitlines()) + 1):
            assert rows[f"py-{number}"]["data-cuda"] == " ".join(map(str, k.cuda_lines_for([number])))
        for number, py in enumerate(k.line_map, 1):
            assert rows[f"cu-{number}"]["data-py"] == (str(py) if py else "")
        if k.status != "ok":
            assert not any(key.startswith("cu-") for key in rows)
        for index, finding in enumerate(sorted(report.findings, key=lambda f: f.line), 1):
            row = rows[f"finding-{index}"]
            cuda = " ".join(map(str, finding.cuda_lines))
            assert (row["data-line"], row["data-cuda"]) == (str(finding.line), cuda)
    add = _parse(tmp_path / kernel_href(KERNELS_FILE, kernel(report_run, "add_2047"))).rows
    assert add["py-15"]["data-cuda"] == "19 20 21" and add["cu-21"]["data-py"] == "15"


def test_html_is_self_contained(report_run, tmp_path):
    pages = write_html(report_run, str(tmp_path))
    assert pages[0] == str(tmp_path / "index.html")
    assert len(pages) == 1 + len(report_run.reports) + len(RULES)
    for page in pages:
        for link in _parse(page).links:
            assert not re.match(r"^([a-z]+:|//)", link), f"{page} links outside the report: {link}"
            target = link.split("#")[0]
            if target:
                assert os.path.exists(os.path.join(os.path.dirname(page), target)), f"{page}: broken link {link}"
    assets = sorted(os.listdir(tmp_path / "assets"))
    for name in assets:
        data = (tmp_path / "assets" / name).read_bytes()
        assert hashlib.sha256(data).hexdigest()[:12] in name
        assert b"http://" not in data and b"https://" not in data
    write_html(report_run, str(tmp_path))
    assert sorted(os.listdir(tmp_path / "assets")) == assets  # copied once, same names


def test_html_escapes_hostile_text(report_run, tmp_path):
    pages = write_html(report_run, str(tmp_path))
    everything = ""
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        # the only script element is our asset
        assert re.findall(r"<script\b[^>]*>", text) == [re.search(r'<script src="[^"]+">', text).group(0)]
        everything += text
    assert "<b>not bold</b>" not in everything and "&lt;b&gt;not bold&lt;/b&gt;" in everything
    assert "row_sum[tag=&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;{{ 7 * 7 }}]" in everything
    assert "&lt;script&gt;alert(&#34;msg&#34;)&lt;/script&gt; {{ 7 * 7 }}" in everything
    assert "configuration &lt;missing&gt; &amp; {{ not set }}" in everything


def test_html_highlights_python_and_cuda_line_by_line(report_run, tmp_path):
    write_html(report_run, str(tmp_path))
    add = kernel(report_run, "add_2047")
    page = (tmp_path / kernel_href(KERNELS_FILE, add)).read_text(encoding="utf-8")
    rows = dict(
        re.findall(r'<tr class="line [^"]*" id="((?:py|cu)-\d+)"[^>]*>.*?<td class="code">(.*?)</td></tr>', page)
    )
    assert rows["py-10"].startswith(
        '<span class="k">def </span><span class="nf">ew_add</span>(N, block=<span class="m">1024</span>'
    )
    # a docstring spans lines 1-4: each line's span is closed on its own row, the hostile text in it escaped
    assert rows["py-3"] == (
        '<span class="s">Hostile text on purpose: &lt;script&gt;alert(&#34;py&#34;)&lt;/script&gt; '
        "and {{ 7 * 7 }} must reach every report escaped.</span>"
    )
    assert rows["cu-4"] == '<span class="cp">#include &lt;cuda.h&gt;</span>'
    assert '<span class="kt">int</span>' in "".join(v for k, v in rows.items() if k.startswith("cu-"))
    # every line keeps its row and anchor, the text unchanged under the markup
    cuda = add.source.splitlines()
    assert len([k for k in rows if k.startswith("cu-")]) == len(cuda)
    for number, text in enumerate(cuda, 1):
        assert html.unescape(re.sub(r"<[^>]+>", "", rows[f"cu-{number}"])) == text
    # the finding-line highlight and the line map work on the rows, which stay as they were
    assert 'class="line py has-cuda" id="py-15" data-cuda="19 20 21"' in page


def test_highlighting_keeps_every_line_number():
    lines = ["", "", "def f():", '    """one', "", '    two"""', "    return 1  # done", ""]
    marked = highlighted_lines(lines, "python")
    assert len(marked) == len(lines) and marked[:2] == ("", "")
    assert [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in marked] == lines
    assert marked[4] == "" and marked[5] == '<span class="s">    two&#34;&#34;&#34;</span>'
    assert highlighted_lines(["/* a", "b */ int x;"], "cuda") == (
        '<span class="c">/* a</span>',
        '<span class="c">b */ </span><span class="kt">int </span>x;',
    )


def test_message_markdown_is_a_fixed_subset_over_escaped_text():
    assert inline_markdown(
        "the `sq` (4, 1152) tile is **replicated**; see [tilelang #2957]"
        "(https://github.com/tile-ai/tilelang/issues/2957)"
    ) == (
        "the <code>sq</code> (4, 1152) tile is <strong>replicated</strong>; see "
        '<a href="https://github.com/tile-ai/tilelang/issues/2957">tilelang #2957</a>'
    )
    # nothing inside backticks is Markdown, and nothing of the input is HTML
    assert inline_markdown("`**x** <b>`") == "<code>**x** &lt;b&gt;</code>"
    assert inline_markdown("a * b * c, `x*y` and **") == "a * b * c, <code>x*y</code> and **"
    hostile = (
        '**<img src=x onerror=alert(1)>** [run](javascript:alert(1)) [x](https://a.org/"onmouseover=alert)'
        " `</code><script>alert(2)</script>`"
    )
    rendered = inline_markdown(hostile)
    assert "<img" not in rendered and "<script" not in rendered and 'href="javascript' not in rendered
    assert "[run](javascript:alert(1))" in rendered
    assert '<a href="https://a.org/&#34;onmouseover=alert">x</a>' in rendered
    assert "<code>&lt;/code&gt;&lt;script&gt;alert(2)&lt;/script&gt;</code>" in rendered


def test_html_renders_the_markdown_of_messages_and_fixes_and_escapes_a_hostile_kernel(report_run, tmp_path):
    real = kernel(report_run, "add_2047")
    name = "k[`<b>x</b>`**<img src=x onerror=alert(1)>**]"
    hostile = dataclasses.replace(real, name=name)
    run = RunResult(
        "0",
        "sm_90",
        (FileResult(KERNELS_FILE, (hostile,)),),
        (
            KernelReport(
                hostile,
                (
                    Finding(
                        "TLV001",
                        "scalarized-load",
                        "warning",
                        f"`{name}` moves **16 bits**: `A[i] < B[i]` & more",
                        "Pad `N` to **2048**",
                        KERNELS_FILE,
                        15,
                        kernel=name,
                    ),
                ),
            ),
        ),
        rules=(),
    )
    write_html(run, str(tmp_path))
    page = (tmp_path / kernel_href(KERNELS_FILE, hostile)).read_text(encoding="utf-8")
    assert (
        '<div class="message"><code>k[</code>&lt;b&gt;x&lt;/b&gt;<code>**&lt;img src=x onerror=alert(1)&gt;**]</code>'
        " moves <strong>16 bits</strong>: <code>A[i] &lt; B[i]</code> &amp; more</div>"
    ) in page
    assert "<strong>fix:</strong> Pad <code>N</code> to <strong>2048</strong>" in page
    # the name itself is never Markdown: escaped in the title, the heading and the index
    assert "<img" not in page and "<b>x" not in page
    assert "<h1>k[`&lt;b&gt;x&lt;/b&gt;`**&lt;img src=x onerror=alert(1)&gt;**]</h1>" in page
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<img" not in index and "`&lt;b&gt;x&lt;/b&gt;`**&lt;img" in index


def test_html_index_puts_the_worst_kernel_first(report_run, tmp_path):
    rows = build_site(report_run).rows
    # could not be inspected, then the furthest from its floor, then the costliest estimate, then errors before
    # warnings before info
    assert [(row.name, row.status) for row in rows[:2]] == [("<module>", "error"), ("broken", "error")]
    gaps = [row.gap for row in rows[2:]]
    assert all(gaps) and gaps == sorted(gaps, reverse=True), [(row.name, row.gap) for row in rows]
    assert {row.name: row.cost for row in rows[2:]}["add_2047"] == 2.93
    real = kernel(report_run, "add_2047")

    def row(name, *severities_and_costs):
        k = dataclasses.replace(real, name=name)
        return k, KernelReport(
            k,
            tuple(
                Finding(
                    "TLV001",
                    "scalarized-load",
                    severity,
                    "m",
                    "f",
                    KERNELS_FILE,
                    15,
                    kernel=name,
                    cost=Cost(cost, "b") if cost else None,
                )
                for severity, cost in severities_and_costs
            ),
        )

    kernels = [
        row("warned", ("warning", None)),
        row("cheap_error", ("error", 1.2)),
        row("clean"),
        row("costly_warning", ("warning", 4.0), ("info", None)),
        row("erred", ("error", None)),
        row("tied_warning", ("warning", 1.2)),
        row("informed", ("info", None)),
    ]
    run = RunResult(
        "0", "sm_90", (FileResult(KERNELS_FILE, tuple(k for k, _ in kernels)),), tuple(r for _, r in kernels), rules=()
    )
    assert [r.name for r in build_site(run).rows] == [
        "costly_warning",
        "cheap_error",
        "tied_warning",
        "erred",
        "warned",
        "informed",
        "clean",
    ]
    write_html(run, str(tmp_path))
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "Worst first: kernels that could not be inspected, then by their gap from the floor" in index
    assert '<td class="n" data-value="4.0">4.00x</td>' in index


def _cells(grid) -> dict[str, int]:
    """Cells each path of a thread picture covers, by its title: a path is one rectangle per run."""
    cell = grid.width // grid.cols
    return {
        title: sum(int(w) * int(h) for w, h in re.findall(r"h(\d+)v(\d+)", d)) // cell**2 for title, _, d in grid.paths
    }


def test_html_draws_thread_grids(report_run):
    site = build_site(report_run)
    page = next(p for p in site.kernels if p.name == HOSTILE_KERNEL)
    acc = next(lay for lay in page.layouts if lay.name == "acc")
    source = next(lay for lay in kernel(report_run, HOSTILE_KERNEL).layouts if lay.name == "acc")
    assert (acc.input_shape, acc.thread, acc.index) == ("64 × 8", "_i * 2 + _j // 4", "_j % 4")
    assert (acc.grid.rows, acc.grid.cols) == (64, 8)
    owners = {thread for row in source.thread_grid for thread in row}
    assert len(owners) == 128
    # 128 threads: one path per thread, titled with its warp and lane, the cells it owns and no other
    cells = _cells(acc.grid)
    assert list(cells) == [
        f"thread {t} (warp {t // 32}, lane {t % 32}), first element [{t // 2}, {t % 2 * 4}]" for t in sorted(owners)
    ]
    assert set(cells.values()) == {4} and sum(cells.values()) == 64 * 8
    assert [s.label for s in acc.grid.legend] == [
        "warp 0: threads 0–31",
        "warp 1: threads 32–63",
        "warp 2: threads 64–95",
        "warp 3: threads 96–127",
        "lane 0 → lane 31 within each warp",
    ]
    # the corner: the first 16 rows, each thread's run of 4 numbered with the thread
    corner = acc.corner
    assert (corner.rows, corner.cols) == (16, 8) and corner.width // corner.cols >= 12
    assert [text for _, _, text in corner.labels] == [str(t) for t in range(32)]
    add = next(p for p in site.kernels if p.name == "add_2047")
    assert (add.layouts[0].grid.rows, add.layouts[0].grid.cols) == (16, 64)  # 1-D 1024 wrapped
    # 1-D: the corner is the first 512 elements, 32 per row, 4 threads of 8 to a row
    titles = [title for title, _, _ in add.layouts[0].grid.paths]
    assert titles[8] == "thread 8 (warp 0, lane 8), first element [64]"  # 8 elements each, from row 1 on
    assert (add.layouts[0].corner.rows, add.layouts[0].corner.cols) == (16, 32)
    assert [text for _, _, text in add.layouts[0].corner.labels[:5]] == ["0", "1", "2", "3", "4"]


@pytest.fixture(scope="module")
def wide_fragments():
    """Real kernels: one 64 x 64 fragment at 128, 256 and 512 threads."""
    return tl_inspect.inspect(os.path.join("tests", "api", "wide_fragments.py"))


def test_html_draws_fragments_of_many_threads_by_warp_at_a_bounded_size(wide_fragments):
    site = build_site(wide_fragments.run)
    for threads in (128, 256, 512):
        page = next(p for p in site.kernels if p.name == f"scale_rows[threads={threads}]")
        tile = next(lay for lay in page.layouts if lay.name == "tile")
        warps = threads // 32
        assert tile.grid.caption == f"64 × 64 elements of {threads} threads, coloured by warp"
        assert len(tile.grid.legend) == warps + 1 and len(tile.grid.paths) == threads
        assert sum(_cells(tile.grid).values()) == 64 * 64
        assert tile.grid.width <= 512 and tile.grid.height <= 384
        # every warp has its own hue: the legend's swatches differ
        assert len({swatch.background for swatch in tile.grid.legend}) == warps + 1
        corner = tile.corner
        assert (corner.rows, corner.cols) == (16, 32) and corner.width <= 512 and corner.height <= 384
        numbers = [int(text) for _, _, text in corner.labels]
        assert numbers[:8] == list(range(8)) and len(numbers) == 16 * 8  # runs of 4 in each row of 32


def test_html_renders_a_10k_line_cuda_source(report_run, tmp_path):
    real = kernel(report_run, "add_2047")
    lines = 10_000
    big = KernelArtifact(
        name="big",
        file=KERNELS_FILE,
        line=12,
        arch="sm_90",
        source="\n".join(f"  x[{i}] = y[{i}] < z;" for i in range(lines)),
        line_map=tuple(15 if i % 2 else None for i in range(lines)),
        accesses=real.accesses,
    )
    run = RunResult(
        "0",
        "sm_90",
        (FileResult(KERNELS_FILE, (big,)),),
        (
            KernelReport(
                big,
                (
                    Finding(
                        "TLV001",
                        "scalarized-load",
                        "error",
                        "m",
                        "f",
                        KERNELS_FILE,
                        15,
                        kernel="big",
                        cuda_lines=(9_999, 10_000),
                    ),
                ),
            ),
        ),
    )
    started = time.perf_counter()
    write_html(run, str(tmp_path))
    assert time.perf_counter() - started < 20
    rows = _parse(tmp_path / kernel_href(KERNELS_FILE, big)).rows
    assert rows["cu-10000"]["data-py"] == "15"
    assert len(rows["py-15"]["data-cuda"].split()) == lines // 2


# ---------------------------------------------------------------- bad data never crashes a reporter


def _bad_run(real: KernelArtifact) -> RunResult:
    hostile = "</script><img src=x onerror=alert(1)>{{ 7 * 7 }}"
    missing = KernelArtifact(
        name=hostile,
        file="no/such/file.py",
        line=None,
        arch="sm_90",
        source="int x;\n",
        line_map=(99,),
        layouts=(Layout("buffer", "f", "local.fragment", None, "Fragment", (), ()),),
    )
    failed = KernelArtifact(name="failed", file=KERNELS_FILE, line=None, arch="sm_90", status="error", error=None)
    orphan = KernelArtifact(name="orphan", file="elsewhere.py", line=3, arch="sm_90")
    findings = (
        Finding(
            "X1",
            "odd-rule",
            "fatal",
            "unknown severity\nsecond line",
            "",
            "no/such/file.py",
            0,
            kernel=hostile,
            cuda_lines=(0, 5, 99),
            col=0,
        ),
        Finding("X2", "odd-rule-2", "warning", hostile, hostile, "no/such/file.py", 10**6, end_line=3),
    )
    return RunResult(
        "0",
        "sm_90",
        (
            FileResult("broken.py", error="SyntaxError: <bad> & worse"),
            FileResult("no/such/file.py", (missing,)),
            FileResult(KERNELS_FILE, (failed, real)),
        ),
        (
            KernelReport(missing, findings),
            KernelReport(failed),
            KernelReport(real, (Finding("TLV001", "scalarized-load", "info", "no CUDA", "fix", KERNELS_FILE, 15),)),
            KernelReport(orphan),
        ),
        rules=(),
    )


@pytest.mark.parametrize("fmt", sorted(SNAPSHOT_FILES))
def test_bad_data_renders(report_run, fmt):
    run = _bad_run(kernel(report_run, "add_2047"))
    text = render(run, fmt)
    if fmt in ("full", "json"):
        assert "orphan" in text
    if fmt == "sarif":
        with open(SARIF_SCHEMA, encoding="utf-8") as f:
            jsonschema.Draft7Validator(json.load(f)).validate(json.loads(text))
    if fmt == "concise":
        # three findings, the broken file, the failed kernel, the summary
        assert len(text.splitlines()) == 3 + 2 + 1
        assert "unknown severity second line" in text


def test_bad_data_renders_html(report_run, tmp_path):
    run = _bad_run(kernel(report_run, "add_2047"))
    pages = write_html(run, str(tmp_path))
    assert len(pages) == 1 + 4 + 3  # index, four kernels, three rule pages
    site = build_site(run)
    missing = site.kernels[0]
    assert missing.source_missing and [f.rule for f in missing.stray] == ["X1", "X2"]
    assert missing.stray[0].cuda == (), "CUDA lines outside the source are dropped"
    assert missing.stray[0].severity == "info"
    index = open(pages[0], encoding="utf-8").read()
    assert "SyntaxError: &lt;bad&gt; &amp; worse" in index
    assert "<img" not in index and "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;{{ 7 * 7 }}" in index


# ---------------------------------------------------------------- command line


def test_cli_writes_a_format_and_the_html_report(tmp_path):
    out, html = tmp_path / "out.txt", tmp_path / "html"
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tl_inspect",
            KERNELS_FILE,
            "--format",
            "concise",
            "-o",
            str(out),
            "--html",
            str(html),
            "--no-cache",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2, proc.stderr  # the broken kernel
    assert f"{KERNELS_FILE}:37:1: error: kernel broken could not be compiled" in out.read_text()
    index = (html / "index.html").read_text()
    for name in ("add_2047", "add_2048", "broken"):
        assert f">{name}</a>" in index
