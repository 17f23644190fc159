"""Each fix verified before it is offered, and a file's fixes applied together (ruff's `lint_fix` loop).

A fix is applied to a copy of the file held in memory, which is inspected again exactly as the file was
(the same job: kernels, cases, arch, proofs) and checked by the same rules. It is verified when the
fixed file still defines and compiles every kernel, its finding is gone, no finding appears that the
file did not have, and for a vectorization finding the access is as wide as the proof showed.
`--fix` then applies every verified fix of a file at once and verifies them together; fixes that
overlap or fail together wait for the next round, up to `MAX_ROUNDS`."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import os
from dataclasses import dataclass

from tl_inspect.files.sources import SourceFiles
from tl_inspect.fixes import apply_fixes, compatible, line_map
from tl_inspect.model import FileResult, Finding, Fix, Verdict

MAX_ROUNDS = 4


@dataclass(frozen=True)
class FileFixes:
    """One file: the text inspected, and after the fixes that were applied, its inspection again."""

    job: object  # tl_inspect.inspector.Job
    result: FileResult
    reports: tuple  # KernelReport of `text`, each finding's fix judged
    original: str
    text: str
    digest: str | None  # of the bytes the worker compiled when it first inspected the file
    applied: tuple = ()  # the findings fixed, as the original file reported them

    @property
    def changed(self) -> bool:
        return self.text != self.original


@dataclass(frozen=True)
class _Trial:
    """A text tried for one file: its inspection and checked reports."""

    text: str
    result: FileResult
    reports: tuple


class Fixer:
    """Verifies and applies fixes for one run; `lint(jobs)` inspects and checks each job's copy (`Job.source`)
    as the run did its file, giving a (FileResult, reports) pair per job (tl_inspect.lint.driver.fixer)."""

    def __init__(self, lint):
        self.lint = lint
        self._trials: dict = {}  # (path, text digest) -> _Trial
        self._refused: dict = {}  # a fix's key (fix_key) -> why it failed

    def start(self, jobs: list, files: list, reports: list, texts: SourceFiles) -> list[FileFixes]:
        """Each inspected file with its findings' fixes judged."""
        by_path: dict = {}
        for report in reports:
            by_path.setdefault(report.kernel.file, []).append(report)
        states = [
            FileFixes(
                job,
                file,
                tuple(by_path[job.path]),
                texts.text(job.path),
                texts.text(job.path),
                _source_digest(file, job.path),
            )
            for job, file in zip(jobs, files)
            if by_path.get(job.path)
        ]
        return self.judge(states)

    def judge(self, states: list[FileFixes]) -> list[FileFixes]:
        """Every unjudged fix of the files verified, all of them inspected in one run of the pool."""
        wanted = {}
        for state in states:
            for fix in _candidates(state.reports):
                if fix_key(state, fix) not in self._refused:
                    text = apply_fixes(state.text, [fix])
                    wanted[(state.job.path, _digest(text))] = (state, text)
        self._try(list(wanted.values()))
        return [self._judged(state) for state in states]

    def fix(self, states: list[FileFixes], applicabilities: tuple) -> list[FileFixes]:
        """The files with their verified fixes of those applicabilities applied, round after round."""
        for _ in range(MAX_ROUNDS):
            rounds = []
            for state in states:
                chosen = compatible(
                    [f for f in _candidates(state.reports, verified=True) if f.applicability in applicabilities]
                )
                if chosen:
                    rounds.append((state, chosen, apply_fixes(state.text, chosen)))
            if not rounds:
                break
            self._try([(state, text) for state, _, text in rounds])
            moved = []
            for state, chosen, text in rounds:
                trial = self._trials[(state.job.path, _digest(text))]
                fixed = _fixed_by(state, chosen)
                if _refusal(state, trial, fixed):
                    # together they fail where each alone passed: take the first alone, the rest next round
                    chosen = chosen[:1]
                    fixed = _fixed_by(state, chosen)
                    trial = self._trials[(state.job.path, _digest(apply_fixes(state.text, chosen)))]
                moved.append(
                    FileFixes(
                        state.job,
                        trial.result,
                        trial.reports,
                        state.original,
                        trial.text,
                        state.digest,
                        state.applied + tuple(_original_findings(state, fixed)),
                    )
                )
            states = self.judge(moved) + [s for s in states if s.job.path not in {m.job.path for m in moved}]
        return states

    def _try(self, trials: list) -> None:
        """Inspect each (state, text) not tried before, as its file was inspected."""
        todo = []
        for state, text in trials:
            key = (state.job.path, _digest(text))
            if key in self._trials or key in {k for k, _, _ in todo}:
                continue
            try:
                ast.parse(text)
            except SyntaxError as exc:
                self._trials[key] = _Trial(text, FileResult(state.job.path, error=f"not valid Python: {exc.msg}"), ())
                continue
            job = dataclasses.replace(state.job, source=text, measure_budget="")
            todo.append((key, job, text))
        if not todo:
            return
        linted = self.lint([job for _, job, _ in todo])
        for (key, _, text), (result, reports) in zip(todo, linted):
            self._trials[key] = _Trial(text, result, reports)

    def _judged(self, state: FileFixes) -> FileFixes:
        verdicts = {}
        for fix in _candidates(state.reports):
            key = fix_key(state, fix)
            if key not in self._refused:
                trial = self._trials[(state.job.path, _digest(apply_fixes(state.text, [fix])))]
                reason = _refusal(state, trial, _fixed_by(state, [fix]))
                if reason:
                    self._refused[key] = reason
            verdicts[fix.edits] = self._refused.get(key, "")

        def judged(f: Finding) -> Finding:
            if f.autofix is None or f.autofix.edits not in verdicts:
                return f
            reason = verdicts[f.autofix.edits]
            return dataclasses.replace(f, autofix=dataclasses.replace(f.autofix, verified=not reason, refused=reason))

        reports = tuple(dataclasses.replace(r, findings=tuple(map(judged, r.findings))) for r in state.reports)
        return dataclasses.replace(state, reports=reports)


