"""Compile one kernel for CUDA without a GPU and keep what the compiler made: the TIR after each stage
that matters, the CUDA as users read it with its line map, the layouts and the global accesses. No
analysis happens here: the artefact goes to `tl_inspect.analysis.pipeline.analyse` with a `rebuild`
callable, by which the proofs lower the kernel again without a cause.

Runs inside the worker, or in the caller's process for `tl_inspect.inspect(obj)` (it needs tilelang).
"""

from __future__ import annotations

import dataclasses
import os
import time
import traceback
from dataclasses import replace

import tilelang
import tvm
from tvm.ir.instrument import pass_instrument
from tvm.target import Target

from tl_inspect.analysis.pipeline import analyse
from tl_inspect.analysis.recording import recorded
from tl_inspect.causes import kind_of
from tl_inspect.gpu import cost_table
from tl_inspect.inspector.discovery.kernels import FactoryCall, KernelSpec, is_users
from tl_inspect.inspector.discovery.origins import prim_func_file, prim_func_line
from tl_inspect.inspector.lowering import accesses, banks, convert, hooks
from tl_inspect.inspector.lowering.layout_failure import explain_no_layout
from tl_inspect.inspector.lowering.layouts import fixed_layouts
from tl_inspect.inspector.lowering.linemap import build_line_map
from tl_inspect.inspector.lowering.nvcc import ptxas_usage
from tl_inspect.inspector.lowering.variants import variant_without
from tl_inspect.inspector.processes.capture import Capture
from tl_inspect.inspector.processes.errors import describe_error, message_of, printable, split_diagnostics
from tl_inspect.inspector.processes.job import Job
from tl_inspect.inspector.rewrites import primfunc as rewrites
from tl_inspect.model import STAGE_DEVICE, STAGE_FRONTEND, STAGE_LAYOUT, STAGE_VECTORIZE, KernelArtifact
from tl_inspect.tir import nodes as ir

NO_LAYOUT = "no available layout found"  # tl.LayoutInference's message, explained by layout_failure


def compile_kernel(spec: KernelSpec, job: Job, capture: Capture) -> KernelArtifact:
    """The kernel's artefact with its verdicts and ledger, or an error artefact: one bad kernel must not
    lose the others."""
    started = time.perf_counter()
    user_file = spec.source_file
    base = dict(
        name=spec.name,
        file=_shown(job, user_file),
        arch=job.arch,
        discovered_as=spec.discovered_as,
        line=None,
        factory=spec.factory,
        case=spec.case,
    )
    prim_func = None
    try:
        # a factory may ask tilelang for the target while it builds (`determine_target()`): it gets --arch
        with Target(hooks.cuda_target(job.arch)):
            prim_func, pass_configs = spec.build()
        # a factory may build its kernel in a module of its own (a library the cases file imports): the
        # kernel's lines are in the file its `@T.prim_func` is written in
        written_in = prim_func_file(prim_func)
        if written_in and written_in != user_file and is_users(written_in):
            user_file = written_in
            base["file"] = _shown(job, user_file)
        base["line"] = prim_func_line(prim_func) or None
        artifact, rebuild, variants = _lower(prim_func, pass_configs, job, user_file, base, capture, spec.call)
        table = cost_table.of(job.cost_table)
        with recorded(job.record_analysis, artifact, rebuild if job.prove else None) as proving:
            artifact = replace(analyse(artifact, table, proving), cost_table=table)
        if job.measure_budget:
            from tl_inspect.inspector.measurement.device import Budget
            from tl_inspect.inspector.measurement.measure import measure_kernel

            artifact = measure_kernel(artifact, prim_func, pass_configs, variants, Budget(job.measure_budget))
        return artifact
    except BaseException as exc:  # noqa: BLE001 - one bad kernel must not lose the others
        if isinstance(exc, MemoryError):
            traceback.clear_frames(exc.__traceback__)  # their locals hold what the factory allocated
        _, err_text = capture.since_mark()
        error, error_line = describe_error(exc, user_file, "while compiling")
        detail = ""
        if prim_func is not None and NO_LAYOUT in message_of(exc):
            explained = _explain_no_layout(prim_func, pass_configs, spec, job)
            if explained is not None:
                error = printable(f"{type(exc).__name__}: {explained.summary} (while compiling)")
                error_line = explained.line or error_line
                detail = "\n".join(printable(line) for line in explained.detail.splitlines())
        return KernelArtifact(
            **base,
            status="error",
            error=error,
            error_line=error_line,
            error_detail=detail,
            warnings=split_diagnostics(err_text),
            compile_ms=(time.perf_counter() - started) * 1e3,
        )


