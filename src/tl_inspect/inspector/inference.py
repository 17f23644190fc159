"""Cases inferred from a user file's own calls of its kernel factories, read from the source and never run.

The calls searched are those in `main()`, in the `if __name__ == "__main__":` block and in `test_*`
functions, and in the module's functions those call (`run_gemm(...)` helpers), followed with the values
they are called with. Only argument expressions are evaluated: literals, module constants, the
enclosing function's parameters (their defaults, or what its caller passed), names assigned from those,
`argparse` defaults read as `args.x`, arithmetic on these, and tensors torch makes from such shapes
(tensor_args.py). Anything else (a tensor read or computed, a loop variable, a call, I/O) makes the call not
inferable, with the reason. docs/discovery.md lists the rules.

No tilelang here: the worker passes the module's live namespace for its constants.
"""

from __future__ import annotations

import ast
import operator
import sys
import types
from dataclasses import dataclass, field

from tl_inspect.inspector.static_values import (
    ARITHMETIC, PARSE_METHODS, ArgparseResult, Unknown, argparse_defaults, builtin, dtype_named,
    is_static_function, is_tilelang_dtype_class, last_name, literal, returns_parsed_arguments,
)
from tl_inspect.inspector.parametrize import MAX_CONTEXTS, parametrized
from tl_inspect.inspector.tensor_args import TensorShape, made_tensor, tensor_method

ENTRY_MAIN = "main"
HELPER_DEPTH = 4  # main() -> run_gemm() -> check() -> ... : deeper chains are not followed
_FACTORY_METHODS = ("compile", "get_tir")  # `matmul.compile(M=1024, ...)` names the factory too
_LARGEST = 1 << 64  # an arithmetic result past this is a mistake to inspect, not a shape


@dataclass(frozen=True)
class InferredCall:
    factory: str
    args: tuple  # positional values
    kwargs: tuple  # (name, value)
    origin: str  # "main() line 88", "__main__ block line 120 via run_gemm() line 30, argparse defaults"


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
        kernels = {inner.name for inner in ast.walk(node) if inner is not node and isinstance(inner, ast.FunctionDef)
                   and any(last_name(d) == "prim_func" for d in inner.decorator_list)}
        # returned (or compiled and returned): a function that runs an autotuner around its kernel is no factory
        if any(r.value is not None and kernels & set(_names_in(r.value)) for r in _own_returns(node)):
            found.add(node.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and last_name(node.func) == "compile" and node.args
                and isinstance(node.args[0], ast.Call) and isinstance(node.args[0].func, ast.Name)):
            found.add(node.args[0].func.id)
    return found


