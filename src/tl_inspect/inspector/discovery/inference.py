"""Cases inferred from a user file's own calls of its kernel factories, read from the source and never run.

The calls searched are those in `main()`, in the `if __name__ == "__main__":` block and in `test_*`
functions, and in the module's functions those call (`run_gemm(...)` helpers, the `forward` of an autograd
`Function` run by `.apply`), followed with the values they are called with: branches of tests known from
the source, loops over known lists once per item. Only argument expressions are evaluated (evaluation.py);
an argument that needs running the file makes the call not inferable, with the reason.
docs/discovery.md lists the rules.

No tilelang here: the worker passes the module's live namespace for its constants.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tl_inspect.inspector.discovery.evaluation import Evaluator, imported
from tl_inspect.inspector.discovery.parametrize import MAX_CONTEXTS, parametrized
from tl_inspect.inspector.discovery.static_values import (
    ArgparseResult,
    FunctionRef,
    Instance,
    Unknown,
    argparse_defaults,
    last_name,
    literal,
    returns_parsed_arguments,
)

ENTRY_MAIN = "main"
HELPER_DEPTH = 4  # main() -> run_gemm() -> check() -> ... : deeper chains are not followed
MAX_LOOP_ITEMS = 16  # as many as the per-factory case cap keeps
_FACTORY_METHODS = ("compile", "get_tir")
_READS = ("copy", "count", "index", "get", "keys", "values", "items")  # list and dict methods that change nothing


@dataclass(frozen=True)
class InferredCall:
    factory: str
    args: tuple  # positional values
    kwargs: tuple  # (name, value)
    origin: str  # "main() line 88", "__main__ block line 120 via run_gemm() line 30, argparse defaults"


@dataclass(frozen=True)
class Helper:
    """A function of the file that a walked call enters: a module function, or the `forward` of an autograd
    `Function` that `Cls.apply(...)` runs (its `ctx` filled in, as autograd does)."""

    node: ast.FunctionDef
    shown: str  # "run_gemm", "_attention.forward"
    implicit: tuple = ()  # values of the leading parameters the caller does not pass


@dataclass
class Inference:
    calls: dict = field(default_factory=dict)  # factory -> [InferredCall] in the order found
    refusals: dict = field(default_factory=dict)  # factory -> ["main() line 88: `a` is ..."]


def plain_factories(tree: ast.Module) -> set[str]:
    """Module-level functions that build a kernel without a tilelang decorator of their own: they define a
    `@T.prim_func` inside, or their call is what `tilelang.compile(...)` compiles."""
    found = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        kernels = {
            inner.name
            for inner in ast.walk(node)
            if inner is not node
            and isinstance(inner, ast.FunctionDef)
            and any(last_name(d) == "prim_func" for d in inner.decorator_list)
        }
        # returned (or compiled and returned): a function that runs an autotuner around its kernel is no factory
        if any(r.value is not None and kernels & set(_names_in(r.value)) for r in _own_returns(node)):
            found.add(node.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and last_name(node.func) == "compile"
            and node.args
            and isinstance(node.args[0], ast.Call)
            and isinstance(node.args[0].func, ast.Name)
        ):
            found.add(node.args[0].func.id)
    return found


def infer_calls(tree: ast.Module, factories: set[str], namespace: dict) -> Inference:
    """Every call of `factories` reachable from the file's entry points, with its evaluated arguments."""
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    walker = _Walker(factories, _helpers(tree, functions), namespace, argparse_defaults(tree))
    if ENTRY_MAIN in functions and ENTRY_MAIN not in factories:
        walker.enter_function(functions[ENTRY_MAIN], f"{ENTRY_MAIN}()")
    for node in tree.body:
        if _is_main_guard(node):
            walker.enter_block(node.body, "__main__ block")
    for name, node in functions.items():
        if name.startswith("test_"):
            for bound in parametrized(node, walker.evaluate, MAX_CONTEXTS):
                shown = ", ".join(f"{k}={v}" for k, v in bound.items() if not isinstance(v, Unknown))
                label = f"{name}({shown})"
                walker.enter_function(node, label, bound)
    return walker.result


