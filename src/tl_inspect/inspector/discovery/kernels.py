"""Find the kernels of an imported user file: PrimFuncs, compiled kernels, `@tilelang.jit` factories
and autotuners, each factory once per case of `TL_INSPECT_CASES` (or of the configuration), with the
file and line their code is written at.

Used by the worker, by `tl_inspect.inspect(obj)` (api.py) and by benchmarks/bench_inspect.py: only
where tilelang is loaded.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass, field

from tilelang import tvm
from tilelang.autotuner.tuner import AutoTuneImpl
from tilelang.jit import JITImpl
from tilelang.jit.kernel import JITKernel

from tl_inspect.inspector.discovery import inference
from tl_inspect.inspector.discovery.cases import SWEEP_KEY, case_label, expand_cases, shown
from tl_inspect.inspector.discovery.factory_calls import module_level_call
from tl_inspect.inspector.discovery.origins import (
    function_file,
    function_line,
    function_lines,
    module_file,
    module_text,
    prim_func_file,
    prim_func_line,
    user_function,
)
from tl_inspect.inspector.discovery.tensor_args import TensorShape
from tl_inspect.inspector.lowering.hooks import TILELANG_DIR
from tl_inspect.inspector.processes.job import Job

CASES_VARIABLE = "TL_INSPECT_CASES"


@dataclass
class KernelSpec:
    name: str
    discovered_as: str
    build: object  # () -> (PrimFunc, pass_configs)
    source_file: str  # absolute path of the file that defines the kernel's code
    factory: str = ""
    case: tuple = ()  # (name, str(value)) of the arguments it was built with
    call: FactoryCall | None = None  # how to build it again with other arguments, where that is known


@dataclass(frozen=True)
class FactoryCall:
    """A factory and the arguments a kernel was built with: the proofs build it again with an aligned
    length, so that every constant the factory derives from it follows."""

    name: str
    factory: object
    arguments: dict
    config: dict = field(default_factory=dict)  # an autotuner's config, which the arguments override

    def build(self, changes: dict):
        """(PrimFunc, pass_configs) of the factory called with `changes` to its arguments."""
        return _from_factory(self.factory, {**self.arguments, **changes}, self.config)()


def factory_call_of(module, spec: KernelSpec) -> FactoryCall | None:
    """How `spec` was built: its factory case, else the module-level `name = factory(literals)` that bound it."""
    if spec.call is not None or spec.discovered_as not in ("prim_func", "jit_kernel"):
        return spec.call
    found = module_level_call(module, spec.name)
    if found is None:
        return None
    factory, arguments = found
    return FactoryCall(getattr(user_function(factory), "__name__", spec.name), factory, arguments)


def discover(module, job: Job) -> tuple[list[KernelSpec], list[str], dict]:
    """The file's kernels in source order, a note per factory left out or cut short, and the factories that
    need a TL_INSPECT_CASES entry (name -> the parameters it needs)."""
    cases = {
        name: expand_cases(value, f"{CASES_VARIABLE} entry {shown(name)}")
        for name, value in {**(getattr(module, CASES_VARIABLE, None) or {}), **job.cases}.items()
    }
    if job.only and job.args:
        cases[job.only] = [job.args]
    specs: list[tuple[int, KernelSpec]] = []
    factories: list[tuple[str, object]] = []
    seen: set[int] = set()
    tree = _syntax_tree(module) if job.infer else None
    plain = inference.plain_factories(tree) if tree else set()
    for name, obj in list(vars(module).items()):
        if (
            name.startswith("__")
            or id(obj) in seen
            or (job.only and name != job.only)
            or not callable(obj)
            and not is_kernel_object(obj)
        ):
            continue
        seen.add(id(obj))
        if isinstance(obj, (tvm.tirx.PrimFunc, JITKernel)):
            found, line, _ = specs_of(name, obj, None)
            if name == job.only and job.args:
                found = [_at_run_time_values(spec, job.args, factory_call_of(module, spec)) for spec in found]
            specs.extend((line, spec) for spec in found if is_users(spec.source_file))
        elif is_kernel_object(obj) or name in cases or (name in plain and function_file(obj) == module_file(module)):
            factories.append((name, obj))
    # a factory already called at module level (`k = factory(4096)`) needs no cases, nor its defaults
    specialised = {(spec.source_file, line) for line, spec in specs}
    inferred = InferredCases.of(tree, module, [(n, o) for n, o in factories if n not in cases], job.max_inferred)
    notes: list[str] = list(inferred.notes)
    needs_cases: dict = {}
    for name, obj in factories:
        if name not in cases and any(
            file == function_file(obj) and line in function_lines(obj) for file, line in specialised
        ):
            continue
        own = cases.get(name) or inferred.cases.get(name)
        found, note = _factory_specs(
            name, obj, own, job.all_configs, () if name in cases else inferred.origins.get(name, ())
        )
        if note:
            notes.append(note + inferred.refusal(name))
            needs_cases[name] = required_parameters(obj)
        line = function_line(obj)
        specs.extend((line, spec) for spec in found if is_users(spec.source_file))
    specs.sort(key=lambda item: item[0])
    for _, spec in specs:
        spec.call = factory_call_of(module, spec)
    return [s for _, s in specs], notes, needs_cases


@dataclass
class InferredCases:
    """The cases of each factory inferred from the file's own calls (inference.py), bound to its parameters."""

    cases: dict = field(default_factory=dict)  # factory -> [kwargs, ...]
    origins: dict = field(default_factory=dict)  # factory -> (where each case was called from, ...)
    refusals: dict = field(default_factory=dict)  # factory -> [why a call is not inferable]
    notes: list = field(default_factory=list)  # factories whose calls exceed the cap

    @classmethod
    def of(cls, tree, module, factories: list, cap: int) -> "InferredCases":
        found = cls()
        if tree is None or not factories:
            return found
        objects = dict(factories)
        calls = inference.infer_calls(tree, set(objects), vars(module))
        for name, obj in factories:
            found.refusals[name] = list(dict.fromkeys(calls.refusals.get(name, [])))
            unique: dict = {}
            for call in calls.calls.get(name, []):
                case = _bound(obj, call)
                if isinstance(case, str):
                    found.refusals[name].append(case)
                else:
                    unique.setdefault(repr(sorted(case.items(), key=lambda item: item[0])), (case, call.origin))
            kept = list(unique.values())
            if len(kept) > cap:
                found.notes.append(
                    f"{name}: {len(kept)} cases inferred from its calls; inspecting the first {cap} "
                    f"(max-inferred-cases)"
                )
                kept = kept[:cap]
            if kept:
                found.cases[name] = [case for case, _ in kept]
                found.origins[name] = tuple(origin for _, origin in kept)
        return found

    def refusal(self, name: str) -> str:
        """Why none of the factory's calls gave a case, for its note."""
        reasons = self.refusals.get(name)
        if not reasons:
            return "; no call of it was found in main(), the __main__ block or a test_* function"
        more = f" (and {len(reasons) - 2} more)" if len(reasons) > 2 else ""
        return "; its calls are not inferable: " + "; ".join(reasons[:2]) + more


