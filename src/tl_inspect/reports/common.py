"""What several reporters need: files with their kernel reports, the rule table, the user's source
lines and repository-relative paths. Plain lookups and grouping only; reporters never analyse."""

from __future__ import annotations

import os
from dataclasses import dataclass

from tl_inspect.model import SEVERITIES, FileResult, KernelReport, RunResult
from tl_inspect.wording import byte_size, plural


@dataclass(frozen=True)
class RuleInfo:
    code: str
    slug: str
    severity: str
    summary: str
    documentation: str
    fix: str


def file_groups(run: RunResult) -> list[tuple[FileResult, list[KernelReport]]]:
    """Each inspected file with the reports of the kernels it produced, in run order.

    A kernel's `file` is the file that defines its code, which differs from the inspected file when
    a kernel comes from an imported helper module, so kernels are matched to files by identity. A
    report whose kernel belongs to no file (a hand-built run) gets a file entry of its own."""
    groups = [(file, []) for file in run.files]
    owner = {id(kernel): index for index, (file, _) in enumerate(groups) for kernel in file.kernels}
    orphans: dict[str, int] = {}
    for report in run.reports:
        index = owner.get(id(report.kernel))
        if index is None:
            path = report.kernel.file
            if path not in orphans:
                orphans[path] = len(groups)
                groups.append((FileResult(path=path), []))
            index = orphans[path]
        groups[index][1].append(report)
    return groups


def rule_table(run: RunResult) -> list[RuleInfo]:
    """The selected rules, then any rule that only appears in findings, sorted by code."""
    table: dict[str, RuleInfo] = {}
    for rule in run.rules:
        table[rule.code] = RuleInfo(rule.code, rule.slug, rule.severity, rule.summary(), rule.documentation(), rule.fix)
    for finding in run.findings:
        if finding.rule not in table:
            table[finding.rule] = RuleInfo(finding.rule, finding.slug, finding.severity, finding.slug, "", finding.fix)
    return sorted(table.values(), key=lambda rule: rule.code)


def severity_counts(findings) -> dict[str, int]:
    counts = {severity: 0 for severity in reversed(SEVERITIES)}
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return counts


def repository_root(start: str | None = None) -> str:
    """The nearest folder above `start` (default: the working directory) holding `.git` (a folder, or a
    file in a worktree); the working directory itself when there is none."""
    here = os.path.abspath(start or os.getcwd())
    folder = here
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return here
        folder = parent


def relative_path(path: str, root: str) -> str | None:
    """`path` relative to `root` with forward slashes, or None when it lies outside `root`."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:  # another drive on Windows
        return None
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")


def one_line(text: str) -> str:
    """Messages are meant to be one line; formats that are line-based keep them so."""
    return " ".join(text.split())


# a launch that requests its tensors this many times over or more is said to rely on the caches
REREAD = 1.5


def _per_byte(intensity: float) -> str:
    """ "63", "1365", "0.17": whole FLOP per byte, or two significant digits below ten."""
    return f"{intensity:.0f}" if intensity >= 10 else f"{intensity:.2g}"


def bound_phrase(ledger) -> str:
    """ "compute-bound at 1365 FLOP/B if the L2 serves the 21x re-reads, memory-bound at 63 FLOP/B if it
    does not", or "memory-bound at 0.17 FLOP/B"; "" without a bound."""
    if not ledger.bound:
        return ""
    phrase = f"{ledger.bound}-bound at {_per_byte(ledger.intensity)} FLOP/B"
    if ledger.requested_bound and ledger.requested_bound != ledger.bound:
        phrase += (
            f" if the L2 serves the {ledger.reuse:.0f}x re-reads, {ledger.requested_bound}-bound at "
            f"{_per_byte(ledger.requested_intensity)} FLOP/B if it does not"
        )
    return phrase