def fix_key(state: FileFixes, fix: Fix) -> tuple:
    """What identifies a fix across rounds, whose line numbers move: the text it changes and makes."""
    lines = state.text.splitlines()
    return state.job.path, tuple((" ".join(lines[e.line - 1 : e.end_line - 1]), e.content) for e in fix.edits)


def _candidates(reports, verified: bool | None = None) -> list[Fix]:
    """The distinct fixes of the reports' findings (several kernels of one factory share one), in line order."""
    fixes = {}
    for finding in _findings_of(reports):
        fix = finding.autofix
        if fix is not None and (verified is None or fix.verified == verified):
            fixes.setdefault(fix.edits, fix)
    return sorted(fixes.values(), key=lambda f: (f.edits[0].line, f.edits[0].end_line))


def _fixed_by(state: FileFixes, fixes: list) -> list[Finding]:
    edits = {fix.edits for fix in fixes}
    return [f for f in _findings_of(state.reports) if f.autofix is not None and f.autofix.edits in edits]


def _source_digest(file: FileResult, path: str) -> str | None:
    real = os.path.realpath(path)
    return next((digest for kind, name, digest in file.dependencies if kind == "source" and name == real), None)


def _findings_of(reports) -> list[Finding]:
    return [f for r in reports for f in r.findings]


def _original_findings(state: FileFixes, fixed: list) -> list:
    """The fixed findings as the original file reported them (the earlier rounds moved their lines)."""
    back = {after: before for before, after in line_map(state.original, state.text).items()}
    return [
        dataclasses.replace(f, line=back.get(f.line, f.line), autofix=dataclasses.replace(f.autofix, verified=True))
        for f in fixed
    ]


def _identity(finding: Finding, line: int | None) -> tuple:
    return finding.kernel, finding.rule, finding.name, line


def _refusal(state: FileFixes, trial: _Trial, fixed: list) -> str:
    """Why the trial's text is not a verified fix of the `fixed` findings; "" when it is."""
    if trial.result.error and not state.result.error:
        return f"the fixed file no longer imports: {trial.result.error}"
    after = {r.kernel.name: r for r in trial.reports}
    for report in state.reports:
        name = report.kernel.name
        if report.kernel.status == "ok" and name not in after:
            return f"kernel {name} is no longer found in the fixed file"
        if report.kernel.status == "ok" and after[name].kernel.status != "ok":
            return f"kernel {name} no longer compiles: {after[name].kernel.error}"
        fewer = _fewer_bytes(report.kernel, after[name].kernel)
        if fewer:
            return f"kernel {name} {fewer}"
    moved = line_map(state.text, trial.text)
    before = {_identity(f, moved.get(f.line)) for f in _findings_of(state.reports)}
    remaining = {_identity(f, f.line) for f in _findings_of(trial.reports)}
    for finding in fixed:
        if _identity(finding, moved.get(finding.line)) in remaining:
            return "the finding is still reported after the fix"
    for finding in _findings_of(trial.reports):
        if _identity(finding, finding.line) not in before:
            return f"the fixed file has a new finding: {finding.rule} {finding.slug} on line {finding.line}"
    for finding in fixed:
        narrow = _narrower_than_proof(finding, state, after, moved)
        if narrow:
            return narrow
        stays = _no_nearer_the_floor(finding, state, after)
        if stays:
            return stays
    return ""