def _bound(obj, call) -> dict | str:
    """The call's arguments by parameter name, or why they do not fit the factory's parameters."""
    try:
        return dict(inspect.signature(user_function(obj)).bind_partial(*call.args, **dict(call.kwargs)).arguments)
    except TypeError as exc:
        if not call.args and required_parameters(obj) and _constexprs(user_function(obj)):
            return dict(call.kwargs)  # an eager kernel's T.const names are given by keyword
        return f"{call.origin}: the arguments do not match its parameters ({exc})"
    except ValueError:
        return dict(call.kwargs) if not call.args else f"{call.origin}: its parameters cannot be read"


def _syntax_tree(module):
    try:
        return ast.parse(module_text(module_file(module)))
    except (SyntaxError, ValueError, TypeError):
        return None


def is_kernel_object(obj) -> bool:
    """A PrimFunc, a compiled kernel, a `@tilelang.jit` factory or an autotuner."""
    return isinstance(obj, (tvm.tirx.PrimFunc, JITKernel, JITImpl, AutoTuneImpl))


def specs_of(name: str, obj, cases, all_configs: bool = False) -> tuple[list[KernelSpec], int, str | None]:
    """The kernels `obj` gives under `name`, the line that defines it, and a note when a factory has
    no arguments to be called with."""
    if isinstance(obj, tvm.tirx.PrimFunc):
        return [KernelSpec(name, "prim_func", _fixed(obj, {}), prim_func_file(obj))], prim_func_line(obj), None
    if isinstance(obj, JITKernel):
        configs = dict(obj.pass_configs or {})
        spec = KernelSpec(name, "jit_kernel", _fixed(obj.prim_func, configs), prim_func_file(obj.prim_func))
        return [spec], prim_func_line(obj.prim_func), None
    found, note = _factory_specs(name, obj, cases, all_configs)
    return found, function_line(obj), note


