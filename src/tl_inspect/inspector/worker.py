"""Runs inside one worker process per user file: import the file, find its kernels, compile each one
for CUDA without a GPU, and stream one record per kernel to the parent through a pickle file.

The parent reads the records even when this process dies (a segfault in the compiler, a timeout), so
every finished kernel survives and the parent knows which kernel was being compiled.
"""

from __future__ import annotations

import importlib.util
import inspect
import io
import os
import pickle
import re
import resource
import shutil
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field

from tl_inspect.deepstack import call_on_deep_stack
from tl_inspect.inspector import inputs
from tl_inspect.sweep import SWEEP_KEY, case_label, expand_cases

CASES_VARIABLE = "TL_INSPECT_CASES"
NO_LAYOUT = "no available layout found"  # tl.LayoutInference's message, explained by layout_failure


@dataclass(frozen=True)
class Job:
    path: str  # as the user gave it
    arch: str = "sm_90"
    run_nvcc: bool = False
    prove: bool = True  # rebuild each kernel without each cause of a costly access (proofs)
    only: str | None = None  # FILE.py::NAME
    args: dict = field(default_factory=dict)  # -a NAME=VALUE for FILE.py::factory
    cases: dict = field(default_factory=dict)  # factory -> [kwargs, ...] from the configuration
    all_configs: bool = False  # an autotuner gives one kernel per config, not only its first
    skip: tuple = ()  # kernels an earlier worker for this file compiled or crashed on


@dataclass
class KernelSpec:
    name: str
    discovered_as: str
    build: object  # () -> (PrimFunc, pass_configs)
    source_file: str  # absolute path of the file that defines the kernel's code
    factory: str = ""
    case: tuple = ()  # (name, str(value)) of the arguments it was built with


# ---------------------------------------------------------------- entry point (child process)

def run(job: Job, max_memory_mib: int, result_path: str, out_path: str, err_path: str) -> None:
    sys.dont_write_bytecode = True  # never write __pycache__ next to the user's files
    # temporary files of the user's code, nvcc and ptxas go to the job's folder, removed with the run
    tempfile.tempdir = os.path.join(os.path.dirname(result_path), "tmp")
    os.makedirs(tempfile.tempdir, exist_ok=True)
    os.environ["TMPDIR"] = tempfile.tempdir
    out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    with open(result_path, "ab", buffering=0) as sink:
        call_on_deep_stack(_guarded, job, max_memory_mib, sink, out_path, err_path)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class _PlainPickler(pickle.Pickler):
    """Pickles tvm_ffi's `str` subclass as plain `str`: the parent process never imports TVM."""

    def reducer_override(self, obj):
        if isinstance(obj, str) and type(obj) is not str:
            return str, (str.__str__(obj),)
        return NotImplemented


def _emit(sink, kind: str, payload) -> None:
    buffer = io.BytesIO()
    _PlainPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((kind, payload))
    sink.write(buffer.getvalue())


def _guarded(job: Job, max_memory_mib: int, sink, out_path: str, err_path: str) -> None:
    _limit_memory(max_memory_mib)
    recorder = inputs.Recorder(os.path.dirname(out_path))
    try:
        recorder.install()
        _work(job, sink, _Capture(out_path, err_path))
    except BaseException as exc:  # noqa: BLE001 - the parent must always get a reason
        _emit(sink, "fatal", f"internal error in tl-inspect: {type(exc).__name__}: {printable(str(exc))}\n"
                             + "".join(traceback.format_exception(exc)))
    _emit(sink, "done", {"dependencies": recorder.inputs()})


# the limit this worker runs under, for the message of a MemoryError (one user file per process)
_memory_limit_mib = 0


def _limit_memory(mib: int) -> None:
    """Let the worker allocate `mib` MiB beyond what it holds now, tilelang and the compile stack included.

    RLIMIT_DATA counts what is allocated (heap, anonymous mappings), not the address space that
    libraries and thread arenas merely reserve; the hard limit too, so user code cannot raise it."""
    global _memory_limit_mib
    _memory_limit_mib = mib
    with open("/proc/self/status") as status:
        held_kib = next(int(line.split()[1]) for line in status if line.startswith("VmData:"))
    limit = held_kib * 1024 + mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


# what one phase may keep of its fd 1 or fd 2 output: it ends up in reports, pages and the cache
CAPTURE_LIMIT_BYTES = 1 << 20


