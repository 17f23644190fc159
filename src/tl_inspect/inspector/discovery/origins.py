"""Where a user's kernel was written: the function under a factory, a jit wrapper or an autotuner, its file
and lines, a PrimFunc's span, and the text its module was executed from."""

from __future__ import annotations

import inspect
import linecache
import os

from tilelang.ir import get_prim_func_span


def module_text(path: str) -> str:
    """The text the module at `path` was executed from: linecache holds it, from memory for a fix being
    verified, else from the file."""
    return "".join(linecache.getlines(path))


def module_file(module) -> str:
    return os.path.abspath(getattr(module, "__file__", "") or "")


def user_function(obj):
    impl = getattr(obj, "jit_impl", obj)
    func = getattr(impl, "func", impl)
    return getattr(func, "orig_func", func)


def function_file(obj) -> str | None:
    code = getattr(user_function(obj), "__code__", None)
    return os.path.abspath(code.co_filename) if code else None


def function_line(obj) -> int:
    code = getattr(user_function(obj), "__code__", None)
    return code.co_firstlineno if code else 0


def function_lines(obj) -> range:
    try:
        lines, first = inspect.getsourcelines(user_function(obj))
    except (OSError, TypeError):
        return range(0)
    return range(first, first + len(lines))


def prim_func_file(prim_func) -> str | None:
    span = get_prim_func_span(prim_func)
    return os.path.abspath(span.source_name.name) if span is not None else None


def prim_func_line(prim_func) -> int:
    span = get_prim_func_span(prim_func)
    return int(span.line) if span is not None else 0