def check_names(module, job: Job) -> str | None:
    """The error of the whole file: a malformed TL_INSPECT_CASES, or a FILE.py::NAME that names nothing."""
    cases = getattr(module, CASES_VARIABLE, None)
    if cases is not None and not isinstance(cases, dict):
        return (
            f"{CASES_VARIABLE} must be a dict mapping factory names to lists of keyword-argument dicts "
            f"(or to one dict, with an optional {SWEEP_KEY!r}: {{NAME: [values]}})"
        )
    for name, value in (cases or {}).items():
        if not isinstance(name, str):
            return f"{CASES_VARIABLE} keys must be factory names (strings), got {shown(name)}"
        try:
            expand_cases(value, f"{CASES_VARIABLE} entry {shown(name)}")
        except ValueError as exc:
            return str(exc)
    if job.only and not hasattr(module, job.only):
        return f"{job.path}::{job.only}: no kernel or factory named {job.only!r} in this file"
    built = getattr(module, job.only, None) if job.only and job.args else None
    if isinstance(built, (tvm.tirx.PrimFunc, JITKernel)):
        names = run_time_names(built if isinstance(built, tvm.tirx.PrimFunc) else built.prim_func)
        unknown = [name for name in job.args if name not in names]
        if unknown:
            return (
                f"{job.path}::{job.only}: -a {unknown[0]}: {job.only} is a kernel already built, and -a can "
                f"only give values to its run-time lengths and scalars ({', '.join(names) or 'it has none'})"
            )
    return None


def run_time_names(prim_func) -> list[str]:
    """The names of a PrimFunc's lengths known only at run time (`T.dynamic`) and of its scalar parameters."""
    names = [str(d) for buffer in prim_func.buffer_map.values() for d in buffer.shape if isinstance(d, tvm.tirx.Var)]
    names += [param.name for param in prim_func.params if param not in prim_func.buffer_map]
    return list(dict.fromkeys(names))


def _at_run_time_values(spec: KernelSpec, values: dict, call: FactoryCall | None) -> KernelSpec:
    """A built kernel's spec with `-a` values for its run-time lengths and scalars, which `--measure` runs
    it at (check_names has refused any other name); `call`: the module-level call that built it, found
    under its own name before the values label it."""
    return KernelSpec(
        f"{spec.name}[{case_label(values)}]",
        spec.discovered_as,
        spec.build,
        spec.source_file,
        case=tuple((name, str(value)) for name, value in values.items()),
        call=call,
    )


def unusable_cases(module, job: Job) -> list[tuple[str, str]]:
    """(name, error) of each case entry naming nothing or something that cannot be called: one
    mistyped name costs its own cases, the file's other kernels are still inspected."""
    found = []
    for name in dict.fromkeys([*(getattr(module, CASES_VARIABLE, None) or {}), *job.cases]):
        where = f"{CASES_VARIABLE} entry {shown(name)}"
        if job.only and name != job.only:
            continue
        if not hasattr(module, name):
            found.append((name, f"{where}: no kernel or factory named {shown(name)} in this file"))
        elif not callable(getattr(module, name)):
            found.append((name, f"{where}: {shown(name)} is a {type(getattr(module, name)).__name__}, not a factory"))
    return found