class _Capture:
    """Slices of this process's fd 1/fd 2 output, per phase (fds are redirected to files)."""

    def __init__(self, out_path: str, err_path: str):
        self.paths = (out_path, err_path)
        self.marks = [0, 0]

    def mark(self, streams: tuple = (1, 2)) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        for stream in streams:
            self.marks[stream - 1] = os.path.getsize(self.paths[stream - 1])

    def since_mark(self) -> tuple[str, str]:
        sys.stdout.flush()
        sys.stderr.flush()
        texts = []
        for path, start in zip(self.paths, self.marks):
            with open(path, "rb") as f:
                f.seek(start)
                data = f.read(CAPTURE_LIMIT_BYTES)
                dropped = os.fstat(f.fileno()).st_size - start - len(data)
            text = data.decode("utf-8", errors="replace")
            texts.append(text + (f"\n[tl-inspect: {dropped} more bytes of output not kept]" if dropped > 0 else ""))
        return texts[0], texts[1]


@contextmanager
def captured_output():
    """This process's fd 1 and fd 2 sent to files while a kernel compiles in the caller's own process
    (the Python API), as a worker's always are: the layout text and tilelang's warnings become part of
    the kernel's record, not noise on the caller's terminal."""
    folder = tempfile.mkdtemp(prefix="tl-inspect-")
    paths = (os.path.join(folder, "stdout.txt"), os.path.join(folder, "stderr.txt"))
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    try:
        for fd, path in zip((1, 2), paths):
            opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        yield _Capture(*paths)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, old in zip((1, 2), saved):
            os.dup2(old, fd)
            os.close(old)
        shutil.rmtree(folder, ignore_errors=True)


def _work(job: Job, sink, capture: _Capture) -> None:
    from tl_inspect.inspector import hooks
    from tl_inspect.model import KernelArtifact

    hooks.install(job.arch, job.run_nvcc)
    capture.mark()
    # paths are reported as the user gave them, relative to this folder, whatever os.chdir the file does
    home = os.getcwd()
    module, (import_error, error_line) = _import_user_file(os.path.abspath(job.path))
    os.chdir(home)
    _, import_err_text = capture.since_mark()
    _emit(sink, "import", {"error": import_error, "error_line": error_line,
                           "warnings": split_diagnostics(import_err_text)})
    if module is None:
        return
    name_error = _check_names(module, job)
    if name_error:
        _emit(sink, "error", name_error)
        return
    for name, error in _unusable_cases(module, job):
        if name not in job.skip:
            _emit(sink, "kernel", KernelArtifact(name=name, file=job.path, line=None, arch=job.arch,
                                                 status="error", error=error))
    specs, notes = discover(module, job)
    specs = [spec for spec in specs if spec.name not in job.skip]
    _emit(sink, "notes", notes)
    _emit(sink, "plan", [spec.name for spec in specs])
    for spec in specs:
        _emit(sink, "start", spec.name)
        capture.mark()
        artifact = compile_kernel(spec, job, capture)
        os.chdir(home)
        _emit(sink, "kernel", artifact)