def _explain_no_layout(prim_func, pass_configs: dict, spec: KernelSpec, job: Job):
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


def _lower(
    prim_func, pass_configs: dict, job: Job, user_file: str, base: dict, capture: Capture, call: FactoryCall | None
) -> tuple:
    """(the kernel's artefact before any analysis, the `rebuild` callable its proofs lower variants with:
    through `call`, the factory the kernel came from, where it is known, and the variants it lowered: their
    change -> (PrimFunc, the causes it removes), which --measure times)."""
    after = {"tl.LayoutInference": STAGE_LAYOUT, "tl.VectorizeLoop": STAGE_VECTORIZE}
    kept: dict = {}
    variants: dict = {}

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
    shared = banks.shared_accesses(snapshots[STAGE_DEVICE], source, line_map)
    if job.prove:
        shared = _bank_proofs(prim_func, shared, target, lines_config, spans)
    ptxas = ptxas_usage(source, job.arch) if job.run_nvcc else None
    artifact = KernelArtifact(
        **base,
        source=source,
        source_with_directives=compiled.kernel_source,
        line_map=line_map,
        snapshots=snapshots,
        accesses=found,
        shared_accesses=shared,
        layouts=fixed_layouts(kept[STAGE_LAYOUT], spans) if STAGE_LAYOUT in kept else (),
        layout_text=layout_text,
        warnings=split_diagnostics(err_text),
        compile_ms=compile_ms,
        ptxas=ptxas,
    )

    def rebuild(causes: tuple):
        """None when no rewrite removes `causes`; else (the change in the user's terms, (CUDA source,
        accesses) of the kernel lowered without them, or None when that kernel does not compile)."""
        built = variant_of(prim_func, causes, call, target)
        if built is None:
            return None
        func, change = built
        try:
            with tvm.transform.PassContext(opt_level=3, config=lines_config), Target(target):
                variant = tilelang.lower(func, target=target)
            variants[change] = (func, causes)
            # the rebuilt kernel keeps the frontend's lines and tile operators: only its device code is new
            views = {
                STAGE_FRONTEND: snapshots[STAGE_FRONTEND],
                STAGE_DEVICE: convert.convert_module(STAGE_DEVICE, variant.device_mod, spans, script=False),
            }
            variant_source, _, variant_accesses = _device_view(variant.kernel_source, views, spans, base["line"])
        except Exception:  # noqa: BLE001 - a variant that does not compile proves nothing
            return change, None
        return change, (variant_source, variant_accesses)

    return artifact, rebuild, variants


def variant_of(prim_func, causes: tuple, call: FactoryCall | None, target):
    """(the kernel without `causes`, the change in the user's terms), or None: the variant a proof lowers
    and `--measure` times, built for `target` (a factory may ask for it)."""
    try:
        with Target(target):
            return _variant(prim_func, causes, call)
    except Exception:  # noqa: BLE001 - the user's factory may refuse the aligned arguments
        return variant_without(prim_func, causes)


