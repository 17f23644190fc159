"""The Python API: `tl_inspect.inspect(obj)` for a path, a PrimFunc, a compiled kernel or a `@tilelang.jit`
factory, returning the same data the JSON report has as typed objects.

A path is inspected like the command line does it, in worker processes. An object in memory means the
caller has already imported tilelang and built it: it is lowered in this process by the worker's own
compile path, so the verdicts, proofs and findings are the ones the command line gives for that kernel.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Iterator

from tl_inspect._version import __version__
from tl_inspect.files.sources import SourceFiles
from tl_inspect.gpu.arch import DEFAULT_ARCH
from tl_inspect.inspector import Job, parse_targets
from tl_inspect.inspector.measurement.device import measuring
from tl_inspect.inspector.processes.capture import captured_output
from tl_inspect.lint.driver import MEASURE_BUDGET_SECONDS, Inspection, check, fixer, lint, load_settings
from tl_inspect.model import (
    SAFE,
    UNSAFE,
    Access,
    Estimate,
    FileResult,
    Finding,
    KernelArtifact,
    KernelReport,
    Layout,
    RunResult,
    Verdict,
)
from tl_inspect.tir.deepstack import call_on_deep_stack

MAX_REPR_KERNELS = 8


def _summary_line(report: KernelReport) -> str:
    """One kernel in one line: where, its accesses by width, its findings by rule and line."""
    k = report.kernel
    where = f"{k.file}:{k.line}" if k.line else k.file
    if k.status != "ok":
        return f"{k.name}  {where}  could not be compiled: {' '.join((k.error or '').split())}"
    widths = k.access_summary()
    found = ", ".join(f"{f.rule} {f.slug} (line {f.line})" for f in report.findings) or "no finding"
    return (
        f"{k.name}  {where}  {widths['128-bit']} 128-bit / {widths['narrow']} narrower / "
        f"{widths['scalar']} scalar accesses; {found}"
    )


@dataclass(frozen=True, repr=False)
class Kernel:
    """One inspected kernel: its artefact (CUDA, line map, layouts, accesses with verdicts) and the
    findings of the selected rules."""

    report: KernelReport

    @property
    def artifact(self) -> KernelArtifact:
        return self.report.kernel

    @property
    def name(self) -> str:
        return self.artifact.name

    @property
    def file(self) -> str:
        return self.artifact.file

    @property
    def line(self) -> int | None:
        return self.artifact.line

    @property
    def ok(self) -> bool:
        return self.artifact.status == "ok"

    @property
    def error(self) -> str | None:
        return self.artifact.error

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.report.findings

    @property
    def accesses(self) -> tuple[Access, ...]:
        return self.artifact.accesses

    @property
    def estimate(self) -> Estimate | None:
        """One launch's estimated time against its floor on the cost table's GPU."""
        return self.artifact.estimate

    @property
    def cuda(self) -> str:
        """The CUDA source as `get_kernel_source()` returns it."""
        return self.artifact.source

    @property
    def line_map(self) -> tuple:
        """line_map[i]: the Python line of CUDA line i + 1, or None."""
        return self.artifact.line_map

    @property
    def layouts(self) -> tuple[Layout, ...]:
        return self.artifact.layouts

    def narrow_accesses(self, min_bits: int = 128, buffers=None) -> list[Access]:
        """Global accesses of `buffers` (all when None) that move fewer than `min_bits` bits per
        instruction and are not narrow by nature (`inherent`)."""
        wanted = None if buffers is None else {buffers} if isinstance(buffers, str) else set(buffers)
        return [
            a
            for a in self.accesses
            if (wanted is None or a.buffer in wanted) and a.bits < min_bits and a.verdict != Verdict.INHERENT
        ]

    def _repr_html_(self) -> str:
        """Jupyter: the HTML report's kernel page (Python and CUDA panes, findings with cost and proof
        under their lines, the access table), self-contained."""
        # the HTML report's templates and Markdown load only when a notebook shows a kernel
        from tl_inspect.reports.notebook import notebook_html

        return notebook_html([self.report], arch=self.artifact.arch, version=__version__)

    def __repr__(self) -> str:
        # a notebook stores text/plain beside the HTML, and `print` shows it: one line, not the artefact
        return f"<tl_inspect.Kernel {_summary_line(self.report)}>"

    def __rich__(self):
        """A rich console: the kernel's `--format full` output."""
        # not imported at the top: `reports.formats` lists the formats (and `--help` shows them) in the
        # order their modules load, and this one must load after the others
        from rich.console import Group

        from tl_inspect.reports.terminal import kernel_texts

        return Group(*kernel_texts(self.report, SourceFiles()))


