"""One lint run, as the command line, the API, the server (through the API) and the fixer all make it:
the settings, a job per target, the workers, then the rules and the suppressions."""

from __future__ import annotations

import os
from contextlib import nullcontext
from dataclasses import dataclass, field

from tl_inspect._version import __version__
from tl_inspect.files.sources import SourceFiles
from tl_inspect.fixes.verify import Fixer
from tl_inspect.inspector import DEFAULT_TIMEOUT_SECONDS, Job, inspect_jobs
from tl_inspect.inspector.discovery.cases import SWEEP_KEY
from tl_inspect.inspector.measurement.device import measure_timeout, measuring
from tl_inspect.lint.checking import all_rules, check_files
from tl_inspect.lint.settings import ConfigError, Settings, find_config, load_config, resolve_settings
from tl_inspect.model import FileResult, RunResult
from tl_inspect.tir.deepstack import call_on_deep_stack

MEASURE_BUDGET_SECONDS = 60.0


@dataclass(frozen=True)
class Inspection:
    """How a run inspects its files beyond its settings: what the command line's flags and the API's
    keywords choose. Validated when made, so every face rejects the same values in the same words."""

    prove: bool = True  # rebuild kernels without each cause (the proofs)
    nvcc: bool = False
    all_configs: bool = False
    infer: bool = True  # cases from the file's own calls, unless the configuration turns it off
    measure: bool = False
    measure_budget: float = MEASURE_BUDGET_SECONDS
    use_cache: bool = False  # never while measuring: a cached result has no timing of this run
    args: dict = field(default_factory=dict)  # of FILE.py::factory targets
    swept: dict = field(default_factory=dict)  # name -> values, each combination one case

    def __post_init__(self):
        if self.measure_budget <= 0:
            raise ConfigError(f"--measure-budget expects a number of seconds above 0, got {self.measure_budget:g}")

    @property
    def measure_seconds(self) -> float | None:
        return self.measure_budget if self.measure else None


@dataclass(frozen=True)
class Lint:
    """A checked run: what the reporters read, and what baselines and fixes need beside it."""

    run: RunResult
    jobs: tuple  # one per file, as inspected: a fix is verified by inspecting its copy with the same job
    complete: dict  # real path -> every kernel it defines inspected without error (suppressions, baselines)
    texts: SourceFiles  # the files' texts as checked


def load_settings(config: str | None = None, **flags) -> Settings:
    """The configuration (`config`, else the nearest pyproject.toml with a table) with `flags` laid over it,
    validated: the one place a run's settings are made."""
    rules = all_rules()
    return resolve_settings(load_config(config or find_config(os.getcwd()), rules), rules, **flags)


def lint(targets: list, settings: Settings, inspection: Inspection, table, progress=None) -> Lint:
    """Inspect `targets` in worker processes priced with the cost `table`, then check them. `progress`,
    given the jobs to run, is a context that yields each finished file's callback (or None).
    Raises NoGpu, before anything is inspected, when measuring is asked where it cannot be done."""
    config = settings.config
    with measuring(settings.arch, inspection.measure_seconds) as budget:
        jobs = [
            Job(
                path=t.path,
                arch=settings.arch,
                run_nvcc=inspection.nvcc,
                prove=inspection.prove,
                only=t.only,
                args=inspection.args if t.only and not inspection.swept else {},
                all_configs=inspection.all_configs,
                cases=_target_cases(config.cases_for(t.path), t.only, inspection.args, inspection.swept),
                infer=config.infer_cases and inspection.infer,
                max_inferred=config.max_inferred_cases,
                measure_budget=budget,
                cost_table=table,
            )
            for t in targets
        ]
        readable = [job for job, target in zip(jobs, targets) if not target.error]
        with (progress or _silent)(readable) as on_done:
            inspected = iter(
                inspect_jobs(
                    readable,
                    workers=settings.jobs,
                    timeout=measure_timeout(settings.timeout or DEFAULT_TIMEOUT_SECONDS, budget),
                    max_memory=settings.max_memory,
                    on_done=on_done,
                    use_cache=inspection.use_cache and not inspection.measure,
                    cache_max_mb=config.cache_max_mb,
                )
            )
    files = [FileResult(path=t.path, error=t.error) if t.error else next(inspected) for t in targets]
    return check(jobs, files, settings, table)


def check(jobs: list, files: list[FileResult], settings: Settings, table) -> Lint:
    """The selected rules over inspected files, then each file's suppressions (on a deep stack: rules
    recurse on expression depth)."""
    texts = SourceFiles()
    reports, complete = call_on_deep_stack(check_files, jobs, files, settings, all_rules(), texts)
    run = RunResult(
        version=__version__,
        arch=settings.arch,
        files=tuple(files),
        reports=tuple(reports),
        rules=settings.rules,
        cost_table=table,
    )
    return Lint(run, tuple(jobs), complete, texts)


def fixer(settings: Settings) -> Fixer:
    """A fixer that verifies each fix by linting the fixed copy as the run linted its file (the run's
    workers and limits, never the cache)."""
    rules = all_rules()

    def lint_copies(jobs: list) -> list:
        results = inspect_jobs(
            jobs,
            workers=settings.jobs,
            timeout=settings.timeout or DEFAULT_TIMEOUT_SECONDS,
            max_memory=settings.max_memory,
        )
        return [
            (result, tuple(check_files([job], [result], settings, rules, SourceFiles({job.path: job.source}))[0]))
            for job, result in zip(jobs, results)
        ]

    return Fixer(lint_copies)


def _silent(jobs: list):
    return nullcontext()


def _target_cases(configured: dict, only: str | None, args: dict, swept: dict) -> dict:
    """A sweep replaces the factory's configured cases: the -a values fixed, the product of the swept ones."""
    return {**configured, only: [{**args, SWEEP_KEY: swept}]} if only and swept else configured