def ledger_short(ledger) -> str:
    """The ledger in a few words, for a kernel's summary line."""
    parts = [
        f"{byte_size(ledger.read_bytes)} read, {byte_size(ledger.written_bytes)} written"
        if ledger.blocks is not None
        else "bytes per launch unknown (run-time grid)"
    ]
    if ledger.reuse is not None and ledger.reuse >= REREAD:
        rereads = (
            ""
            if ledger.requested_bound and ledger.requested_bound != ledger.bound
            else f" ({ledger.reuse:.0f}x re-read)"
        )
        parts.append(f"{byte_size(ledger.unique_bytes)} unique{rereads}")
    if ledger.threads_working < ledger.threads_launched:
        parts.append(f"{ledger.threads_working} of {ledger.threads_launched} threads work")
    if ledger.bound:
        parts.append(bound_phrase(ledger))
    return ", ".join(parts)


def us(value: float) -> str:
    """ "690 us", "4.6 us", "1.21 ms"."""
    if value >= 10_000:
        return f"{value / 1000:.3g} ms"
    return f"{value:.3g} us" if value < 100 else f"{value:.0f} us"


def times(factor: float) -> str:
    """ "1.29x", "8.62x", "647x": two decimals under ten, three significant digits above."""
    return f"{factor:.2f}x" if factor < 10 else f"{factor:.3g}x"


def estimate_phrase(estimate, gpu: str) -> str:
    """ "estimated 690 us against a floor of 4.6 us on an H200: 150x, limited by 16 working threads ...";
    with the reason where there is no estimate, or no gap."""
    if estimate is None:
        return ""
    if estimate.time_us is None:
        return f"no estimate: {estimate.limited_by}"
    head = f"estimated {us(estimate.time_us)} against a floor of {us(estimate.floor_us)} {gpu}"
    if estimate.gap is None:
        return f"{head}, but no gap: {estimate.uncounted}"
    return f"{head}: {times(estimate.gap)}, limited by {estimate.limited_by}"


def measured_phrase(kernel) -> str:
    """ "measured 2675 us on this NVIDIA H200: 617x its floor, 1.6 GB/s" after --measure, or why not."""
    timing = kernel.timing
    if timing is None:
        return kernel.untimed
    gap = timing.gap(kernel.estimate)
    rate = timing.achieved_bytes_per_s
    parts = [f"{times(gap)} its floor"] if gap is not None else []
    parts += [f"{rate / 1e9:.3g} GB/s"] if rate else []
    return f"measured {us(timing.time_us)} on this {timing.gpu}" + (f": {', '.join(parts)}" if parts else "")


def estimate_rows(kernel, gpu: str) -> list[tuple[str, str]]:
    """(label, value) rows of the kernel against its floor, for `explain` and the HTML page."""
    estimate = kernel.estimate
    if estimate is None:
        return []
    rows = [("estimate", estimate_phrase(estimate, gpu))]
    if estimate.floor_of:
        rows.append(("floor", f"{us(estimate.floor_us)}: one launch and {estimate.floor_of}"))
    busy = [f"{name} {us(value)}" for name, value in estimate.parts if value >= 0.01]
    if busy:
        rows.append(("time by resource", ", ".join(busy) + " (the busiest one's time, plus the launch's own)"))
    measured = measured_phrase(kernel)
    if measured:
        rows.append(("measured", measured))
    return rows