@dataclass(frozen=True, repr=False)
class Report:
    """Everything one inspection produced: its kernels, in file then definition order."""

    run: RunResult
    # (jobs, settings) the files were inspected with: a fix is verified by inspecting them so again
    inputs: tuple = field(default=(), repr=False, compare=False)

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        return tuple(Kernel(report) for report in self.run.reports)

    @property
    def findings(self) -> list[Finding]:
        return self.run.findings

    @property
    def errors(self) -> list[str]:
        """One line per file that could not be imported and per kernel that could not be compiled."""
        return [f"{f.path}: {f.error}" for f in self.run.files if f.error] + [
            f"{k.file} kernel {k.name}: {k.error}" for k in self.kernels if not k.ok
        ]

    def kernel(self, name: str | None = None) -> Kernel:
        """The kernel called `name`; without a name, the only kernel."""
        kernels = self.kernels
        if name is None and len(kernels) == 1:
            return kernels[0]
        for kernel in kernels:
            if kernel.name == name:
                return kernel
        raise KeyError(f"no kernel {name!r} among {[k.name for k in kernels]}")

    def fixed_source(self, path: str | None = None, unsafe: bool = False) -> str:
        """The text of the inspected file `path` (without it, the only file) with every verified safe fix
        applied, and the unsafe ones too with `unsafe=True`: what `tl-inspect --fix` would write. The file
        itself is not touched; a file without a verified fix comes back as it is."""
        jobs, settings = self.inputs
        paths = [job.path for job in jobs]
        if path is None and len(set(paths)) != 1:
            raise ValueError(f"the report holds {len(set(paths))} files: name one of {sorted(set(paths))}")
        wanted = [i for i, job in enumerate(jobs) if path is None or os.path.samefile(job.path, path)]
        if not wanted:
            raise KeyError(f"{path} is not one of the inspected files {sorted(set(paths))}")
        job, file = jobs[wanted[0]], self.run.files[wanted[0]]
        texts = SourceFiles()
        verifier = fixer(settings)
        reports = [r for r in self.run.reports if r.kernel.file == job.path]
        states = call_on_deep_stack(verifier.start, [job], [file], reports, texts)
        fixed = call_on_deep_stack(verifier.fix, states, (SAFE, UNSAFE) if unsafe else (SAFE,))
        return fixed[0].text if fixed else texts.text(job.path)

    def __iter__(self) -> Iterator[Kernel]:
        return iter(self.kernels)

    def __len__(self) -> int:
        return len(self.run.reports)

    def _repr_html_(self) -> str:
        """Jupyter: every kernel's page, each folded unless it has findings or failed to compile."""
        from tl_inspect.reports.notebook import notebook_html

        problems = [f"{f.path}: could not import the file: {f.error}" for f in self.run.files if f.error]
        return notebook_html(self.run.reports, arch=self.run.arch, version=self.run.version, problems=problems)

    def __repr__(self) -> str:
        reports = self.run.reports
        lines = [
            f"<tl_inspect.Report {len(reports)} kernel{'s' if len(reports) != 1 else ''}, "
            f"{len(self.findings)} finding{'s' if len(self.findings) != 1 else ''}"
            + (f", {len(self.errors)} error{'s' if len(self.errors) != 1 else ''}" if self.errors else "")
        ]
        lines += [f"  {_summary_line(r)}" for r in reports[:MAX_REPR_KERNELS]]
        if len(reports) > MAX_REPR_KERNELS:
            lines.append(f"  ... {len(reports) - MAX_REPR_KERNELS} more")
        lines += [
            f"  {f.path}: could not import the file: {' '.join(f.error.split())}" for f in self.run.files if f.error
        ]
        return "\n".join(lines) + ">"

    def __rich__(self):
        """A rich console: the `--format full` output."""
        from rich.console import Group

        from tl_inspect.reports.terminal import run_texts

        return Group(*run_texts(self.run))


