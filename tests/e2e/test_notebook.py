"""A real notebook: a kernel defined in a cell, executed by `jupyter nbconvert --execute --to html` (its lab
template carries JupyterLab's own output CSS), then opened in headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright) as a student would see it.

With TL_INSPECT_UPDATE_SNAPSHOTS=1 the screenshot also replaces docs/notebook.png, the README's picture."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from report_data import ROOT, UPDATE_SNAPSHOTS
from test_report_browser import CHROMIUM, CHROMIUM_ARGS

nbformat = pytest.importorskip("nbformat", reason="nbconvert is not installed (the test extra has it)")

NOTEBOOK_SCREENSHOT = os.path.join(ROOT, "docs", "notebook.png")
CELLS = [
    "import tilelang.language as T\nimport tl_inspect",
    # the kernel lives only in this cell: IPython keeps its text in linecache, nothing is on disk
    """def add(N, block=1024):
    @T.prim_func
    def add_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16),
                 C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return add_main""",
    "report = tl_inspect.inspect(add, N=4095)\nreport",
    "print(report)",
]
STORE_LINE = 7  # the cell line of the store the tail guard scalarizes


@pytest.fixture
def page():
    """A Chromium page that fails the test on a script error; the lab template's require.js and MathJax
    come from a CDN, which an offline machine cannot reach and the fragment does not need."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 860})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.route("http*://**", lambda route: route.abort())
            yield page
            assert errors == []
        finally:
            browser.close()


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("notebook")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, str(folder / "student.ipynb"))
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter",
            "nbconvert",
            "--execute",
            "--to",
            "html",
            "--ExecutePreprocessor.timeout=600",
            "student.ipynb",
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return folder / "student.html"


def test_a_cell_kernel_renders_left_aligned_with_its_source_under_jupyterlab_css(executed, page, tmp_path):
    page.goto(executed.as_uri())
    output = page.locator(".jp-RenderedHTMLCommon .tl-inspect")
    assert output.count() == 1, "the lab template wraps the output in JupyterLab's rendered-HTML class"
    text = output.inner_text()
    assert "could not be read" not in text and "outside the shown source" not in text
    python = output.locator("table.source.py")
    assert "def add(N, block=1024):" in python.inner_text()
    # the finding sits right under the store's line of the cell
    finding = output.locator("tr.finding")
    assert finding.count() == 1 and "TLV002" in finding.inner_text()
    assert finding.evaluate("row => row.previousElementSibling.id").endswith(f"py-{STORE_LINE}")

    def style(selector: str, prop: str) -> str:
        return output.locator(selector).first.evaluate(f"e => getComputedStyle(e).{prop}")

    # JupyterLab right-aligns every td and stripes rows; the fragment's own alignment wins
    assert style("table.source.py td.code", "textAlign") == "left"
    assert style("table.source.cu td.code", "textAlign") == "left"
    assert style("table.source.cu td.num", "textAlign") == "right"
    assert style("tr.finding > td[colspan]", "textAlign") == "left"
    assert style("table.access-table td", "textAlign") == "left"
    assert style("table.source.py td.code", "whiteSpace") == "pre"
    # the highlighted lines keep their indentation through nbconvert's rewriting of the page
    store = output.locator(f"tr[id$='py-{STORE_LINE}'] td.code").inner_text()
    assert store == "                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]"
    assert output.locator(f"tr[id$='py-{STORE_LINE - 1}'] td.code .k").first.inner_text().strip() == "for"
    assert style("table.source.py tr", "backgroundColor") == "rgba(0, 0, 0, 0)"
    # the CUDA line number and its Python-line marker stay apart, not drawn as one number
    number, marker = (
        output.locator("table.source.cu td.num").first.bounding_box(),
        output.locator("table.source.cu td.map").first.bounding_box(),
    )
    assert number["x"] + number["width"] <= marker["x"]

    # the plain-text repr (what `print` shows and the notebook stores beside the HTML) is a few lines
    printed = page.locator(".jp-OutputArea-output pre").last.inner_text()
    assert printed.startswith("<tl_inspect.Report 1 kernel, 1 finding")
    assert len(printed.splitlines()) == 2 and "TLV002 lane-dependent-predicate (line 7)" in printed

    output.screenshot(path=str(tmp_path / "notebook.png"))
    assert (tmp_path / "notebook.png").stat().st_size > 10_000
    if UPDATE_SNAPSHOTS:
        shutil.copyfile(tmp_path / "notebook.png", NOTEBOOK_SCREENSHOT)
