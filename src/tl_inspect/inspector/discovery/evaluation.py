"""The value of one argument expression in a user file, read from the source and never run (inference.py
walks the calls; this evaluates what they pass). Values come only from literals, module constants, the
names the walk has bound (`env`), argparse defaults, arithmetic, comparisons and conditional expressions
on those, a few pure functions and dtype constructors, and tensors torch makes from known shapes. Anything
else is an `Unknown` saying why. docs/discovery.md lists the rules.
"""

from __future__ import annotations

import ast
import operator
import sys
import types

from tl_inspect.inspector.discovery.static_values import (
    ARITHMETIC,
    COMPARISONS,
    PARSE_METHODS,
    ArgparseResult,
    FunctionRef,
    Instance,
    Unknown,
    builtin,
    dtype_named,
    is_static_function,
    is_tilelang_dtype_class,
    last_name,
)
from tl_inspect.inspector.discovery.tensor_args import TensorShape, elementwise, made_tensor, tensor_method

_LARGEST = 1 << 64  # an arithmetic result past this is a mistake to inspect, not a shape


class Evaluator:
    def __init__(self, namespace: dict, argparse_defaults: dict, parsers: set[str], functions: set[str]):
        self.namespace = namespace  # the imported module's names, for its constants
        self.functions = functions  # the names of the file's factories and helpers, held as `FunctionRef`s
        self._function_objects = {id(namespace[name]): name for name in functions if name in namespace}
        self.instances: dict = {}  # id of a call of one of the file's classes -> the object the walk made
        self.argparse_defaults = argparse_defaults
        self.parsers = parsers  # the file's functions that return `parser.parse_args()`
        # an argparse default was read on the way to the calls now being walked (their origin says so)
        self.read_argparse = False

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
            return (
                value
                if isinstance(value, Unknown)
                else _arithmetic(lambda v: -v if isinstance(node.op, ast.USub) else +v, node, value)
            )
        if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            left, right = self.evaluate(node.left, env), self.evaluate(node.right, env)
            unknown = next((v for v in (left, right) if isinstance(v, Unknown)), None)
            if unknown is None and (isinstance(left, TensorShape) or isinstance(right, TensorShape)):
                made = elementwise(left, right, isinstance(node.op, ast.Div))
                return made or Unknown(f"`{shown(node)}` is computed at run time")
            return unknown or _arithmetic(ARITHMETIC[type(node.op)], node, left, right)
        if isinstance(node, (ast.IfExp, ast.Compare, ast.BoolOp)) or (
            isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
        ):
            return self._condition(node, env)
        if isinstance(node, ast.Dict):
            return self._dict(node, env)
        if isinstance(node, ast.Call) and id(node) in self.instances:
            return self.instances[id(node)]
        if isinstance(node, ast.Call) and (
            last_name(node.func) in PARSE_METHODS
            or (isinstance(node.func, ast.Name) and node.func.id in self.parsers and node.func.id not in env)
        ):
            parsed = ArgparseResult(self.argparse_defaults)
            return (
                (parsed, Unknown("the arguments argparse did not know"))
                if last_name(node.func) == "parse_known_args"
                else parsed
            )
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
                return (
                    name
                    if isinstance(name, Unknown)
                    else found
                    if found is not None
                    else Unknown(f"`{shown(node)}` is no dtype of a module")
                )
        return Unknown(f"`{shown(node)}` is computed at run time")

    def arguments(self, call: ast.Call, env: dict):
        """(positional values, keyword values) of a call, `*` and `**` of known tuples and dicts spliced in;
        an `Unknown` when an unpacked value is not one."""
        args, kwargs = [], {}
        for arg in call.args:
            value = self.evaluate(arg.value if isinstance(arg, ast.Starred) else arg, env)
            if isinstance(arg, ast.Starred) and not isinstance(value, Unknown):
                if not isinstance(value, (tuple, list)):
                    return Unknown(f"`*{shown(arg.value)}` unpacks a value that is not a tuple")
                args.extend(value)
            else:
                args.append(value)
        for keyword in call.keywords:
            value = self.evaluate(keyword.value, env)
            if keyword.arg is not None:
                kwargs[keyword.arg] = value
            elif isinstance(value, Unknown):
                return value
            elif isinstance(value, dict):
                kwargs.update(value)
            else:
                return Unknown(f"`**{shown(keyword.value)}` unpacks a value that is not a dict")
        return args, kwargs

    def _condition(self, node, env: dict):
        """Conditional expressions and the tests they make, on plain values only: a test of a tensor or an
        object would run its `__eq__` or `__bool__`."""
        if isinstance(node, ast.IfExp):
            test = self.truth(node.test, env)
            return test if isinstance(test, Unknown) else self.evaluate(node.body if test else node.orelse, env)
        if isinstance(node, ast.UnaryOp):
            operand = self._plain(self.evaluate(node.operand, env), node.operand)
            return operand if isinstance(operand, Unknown) else not operand
        if isinstance(node, ast.BoolOp):
            # as Python does: the first operand that decides, and the later ones not evaluated
            for operand in node.values:
                value = self._plain(self.evaluate(operand, env), operand)
                if (
                    isinstance(value, Unknown)
                    or operand is node.values[-1]
                    or bool(value) == isinstance(node.op, ast.Or)
                ):
                    return value
        left = self._plain(self.evaluate(node.left, env), node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = self._plain(self.evaluate(comparator, env), comparator)
            unknown = next((v for v in (left, right) if isinstance(v, Unknown)), None)
            if unknown is not None:
                return unknown
            holds = _arithmetic(COMPARISONS[type(op)], node, left, right)
            if isinstance(holds, Unknown) or not holds:
                return holds
            left = right
        return True

    def truth(self, node, env: dict):
        """Whether the test `node` holds, or an `Unknown`."""
        value = self._plain(self.evaluate(node, env), node)
        return value if isinstance(value, Unknown) else bool(value)

    @staticmethod
    def _plain(value, node):
        """The value when a test may read it: numbers, strings, None, dtypes and tuples of them."""
        if isinstance(value, Unknown) or _is_plain(value):
            return value
        return Unknown(f"`{shown(node)}` is tested, and it is no plain value")

    def _dict(self, node: ast.Dict, env: dict):
        if any(key is None for key in node.keys):
            return Unknown(f"`{shown(node)}` unpacks another dict")
        keys = [self.evaluate(key, env) for key in node.keys]
        values = [self.evaluate(value, env) for value in node.values]
        unknown = next((v for v in (*keys, *values) if isinstance(v, Unknown)), None)
        if unknown is not None:
            return unknown
        if not all(isinstance(key, str) for key in keys):
            return Unknown(f"`{shown(node)}` has keys that are not names")
        return dict(zip(keys, values))

    def _tensor(self, node: ast.Call, env: dict):
        """A tensor made by torch from plain values, or a cast of one (tensor_args.py); None otherwise."""
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        base = node.func.value
        owner = (
            env.get(base.id, self.namespace.get(base.id)) if isinstance(base, ast.Name) else self.evaluate(base, env)
        )
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
        if name in self.functions:
            return FunctionRef(name)
        if name in self.namespace:
            return self._module_value(self.namespace[name], name)
        return Unknown(f"`{name}` is not a literal, a module constant, a parameter default or an argparse option")

    def _module_value(self, value, shown: str):
        """A module constant, or a dict of the file's factories by name (`KERNELS = {"gemm": gemm}`)."""
        if (
            isinstance(value, dict)
            and value
            and all(id(v) in self._function_objects for v in value.values())
            and _is_plain(list(value))
        ):
            return {key: FunctionRef(self._function_objects[id(v)]) for key, v in value.items()}
        return _constant(value, shown)

    def _attribute(self, node: ast.Attribute, env: dict):
        if ast.unparse(node) in self.functions and not isinstance(env.get(last_name(node.value)), ArgparseResult):
            return FunctionRef(ast.unparse(node))  # `_attention.apply`
        if isinstance(node.value, ast.Name) and isinstance(env.get(node.value.id), ArgparseResult):
            defaults = env[node.value.id].defaults
            if node.attr not in defaults:
                return Unknown(f"`{shown(node)}` has no argparse default")
            self.read_argparse = True
            return defaults[node.attr]
        if node.attr in ("shape", "dtype") and isinstance(self.evaluate(node.value, env), TensorShape):
            tensor = self.evaluate(node.value, env)
            return tensor.shape if node.attr == "shape" else tensor.torch_dtype()
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
                value = getattr(value, part, Unknown(f"`{shown(node)}` does not exist"))
            return value if isinstance(value, Unknown) else _constant(value, shown(node))
        owner = self.evaluate(node.value, env)
        if isinstance(owner, Instance):
            return owner.fields.get(node.attr, Unknown(f"`{shown(node)}` is not set by {owner.cls}.__init__"))
        # `a.shape` of an unknown `a`: the reason is what made `a`
        return owner if isinstance(owner, Unknown) else Unknown(f"`{shown(node)}` is computed at run time")


def _constant(value, shown: str):
    """A module-level value usable as an argument: numbers, strings, dtypes, tuples or lists of them, and dicts
    between them (`_TORCH_DTYPE_TO_TL[x.dtype]`)."""
    if _is_plain(value) or (isinstance(value, dict) and _is_plain(list(value.items()))):
        return value
    kind = type(value).__name__
    return Unknown(f"`{shown}` is a {kind}" + (", not a constant" if kind not in ("Tensor", "ndarray") else ""))


def imported(node, alias):
    """A module imported inside a function, when it is already loaded: read, never imported here."""
    name = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
    module = sys.modules.get(name if alias.asname or isinstance(node, ast.ImportFrom) else name.split(".")[0])
    return module if module is not None else Unknown(f"`{alias.asname or alias.name}` is imported at run time")


def _is_plain(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_plain(item) for item in value)
    return isinstance(value, (bool, int, float, str, type(None))) or type(value).__name__ == "dtype"


def _arithmetic(function, node, *values):
    try:
        result = function(*values)
    except Exception:  # noqa: BLE001 - a division by zero or a str - int says only that it is not inferable
        return Unknown(f"`{shown(node)}` cannot be evaluated")
    if isinstance(result, (int, float)) and abs(result) > _LARGEST:
        return Unknown(f"`{shown(node)}` is too large to be a shape")
    return result


def shown(node) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."