def _import_user_file(user_file: str):
    """Execute the user's file as a module named so that its `__main__` block does not run."""
    directory = os.path.dirname(user_file)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = "tl_inspect_user_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(user_file))[0])
    spec = importlib.util.spec_from_file_location(name, user_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        return None, (printable(f"SyntaxError: {exc.msg} (while importing the module)"), exc.lineno)
    except MemoryError as exc:
        # the module's names hold what it allocated: drop them all, or nothing more can be done
        vars(module).clear()
        return None, describe_error(exc, user_file, "while importing the module")
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        # names bound before the failure stay in the module: inspect them and report the error
        return module, describe_error(exc, user_file, "while importing the module")
    return module, (None, None)


# ---------------------------------------------------------------- discovery

def discover(module, job: Job) -> tuple[list[KernelSpec], list[str]]:
    cases = {name: expand_cases(value, f"{CASES_VARIABLE} entry {name!r}")
             for name, value in {**(getattr(module, CASES_VARIABLE, None) or {}), **job.cases}.items()}
    if job.only and job.args:
        cases[job.only] = [job.args]
    specs: list[tuple[int, KernelSpec]] = []
    notes: list[str] = []
    seen: set[int] = set()
    unspecialised: list[tuple] = []
    for name, obj in list(vars(module).items()):
        if name.startswith("__") or id(obj) in seen or (job.only and name != job.only):
            continue
        if not (is_kernel_object(obj) or (callable(obj) and name in cases)):
            continue
        found, line, note = specs_of(name, obj, cases.get(name), job.all_configs)
        if note:
            unspecialised.append((obj, note))
        seen.add(id(obj))
        specs.extend((line, spec) for spec in found if _is_users(spec.source_file))
    # a factory already called at module level (`k = factory(4096)`) needs no cases
    specialised = {(spec.source_file, line) for line, spec in specs}
    notes.extend(note for obj, note in unspecialised if not any(
        file == _function_file(obj) and line in _function_lines(obj) for file, line in specialised))
    specs.sort(key=lambda item: item[0])
    return [s for _, s in specs], notes


def is_kernel_object(obj) -> bool:
    """A PrimFunc, a compiled kernel, a `@tilelang.jit` factory or an autotuner."""
    import tvm
    from tilelang.autotuner.tuner import AutoTuneImpl
    from tilelang.jit import JITImpl
    from tilelang.jit.kernel import JITKernel

    return isinstance(obj, (tvm.tirx.PrimFunc, JITKernel, JITImpl, AutoTuneImpl))


def specs_of(name: str, obj, cases, all_configs: bool = False) -> tuple[list[KernelSpec], int, str | None]:
    """The kernels `obj` gives under `name`, the line that defines it, and a note when a factory has
    no arguments to be called with."""
    import tvm
    from tilelang.jit.kernel import JITKernel

    if isinstance(obj, tvm.tirx.PrimFunc):
        return [KernelSpec(name, "prim_func", _fixed(obj, {}), _prim_func_file(obj))], _prim_func_line(obj), None
    if isinstance(obj, JITKernel):
        configs = dict(obj.pass_configs or {})
        spec = KernelSpec(name, "jit_kernel", _fixed(obj.prim_func, configs), _prim_func_file(obj.prim_func))
        return [spec], _prim_func_line(obj.prim_func), None
    found, note = _factory_specs(name, obj, cases, all_configs)
    return found, _function_line(obj), note


def _check_names(module, job: Job) -> str | None:
    """The error of the whole file: a malformed TL_INSPECT_CASES, or a FILE.py::NAME that names nothing."""
    cases = getattr(module, CASES_VARIABLE, None)
    if cases is not None and not isinstance(cases, dict):
        return (f"{CASES_VARIABLE} must be a dict mapping factory names to lists of keyword-argument dicts "
                f"(or to one dict, with an optional {SWEEP_KEY!r}: {{NAME: [values]}})")
    for name, value in (cases or {}).items():
        try:
            expand_cases(value, f"{CASES_VARIABLE} entry {name!r}")
        except ValueError as exc:
            return str(exc)
    if job.only and not hasattr(module, job.only):
        return f"{job.path}::{job.only}: no kernel or factory named {job.only!r} in this file"
    return None


def _unusable_cases(module, job: Job) -> list[tuple[str, str]]:
    """(name, error) of each case entry naming nothing or something that cannot be called: one
    mistyped name costs its own cases, the file's other kernels are still inspected."""
    found = []
    for name in dict.fromkeys([*(getattr(module, CASES_VARIABLE, None) or {}), *job.cases]):
        where = f"{CASES_VARIABLE} entry {name!r}"
        if job.only and name != job.only:
            continue
        if not hasattr(module, name):
            found.append((name, f"{where}: no kernel or factory named {name!r} in this file"))
        elif not callable(getattr(module, name)):
            found.append((name, f"{where}: {name!r} is a {type(getattr(module, name)).__name__}, not a factory"))
    return found


def _is_users(path: str | None) -> bool:
    """Kernels whose code lives in tilelang itself (its examples, its tests) are not the user's."""
    from tl_inspect.inspector.hooks import TILELANG_DIR

    return bool(path) and not path.startswith(TILELANG_DIR)


def _fixed(prim_func, configs):
    return lambda: (prim_func, configs)


def _factory_specs(name: str, obj, cases, all_configs: bool) -> tuple[list[KernelSpec], str | None]:
    from tilelang.autotuner.tuner import AutoTuneImpl
    from tilelang.jit import JITImpl

    missing = required_parameters(obj)
    if not cases and missing:
        return [], (f"{name}: factory needs arguments ({', '.join(missing)}); "
                    f"add {CASES_VARIABLE} = {{{name!r}: [{{...}}]}} or use FILE.py::{name} -a NAME=VALUE")
    kind = ("autotune" if isinstance(obj, AutoTuneImpl) else
            "jit_factory" if isinstance(obj, JITImpl) else "factory")
    specs = []
    for case in cases or [{}]:
        # never call an autotuner: it benchmarks on a GPU. Lower its jit with the first config, or each one.
        configs = _configs(obj, case) if kind == "autotune" else [{}]
        for config in configs if all_configs else configs[:1]:
            arguments = {k: v for k, v in config.items() if k != "pass_configs"}
            shown = {**case, **arguments} if all_configs else case
            label = f"{name}[{case_label(shown)}]" if shown else name
            specs.append(KernelSpec(label, kind, _from_factory(obj, case, config), _function_file(obj),
                                    factory=name, case=tuple((k, str(v)) for k, v in shown.items())))
    return specs, None


def _from_factory(obj, case: dict, config: dict):
    """Build the PrimFunc of one case lazily, so a failing factory fails only its own kernel."""
    from tilelang.autotuner.tuner import AutoTuneImpl
    from tilelang.jit import JITImpl

    def build():
        if isinstance(obj, AutoTuneImpl):
            arguments = dict(config)
            extra = dict(arguments.pop("pass_configs", None) or {})
            impl = obj.jit_impl
            return impl.get_tir(**{**arguments, **case}), {**(impl.pass_configs or {}), **extra}
        if isinstance(obj, JITImpl):
            # get_tir builds the PrimFunc without compiling and drops the factory's pass_configs
            return obj.get_tir(**case), dict(obj.pass_configs or {})
        result = obj(**case)
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
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        source = ""
    constants = re.findall(r"T\.const\(\s*[\"']([^\"']+)[\"']", source)
    if constants:
        return [name.strip() for group in constants for name in group.split(",") if name.strip()]
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    tuned = set(obj.configs[0]) if isinstance(getattr(obj, "configs", None), (list, tuple)) and obj.configs else set()
    return [p.name for p in params
            if p.default is inspect.Parameter.empty and p.name not in tuned
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def user_function(obj):
    impl = getattr(obj, "jit_impl", obj)
    func = getattr(impl, "func", impl)
    return getattr(func, "orig_func", func)


def _function_file(obj) -> str | None:
    code = getattr(user_function(obj), "__code__", None)
    return os.path.abspath(code.co_filename) if code else None


def _function_line(obj) -> int:
    code = getattr(user_function(obj), "__code__", None)
    return code.co_firstlineno if code else 0


def _function_lines(obj) -> range:
    try:
        lines, first = inspect.getsourcelines(user_function(obj))
    except (OSError, TypeError):
        return range(0)
    return range(first, first + len(lines))


def _prim_func_file(prim_func) -> str | None:
    from tilelang.ir import get_prim_func_span

    span = get_prim_func_span(prim_func)
    return os.path.abspath(span.source_name.name) if span is not None else None


def _prim_func_line(prim_func) -> int:
    from tilelang.ir import get_prim_func_span

    span = get_prim_func_span(prim_func)
    return int(span.line) if span is not None else 0


# ---------------------------------------------------------------- compiling one kernel

def compile_kernel(spec: KernelSpec, job: Job, capture: _Capture):
    from tl_inspect.model import KernelArtifact

    started = time.perf_counter()
    user_file = spec.source_file
    base = dict(name=spec.name, file=_shown(job, user_file), arch=job.arch, discovered_as=spec.discovered_as,
                line=None, factory=spec.factory, case=spec.case)
    prim_func = None
    try:
        prim_func, pass_configs = spec.build()
        # a factory may build its kernel in a module of its own (a library the cases file imports): the
        # kernel's lines are in the file its `@T.prim_func` is written in
        written_in = _prim_func_file(prim_func)
        if written_in and written_in != user_file and _is_users(written_in):
            user_file = written_in
            base["file"] = _shown(job, user_file)
        base["line"] = _prim_func_line(prim_func) or None
        artifact = _lower(prim_func, pass_configs, job, user_file, base, capture)
    except BaseException as exc:  # noqa: BLE001 - one bad kernel must not lose the others
        if isinstance(exc, MemoryError):
            traceback.clear_frames(exc.__traceback__)  # their locals hold what the factory allocated
        _, err_text = capture.since_mark()
        error, error_line = describe_error(exc, user_file, "while compiling")
        detail = ""
        if prim_func is not None and NO_LAYOUT in str(exc):
            explained = _explain_no_layout(prim_func, pass_configs, spec, job)
            if explained is not None:
                error = printable(f"{type(exc).__name__}: {explained.summary} (while compiling)")
                error_line = explained.line or error_line
                detail = "\n".join(printable(line) for line in explained.detail.splitlines())
        return KernelArtifact(**base, status="error", error=error, error_line=error_line, error_detail=detail,
                              warnings=split_diagnostics(err_text),
                              compile_ms=(time.perf_counter() - started) * 1e3)
    return artifact


def _explain_no_layout(prim_func, pass_configs: dict, spec: KernelSpec, job: Job):
    import tilelang
    import tvm
    from tvm.target import Target

    from tl_inspect.inspector import hooks
    from tl_inspect.inspector.layout_failure import explain_no_layout

    target = hooks.cuda_target(job.arch)

    def lowers(func) -> bool:
        try:
            with tvm.transform.PassContext(opt_level=3, config=pass_configs), Target(target):
                tilelang.lower(func, target=target)
        except Exception:  # noqa: BLE001 - any failure means this shape does not compile either
            return False
        return True

    case = {name: _literal(value) for name, value in spec.case}
    return explain_no_layout(prim_func, case, lowers)


def _literal(text: str):
    return int(text) if text.lstrip("-").isdigit() else text


def _shown(job: Job, path: str) -> str:
    """A file as the user named it, else relative to the working directory."""
    return job.path if os.path.abspath(job.path) == path else os.path.relpath(path)


def _lower(prim_func, pass_configs: dict, job: Job, user_file: str, base: dict, capture: _Capture):
    import dataclasses

    import tilelang
    import tvm
    from tvm.ir.instrument import pass_instrument
    from tvm.target import Target

    from tl_inspect.analysis import ledger, verdicts
    from tl_inspect.inspector import convert, hooks, proofs
    from tl_inspect.inspector.nvcc import ptxas_usage
    from tl_inspect.model import (STAGE_DEVICE, STAGE_FRONTEND, STAGE_LAYOUT, STAGE_VECTORIZE,
                                  KernelArtifact)

    after = {"tl.LayoutInference": STAGE_LAYOUT, "tl.VectorizeLoop": STAGE_VECTORIZE}
    kept: dict = {}

    @pass_instrument
    class KeepAfter:
        def run_after_pass(self, mod, info):
            if info.name in after:
                kept[after[info.name]] = mod

    # from here fd 1 holds the layout visualisation only, not what the user's factory printed
    capture.mark(streams=(1,))
    started = time.perf_counter()
    target = hooks.cuda_target(job.arch)
    lines_config = {**pass_configs, "tl.emit_line_directives": True}
    config = {**lines_config, "tl.layout_visualization_enable": True, "tl.layout_visualization_formats": "txt"}
    with tvm.transform.PassContext(opt_level=3, config=config, instruments=[KeepAfter()]), Target(target):
        compiled = tilelang.lower(prim_func, target=target)
    compile_ms = (time.perf_counter() - started) * 1e3
    layout_text, err_text = capture.since_mark()

    spans = convert.SpanFilter(user_file)
    snapshots = {STAGE_FRONTEND: convert.convert_module(STAGE_FRONTEND, prim_func, spans)}
    for stage, mod in kept.items():
        snapshots[stage] = convert.convert_module(stage, mod, spans)
    snapshots[STAGE_DEVICE] = convert.convert_module(STAGE_DEVICE, compiled.device_mod, spans)
    source, line_map, found = _device_view(compiled.kernel_source, snapshots, spans, base["line"])
    ptxas = ptxas_usage(source, job.arch) if job.run_nvcc else None
    artifact = KernelArtifact(
        **base, source=source, source_with_directives=compiled.kernel_source, line_map=line_map,
        snapshots=snapshots, accesses=found,
        layouts=convert.layouts(kept[STAGE_LAYOUT], spans) if STAGE_LAYOUT in kept else (),
        layout_text=layout_text, warnings=split_diagnostics(err_text), compile_ms=compile_ms, ptxas=ptxas,
    )
    judged = verdicts.judge(artifact)
    if job.prove:
        def lower_variant(func):
            with tvm.transform.PassContext(opt_level=3, config=lines_config), Target(target):
                variant = tilelang.lower(func, target=target)
            # the rebuilt kernel keeps the frontend's lines and tile operators: only its device code is new
            views = {STAGE_FRONTEND: snapshots[STAGE_FRONTEND],
                     STAGE_DEVICE: convert.convert_module(STAGE_DEVICE, variant.device_mod, spans, script=False)}
            variant_source, _, variant_accesses = _device_view(variant.kernel_source, views, spans, base["line"])
            return variant_source, variant_accesses

        judged = proofs.prove(prim_func, judged, lower_variant, source)
    judged_artifact = dataclasses.replace(artifact, accesses=judged)
    return dataclasses.replace(judged_artifact, ledger=ledger.account(judged_artifact))


def _device_view(with_directives: str, snapshots: dict, spans, def_line) -> tuple:
    """(CUDA source as users see it, its line map, the global accesses of the device code)."""
    from tl_inspect import ir
    from tl_inspect.inspector import accesses
    from tl_inspect.inspector.linemap import build_line_map
    from tl_inspect.model import STAGE_DEVICE, STAGE_FRONTEND

    buffer_lines = {name: info.line for snap in snapshots.values() for func in snap.funcs
                    for name, info in func.buffers.items() if info.line}
    buffer_dtypes = {name: info.dtype for snap in snapshots.values() for func in snap.funcs
                     for name, info in func.buffers.items()}
    gemm_lines = [stmt.line for stmt, _ in ir.walk(snapshots[STAGE_FRONTEND].funcs[0].body)
                  if isinstance(stmt, ir.Eval) and stmt.line and (ir.tile_op(stmt.expr) or "").startswith("gemm")]
    source, line_map = build_line_map(with_directives, spans.is_user_file, def_line, buffer_lines, gemm_lines)
    found = accesses.global_accesses(snapshots[STAGE_DEVICE], source, line_map, buffer_dtypes,
                                     _global_copy_lines(snapshots[STAGE_FRONTEND]))
    return source, line_map, found


def _global_copy_lines(frontend) -> dict:
    """Global buffer -> line of the `T.copy` that moves it, for buffers exactly one `T.copy` moves."""
    from tl_inspect import ir

    lines: dict = {}
    func = frontend.funcs[0]
    for stmt, _ in ir.walk(func.body):
        if isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr) == "copy" and stmt.line:
            for region in ir.regions(stmt.expr):
                if func.scope_of(region.buffer) == "global":
                    lines.setdefault(region.buffer, set()).add(stmt.line)
    return {buffer: found.pop() for buffer, found in lines.items() if len(found) == 1}


# ---------------------------------------------------------------- messages

_LOCATION = re.compile(r"-->\s+(?P<file>.+?):(?P<line>\d+)(?::\d+)?\s*$", re.M)
_NOISE = re.compile(r"^\s*(Traceback|File \"|\d+: |\^|\||-->|$)")


def describe_error(exc: BaseException, user_file: str, when: str) -> tuple[str, int | None]:
    """`Type: first line of the message (when)` and the line of the user's file it points at, if any."""
    message = str(exc)
    first = next((ln.strip() for ln in message.splitlines() if not _NOISE.match(ln)), "")
    first = re.sub(r"^(tvm\.error\.)?\w+Error:\s*", "", first)
    location = None
    for match in _LOCATION.finditer(message):
        if os.path.abspath(match.group("file")) == user_file:
            location = int(match.group("line"))
    if location is None:
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            if os.path.abspath(frame.filename) == user_file:
                location = frame.lineno
                break
    if isinstance(exc, MemoryError):
        first = f"over the memory limit of {_memory_limit_mib} MiB per worker (--max-memory)"
    text = printable(f"{type(exc).__name__}: {first or 'no message'} ({when})")
    if len(text) > 300:
        text = text[:297] + "..."
    return text, location


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """The user's error text with control characters written as `\\x1b`: escape sequences in a
    message must not reach the terminal that shows it."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


_LOG_START = re.compile(r"^\[\d\d:\d\d:\d\d\]\s*(?:\S+:\d+:\s*)?")


def split_diagnostics(text: str) -> tuple:
    """Split fd 2 output into messages: a message starts at a `[hh:mm:ss]` log prefix."""
    messages: list[list[str]] = []
    for line in text.splitlines():
        if _LOG_START.match(line) or not messages:
            messages.append([_LOG_START.sub("", line)])
        else:
            messages[-1].append(line)
    return tuple("\n".join(m).strip() for m in messages if "\n".join(m).strip())