# a fix of a performance finding must bring its kernel's estimate this much nearer its floor at least
NEARER = 1.02


def _no_nearer_the_floor(finding: Finding, state: FileFixes, after: dict) -> str:
    """For a performance finding: how the fixed kernel's estimated time stays where it was, if it does (a
    loop written as T.vectorized that tilelang keeps serial, lanes still a row apart)."""
    # a launch too small for its estimate to show the fix's gain is judged by the proof alone
    if finding.gain is None or finding.gain.factor < NEARER:
        return ""
    before = next(r.kernel for r in state.reports if r.kernel.name == finding.kernel).estimate
    fixed = after[finding.kernel].kernel.estimate
    if before is None or fixed is None or not before.time_us or not fixed.time_us:
        return ""
    # the launch's work, its own time left out: a launch of a few KiB hides any gain behind that time, and the
    # fix is judged as the finding was, on a launch large enough to show it
    if _work_us(before) <= NEARER * _work_us(fixed) and before.time_us < NEARER * fixed.time_us:
        return (
            f"the fixed kernel is estimated at {fixed.time_us:.4g} us against {before.time_us:.4g} us before: no "
            f"nearer its floor of {before.floor_us:.4g} us"
        )
    return ""


def _work_us(estimate) -> float:
    return estimate.time_us - dict(estimate.parts).get("launch", 0.0)


def _fewer_bytes(before, after) -> str:
    """How the fixed kernel moves fewer global bytes than the kernel did, where it does: a grown tile over
    a grid that floors the length (`N // block`) leaves the last elements out, which no finding shows."""
    if before.status != "ok" or before.ledger is None or after.ledger is None:
        return ""
    moved, moves = before.ledger.requested_bytes, after.ledger.requested_bytes
    if moved is None or moves is None or moves >= moved:
        return ""
    return f"moves {moves} bytes after the fix where it moved {moved}: the fixed launch leaves elements out"


def _narrower_than_proof(finding: Finding, state: FileFixes, after: dict, moved: dict) -> str:
    """For a vectorization finding: an access of its line left narrower than its proof made it."""
    if finding.proof is None:
        return ""
    kernel = next(r.kernel for r in state.reports if r.kernel.name == finding.kernel)
    line = moved.get(finding.line)
    wide = {(a.buffer, a.kind): a.bits for a in after[finding.kernel].kernel.accesses if a.line == line}
    for access in kernel.accesses:
        if access.line == finding.line and access.verdict == Verdict.COSTLY:
            want = min(finding.proof.bits_after, access.max_bits or finding.proof.bits_after)
            got = wide.get((access.buffer, access.kind), 0)
            if got < want:
                return (
                    f"the {access.buffer} {access.kind} is {got}-bit after the fix, not {want}-bit as the proof showed"
                )
    return ""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


class Unwritable(Exception):
    """A fixed file not written: it changed since it was inspected, or cannot be written."""


def write_fixed(state: FileFixes) -> None:
    """Write the fixed text over the file, in its own encoding marks and line ends, only when the file is
    still the one inspected and the text is valid Python."""
    path = state.job.path
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise Unwritable(f"{path}: cannot read it back: {exc.strerror}") from None
    try:
        as_read = raw.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError:
        raise Unwritable(f"{path}: not UTF-8; not fixed") from None
    if as_read != state.original or (state.digest and state.digest != hashlib.sha256(raw).hexdigest()):
        raise Unwritable(f"{path}: changed since it was inspected; not fixed")
    ast.parse(state.text)  # verified fixes were inspected as this text: a failure here is a defect, not input
    newline = "\r\n" if b"\r\n" in raw else "\n"
    bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(bom + state.text.replace("\n", newline))
    except OSError as exc:
        raise Unwritable(f"{path}: cannot write the fixes: {exc.strerror}") from None
