"""The user's file as rules build their fixes from it: libcst nodes found by line, and the file's text
with one node replaced or one statement added, in the user's own formatting and comments."""

from __future__ import annotations

import functools

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider


class FixSource:
    """One file's text and its libcst tree; None-returning lookups where libcst cannot parse it."""

    def __init__(self, text: str):
        from tl_inspect.rules.base import parse_source  # the rules' own parse, shared; rules import this module

        self.text = text
        self.wrapper = parse_source(text)

    @functools.cached_property
    def positions(self):
        return self.wrapper.resolve(PositionProvider) if self.wrapper else {}

    @functools.cached_property
    def parents(self):
        return self.wrapper.resolve(ParentNodeProvider) if self.wrapper else {}

    def start(self, node) -> int:
        return self.positions[node].start.line

    def nodes(self, kind, line: int | None = None) -> list:
        """Nodes of `kind` that start on `line` (all of them when None), the last to start first."""
        found = [n for n, p in self.positions.items() if isinstance(n, kind) and (line is None or p.start.line == line)]
        return sorted(found, key=lambda n: (self.positions[n].start.line, self.positions[n].start.column), reverse=True)

    def enclosing(self, kind, line: int) -> list:
        """Nodes of `kind` whose span holds `line`, innermost first."""
        found = [n for n, p in self.positions.items() if isinstance(n, kind) and p.start.line <= line <= p.end.line]
        return sorted(found, key=lambda n: (self.positions[n].start.line, -self.positions[n].end.line), reverse=True)

    def statement(self, line: int):
        """The simple statement line starting at `line`, else None."""
        return next(iter(self.nodes(cst.SimpleStatementLine, line)), None)

    def code(self, node) -> str:
        return self.wrapper.module.code_for_node(node)

    def replaced(self, old, new) -> str:
        return self.wrapper.module.deep_replace(old, new).code

    def removed(self, statement) -> str | None:
        """The file without `statement` (a line of its block, which keeps at least one other)."""
        block = self.parents.get(statement)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)) or len(block.body) < 2:
            return None
        return self.replaced(block, block.with_changes(body=[s for s in block.body if s is not statement]))

    def inserted_after(self, statement, code: str) -> str | None:
        """The file with the statement `code` added after `statement`, at its indentation."""
        return self._inserted(statement, code, after=True)

    def inserted_first(self, block_owner, code: str) -> str | None:
        """The file with the statement `code` added at the top of the body of `block_owner` (a `with`)."""
        body = block_owner.body
        if not isinstance(body, cst.IndentedBlock) or not body.body:
            return None
        return self._inserted(body.body[0], code, after=False)

    def _inserted(self, statement, code: str, after: bool) -> str | None:
        block = self.parents.get(statement)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return None
        index = list(block.body).index(statement) + after
        body = list(block.body)
        body.insert(index, cst.parse_statement(code))
        return self.replaced(block, block.with_changes(body=body))


def call_name(call: cst.Call) -> str:
    """`T.serial(...)` -> "serial"; `range(...)` -> "range"."""
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
