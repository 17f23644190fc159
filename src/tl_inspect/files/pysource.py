"""The user's Python file as logical lines (statements) and comments, from its tokens.

Suppression comments and baseline fingerprints both need to know which physical lines make one
statement, and which comments are real comments rather than text inside a string.
"""

from __future__ import annotations

import bisect
import functools
import io
import tokenize
from dataclasses import dataclass

_SKIPPED = (tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.NL)


@dataclass(frozen=True)
class Statement:
    """One logical line: physical lines `start`..`end` and its tokens without comments or layout."""

    start: int
    end: int
    tokens: tuple

    @property
    def normalized(self) -> str:
        """The statement's text with formatting and comments gone: `a+b  # x` and `a + b` read alike."""
        return " ".join(self.tokens)


@dataclass(frozen=True)
class Comment:
    line: int
    col: int  # 1-based column of the `#`
    text: str
    statement: Statement | None  # the statement the comment trails, None for a comment on its own line


@dataclass(frozen=True)
class PySource:
    statements: tuple  # Statement, in order
    comments: tuple  # Comment, in order

    @functools.cached_property
    def _starts(self) -> list[int]:
        return [s.start for s in self.statements]

    def statement_at(self, line: int) -> Statement | None:
        index = bisect.bisect_right(self._starts, line) - 1
        if index >= 0 and self.statements[index].start <= line <= self.statements[index].end:
            return self.statements[index]
        return None

    def statement_after(self, line: int) -> Statement | None:
        """The first statement starting below `line` (what a comment on its own line refers to)."""
        return next((s for s in self.statements if s.start > line), None)


@functools.lru_cache(maxsize=64)
def scan(text: str) -> PySource:
    """Statements and comments of `text`; a file that does not tokenize has none."""
    statements: list[Statement] = []
    comments: list[tuple[int, int, str, bool]] = []  # line, column, text, trails code
    tokens: list[str] = []
    start = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                trailing = bool(tokens) or bool(tok.line[: tok.start[1]].strip())
                comments.append((tok.start[0], tok.start[1] + 1, tok.string, trailing))
            elif tok.type == tokenize.NEWLINE:
                if tokens:
                    statements.append(Statement(start, tok.start[0], tuple(tokens)))
                tokens = []
            elif tok.type not in _SKIPPED:
                if not tokens:
                    start = tok.start[0]
                tokens.append(tok.string)
    except (tokenize.TokenError, SyntaxError):
        return PySource((), ())
    source = PySource(tuple(statements), ())
    return PySource(
        source.statements,
        tuple(
            Comment(line, col, comment, source.statement_at(line) if trailing else None)
            for line, col, comment, trailing in comments
        ),
    )
