"""Text the HTML report turns into markup: source lines highlighted by pygments, and the inline
Markdown of messages. Both escape every character of their input before adding a tag of their own,
so kernel names, messages and source text never reach the page as HTML."""

from __future__ import annotations

import re

from markupsafe import Markup, escape
from pygments.lexers import CudaLexer, PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, String

# the short classes report.css colours; a token type takes its nearest listed ancestor's class, any
# other token is plain text (punctuation, operators and names stay uncoloured, which keeps the page small)
TOKEN_CLASSES = {
    Keyword: "k",
    Operator.Word: "k",
    Keyword.Type: "kt",
    Name.Builtin: "nb",
    Name.Function: "nf",
    Name.Class: "nf",
    Name.Decorator: "nd",
    String: "s",
    Number: "m",
    Comment: "c",
    Comment.Preproc: "cp",
    Comment.PreprocFile: "cp",
}
LEXERS = {"python": PythonLexer, "cuda": CudaLexer}


def _token_class(ttype) -> str:
    while ttype not in TOKEN_CLASSES and ttype.parent is not None:
        ttype = ttype.parent
    return TOKEN_CLASSES.get(ttype, "")


def _line_markup(pieces: list) -> Markup:
    return Markup(
        "".join(f'<span class="{css}">{escape(text)}</span>' if css else str(escape(text)) for css, text in pieces)
    )


def highlighted_lines(lines: list[str], language: str) -> tuple[Markup, ...]:
    """One Markup per line, so each source line keeps its own table row and anchor: a token that
    spans lines (a docstring, a block comment) is closed at each line's end and reopened on the next."""
    # stripnl off: pygments would otherwise drop leading blank lines and shift every line number
    lexer = LEXERS[language](stripnl=False, ensurenl=False)
    rendered, pieces, indent = [], [], ""
    for ttype, value in lexer.get_tokens("\n".join(lines)):
        css = _token_class(ttype)
        for n, text in enumerate(value.split("\n")):
            if n:
                rendered.append(_line_markup(pieces or [("", indent)]))
                pieces, indent = [], ""
            if not text:
                continue
            if not pieces and text.isspace():
                # a line's indentation goes into its first token: an HTML parser that rewrites the
                # page (BeautifulSoup in nbconvert's HTML export) collapses a text node of only spaces
                indent += text
            elif pieces and (pieces[-1][0] == css or text.isspace()):
                # a space between two tokens of one class joins them in one span
                pieces[-1] = (pieces[-1][0], pieces[-1][1] + text)
            else:
                pieces.append((css, indent + text))
                indent = ""
    rendered.append(_line_markup(pieces or [("", indent)]))
    if len(rendered) != len(lines):  # a lexer that ate or added a line break: plain text keeps the numbering
        return tuple(Markup(escape(line)) for line in lines)
    return tuple(rendered)


CODE_SPAN = re.compile(r"`([^`]+)`")
BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
# only web and in-page targets: no javascript:, data: or file: link can be written
LINK = re.compile(r"\[([^\]]+)\]\((https?://[^\s()]+|#[\w-]+)\)")


def inline_markdown(text: str) -> Markup:
    """A message's Markdown, a fixed subset: `code`, **bold** and [text](https://...). The text is
    escaped first and the tags added after; code spans are cut out before the rest is read, so
    nothing inside backticks is taken for Markdown."""
    parts = CODE_SPAN.split(str(text))  # prose at even indexes, code spans' contents at odd ones
    html = []
    for n, part in enumerate(parts):
        escaped = str(escape(part))
        if n % 2:
            html.append(f"<code>{escaped}</code>")
        else:
            html.append(LINK.sub(r'<a href="\2">\1</a>', BOLD.sub(r"<strong>\1</strong>", escaped)))
    return Markup("".join(html))
