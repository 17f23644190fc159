"""The shape of the package, as docs/architecture.md draws it: the import graph of `src/tl_inspect` (every
import, deferred and `TYPE_CHECKING` ones too) has no circle and no import up the layers, no module or
function outgrows a reader, and few modules sit loose at the top. Read from the source with `ast`:
nothing is imported."""

from __future__ import annotations

import ast
import os
from collections import defaultdict

import pytest

PACKAGE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src", "tl_inspect"
)

# bottom first: a module imports only from its own layer and the layers below it; the longest prefix places
# a module (`tl_inspect.fixes.verify` sits above `tl_inspect.fixes`)
LAYERS = (
    (
        "plain words and data",
        (
            "tl_inspect._version",
            "tl_inspect.wording",
            "tl_inspect.tir",
            "tl_inspect.files.sources",
            "tl_inspect.files.pysource",
        ),
    ),
    (
        "shared values",
        (
            "tl_inspect.model",
            "tl_inspect.gpu.arch",
            "tl_inspect.gpu.device",
            "tl_inspect.gpu.cost_table",
            "tl_inspect.files",
            "tl_inspect.fixes",
        ),
    ),
    ("rewrites of a PrimFunc", ("tl_inspect.inspector.rewrites",)),
    ("causes", ("tl_inspect.causes",)),
    ("analysis", ("tl_inspect.analysis",)),
    ("inspector", ("tl_inspect.inspector",)),
    ("rules", ("tl_inspect.rules",)),
    ("the lint run and its reports", ("tl_inspect.lint", "tl_inspect.reports", "tl_inspect.fixes.verify")),
    (
        "faces",
        (
            "tl_inspect.api",
            "tl_inspect.server",
            "tl_inspect.testing",
            "tl_inspect.pytest_plugin",
            "tl_inspect.gpu.calibration",
        ),
    ),
    ("entry points", ("tl_inspect", "tl_inspect.__main__", "tl_inspect.cli", "tl_inspect.gpu")),
)
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
MAX_TOP_LEVEL_MODULES = 10


def _is_rule_example(path: str) -> bool:
    """A rule's bad_*.py and good_*.py files are user kernels, not part of the package's code."""
    return os.path.basename(path).startswith(("bad_", "good_"))


def _modules() -> dict[str, str]:
    found = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".py") and not _is_rule_example(path):
                dotted = os.path.relpath(path[:-3], os.path.dirname(PACKAGE)).replace(os.sep, ".")
                found[dotted.removesuffix(".__init__")] = path
    return found


MODULES = _modules()
TREES = {name: ast.parse(open(path, encoding="utf-8").read()) for name, path in MODULES.items()}


def _imported(module: str, node: ast.AST) -> list[str]:
    """The package's own modules an import statement names, each as the longest module its name reaches."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module if MODULES[module].endswith("__init__.py") else module.rpartition(".")[0]
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(parts + ([node.module] if node.module else []))
        names = [f"{base}.{alias.name}" for alias in node.names]
    found = []
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.append(name)
    return found


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges[module].update(_imported(module, node))
    return edges


def _layer(module: str) -> int:
    prefixes = [
        (len(prefix), index)
        for index, (_, prefixes) in enumerate(LAYERS)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    assert prefixes, f"{module} sits in no layer of docs/architecture.md"
    return max(prefixes)[1]


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted(MODULES):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_module_imports_a_module_that_imports_it_back():
    assert _circles(_graph()) == []


def test_no_module_imports_from_a_layer_above_its_own():
    upward = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, targets in sorted(_graph().items())
        for target in sorted(targets)
        if _layer(target) > _layer(module)
    ]
    assert upward == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_and_function_fits_a_reader(module):
    path = MODULES[module]
    with open(path, encoding="utf-8") as f:
        lines = sum(1 for _ in f)
    assert lines <= MAX_MODULE_LINES, f"{path}: {lines} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(TREES[module])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == [], path


def test_few_modules_sit_loose_at_the_top_of_the_package():
    loose = sorted(name for name in os.listdir(PACKAGE) if name.endswith(".py"))
    assert len(loose) <= MAX_TOP_LEVEL_MODULES, loose
