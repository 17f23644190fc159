"""The HTML report in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright),
opened from file:// as a user would open it offline.

With TL_INSPECT_UPDATE_SNAPSHOTS=1 the screenshot of a real run's kernel page also replaces
docs/kernel-page.png, the README's picture (tests/e2e/test_notebook.py takes docs/notebook.png in a real
notebook)."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import import_api_kernels
from report_data import KERNELS_FILE, ROOT, UPDATE_SNAPSHOTS, report_run  # noqa: F401  (a fixture)

import tl_inspect
from tl_inspect.cli import main as tl_inspect_main
from tl_inspect.reports.html import kernel_href, write_html

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
README_SCREENSHOT = os.path.join(ROOT, "docs", "kernel-page.png")
# what Jupyter puts around an output: the notebook's own styles, which the fragment must leave alone
NOTEBOOK_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>notebook</title>
<style>body { margin: 8px; font: 16px serif; } h1 { color: rgb(1, 2, 3); }</style></head>
<body><h1 id="cell">In [1]: tl_inspect.inspect(kernels.add, N=2047).kernel()</h1>
<div class="output">{}</div></body></html>"""


@pytest.fixture
def page(tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 860})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("requestfailed", lambda request: errors.append(f"request failed: {request.url}"))
            yield page
            assert errors == []
        finally:
            browser.close()


def classes(page, selector: str) -> set[str]:
    return set(page.get_attribute(selector, "class").split())


def open_add_2047(report_run, tmp_path, page, monkeypatch) -> None:
    """The report written under `tmp_path`, open at the kernel page of add_2047."""
    monkeypatch.chdir(ROOT)
    report = tmp_path / "report"
    write_html(report_run, str(report))
    add = next(r.kernel for r in report_run.reports if r.kernel.name == "add_2047")
    page.goto((report / kernel_href(KERNELS_FILE, add)).as_uri())


def test_kernel_page_links_lines_and_walks_findings(report_run, tmp_path, page, monkeypatch):
    open_add_2047(report_run, tmp_path, page, monkeypatch)

    # Python line 15 produced CUDA lines 19-21, the serial lane loop, its guard and the store (the
    # inspector's line map); the other CUDA lines stay plain
    page.click("#py-15", position={"x": 60, "y": 6})
    assert "sel" in classes(page, "#py-15")
    assert "hl" in classes(page, "#cu-19") and "hl" in classes(page, "#cu-21")
    assert "hl" not in classes(page, "#cu-18")

    # and back: CUDA line 21 highlights Python line 15
    page.click("#py-1", position={"x": 60, "y": 6})
    assert "hl" not in classes(page, "#cu-21")
    page.click("#cu-21", position={"x": 60, "y": 6})
    assert "hl" in classes(page, "#py-15") and "sel" in classes(page, "#cu-21")

    # j walks the findings in page order, k walks back
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.id") == "finding-1"
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.id") == "finding-2"
    assert "current" in classes(page, "#finding-2")
    assert "hl" in classes(page, "#py-15") and "hl" in classes(page, "#cu-21")
    assert page.is_visible("#cu-21")
    page.screenshot(path=str(tmp_path / "kernel-page.png"))
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.id") == "finding-1"
    assert "hl" in classes(page, "#cu-20") and "hl" not in classes(page, "#cu-21")

    # ? opens the help, Escape closes it, u goes up to the index
    page.keyboard.press("?")
    assert page.evaluate("document.getElementById('help').open")
    page.keyboard.press("Escape")
    assert not page.evaluate("document.getElementById('help').open")
    page.keyboard.press("u")
    page.wait_for_url("**/index.html")
    assert (tmp_path / "kernel-page.png").stat().st_size > 10_000


def test_explain_panel_shows_each_step_and_links_the_access_to_its_line(report_run, tmp_path, page, monkeypatch):
    open_add_2047(report_run, tmp_path, page, monkeypatch)

    assert not page.is_visible(".explain ol.chain")
    page.click(".explain > summary")
    steps = page.locator(".explain ol.chain > li")
    assert steps.count() == 2
    assert "passed" in classes(page, ".explain ol.chain > li:nth-child(1)")
    failed = page.locator(".explain ol.chain > li.failed")
    assert failed.locator(".mark").inner_text() == "NO"
    assert failed.locator(".question").inner_text() == "Is the bounds check uniform inside the vector group?"
    assert "2047 is not a multiple of 8" in failed.locator(".answer").inner_text()
    assert page.locator(".explain .outcome").inner_text() == "stopped at step 2."
    assert "uint4" in page.locator(".explain .explain-proof pre.after").inner_text()
    page.locator(".explain-group h3").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "explain.png"), full_page=False)
    page.click(".explain-group h3 a")
    assert page.evaluate("location.hash") == "#py-15"