def ledger_rows(ledger, arch: str) -> list[tuple[str, str]]:
    """(label, value) rows of the ledger, for `explain` and the HTML page."""
    threads = f"{ledger.threads_working} of {ledger.threads_launched} per block"
    if ledger.thread_guard:
        threads += f" (the others are idle: {ledger.thread_guard})"
    if ledger.blocks is None:
        blocks = f"{ledger.grid}: known at run time"
    else:
        blocks = str(ledger.blocks) + (f" ({ledger.grid})" if ledger.grid != str(ledger.blocks) else "")
    rows = [
        ("blocks", blocks),
        ("threads that work", threads),
        ("elements per thread", f"up to {ledger.elements_per_thread} through one access"),
        ("read per launch", f"{byte_size(ledger.read_bytes)} ({byte_size(ledger.read_bytes_per_block)} per block)"),
        (
            "written per launch",
            f"{byte_size(ledger.written_bytes)} ({byte_size(ledger.written_bytes_per_block)} per block)",
        ),
    ]
    if ledger.unique_bytes is not None:
        reuse = (
            f": the launch requests them {ledger.reuse:.1f}x over, the reuse the caches must serve"
            if ledger.reuse is not None and ledger.reuse >= REREAD
            else ""
        )
        rows.append(("unique per launch", f"{byte_size(ledger.unique_bytes)} (each tensor once){reuse}"))
    if ledger.flops is None:
        rows.append(("arithmetic", "not counted (a trip count or the grid known only at run time)"))
        return rows
    work = [ledger.flops_basis] if ledger.flops_basis else []
    if ledger.float_ops_per_block:
        work.append(f"{ledger.float_ops_per_block:,} float operations per block, a transcendental counted as 16")
    rows.append(("arithmetic", f"{ledger.flops:,} FLOP per launch ({'; '.join(work)})"))
    intensity = [f"{_per_byte(ledger.intensity)} FLOP per unique byte"] if ledger.intensity is not None else []
    if ledger.requested_intensity is not None and (ledger.reuse is None or ledger.reuse >= REREAD):
        intensity.append(f"{_per_byte(ledger.requested_intensity)} per requested byte")
    rows.append(("arithmetic intensity", ", ".join(intensity)))
    if ledger.bound:
        rows.append(
            (
                "bound on " + arch,
                f"{bound_phrase(ledger)}: the ridge is {_per_byte(ledger.ridge)} FLOP/B "
                f"({ledger.peaks_of} datasheet peaks)",
            )
        )
    elif ledger.ridge is None:
        rows.append(("bound on " + arch, "no peak numbers for this arch"))
    return rows


@dataclass(frozen=True)
class RunSummary:
    """How the run's files fared: with kernels inspected, with factories that no call gave a case, failed."""

    with_kernels: int
    needing_cases: tuple  # (path, the TL_INSPECT_CASES line to add)
    failed: int
    kernels: int = 0  # kernels inspected (compiled or not)
    bare: tuple = ()  # paths of files that define no kernel and no factory, and did not fail

    def phrase(self) -> str:
        return (
            f"{plural(self.with_kernels, 'file')} with kernels, "
            f"{len(self.needing_cases)} with factories but no inferable call, {self.failed} failed"
        )

    def as_dict(self) -> dict:
        return {
            "files_with_kernels": self.with_kernels,
            "files_failed": self.failed,
            "files_needing_cases": [{"path": path, "add": line} for path, line in self.needing_cases],
            "kernels": self.kernels,
        }

    def nothing_inspected(self, count_bare: bool = True) -> str | None:
        """Why a run that was given files inspected no kernel, in one line; None when it inspected one, or
        failed (its errors say why), or was given no file. `count_bare=False` takes files that define no
        kernel and no factory for helper modules (pre-commit passes every staged file), as if skipped."""
        if self.kernels or self.failed or not (self.needing_cases or (count_bare and self.bare)):
            return None
        found = [f"{path} has factories that need arguments: add {line}" for path, line in self.needing_cases]
        if count_bare and self.bare:
            found.append(f"{', '.join(self.bare)} define{'s' if len(self.bare) == 1 else ''} no kernel and no factory")
        return "no kernel was inspected: " + "; ".join(found)


def run_summary(run: RunResult) -> RunSummary:
    groups = file_groups(run)
    return RunSummary(
        with_kernels=sum(any(r.kernel.status == "ok" for r in reports) for _, reports in groups),
        needing_cases=tuple((file.path, cases_line(file.needs_cases)) for file, _ in groups if file.needs_cases),
        failed=sum(bool(file.error) or any(r.kernel.status != "ok" for r in reports) for file, reports in groups),
        kernels=len(run.reports),
        bare=tuple(file.path for file, reports in groups if not (reports or file.needs_cases or file.error)),
    )


def cases_line(needs_cases: tuple) -> str:
    """`TL_INSPECT_CASES = {"matmul": [{"M": ..., "N": ...}]}`: the line that gives each factory a case."""

    def entry(factory: str, params: tuple) -> str:
        arguments = ", ".join(f'"{param}": ...' for param in params)
        return f'"{factory}": [{{{arguments}}}]'

    return "TL_INSPECT_CASES = {" + ", ".join(entry(factory, params) for factory, params in needs_cases) + "}"
