"""A Jupyter output (`_repr_html_`): each kernel's page body from the HTML report, with the report's
CSS inline and scoped to the output, and no JS."""

from __future__ import annotations

import itertools
import re
from importlib import resources

from tl_inspect.files.sources import SourceFiles
from tl_inspect.reports.html import build_kernel_page, environment

# Jupyter's own output CSS (`.jp-RenderedHTMLCommon td { text-align: right }`, striped and hovered rows,
# centred tables, code backgrounds) reaches into the fragment wherever report.css sets nothing; this
# puts each such property back first, and report.css's rules follow it and win
NOTEBOOK_RESET = """
table, thead, tbody, tr, th, td { text-align: left; vertical-align: top; padding: 0; border: 0;
  background: transparent; color: inherit; font-size: inherit; line-height: inherit; white-space: normal;
  max-width: none; margin: 0; table-layout: auto; }
th { font-weight: 600; }
pre, code { background: transparent; color: inherit; padding: 0; border: 0; }
pre { white-space: pre; }
code { white-space: inherit; }
p { text-align: left; margin: 0 0 .5em; }
ul, ol { margin: 0 0 .5em; }
"""
NOTEBOOK_CSS = """
.pane { max-height: 48em; }
details.kernel > summary { cursor: pointer; font-weight: 600; margin: 10px 0 4px; }
"""
_fragments = itertools.count(1)


def scoped_css(css: str, scope: str) -> str:
    """report.css with every selector put under `scope`, so a notebook output styles itself and
    nothing of the notebook around it. report.css is hand-written: flat rules, no at-rules."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    rules = []
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        scoped = []
        for selector in (s.strip() for s in selectors.split(",")):
            if selector in (":root", "html", "body"):
                scoped.append(scope)
            elif selector == "*":
                scoped.extend((scope, f"{scope} *"))
            else:
                scoped.append(f"{scope} {selector}")
        rules.append(f"{', '.join(scoped)} {{{body.strip()}}}")
    return "\n".join(rules)


def notebook_html(reports, arch: str, version: str, problems=(), sources: SourceFiles | None = None) -> str:
    """A self-contained fragment for Jupyter's `_repr_html_`: each kernel's page body (Python and CUDA
    panes, findings under their lines, access table, layouts) with the report's CSS inline and no JS.
    One kernel is shown as is; several each sit in a <details>, open when it has findings. `problems`:
    lines about files that could not be imported."""
    sources = sources or SourceFiles()
    # ids are prefixed per output: a notebook shows many outputs in one document
    fragment = f"tli{next(_fragments)}"
    css = resources.files("tl_inspect.reports").joinpath("assets", "report.css").read_text(encoding="utf-8")
    pages = [(f"{fragment}-{n}-", build_kernel_page(report, "", sources)) for n, report in enumerate(reports)]
    return (
        environment()
        .get_template("notebook.html")
        .render(
            # the scope's class repeated: (0,4,0) outweighs Jupyter's `:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon
            # tbody tr:nth-child(odd)` (0,3,2), so the reset wins over the host, and report.css after it over the reset
            scope=fragment,
            css=scoped_css(NOTEBOOK_RESET + css + NOTEBOOK_CSS, f".tl-inspect.{fragment}.{fragment}.{fragment}"),
            pages=pages,
            problems=tuple(problems),
            arch=arch,
            version=version,
            rule_links=False,
        )
    )