def infer_calls(tree: ast.Module, factories: set[str], namespace: dict) -> Inference:
    """Every call of `factories` reachable from the file's entry points, with its evaluated arguments."""
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    walker = _Walker(factories, functions, namespace, argparse_defaults(tree))
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
    def __init__(self, factories: set[str], functions: dict, namespace: dict, argparse_defaults: dict):
        self.factories = factories
        self.functions = functions
        self.namespace = namespace
        self.argparse_defaults = argparse_defaults
        self.parsers = {name for name, node in functions.items() if returns_parsed_arguments(node)}
        self.result = Inference()
        # an argparse default was read on the way to the calls now being walked (their origin says so)
        self.read_argparse = False

    def enter_block(self, body: list, label: str) -> None:
        self.read_argparse = False
        self.walk(body, {}, label, ())

    def enter_function(self, node, label: str, bound=None) -> None:
        """An entry point: its parameters take the values `bound` gives (a parametrize case), else their
        defaults; one without either is unknown."""
        self.read_argparse = False
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
            value = self.evaluate(node.value if isinstance(node, ast.AnnAssign)
                                  else ast.BinOp(node.target, node.op, node.value), env)
            self._bind(node.target, value, env)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
            for alias in node.names:
                env[alias.asname or alias.name.split(".")[0]] = _imported(node, alias)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            for name in _names_in(node.target):
                env[name] = Unknown(f"`{name}` is a loop variable")
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
        factory = _called_factory(call.func, self.factories)
        if factory:
            self._record(factory, call, env, here)
            return
        name = call.func.id if isinstance(call.func, ast.Name) else None
        helper = self.functions.get(name)
        if helper is None or name in stack or len(stack) >= HELPER_DEPTH:
            return
        args = [self.evaluate(a, env) for a in call.args if not isinstance(a, ast.Starred)]
        kwargs = {k.arg: self.evaluate(k.value, env) for k in call.keywords if k.arg}
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            args, kwargs = [], {}  # unpacked arguments: the helper's parameters fall back to their defaults
        label = f"{here} via {name}()"
        self.walk(helper.body, self._parameters(helper, args, kwargs, label), label, (*stack, name))

    def _record(self, factory: str, call: ast.Call, env: dict, here: str) -> None:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            self.result.refusals.setdefault(factory, []).append(f"{here}: arguments are unpacked (*args, **kwargs)")
            return
        args = tuple(self.evaluate(a, env) for a in call.args)
        kwargs = tuple((k.arg, self.evaluate(k.value, env)) for k in call.keywords)
        unknown = next((v for v in (*args, *(v for _, v in kwargs)) if isinstance(v, (Unknown, ArgparseResult))), None)
        if unknown is not None:
            reason = unknown.reason if isinstance(unknown, Unknown) else "the argparse result itself is passed"
            self.result.refusals.setdefault(factory, []).append(f"{here}: {reason}")
            return
        origin = here + (", argparse defaults" if self.read_argparse else "")
        self.result.calls.setdefault(factory, []).append(InferredCall(factory, args, kwargs, origin))

    def _parameters(self, node, args: list, kwargs: dict, label: str) -> dict:
        """The function's parameters bound to what its caller passed, else to their defaults."""
        params = node.args
        positional = [*params.posonlyargs, *params.args]
        defaults = dict(zip([p.arg for p in positional][len(positional) - len(params.defaults):], params.defaults))
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
                env[param.arg] = Unknown(f"`{param.arg}` is a parameter of {label.split(' via ')[-1]} without a default")
        for extra in (params.vararg, params.kwarg):
            if extra is not None:
                env[extra.arg] = Unknown(f"`{extra.arg}` collects arguments passed at run time")
        return env

    def _bind(self, target, value, env: dict) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            names = [element for element in target.elts]
            if isinstance(value, tuple) and len(value) == len(names) and not any(
                    isinstance(n, ast.Starred) for n in names):
                for element, item in zip(names, value):
                    self._bind(element, item, env)
            else:
                for element in names:
                    for name in _names_in(element):
                        env[name] = value if isinstance(value, Unknown) else Unknown(
                            f"`{name}` is unpacked from a value that is not a tuple of its length")

    def evaluate(self, node, env: dict):
        """The value of an argument expression, or an `Unknown` saying why it has none without running it."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id, env)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = tuple(self.evaluate(e, env) for e in node.elts)
            unknown = next((i for i in items if isinstance(i, Unknown)), None)
            return unknown or (items if isinstance(node, ast.Tuple) else list(items))
        if isinstance(node, ast.Attribute):
            return self._attribute(node, env)
        if isinstance(node, ast.Subscript):
            value, index = self.evaluate(node.value, env), self.evaluate(node.slice, env)
            unknown = next((v for v in (value, index) if isinstance(v, Unknown)), None)
            return unknown or _arithmetic(operator.getitem, node, value, index)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.evaluate(node.operand, env)
            return value if isinstance(value, Unknown) else _arithmetic(
                lambda v: -v if isinstance(node.op, ast.USub) else +v, node, value)
        if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            left, right = self.evaluate(node.left, env), self.evaluate(node.right, env)
            unknown = next((v for v in (left, right) if isinstance(v, Unknown)), None)
            return unknown or _arithmetic(ARITHMETIC[type(node.op)], node, left, right)
        if isinstance(node, ast.Call) and (last_name(node.func) in PARSE_METHODS or (
                isinstance(node.func, ast.Name) and node.func.id in self.parsers and node.func.id not in env)):
            parsed = ArgparseResult(self.argparse_defaults)
            return (parsed, Unknown("the arguments argparse did not know")) if last_name(node.func) == \
                "parse_known_args" else parsed
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            made = self._tensor(node, env)
            if made is not None:
                return made
        if isinstance(node, ast.Call) and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
            callee = self._callee(node.func, env)
            if is_static_function(callee):
                values = [self.evaluate(a, env) for a in node.args]
                unknown = next((v for v in values if isinstance(v, Unknown)), None)
                return unknown or _arithmetic(callee, node, *values)
            if callee is getattr and len(node.args) == 2:
                name = self.evaluate(node.args[1], env)
                found = dtype_named(self._callee(node.args[0], env), name)
                return name if isinstance(name, Unknown) else found if found is not None else Unknown(
                    f"`{_shown(node)}` is no dtype of a module")
        return Unknown(f"`{_shown(node)}` is computed at run time")

    def _tensor(self, node: ast.Call, env: dict):
        """A tensor made by torch from plain values, or a cast of one (tensor_args.py); None otherwise."""
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        base = node.func.value
        owner = env.get(base.id, self.namespace.get(base.id)) if isinstance(base, ast.Name) else \
            self.evaluate(base, env)
        if not (isinstance(owner, TensorShape) or getattr(owner, "__name__", None) == "torch"):
            return None
        args = [self.evaluate(a, env) for a in node.args]
        kwargs = {k.arg: self.evaluate(k.value, env) for k in node.keywords if k.arg != "device"}
        unknown = next((v for v in (*args, *kwargs.values()) if isinstance(v, Unknown)), None)
        if unknown is not None:
            return unknown  # the tensor's shape or dtype is what needs running the file: say which
        if isinstance(owner, TensorShape):
            return tensor_method(owner, node.func.attr, args)
        kwargs = {k: v for k, v in kwargs.items() if k not in ("requires_grad", "pin_memory", "generator")}
        return made_tensor(node.func.attr, args, kwargs)

    def _callee(self, func, env: dict):
        """The object a call's function names (`math.ceil`, `T.dtype`, `dtype.as_torch`), read and not called;
        None when it is not a name or an attribute of one."""
        if isinstance(func, ast.Name):
            return env[func.id] if func.id in env else self.namespace.get(func.id, builtin(func.id))
        if isinstance(func, ast.Attribute):
            owner = self._callee(func.value, env)
            # only modules and dtypes are read: another object's attribute may be a property that runs code
            readable = isinstance(owner, types.ModuleType) or is_tilelang_dtype_class(type(owner))
            return getattr(owner, func.attr, None) if readable else None
        return None

    def _name(self, name: str, env: dict):
        if name in env:
            return env[name]
        if name in self.namespace:
            return _constant(self.namespace[name], name)
        return Unknown(f"`{name}` is not a literal, a module constant, a parameter default or an argparse option")

    def _attribute(self, node: ast.Attribute, env: dict):
        if isinstance(node.value, ast.Name) and isinstance(env.get(node.value.id), ArgparseResult):
            defaults = env[node.value.id].defaults
            if node.attr not in defaults:
                return Unknown(f"`{_shown(node)}` has no argparse default")
            self.read_argparse = True
            return defaults[node.attr]
        if node.attr == "shape" and isinstance(self.evaluate(node.value, env), TensorShape):
            return self.evaluate(node.value, env).shape
        base = node.value
        path = [node.attr]
        while isinstance(base, ast.Attribute):
            path.insert(0, base.attr)
            base = base.value
        root = env.get(base.id, self.namespace.get(base.id)) if isinstance(base, ast.Name) else None
        if isinstance(root, types.ModuleType):
            # `T.float16`, `torch.bfloat16`: an attribute of an imported module, read, not called
            value = root
            for part in path:
                value = getattr(value, part, Unknown(f"`{_shown(node)}` does not exist"))
            return value if isinstance(value, Unknown) else _constant(value, _shown(node))
        owner = self.evaluate(node.value, env)
        # `a.shape` of an unknown `a`: the reason is what made `a`
        return owner if isinstance(owner, Unknown) else Unknown(f"`{_shown(node)}` is computed at run time")


def _constant(value, shown: str):
    """A module-level value usable as an argument: numbers, strings, dtypes and tuples or lists of them."""
    if isinstance(value, (bool, int, float, str, type(None))) or type(value).__name__ == "dtype":
        return value
    if isinstance(value, (tuple, list)) and all(not isinstance(_constant(v, shown), Unknown) for v in value):
        return value
    kind = type(value).__name__
    return Unknown(f"`{shown}` is a {kind}" + (", not a constant" if kind not in ("Tensor", "ndarray") else ""))


def _imported(node, alias):
    """A module imported inside a function, when it is already loaded: read, never imported here."""
    name = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
    module = sys.modules.get(name if alias.asname or isinstance(node, ast.ImportFrom) else name.split(".")[0])
    return module if module is not None else Unknown(f"`{alias.asname or alias.name}` is imported at run time")


def _arithmetic(function, node, *values):
    try:
        result = function(*values)
    except Exception:  # noqa: BLE001 - a division by zero or a str - int says only that it is not inferable
        return Unknown(f"`{_shown(node)}` cannot be evaluated")
    if isinstance(result, (int, float)) and abs(result) > _LARGEST:
        return Unknown(f"`{_shown(node)}` is too large to be a shape")
    return result


def _calls_in(statement) -> list[ast.Call]:
    """The calls in one statement's own expressions (not in the bodies it contains), in source order."""
    found = []
    nested = {id(s) for attr in ("body", "orelse", "finalbody", "handlers") for s in getattr(statement, attr, []) or []}
    stack = [statement]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if id(child) in nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Call):
                found.append(child)
            stack.append(child)
    return sorted(found, key=lambda c: (c.lineno, c.col_offset))


def _called_factory(func, factories: set[str]) -> str | None:
    if isinstance(func, ast.Name) and func.id in factories:
        return func.id
    if (isinstance(func, ast.Attribute) and func.attr in _FACTORY_METHODS and isinstance(func.value, ast.Name)
            and func.value.id in factories):
        return func.value.id
    return None


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
    return (isinstance(node, ast.If) and isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.comparators) == 1
            and literal(test.comparators[0]) == "__main__")


def _names_in(target) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _shown(node) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."
