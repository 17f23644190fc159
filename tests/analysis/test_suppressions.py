"""Suppression comments: what each form covers."""

from __future__ import annotations

from tl_inspect.lint.suppressions import parse_directives

SOURCE = """import tilelang  # tl-inspect: ignore-file[scalarized-load]
def k():
    x = 1  # tl-inspect: ignore[TLV002, missing-clear]
    # tl-inspect: ignore[lane-dependent-predicate]
    # an unrelated comment between
    y = f(a,
          b)
    s = "# tl-inspect: ignore[TLV001] inside a string is no suppression"
    z = g(1,  # tl-inspect: ignore[TLV003]
          2)
    w = 2  # noqa: E501  # tl-inspect: ignore  # a bare ignore names nothing
"""


def test_each_form_covers_the_right_lines():
    directives = {d.line: d for d in parse_directives(SOURCE)}
    assert sorted(directives) == [1, 3, 4, 9, 11]
    assert directives[1].file_wide and directives[1].names == ("scalarized-load",)
    assert directives[3].names == ("TLV002", "missing-clear") and directives[3].covers == {3}
    # on a line of its own: the next statement, every physical line of it, past other comments
    assert directives[4].covers == {6, 7}
    # trailing a line of a multi-line statement: the whole statement
    assert directives[9].covers == {9, 10}
    assert directives[11].names == () and directives[11].col == 12


def test_a_file_that_does_not_tokenize_has_no_suppressions():
    assert parse_directives("x = (  # tl-inspect: ignore[TLV001]\n") == []