class _Walker:
    def __init__(self, factories: set[str], helpers: dict, namespace: dict, argparse_defaults: dict):
        self.factories = factories
        self.helpers = helpers
        self.classes = {name.split(".")[0] for name in helpers if name.endswith(".__init__")}
        parsers = {name for name, helper in helpers.items() if returns_parsed_arguments(helper.node)}
        self.values = Evaluator(namespace, argparse_defaults, parsers, factories | set(helpers))
        self.evaluate = self.values.evaluate
        self.result = Inference()

    def enter_block(self, body: list, label: str) -> None:
        self.values.read_argparse = False
        self.walk(body, {}, label, ())

    def enter_function(self, node, label: str, bound=None) -> None:
        """An entry point: its parameters take the values `bound` gives (a parametrize case), else their
        defaults; one without either is unknown."""
        self.values.read_argparse = False
        self.walk(node.body, self._parameters(node, [], bound or {}, label), label, (node.name,))

    def walk(self, body: list, env: dict, where: str, stack: tuple) -> None:
        for statement in body:
            self._statement(statement, env, where, stack)

    def _statement(self, node, env: dict, where: str, stack: tuple) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            env[node.name] = Unknown(f"`{node.name}` is a function defined here")
            return
        for call in _calls_in(node):
            self._call(call, env, where, stack)
        if isinstance(node, ast.Assign):
            value = self.evaluate(node.value, env)
            for target in node.targets:
                self._bind(target, value, env)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            value = self.evaluate(
                node.value if isinstance(node, ast.AnnAssign) else ast.BinOp(node.target, node.op, node.value), env
            )
            self._bind(node.target, value, env)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
            for alias in node.names:
                env[alias.asname or alias.name.split(".")[0]] = imported(node, alias)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._loop(node, env, where, stack)
            return
        elif isinstance(node, ast.If):
            test = self.values.truth(node.test, env)
            if not isinstance(test, Unknown):
                # a test known from the source (`if args.stages is None:`): the branch that runs binds the names
                # that follow; the other is a run with another flag, walked for its calls on a copy
                before = dict(env)
                self.walk(node.body if test else node.orelse, env, where, stack)
                self.walk(node.orelse if test else node.body, before, where, stack)
                return
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    for name in _names_in(item.optional_vars):
                        env[name] = Unknown(f"`{name}` is bound by a `with` statement")
        for child in ("body", "orelse", "finalbody"):
            self.walk(getattr(node, child, []) or [], env, where, stack)
        for handler in getattr(node, "handlers", []) or []:
            self.walk(handler.body, env, where, stack)

    def _call(self, call: ast.Call, env: dict, where: str, stack: tuple) -> None:
        here = f"{where} line {call.lineno}"
        name, owner = self._callee(call.func, env)
        if name in self.factories:
            self._record(name, call, env, here)
            return
        if (
            isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and isinstance(env.get(call.func.value.id), (list, dict))
            and call.func.attr not in _READS
        ):
            # `sizes.append(n)` changes the list the walk knows: what it holds afterwards is not read here
            env[call.func.value.id] = Unknown(f"`{call.func.value.id}` is changed by `.{call.func.attr}()`")
            return
        made = Instance(name, {}) if name in self.classes else None
        helper = self.helpers.get(f"{name}.__init__" if made else name)
        if made:
            self.values.instances[id(call)] = made  # what the call evaluates to, its fields set below
        if helper is None or helper.shown in stack or len(stack) >= HELPER_DEPTH:
            return
        passed = self.values.arguments(call, env)
        # unpacked arguments not known: the helper's parameters fall back to their defaults
        args, kwargs = ([], {}) if isinstance(passed, Unknown) else passed
        label = f"{here} via {helper.shown}()"
        implicit = (made or owner,) if made or owner else helper.implicit
        env = self._parameters(helper.node, [*implicit, *args], kwargs, label)
        self.walk(helper.node.body, env, label, (*stack, helper.shown))

    def _callee(self, func, env: dict) -> tuple:
        """(the factory, helper or class a call calls, by its name in the file; the object a method is called
        on). A name holding a factory calls that one; an object of the file's classes is called through its
        `forward` (a torch module) or `__call__`; any other local value calls none of them."""
        if isinstance(func, ast.Name):
            bound = env.get(func.id, FunctionRef(func.id))
            if isinstance(bound, Instance):
                method = "forward" if f"{bound.cls}.forward" in self.helpers else "__call__"
                return f"{bound.cls}.{method}", bound
            return (bound.name if isinstance(bound, FunctionRef) else None), None
        if isinstance(func, ast.Attribute):
            owner = self.evaluate(func.value, env) if isinstance(func.value, ast.Name) else None
            if isinstance(owner, Instance):
                return f"{owner.cls}.{func.attr}", owner
            named, _ = self._callee(func.value, env)
            # `matmul.compile(M=1024, ...)` names the factory too
            return (named if named in self.factories and func.attr in _FACTORY_METHODS else ast.unparse(func)), None
        held = self.evaluate(func, env) if isinstance(func, (ast.Subscript, ast.IfExp)) else None
        return (held.name if isinstance(held, FunctionRef) else None), None  # `KERNELS[name](...)`

    def _loop(self, node, env: dict, where: str, stack: tuple) -> None:
        """A loop over a known list or tuple (`for M in [1024, 2048]:`) walks its body once per item; over
        anything else, or a longer one, its variable is unknown."""
        items = self.evaluate(node.iter, env)
        if isinstance(items, (tuple, list)) and len(items) <= MAX_LOOP_ITEMS:
            for item in items:
                self._bind(node.target, item, env)
                self.walk(node.body, env, where, stack)
        else:
            for name in _names_in(node.target):
                env[name] = Unknown(f"`{name}` is a loop variable")
            self.walk(node.body, env, where, stack)
        self.walk(node.orelse, env, where, stack)

    def _record(self, factory: str, call: ast.Call, env: dict, here: str) -> None:
        passed = self.values.arguments(call, env)
        if isinstance(passed, Unknown):
            self.result.refusals.setdefault(factory, []).append(f"{here}: {passed.reason}")
            return
        args, kwargs = tuple(passed[0]), tuple(passed[1].items())
        unknown = next(
            (
                v
                for v in (*args, *(v for _, v in kwargs))
                if isinstance(v, (Unknown, ArgparseResult, FunctionRef, Instance))
            ),
            None,
        )
        if unknown is not None:
            self.result.refusals.setdefault(factory, []).append(f"{here}: {_no_argument(unknown)}")
            return
        origin = here + (", argparse defaults" if self.values.read_argparse else "")
        self.result.calls.setdefault(factory, []).append(InferredCall(factory, args, kwargs, origin))

    def _parameters(self, node, args: list, kwargs: dict, label: str) -> dict:
        """The function's parameters bound to what its caller passed, else to their defaults."""
        params = node.args
        positional = [*params.posonlyargs, *params.args]
        defaults = dict(zip([p.arg for p in positional][len(positional) - len(params.defaults) :], params.defaults))
        defaults.update({p.arg: d for p, d in zip(params.kwonlyargs, params.kw_defaults) if d is not None})
        env: dict = {}
        for index, param in enumerate([*positional, *params.kwonlyargs]):
            if index < len(positional) and index < len(args):
                env[param.arg] = args[index]
            elif param.arg in kwargs:
                env[param.arg] = kwargs[param.arg]
            elif param.arg in defaults:
                env[param.arg] = self.evaluate(defaults[param.arg], {})
            else:
                env[param.arg] = Unknown(
                    f"`{param.arg}` is a parameter of {label.split(' via ')[-1]} without a default"
                )
        for extra in (params.vararg, params.kwarg):
            if extra is not None:
                env[extra.arg] = Unknown(f"`{extra.arg}` collects arguments passed at run time")
        return env

    def _bind(self, target, value, env: dict) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Attribute) and isinstance(self.evaluate(target.value, env), Instance):
            self.evaluate(target.value, env).fields[target.attr] = value  # `self.M = M` in `__init__`
        elif isinstance(target, (ast.Tuple, ast.List)):
            names = [element for element in target.elts]
            if (
                isinstance(value, tuple)
                and len(value) == len(names)
                and not any(isinstance(n, ast.Starred) for n in names)
            ):
                for element, item in zip(names, value):
                    self._bind(element, item, env)
            else:
                for element in names:
                    for name in _names_in(element):
                        env[name] = (
                            value
                            if isinstance(value, Unknown)
                            else Unknown(f"`{name}` is unpacked from a value that is not a tuple of its length")
                        )