def is_users(path: str | None) -> bool:
    """Kernels whose code lives in tilelang itself (its examples, its tests) are not the user's."""
    return bool(path) and not path.startswith(TILELANG_DIR)


def _fixed(prim_func, configs):
    return lambda: (prim_func, configs)


def _factory_specs(
    name: str, obj, cases, all_configs: bool, origins: tuple = ()
) -> tuple[list[KernelSpec], str | None]:
    """The kernels of a factory, one per case (`origins`: where each inferred case was called from)."""
    missing = required_parameters(obj)
    if not cases and missing:
        return [], (
            f"{name}: factory needs arguments ({', '.join(missing)}); "
            f"add {CASES_VARIABLE} = {{{name!r}: [{{...}}]}} or use FILE.py::{name} -a NAME=VALUE"
        )
    kind = "autotune" if isinstance(obj, AutoTuneImpl) else "jit_factory" if isinstance(obj, JITImpl) else "factory"
    specs = []
    for index, case in enumerate(cases or [{}]):
        # never call an autotuner: it benchmarks on a GPU. Lower its jit with the first config, or each one.
        configs = _configs(obj, case) if kind == "autotune" else [{}]
        for config in configs if all_configs else configs[:1]:
            arguments = {k: v for k, v in config.items() if k != "pass_configs"}
            shown = {**case, **arguments} if all_configs else case
            label = f"{name}[{case_label(shown)}]" if shown else name
            specs.append(
                KernelSpec(
                    label,
                    origins[index] if origins else kind,
                    _from_factory(obj, case, config),
                    function_file(obj),
                    factory=name,
                    case=tuple((k, str(v)) for k, v in shown.items()),
                    call=FactoryCall(name, obj, dict(case), config),
                )
            )
    return specs, None


def _from_factory(obj, case: dict, config: dict):
    """Build the PrimFunc of one case lazily, so a failing factory fails only its own kernel."""

    def build():
        # tensors an inferred call passes: meta tensors of their shape and dtype, never allocated
        case_values = {name: value.meta() if isinstance(value, TensorShape) else value for name, value in case.items()}
        if isinstance(obj, AutoTuneImpl):
            arguments = dict(config)
            extra = dict(arguments.pop("pass_configs", None) or {})
            impl = obj.jit_impl
            return impl.get_tir(**{**arguments, **case_values}), {**(impl.pass_configs or {}), **extra}
        if isinstance(obj, JITImpl):
            # get_tir builds the PrimFunc without compiling and drops the factory's pass_configs
            return obj.get_tir(**case_values), dict(obj.pass_configs or {})
        result = obj(**case_values)
        if hasattr(result, "prim_func"):
            return result.prim_func, dict(getattr(result, "pass_configs", None) or {})
        return result, {}

    return build


def _configs(autotuner, case: dict) -> list:
    configs = autotuner.configs(**case) if callable(autotuner.configs) else autotuner.configs
    return [dict(config) for config in configs] or [{}]


def required_parameters(obj) -> list[str]:
    """Names a factory needs values for: its parameters without defaults, or an eager kernel's T.const names."""
    func = user_function(obj)
    constants = _constexprs(func)
    if constants:
        return constants
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    tuned = set(obj.configs[0]) if isinstance(getattr(obj, "configs", None), (list, tuple)) and obj.configs else set()
    return [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty
        and p.name not in tuned
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def _constexprs(func) -> list[str]:
    """The names an eager kernel declares with `T.const("M, N")`."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return []
    groups = re.findall(r"T\.const\(\s*[\"']([^\"']+)[\"']", source)
    return [name.strip() for group in groups for name in group.split(",") if name.strip()]