def inspect(
    obj,
    *,
    arch: str = DEFAULT_ARCH,
    select=None,
    prove: bool = True,
    measure: bool = False,
    measure_budget: float = MEASURE_BUDGET_SECONDS,
    gpu: str | None = None,
    fixes: bool = False,
    cache: bool = False,
    **factory_args,
) -> Report:
    """Inspect `obj` for the CUDA `arch` (no GPU needed) and check the rules `select` names (codes,
        prefixes or slugs; default: the configuration's selection, else every rule on by default).

        `obj` is a path (`"kernels.py"`, `"kernels.py::name"` or a directory, inspected in worker processes), a
        PrimFunc, a compiled `JITKernel`, or a `@tilelang.jit` factory (or plain factory function) called
        with `factory_args` (compiled in this process). `prove=False` skips rebuilding kernels to prove
        causes (then no vectorization finding is reported). `measure=True` times, on this machine's GPU of
        `arch`, each kernel with a costly finding against its proof's variant, for at most `measure_budget`
        seconds (`Cost.measured`); without such a GPU it raises
        `tl_inspect.inspector.measurement.device.NoGpu`. `gpu` names the GPU whose cost table prices the
        estimates (default: the one `tl-inspect calibrate` fitted for a GPU here, else the shipped H200 one).
        `fixes=True` verifies each finding's fix by inspecting a fixed copy of its file (`Finding.autofix`:
        verified, or why it is refused), as `tl-inspect --show-fixes` does. `cache=True`
    reuses and stores a path's results in tl-inspect's result cache, as the command line does (never while
    measuring). A bad setting raises `tl_inspect.lint.settings.ConfigError` with the command line's words."""
    settings = load_settings(select=select, arch=arch, gpu=gpu)
    if measure and not prove:
        raise ValueError("measure=True times each proof's variant: it needs prove=True")
    inspection = Inspection(
        prove=prove, measure=measure, measure_budget=measure_budget, use_cache=cache, args=factory_args
    )
    table = settings.cost_table()
    if isinstance(obj, (str, os.PathLike)):
        targets = parse_targets([os.fspath(obj)])
        if factory_args and not any(t.only for t in targets):
            raise TypeError("factory arguments need a FILE.py::factory target")
        linted = lint(targets, settings, inspection, table)
    else:
        with measuring(settings.arch, inspection.measure_seconds) as budget:
            jobs, files = _inspect_object(obj, settings.arch, prove, budget, table, factory_args)
        linted = check(jobs, files, settings, table)
    run = linted.run
    if fixes:
        states = call_on_deep_stack(fixer(settings).start, linted.jobs, run.files, run.reports, linted.texts)
        judged = {(r.kernel.file, r.kernel.name): r for s in states for r in s.reports}
        run = dataclasses.replace(
            run, reports=tuple(judged.get((r.kernel.file, r.kernel.name), r) for r in run.reports)
        )
    return Report(run, inputs=(linted.jobs, settings))


def _inspect_object(obj, arch: str, prove: bool, budget: str, table, factory_args: dict):
    """Compile one kernel object in this process, the way a worker compiles a kernel it discovered."""
    # the caller has imported tilelang to build `obj`: compiling it here imports tilelang's compiler too
    from tl_inspect.inspector.discovery.kernels import is_kernel_object, required_parameters, specs_of
    from tl_inspect.inspector.discovery.origins import user_function
    from tl_inspect.inspector.lowering import hooks
    from tl_inspect.inspector.lowering.compile import compile_kernel

    if not (is_kernel_object(obj) or callable(obj)):
        raise TypeError(
            f"tl_inspect.inspect expects a path, a PrimFunc, a JITKernel or a kernel factory, not {type(obj).__name__}"
        )
    # a compiled kernel is named by the function its PrimFunc was written as
    name = getattr(user_function(getattr(obj, "prim_func", obj)), "__name__", None) or type(obj).__name__
    specs, _, _ = specs_of(name, obj, [factory_args] if factory_args else None)
    if not specs:
        raise TypeError(
            f"{name} is a factory: pass its arguments ({', '.join(required_parameters(obj))}) "
            f"as keyword arguments of tl_inspect.inspect"
        )
    (spec,) = specs
    if factory_args and spec.discovered_as in ("prim_func", "jit_kernel"):
        raise TypeError(f"{name} is already a kernel: it takes no factory arguments")
    if not spec.source_file:
        raise ValueError(f"{name}: no source file to attribute lines to (the kernel carries no span)")
    # a notebook cell's file exists only in linecache, under the name IPython gave it: keep that name
    shown = os.path.relpath(spec.source_file) if os.path.exists(spec.source_file) else spec.source_file
    # `only`: one kernel of the file, so a suppression without a finding is not known to be unused
    job = Job(path=shown, arch=arch, prove=prove, only=spec.name, measure_budget=budget, cost_table=table)
    with captured_output() as capture, hooks.macro_spans_at_call_site():
        capture.mark()
        artifact = call_on_deep_stack(compile_kernel, spec, job, capture)
    return [job], [FileResult(path=shown, kernels=(artifact,))]