def _no_argument(value) -> str:
    """Why a value the walk knows is still no argument to inspect a factory with."""
    if isinstance(value, Unknown):
        return value.reason
    if isinstance(value, ArgparseResult):
        return "the argparse result itself is passed"
    if isinstance(value, Instance):
        return f"a {value.cls} object is passed to the factory"
    return f"`{value.name}` is a function, passed to the factory"


def _helpers(tree: ast.Module, functions: dict) -> dict:
    """What a walked call may enter, by how the call names it: `run_gemm`, `_attention.apply`, and a module
    name bound to an `apply` (`attention = _attention.apply`)."""
    helpers = {name: Helper(node, name) for name, node in functions.items()}
    for node in tree.body:
        forward = next(
            (
                item
                for item in getattr(node, "body", [])
                if isinstance(node, ast.ClassDef) and isinstance(item, ast.FunctionDef) and item.name == "forward"
            ),
            None,
        )
        if forward is not None and any(last_name(base) == "Function" for base in node.bases):
            ctx = Unknown(f"`{forward.args.args[0].arg}` is autograd's context") if forward.args.args else None
            helpers[f"{node.name}.apply"] = Helper(forward, f"{node.name}.forward", (ctx,) if ctx else ())
        elif isinstance(node, ast.ClassDef):
            # called on an object the walk made: `self` is that object (`_call`)
            helpers.update(
                {
                    f"{node.name}.{item.name}": Helper(item, f"{node.name}.{item.name}")
                    for item in node.body
                    if isinstance(item, ast.FunctionDef)
                }
            )
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and ast.unparse(node.value) in helpers
            and node.targets[0].id not in helpers
        ):
            helpers[node.targets[0].id] = helpers[ast.unparse(node.value)]
    return helpers


def _calls_in(statement) -> list[ast.Call]:
    """The calls in one statement's own expressions (not in the bodies it contains), in the order Python makes
    them: a call's arguments before the call (`RowScale(Config(M, N))` makes the config first)."""
    nested = {id(s) for attr in ("body", "orelse", "finalbody", "handlers") for s in getattr(statement, attr, []) or []}
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if id(child) not in nested and not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
            ):
                visit(child)
        if isinstance(node, ast.Call):
            found.append(node)

    visit(statement)
    return found


def _own_returns(function) -> list[ast.Return]:
    """The function's own return statements, not those of the functions it defines."""
    found, stack = [], list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _is_main_guard(node) -> bool:
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and literal(test.comparators[0]) == "__main__"
    )


def _names_in(target) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