def test_index_sorts_and_filters(report_run, tmp_path, page, monkeypatch):
    monkeypatch.chdir(ROOT)
    write_html(report_run, str(tmp_path))
    page.goto((tmp_path / "index.html").as_uri())
    kernels = (
        "Array.from(document.querySelectorAll('#kernels tbody tr:not([hidden]) td:nth-child(2)'))"
        ".map(td => td.textContent.trim())"
    )
    page.click("th:has-text('scalar')")
    page.click("th:has-text('scalar')")  # descending
    assert page.evaluate(kernels)[0] == "add_2047"
    page.fill("#filter", "add_")
    assert sorted(page.evaluate(kernels)) == ["add_2047", "add_2048"]
    page.fill("#filter", "")
    page.select_option("#show", "error")
    assert sorted(page.evaluate(kernels)) == ["<module>", "broken"]
    page.select_option("#show", "findings")
    assert len(page.evaluate(kernels)) == 2
    page.fill("#filter", "no such kernel")
    assert page.is_visible("#no-match")


def test_real_run_links_a_finding_to_its_cuda_and_pictures_it_for_the_readme(tmp_path, page, monkeypatch):
    """The whole pipeline, real rules included, as the README's first command runs it."""
    monkeypatch.chdir(ROOT)
    target = "fixtures/kernels/vec_elementwise_1d.py"
    report, findings = tmp_path / "report", tmp_path / "findings.json"
    status = tl_inspect_main([target, "--html", str(report), "--format", "json", "-o", str(findings)])
    assert status == 1
    kernel = next(k for k in json.loads(findings.read_text())["kernels"] if k["findings"])
    finding = kernel["findings"][0]
    pages = [p.name for p in report.iterdir() if p.name.startswith("k_") and f"_{kernel['name']}_" in p.name]
    assert len(pages) == 1
    page.goto((report / pages[0]).as_uri())

    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.id") == "finding-1"
    page.click(f"#py-{finding['line']}", position={"x": 60, "y": 6})
    assert finding["cuda_lines"]
    for line in finding["cuda_lines"]:
        assert "hl" in classes(page, f"#cu-{line}")
    page.screenshot(path=str(tmp_path / "kernel-page.png"))
    assert (tmp_path / "kernel-page.png").stat().st_size > 10_000
    if UPDATE_SNAPSHOTS:
        os.makedirs(os.path.dirname(README_SCREENSHOT), exist_ok=True)
        shutil.copyfile(tmp_path / "kernel-page.png", README_SCREENSHOT)


def test_notebook_fragment_shows_the_finding_its_proof_and_the_access_table(tmp_path, page, monkeypatch):
    """`_repr_html_` inside a page standing in for Jupyter: self-contained (no request leaves the page,
    the page fixture fails on one), readable without JS, and styled without restyling the notebook."""
    monkeypatch.chdir(ROOT)
    kernel = tl_inspect.inspect(import_api_kernels("kernels").add, N=2047).kernel()
    fragment = kernel._repr_html_()
    assert "<script" not in fragment and "<link" not in fragment
    page.set_content(NOTEBOOK_PAGE.replace("{}", fragment))

    finding = page.locator(".tl-inspect tr.finding")
    assert finding.count() == 1 and finding.is_visible()
    # under its Python line: the row before it is line 13, the statement the finding is about
    assert page.evaluate("document.querySelector('.tl-inspect tr.finding').previousElementSibling.id").endswith("py-13")
    assert "TLV002" in finding.inner_text() and "lane-dependent-predicate" in finding.inner_text()
    assert "2.61x for the kernel" in page.locator(".tl-inspect .finding .cost").inner_text()
    assert "uint4" in page.locator(".tl-inspect .proof pre.after").inner_text()
    assert page.locator(".tl-inspect .proof pre.before").is_visible()
    assert page.locator(".tl-inspect .pane table.source.cu tr").count() == len(kernel.cuda.splitlines())
    table = page.locator(".tl-inspect table.access-table")
    assert table.is_visible()
    rows = [r.split("\t") for r in table.locator("tbody tr").all_inner_texts()]
    assert sorted((r[0], r[1], r[10]) for r in rows) == [
        ("A", "load", "costly"),
        ("B", "load", "costly"),
        ("C", "store", "costly"),
    ]
    # the report's CSS applies inside the output and nowhere else
    assert (
        page.evaluate(
            "getComputedStyle(document.querySelector('.tl-inspect tr.finding > td[colspan]')).borderLeftWidth"
        )
        == "4px"
    )
    assert page.evaluate("getComputedStyle(document.body).fontFamily") == "serif"
    assert page.evaluate("getComputedStyle(document.getElementById('cell')).color") == "rgb(1, 2, 3)"


