"""The user's file as rules build their fixes from it: libcst nodes found by line, and the file's text
with one node replaced or one statement added, in the user's own formatting and comments."""

from __future__ import annotations

import functools

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider


@functools.lru_cache(maxsize=8)
def parse_source(text: str):
    """Parsed once per file, not once per kernel and rule (a file often holds many kernels); shared by the
    rules and the fixes. None where libcst cannot parse the file."""
    try:
        return MetadataWrapper(cst.parse_module(text))
    except cst.ParserSyntaxError:
        return None


class FixSource:
    """One file's text and its libcst tree; None-returning lookups where libcst cannot parse it."""

    def __init__(self, text: str):
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

    def kernel_block(self, line: int):
        """The `with T.Kernel(...)` whose body holds `line` (the alias of tilelang.language is then
        `block.items[0].item.func.value`), else None."""
        return next(
            (
                block
                for block in self.enclosing(cst.With, line)
                if _is_call(block.items[0].item, "Kernel") and isinstance(block.items[0].item.func, cst.Attribute)
            ),
            None,
        )

    def integer_literal(self, expr, kernel: str):
        """The integer literal that gives `expr` its value in the kernel named `kernel`: `expr` itself; for a
        parameter of a function around it (the factory), the literal the file's `kernel = factory(...)`
        passes for it, else the parameter's default; for a name the module assigns once, that literal.
        None where no single literal of the file writes the value."""
        if isinstance(expr, cst.Integer):
            return expr
        if not isinstance(expr, cst.Name):
            return None
        for function in self.enclosing(cst.FunctionDef, self.start(expr)):
            parameters = function.params
            positional = [p.name.value for p in (*parameters.posonly_params, *parameters.params)]
            parameter = next(
                (
                    p
                    for p in (*parameters.posonly_params, *parameters.params, *parameters.kwonly_params)
                    if p.name.value == expr.value
                ),
                None,
            )
            if parameter is None:
                continue
            call = self._built_by(kernel, function.name.value)
            passed = None
            if call is not None:
                index = positional.index(expr.value) if expr.value in positional else None
                plain = [a for a in call.args if a.keyword is None and not a.star]
                passed = next(
                    (a.value for a in call.args if a.keyword and a.keyword.value == expr.value),
                    plain[index].value if index is not None and index < len(plain) else None,
                )
            value = passed if passed is not None else parameter.default
            return value if isinstance(value, cst.Integer) else None
        values = [value for target, value in self._module_assignments() if target == expr.value]
        return values[0] if len(values) == 1 and isinstance(values[0], cst.Integer) else None

    def _built_by(self, kernel: str, factory: str):
        """The call of `factory` in the module's `kernel = factory(...)`, else None."""
        for target, value in self._module_assignments():
            if target == kernel and _is_call(value, factory):
                return value
        return None

    def _module_assignments(self) -> list:
        """(name, value) of each name the module's top-level statements assign, `A, B = 1, 2` pairwise."""
        pairs = []
        lines = [
            s for s in (self.wrapper.module.body if self.wrapper else ()) if isinstance(s, cst.SimpleStatementLine)
        ]
        for line in lines:
            for assign in (s for s in line.body if isinstance(s, cst.Assign)):
                for target in assign.targets:
                    names, values = target.target, assign.value
                    if (
                        isinstance(names, cst.Tuple)
                        and isinstance(values, cst.Tuple)
                        and len(names.elements) == len(values.elements)
                    ):
                        pairs.extend((n.value, v.value) for n, v in zip(names.elements, values.elements))
                    else:
                        pairs.append((names, values))
        return [(name.value, value) for name, value in pairs if isinstance(name, cst.Name)]

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


def _is_call(node, name: str) -> bool:
    """`node` is a call of `name`: `T.Kernel(...)` for "Kernel", `relu(...)` for "relu"."""
    return isinstance(node, cst.Call) and call_name(node) == name