def _variant(prim_func, causes: tuple, call: FactoryCall | None):
    """(the kernel without `causes`, the change in the user's terms), or None. The TileLang book's method
    first: the factory called again with aligned arguments, so every constant derived from them follows
    (a bound check on N // 4, the 2 * N of gate/up halves); the PrimFunc is rewritten for the causes no
    argument carries, or where no factory call is known."""
    aligned = {cause: kind_of(cause).realign(cause, call.arguments) for cause in causes} if call else {}
    changes = {name: value for found in aligned.values() for name, value in found.items()}
    if not changes:
        return variant_without(prim_func, causes)
    func, _ = call.build(changes)
    why = [kind_of(cause).recalled(cause, prim_func, func) for cause, found in aligned.items() if found]
    if None in why:  # the factory's arguments do not make the variant: the PrimFunc is rewritten instead
        return variant_without(prim_func, causes)
    called = (
        f"{call.name} called with {', '.join(f'{name}={value}' for name, value in changes.items())} instead "
        f"of {', '.join(str(call.arguments[name]) for name in changes)} ({'; '.join(dict.fromkeys(why))})"
    )
    rest = tuple(cause for cause, found in aligned.items() if not found)
    if not rest:
        return func, called
    built = variant_without(func, rest)
    return (built[0], f"{called} and {built[1]}") if built is not None else None


def _bank_proofs(prim_func, shared: tuple, target, lines_config: dict, spans) -> tuple:
    """`shared` with each conflicted access's proof: the kernel lowered again with its buffer's rows one
    element longer, and the passes the same access then takes. An access whose padded kernel does not
    lower, or which the padded kernel no longer has, keeps no proof."""
    rebuilt: dict = {}
    out = []
    for access in shared:
        if access.degree < banks.CONFLICT_DEGREE:
            out.append(access)
            continue
        if access.buffer not in rebuilt:
            rebuilt[access.buffer] = None
            built = rewrites.pad_rows(prim_func, access.buffer)
            if built is not None:
                try:
                    with tvm.transform.PassContext(opt_level=3, config=lines_config), Target(target):
                        variant = tilelang.lower(built[0], target=target)
                    device = convert.convert_module(STAGE_DEVICE, variant.device_mod, spans, script=False)
                    # matched by their Python lines: the variant's CUDA lines are not shown
                    rebuilt[access.buffer] = (built[1], banks.shared_accesses(device, "", ()))
                except Exception:  # noqa: BLE001 - a padded kernel that does not lower proves nothing
                    pass
        found = rebuilt[access.buffer]
        twin = (
            next(
                (
                    a
                    for a in found[1]
                    if (a.kind, a.buffer, a.line, a.bits) == (access.kind, access.buffer, access.line, access.bits)
                ),
                None,
            )
            if found
            else None
        )
        out.append(
            dataclasses.replace(access, proof_wavefronts=twin.wavefronts, proof_change=found[0])
            if twin is not None
            else access
        )
    return tuple(out)


def _device_view(with_directives: str, snapshots: dict, spans, def_line) -> tuple:
    """(CUDA source as users see it, its line map, the global accesses of the device code)."""
    buffer_lines = {
        name: info.line
        for snap in snapshots.values()
        for func in snap.funcs
        for name, info in func.buffers.items()
        if info.line
    }
    buffer_dtypes = {
        name: info.dtype for snap in snapshots.values() for func in snap.funcs for name, info in func.buffers.items()
    }
    gemm_lines = [
        stmt.line
        for stmt, _ in ir.walk(snapshots[STAGE_FRONTEND].funcs[0].body)
        if isinstance(stmt, ir.Eval) and stmt.line and (ir.tile_op(stmt.expr) or "").startswith("gemm")
    ]
    source, line_map = build_line_map(with_directives, spans.is_user_file, def_line, buffer_lines, gemm_lines)
    found = accesses.global_accesses(
        snapshots[STAGE_DEVICE], source, line_map, buffer_dtypes, _global_copy_lines(snapshots[STAGE_FRONTEND])
    )
    return source, line_map, found


def _global_copy_lines(frontend) -> dict:
    """Global buffer -> line of the `T.copy` that moves it, for buffers exactly one `T.copy` moves."""
    lines: dict = {}
    func = frontend.funcs[0]
    for stmt, _ in ir.walk(func.body):
        if isinstance(stmt, ir.Eval) and ir.tile_op(stmt.expr) == "copy" and stmt.line:
            for region in ir.regions(stmt.expr):
                if func.scope_of(region.buffer) == "global":
                    lines.setdefault(region.buffer, set()).add(stmt.line)
    return {buffer: found.pop() for buffer, found in lines.items() if len(found) == 1}