def test_the_cuda_pane_opens_at_the_first_finding_and_follows_each_opened_one(report_run, tmp_path, page, monkeypatch):
    page.set_viewport_size({"width": 1400, "height": 420})  # short enough that the CUDA pane scrolls
    open_add_2047(report_run, tmp_path, page, monkeypatch)
    pane_scroll = "document.getElementById('cu-pane').scrollTop"
    in_pane = """id => { const row = document.getElementById(id).getBoundingClientRect();
                         const pane = document.getElementById('cu-pane').getBoundingClientRect();
                         return row.top >= pane.top && row.bottom <= pane.bottom; }"""
    # first load: finding 1 (line 14, its guard on CUDA line 20) is marked, its CUDA line scrolled to and
    # marked, and the focus left where it was, so j still starts at finding 1
    assert "current" in classes(page, "#finding-1")
    assert "hl" in classes(page, "#cu-20") and "hl" not in classes(page, "#cu-19")
    assert page.evaluate(pane_scroll) > 0 and page.evaluate(in_pane, "cu-20")
    assert page.evaluate("document.activeElement === document.body")
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.id") == "finding-1"
    # a finding opened by its link: its CUDA lines, wherever the pane was
    page.evaluate("document.getElementById('cu-pane').scrollTop = 0")
    page.goto(page.url.split("#")[0] + "#finding-2")
    page.reload()
    assert "current" in classes(page, "#finding-2")
    assert all("hl" in classes(page, f"#cu-{n}") for n in (19, 20, 21))
    assert page.evaluate(pane_scroll) > 0 and page.evaluate(in_pane, "cu-19")
    page.screenshot(path=str(tmp_path / "cuda-pane.png"))


def test_source_is_highlighted_in_the_report_and_in_the_notebook_fragment(report_run, tmp_path, page, monkeypatch):
    open_add_2047(report_run, tmp_path, page, monkeypatch)
    colour = "sel => getComputedStyle(document.querySelector(sel)).color"
    keyword, plain = page.evaluate(colour, "#py-14 td.code .k"), page.evaluate(colour, "#py-14 td.code")
    assert keyword != plain and page.locator("#py-14 td.code .k").first.inner_text().strip() == "for"
    assert page.evaluate(colour, "#cu-4 td.code .cp") not in (plain, keyword)
    # a selected line keeps its highlight under the token colours
    page.click("#py-15", position={"x": 60, "y": 6})
    assert (
        page.evaluate("getComputedStyle(document.querySelector('#py-15 td.code')).backgroundColor")
        == "rgb(255, 213, 79)"
    )
    kernel = tl_inspect.inspect(import_api_kernels("kernels").add, N=2047).kernel()
    page.set_content(NOTEBOOK_PAGE.replace("{}", kernel._repr_html_()))
    assert page.evaluate(colour, ".tl-inspect table.source.py td.code .k") == keyword
    assert page.evaluate(colour, ".tl-inspect .finding .message code") != "rgb(1, 2, 3)"


def test_index_opens_furthest_from_the_floor_first_and_sorts_by_cost(report_run, tmp_path, page, monkeypatch):
    monkeypatch.chdir(ROOT)
    write_html(report_run, str(tmp_path))
    page.goto((tmp_path / "index.html").as_uri())
    kernels = (
        "Array.from(document.querySelectorAll('#kernels tbody tr td:nth-child(2)')).map(td => td.textContent.trim())"
    )
    # scale, one block of 128 threads, sits furthest from its floor (1.20x); add_2047 has the costliest finding
    assert page.evaluate(kernels)[:3] == ["<module>", "broken", "scale"]
    assert page.get_attribute("th:has-text('Gap')", "aria-sort") == "descending"
    assert page.locator("p.order").is_visible()
    page.click("th:has-text('Cost')")  # ascending, then descending
    page.click("th:has-text('Cost')")
    assert page.evaluate(kernels)[0] == "add_2047"


def test_fragments_of_128_256_and_512_threads_draw_a_bounded_map_with_a_legend(tmp_path, page, monkeypatch):
    monkeypatch.chdir(ROOT)
    run = tl_inspect.inspect(os.path.join("tests", "api", "wide_fragments.py")).run
    write_html(run, str(tmp_path))
    for report in run.reports:
        page.goto((tmp_path / kernel_href(report.kernel.file, report.kernel)).as_uri())
        threads = report.kernel.name.split("=")[1].rstrip("]")
        figures = page.locator("figure.grid.by-warp")
        assert figures.count() == 2  # the loop's layout and the fragment's
        for n in range(figures.count()):
            figure = figures.nth(n)
            box = figure.locator("svg").bounding_box()
            assert box["width"] <= 512 and box["height"] <= 384
            legend = figure.locator("ul.legend li")
            assert legend.count() == int(threads) // 32 + 1 and legend.first.is_visible()
            assert legend.first.inner_text() == "warp 0: threads 0–31"
            assert f"of {threads} threads, coloured by warp" in figure.locator("figcaption").inner_text()
        corner = page.locator("figure.grid.numbered").first
        box = corner.locator("svg").bounding_box()
        assert box["width"] <= 512 and box["height"] <= 384
        # the numbers are legible: the text is at least 9 px and sits inside its own run of cells
        assert corner.locator("text").first.text_content() == "0"
        text = corner.locator("text").nth(1).bounding_box()
        assert text["height"] >= 9 and text["width"] < box["width"] / 8
        page.evaluate("document.querySelector('header.top').style.position = 'static'")  # off the picture
        page.locator(".grids").screenshot(path=str(tmp_path / f"layout-{threads}.png"))
        assert (tmp_path / f"layout-{threads}.png").stat().st_size > 10_000
